//! The command table and the command handlers. Each entry's signature
//! (name, usage, help, flags) drives dispatch, `help` and completion.

use super::lex::{self, quote_name, split_assignment, unquote_name};
use super::render::{tuple, Data, Format};
use super::tensor_expr::{self, Env, Rng};
use super::{CmdError, Flow, Session};
use crate::expr::{Bindings, Expr};
use crate::proto::{self, ExternalOptions};
use crate::runtime::{EventAction, EventKind, Plan, RunOptions};
use crate::shape::{self, Dim, TypeInfo};
use crate::tensor::{quote_str, render_tensor_with, DataType, PrintOptions, Value};
use crate::text;
use serde_json::{json, Value as Json};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

pub(super) type R<T> = Result<T, CmdError>;

/// A flag of a command: `--name` or `--name VALUE`.
pub struct Flag {
    pub name: &'static str,
    /// The value's placeholder, `None` for a switch.
    pub value: Option<&'static str>,
    pub help: &'static str,
}

/// One shell command.
pub struct Command {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub usage: &'static str,
    pub help: &'static str,
    pub flags: &'static [Flag],
    /// The argument text is taken as is (no flag parsing).
    pub raw: bool,
    /// Accepts `--format` and `--out`.
    pub data: bool,
    pub handler: fn(&mut Session, &Args) -> R<Flow>,
}

/// Parsed arguments of a command.
pub struct Args {
    /// The positional text (flags removed).
    pub rest: String,
    flags: HashMap<&'static str, Option<String>>,
    pub format: Format,
}

impl Args {
    pub fn has(&self, f: &str) -> bool {
        self.flags.contains_key(f)
    }

    pub fn value(&self, f: &str) -> Option<&str> {
        self.flags.get(f).and_then(|v| v.as_deref())
    }

    fn usize_flag(&self, f: &str, default: usize) -> R<usize> {
        match self.value(f) {
            None => Ok(default),
            Some(v) => v
                .parse()
                .map_err(|_| CmdError(format!("--{f} expects a non-negative integer, got '{v}'"))),
        }
    }
}

const FORMAT: Flag = Flag {
    name: "format",
    value: Some("table|json|csv"),
    help: "output format",
};
const OUT: Flag = Flag {
    name: "out",
    value: Some("FILE"),
    help: "write the output to FILE instead of the screen",
};

macro_rules! cmd {
    ($name:expr, $aliases:expr, $usage:expr, $help:expr, $flags:expr, raw=$raw:expr, data=$data:expr, $h:expr) => {
        Command {
            name: $name,
            aliases: $aliases,
            usage: $usage,
            help: $help,
            flags: $flags,
            raw: $raw,
            data: $data,
            handler: $h,
        }
    };
}

/// Every command of the shell.
pub static COMMANDS: &[Command] = &[
    cmd!("load", &[], "load PATH", "Load a model: binary protobuf (.onnx, external data beside it allowed) or ONNX text syntax.", &[], raw = false, data = false, cmd_load),
    cmd!("parse", &[], "parse TEXT", "Parse a model given inline in ONNX text syntax; an unclosed bracket continues on the next lines.", &[], raw = true, data = false, cmd_parse),
    cmd!("save", &[], "save PATH [--external-threshold BYTES]", "Save the model: .onnx as binary protobuf, anything else as ONNX text. Written atomically.", &[Flag { name: "external-threshold", value: Some("BYTES"), help: "tensors of at least BYTES go to PATH.data, referenced from the model (binary or text)" }], raw = false, data = false, cmd_save),
    cmd!("show", &[], "show [--text|--plan]", "Pretty summary of the model (opsets, graph, inputs, initializers, numbered nodes, outputs), with --text its canonical ONNX text, with --plan the steps an unobserved run executes after the plan-time passes (fused steps name the nodes they cover).", &[Flag { name: "text", value: None, help: "print the canonical text syntax" }, Flag { name: "plan", value: None, help: "print the executed plan (fused steps, the nodes each covers)" }, OUT], raw = false, data = false, cmd_show),
    cmd!("infer", &[], "infer [--format F] [--out FILE]", "Infer every value's element type and shape (symbolic), write graph.value_info, and list the equations found (M = 2*N).", &[FORMAT, OUT], raw = false, data = true, cmd_infer),
    cmd!("let", &[], "let [NAME = EXPR]", "Bind a symbol to an integer (EXPR may use bound symbols); without arguments, list the bindings.", &[FORMAT, OUT], raw = true, data = true, cmd_let),
    cmd!("unlet", &[], "unlet NAME", "Drop a binding.", &[], raw = false, data = false, cmd_unlet),
    cmd!("eval", &[], "eval EXPR [--format F]", "Evaluate a dimension expression with the bindings; with unbound symbols, print it simplified. Integers and symbols (N, p2o.DynamicDimension.0, or any name quoted: \"batch size\"); operators + - * // (floor division) % (floor modulo) and parentheses; functions Max(a, b, ...), Min(a, b, ...), CeilToInt(a, b) (ceiling of a/b).", &[FORMAT, OUT], raw = false, data = true, cmd_eval),
    cmd!("shapes", &[], "shapes [--format F] [--out FILE]", "Every value's inferred shape next to the shape resolved with the bindings.", &[FORMAT, OUT], raw = false, data = true, cmd_shapes),
    cmd!("set", &[], "set NAME = TENSOR", "Set a model input to a tensor expression (arange(8).reshape(2,4), rand(N,4), [1, 2]...). Tensor expressions: literals [1, 2], [[1., 2.], [3., 4.]], [\"a\", \"b\"], [true, false]; maps {\"a\": 1.5, \"b\": 2} or {1: \"x\"} (inputs of type map, e.g. DictVectorizer's); constructors arange(stop) or arange(start, stop[, step]), zeros(d, ...), ones(d, ...), full([d, ...], value), eye(n), linspace(a, b, n), rand(d, ...) (uniform in [0, 1), seeded by config seed), randn(d, ...) (normal), npy(\"file.npy\"), pb(\"file.pb\"); methods .reshape(d, ...) (one -1 allowed), .astype(TYPE) (float, int64, ...), .T / .transpose(perm...). Dimensions may be bound symbols (rand(N, 4)).", &[], raw = true, data = false, cmd_set),
    cmd!("inputs", &[], "inputs [--format F]", "Declared inputs, their types, and the values set.", &[FORMAT, OUT], raw = false, data = true, cmd_inputs),
    cmd!("run", &[], "run [NAME=TENSOR ...] [--release|--no-release]", "Set the given inputs, run the model, print the outputs. TENSOR is a tensor expression ('help set' lists them).", &[Flag { name: "release", value: None, help: "release intermediates after their last use (this run)" }, Flag { name: "no-release", value: None, help: "keep every intermediate (this run)" }], raw = false, data = false, cmd_run),
    cmd!("print", &[], "print NAME[INDEX] [--full] [--stats] [--format text|json|csv|npy] [--out FILE]", "Print a value: an input, an output, an initializer, or a value still held after the run. NAME[INDEX] prints part of a tensor, numpy-style: integers (negative from the end), start:stop:step, ':' and '...' (print x[0, :3], print \"a.b\"[..., -1]); it works with --stats and --format. Large tensors are summarised numpy-style (config print-threshold); --full prints every element; --stats prints min, max, mean, std and the NaN and infinity counts instead; --format json|csv|npy exports the whole tensor (npy needs --out). Maps print as dicts and export as JSON or CSV.", &[Flag { name: "full", value: None, help: "every element, never summarised" }, Flag { name: "stats", value: None, help: "min, max, mean, std, NaN and infinity counts" }, Flag { name: "format", value: Some("text|json|csv|npy"), help: "text (default), or the whole tensor as JSON, CSV or .npy" }, OUT], raw = false, data = false, cmd_print),
    cmd!("bench", &[], "bench [--runs N] [--warmup K] [NAME=TENSOR ...]", "Run the model K+N times with events off; print min, median and max milliseconds.", &[Flag { name: "runs", value: Some("N"), help: "timed runs (default 10)" }, Flag { name: "warmup", value: Some("K"), help: "untimed runs first (default 1)" }, FORMAT, OUT], raw = false, data = true, cmd_bench),
    cmd!("events", &[], "events [--action A[,A]] [--kind K[,K]] [--name NAME] [--shapes] [--format F]", "The event log of the last run, filtered; --shapes adds check's columns (inferred, resolved shape, status) to each value.", &[Flag { name: "shapes", value: None, help: "add inferred shape, resolved shape and OK/MISMATCH/UNKNOWN to each value event" }, Flag { name: "action", value: Some("A[,A]"), help: "add, replace, remove, run_node" }, Flag { name: "kind", value: Some("K[,K]"), help: "input, initializer, intermediate, output, node" }, Flag { name: "name", value: Some("NAME"), help: "one value or node name" }, FORMAT, OUT], raw = false, data = true, cmd_events),
    cmd!("profile", &[], "profile [--nodes] [--format F] [--out FILE]", "Where the last run's time went: per operator type (count, total microseconds, share), or per node with --nodes, largest first, with a bar chart in the table. Needs the event log (config events on).", &[Flag { name: "nodes", value: None, help: "one row per node instead of per operator type" }, FORMAT, OUT], raw = false, data = true, cmd_profile),
    cmd!("memory", &[], "memory [--svg FILE] [--format F] [--out FILE]", "Bytes of live values (inputs, initializers, intermediates, outputs) after each node of the last run, with a bar chart and the peak marked; --svg writes the chart as a picture. Run with release on and off to see what release frees.", &[Flag { name: "svg", value: Some("FILE"), help: "write the chart as an SVG picture" }, FORMAT, OUT], raw = false, data = true, cmd_memory),
    cmd!("check", &[], "check [--format F]", "For every value the last run produced: runtime shape, inferred shape, resolved shape, OK/MISMATCH/UNKNOWN.", &[FORMAT, OUT], raw = false, data = true, cmd_check),
    cmd!("config", &[], "config [KEY [VALUE]]", "Show or set options: events on|off, release on|off, max-values N, precision N, print-threshold N (tensors with more elements print summarised, default 1000), line-width N|auto, seed N, threads N, max-memory SIZE|default (4G, 512M), max-iterations N, max-events N.", &[], raw = false, data = false, cmd_config),
    cmd!("dump", &[], "dump DIR [--values a,b | --all] [--pb]", "Write values of the last run to DIR as .npy files (with --pb also .pb TensorProto files) and DIR/manifest.json: [{name, file, elem_type, shape, node_index}] (node_index: the node that wrote the value, null for inputs and initializers). By default the graph outputs and intermediates; --all adds the inputs and initializers; --values names some (quoted when not identifiers: --values \"a.b\",c). File names are the value names made safe (characters other than letters, digits, '.', '-', '_' become '_', repeats get _2, _3...); the manifest maps names to files. Values released by the last run (release on) are written during a second run on the same inputs, each as it is produced (random operators then draw again). Only values of the main graph are dumped (not those inside Loop, If or Scan bodies); sequences and maps are skipped. On a failure the files written are removed and no manifest is written.", &[Flag { name: "values", value: Some("a,b"), help: "the values to write (comma-separated names)" }, Flag { name: "all", value: None, help: "also the inputs and initializers" }, Flag { name: "pb", value: None, help: "also write each value as a .pb TensorProto" }], raw = false, data = false, super::dump::cmd_dump),
    cmd!("compare", &[], "compare REF [NAME=TENSOR ...] [--rtol R] [--atol A] [--all] [--format F]", "Run this model and REF (another model file: the same network before an optimisation or a conversion, or a dump folder with manifest.json) on the same inputs (the session's, plus NAME=TENSOR as for run), keeping every intermediate, and report the first node (in this model's execution order) whose output differs beyond tolerance (|a - b| <= atol + rtol * |b|; defaults rtol 1e-3, atol 1e-7 as 'test'). Values match by name (same element type and shape), else by position: the next unmatched REF value of the same type and shape between the neighbouring name matches. REF's inputs are matched by name, else by position. Only values of the main graph are compared. JSON: {first_divergence: {node: {index, op_type, domain, name}, value, max_abs, max_rel} or null, matched, values: [...] (with --all: name, ref, max_abs, max_rel, ok per matched value)}. Afterwards 'print NAME' shows any value of this model's run.", &[Flag { name: "rtol", value: Some("R"), help: "relative tolerance (default 1e-3)" }, Flag { name: "atol", value: Some("A"), help: "absolute tolerance (default 1e-7)" }, Flag { name: "all", value: None, help: "one row per matched value" }, FORMAT, OUT], raw = false, data = true, super::compare::cmd_compare),
    cmd!("source", &[], "source PATH", "Run a script inside the current session.", &[], raw = false, data = false, cmd_source),
    cmd!("help", &[], "help [COMMAND]", "List the commands, or describe one.", &[], raw = false, data = false, cmd_help),
    cmd!("break", &[], "break [--op OP] [--node NAME|#INDEX] [--value NAME] [--if EXPR]", "Set a breakpoint for 'run'. With --op and/or --node only, the run stops before a matching node (--node #INDEX: a main-graph node by index; NAME: a node of any graph, Loop/Scan/If bodies included). With --value and/or --if it stops after the node that writes the value (--value: that value; --if alone: any value) when the condition holds. EXPR is a condition on the value's statistics, the value named by any identifier: 'max(abs(z)) > 1e4', 'isnan(z)', 'any(isinf(z))', 'all(isfinite(z))', 'mean(z) < 0 and std(z) > 1 or not isnan(z)'; min, max, mean, std (over the finite elements, as print --stats), count; + - * /, comparisons, and/or/not (&& || !). A malformed condition is refused with its column. Breakpoints and watches share one numbered list ('breaks').", &[Flag { name: "op", value: Some("OP"), help: "stop before a node of this operator type" }, Flag { name: "node", value: Some("NAME|#INDEX"), help: "stop before this node" }, Flag { name: "value", value: Some("NAME"), help: "stop after the node that writes this value" }, Flag { name: "if", value: Some("EXPR"), help: "stop after a value is written when EXPR holds" }], raw = true, data = false, super::debugger::cmd_break),
    cmd!("breaks", &[], "breaks [--format F]", "List the breakpoints and watches, numbered (the numbers 'delete' takes), with how often each breakpoint stopped a run.", &[FORMAT, OUT], raw = false, data = true, super::debugger::cmd_breaks),
    cmd!("delete", &[], "delete N [N ...] | --all", "Remove breakpoints or watches by number ('breaks' lists them), or all of them.", &[Flag { name: "all", value: None, help: "remove every breakpoint and watch" }], raw = false, data = false, super::debugger::cmd_delete),
    cmd!("watch", &[], "watch NAME", "Print a value's statistics (element type, shape, min, max, mean, std, NaN and infinity counts) each time a run writes it, inside Loop/Scan/If bodies too. Listed by 'breaks'; removed by 'unwatch NAME' or 'delete N'.", &[], raw = false, data = false, super::debugger::cmd_watch),
    cmd!("unwatch", &[], "unwatch NAME", "Stop watching a value.", &[], raw = false, data = false, super::debugger::cmd_unwatch),
    cmd!("step", &[], "step [N]", "At a stop: run N more nodes (default 1; nodes inside Loop/Scan/If bodies count) and stop again.", &[], raw = false, data = false, super::debugger::cmd_step),
    cmd!("continue", &["cont"], "continue", "At a stop: run on to the next breakpoint or to the end (then the outputs print as after a plain run).", &[], raw = false, data = false, super::debugger::cmd_continue),
    cmd!("finish", &[], "finish", "At a stop: run to the end ignoring breakpoints (watches still print).", &[], raw = false, data = false, super::debugger::cmd_finish),
    cmd!("where", &[], "where [--format F]", "At a stop: the node (before it runs, or after it wrote a value; the body, depth and iteration inside a Loop/Scan/If), its inputs with statistics, and the values alive with their bytes. 'print NAME' and 'print NAME --stats' read any value alive at the stop. Ctrl-C during 'run' stops it the same way ('continue' resumes); any command but where, print, step, continue, finish, break, breaks, delete, watch, unwatch, help, show, inputs and eval abandons the stopped run.", &[FORMAT, OUT], raw = false, data = true, super::debugger::cmd_where),
    cmd!("quit", &["exit"], "quit", "Leave the shell.", &[], raw = false, data = false, cmd_quit),
];

/// The command of a name or alias.
pub fn find(name: &str) -> Option<&'static Command> {
    COMMANDS
        .iter()
        .find(|c| c.name == name || c.aliases.contains(&name))
}

fn edit_distance(a: &str, b: &str) -> usize {
    let a: Vec<char> = a.chars().collect();
    let b: Vec<char> = b.chars().collect();
    let mut prev: Vec<usize> = (0..=b.len()).collect();
    for i in 1..=a.len() {
        let mut cur = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            cur[j] = (prev[j] + 1).min(cur[j - 1] + 1).min(prev[j - 1] + cost);
        }
        prev = cur;
    }
    prev[b.len()]
}

/// The closest command name, if any is close.
pub fn suggest(name: &str) -> Option<&'static str> {
    COMMANDS
        .iter()
        .flat_map(|c| std::iter::once(c.name).chain(c.aliases.iter().copied()))
        .map(|n| (edit_distance(name, n), n))
        .filter(|(d, n)| *d <= 2.max(n.len() / 3) || n.starts_with(name))
        .min_by_key(|(d, _)| *d)
        .map(|(_, n)| n)
}

fn parse_args(c: &Command, text: &str) -> R<Args> {
    let mut flags = HashMap::new();
    let mut format = Format::Table;
    if c.raw {
        // a raw command still takes its data flags at the very end
        let mut rest = text.trim().to_string();
        if c.data {
            loop {
                let toks = lex::tokens(&rest);
                let n = toks.len();
                if n >= 2 && (toks[n - 2] == "--format" || toks[n - 2] == "--out") {
                    let name = if toks[n - 2] == "--format" {
                        "format"
                    } else {
                        "out"
                    };
                    flags.insert(name, Some(toks[n - 1].clone()));
                    let cut = rest.rfind(&toks[n - 2]).unwrap_or(rest.len());
                    rest = rest[..cut].trim_end().to_string();
                } else {
                    break;
                }
            }
        }
        if let Some(f) = flags.get("format").cloned().flatten() {
            format = Format::parse(&f)?;
        }
        return Ok(Args {
            rest,
            flags,
            format,
        });
    }
    let toks = lex::tokens(text);
    let mut pos = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        if let Some(body) = t
            .strip_prefix("--")
            .filter(|b| !b.is_empty() && !b.starts_with('-'))
        {
            let (name, inline) = match body.split_once('=') {
                Some((n, v)) => (n, Some(v.to_string())),
                None => (body, None),
            };
            let f = c.flags.iter().find(|f| f.name == name).ok_or_else(|| {
                let known: Vec<String> = c.flags.iter().map(|f| format!("--{}", f.name)).collect();
                CmdError(if known.is_empty() {
                    format!("{}: unknown flag --{name} (it takes no flags)", c.name)
                } else {
                    format!(
                        "{}: unknown flag --{name} (flags: {})",
                        c.name,
                        known.join(", ")
                    )
                })
            })?;
            let v = if f.value.is_some() {
                match inline {
                    Some(v) => Some(v),
                    None => {
                        i += 1;
                        Some(toks.get(i).cloned().ok_or_else(|| {
                            CmdError(format!(
                                "--{name} needs a value ({})",
                                f.value.unwrap_or("")
                            ))
                        })?)
                    }
                }
            } else {
                if inline.is_some() {
                    return Err(CmdError(format!("--{name} takes no value")));
                }
                None
            };
            flags.insert(f.name, v);
        } else {
            pos.push(t.clone());
        }
        i += 1;
    }
    // data commands share one --format; others (print) read theirs
    if let Some(f) = flags.get("format").cloned().flatten().filter(|_| c.data) {
        format = Format::parse(&f)?;
    }
    Ok(Args {
        rest: pos.join(" "),
        flags,
        format,
    })
}

/// Runs one command line.
pub fn dispatch(s: &mut Session, line: &str) -> R<Flow> {
    let line = line.trim();
    if line.is_empty() || line.starts_with('#') {
        return Ok(Flow::Continue);
    }
    let (name, rest) = match line.find(char::is_whitespace) {
        Some(i) => (&line[..i], &line[i..]),
        None => (line, ""),
    };
    let c = find(name).ok_or_else(|| {
        CmdError(match suggest(name) {
            Some(s) => format!("unknown command '{name}'; did you mean '{s}'? (try 'help')"),
            None => format!("unknown command '{name}' (try 'help')"),
        })
    })?;
    let rest = if c.raw {
        rest.to_string()
    } else {
        lex::strip_comment(rest).to_string()
    };
    let args = parse_args(c, &rest)?;
    if s.paused.is_some() && !super::debugger::KEEPS_PAUSE.contains(&c.name) {
        super::debugger::abandon(s, Some(c.name));
    }
    s.out_written = false;
    let flow = (c.handler)(s, &args);
    // a command that fails after printing (check with a MISMATCH) still
    // writes its output
    let printed = flow.is_ok() || !s.out.is_empty();
    if let Some(path) = args.value("out").filter(|_| !s.out_written && printed) {
        let text = std::mem::take(&mut s.out);
        let mut bytes = text.into_bytes();
        bytes.push(b'\n');
        let path = crate::files::expand_home(path);
        proto::write_atomic(Path::new(&path), &bytes).map_err(|e| CmdError(e.to_string()))?;
    }
    flow
}

/// Whether tables get meaning colours: colour is on (standard output is a
/// terminal, no `--no-color`/`NO_COLOR`) and the output is not a file.
pub(super) fn table_colors(a: &Args) -> bool {
    colored::control::SHOULD_COLORIZE.should_colorize() && a.value("out").is_none()
}

fn no_args(c: &str, a: &Args) -> R<()> {
    if a.rest.trim().is_empty() {
        Ok(())
    } else {
        Err(CmdError(format!(
            "{c} takes no arguments, got '{}' (usage: {})",
            a.rest.trim(),
            find(c).map(|c| c.usage).unwrap_or("")
        )))
    }
}

fn one_path(c: &str, a: &Args) -> R<String> {
    let toks = lex::tokens(&a.rest);
    if toks.len() != 1 {
        return Err(CmdError(format!(
            "usage: {}",
            find(c).map(|c| c.usage).unwrap_or(c)
        )));
    }
    // `~/m.onnx` is the home folder's, as in a shell
    Ok(crate::files::expand_home(toks[0].trim_matches('"')))
}

pub(super) fn emit(s: &mut Session, a: &Args, d: Data) {
    let text = d.render_styled(a.format, table_colors(a));
    s.say(text);
}

// ---------------------------------------------------------------- model I/O

fn summary(m: &proto::ModelProto) -> String {
    let g = m.graph.as_ref();
    let n = g.map(|g| g.node.len()).unwrap_or(0);
    let i = g.map(|g| g.input.len()).unwrap_or(0);
    let o = g.map(|g| g.output.len()).unwrap_or(0);
    format!(
        "graph '{}': {n} node{}, {i} input{}, {o} output{}",
        g.map(|g| g.name()).unwrap_or(""),
        if n == 1 { "" } else { "s" },
        if i == 1 { "" } else { "s" },
        if o == 1 { "" } else { "s" },
    )
}

fn cmd_load(s: &mut Session, a: &Args) -> R<Flow> {
    let p = one_path("load", a)?;
    let path = Path::new(&p);
    if path.is_dir() {
        return Err(CmdError(format!("{p}: is a folder, not a model file")));
    }
    // `.onnx`, or a file whose first bytes are not UTF-8 text, is binary;
    // only the head is read to decide, so a large binary model is never
    // read twice
    let is_binary = p.ends_with(".onnx")
        || !looks_like_text(path).map_err(|e| CmdError(format!("{p}: {e}")))?;
    let model = if is_binary {
        proto::load_model(path).map_err(|e| CmdError(e.to_string()))?
    } else {
        let text = crate::files::read_text(path).map_err(|e| CmdError(format!("{p}: {e}")))?;
        let mut model = text::parse_model(&text).map_err(|e| CmdError(format!("{p}: {e}")))?;
        // tensors declared with `["location": ...]` read their data from
        // beside the text file, confined to its folder like binary models
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        proto::resolve_external_data(&mut model, dir).map_err(|e| CmdError(format!("{p}: {e}")))?;
        model
    };
    let msg = format!("loaded {p}: {}", summary(&model));
    let note = s.set_model(model, &p);
    s.status(msg);
    if let Some(n) = note {
        s.status(n);
    }
    Ok(Flow::Continue)
}

/// Whether a file starts as UTF-8 text (its first 4 KiB; a character cut
/// by that boundary still counts as text).
pub(super) fn looks_like_text(path: &Path) -> std::io::Result<bool> {
    let head = crate::files::read_head(path, 4096)?;
    Ok(match std::str::from_utf8(&head) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none(),
    })
}

fn cmd_parse(s: &mut Session, a: &Args) -> R<Flow> {
    let t = a.rest.trim();
    if t.is_empty() {
        return Err("usage: parse TEXT (the model in ONNX text syntax)".into());
    }
    let model = text::parse_model(t).map_err(|e| CmdError(e.to_string()))?;
    let msg = format!("parsed {}", summary(&model));
    let note = s.set_model(model, "<parse>");
    s.status(msg);
    if let Some(n) = note {
        s.status(n);
    }
    Ok(Flow::Continue)
}

fn cmd_save(s: &mut Session, a: &Args) -> R<Flow> {
    let p = one_path("save", a)?;
    let m = s.model()?;
    let path = Path::new(&p);
    let threshold = match a.value("external-threshold") {
        Some(v) => Some(v.parse::<usize>().map_err(|_| {
            CmdError(format!(
                "--external-threshold expects a byte count, got '{v}'"
            ))
        })?),
        None => None,
    };
    if p.ends_with(".onnx") {
        let opts = ExternalOptions {
            threshold,
            file_name: None,
        };
        proto::save_model(m, path, &opts).map_err(|e| CmdError(e.to_string()))?;
    } else {
        // text: large tensors may go to PATH.data, referenced by location
        let external;
        let (m, pending) = match threshold {
            Some(th) => {
                let mut c = m.clone(); // tensor bytes are shared, not copied
                let pending = proto::externalize(&mut c, path, th, None)
                    .map_err(|e| CmdError(e.to_string()))?;
                external = c;
                (&external, pending)
            }
            None => (m, None),
        };
        text_size_ok(
            m,
            "save it with --external-threshold BYTES to keep large tensors in a data file",
        )?;
        let mut t = text::print_model(m);
        if !t.ends_with('\n') {
            t.push('\n');
        }
        proto::write_model_files(path, t.as_bytes(), pending)
            .map_err(|e| CmdError(e.to_string()))?;
    }
    s.status(format!("saved {p}"));
    Ok(Flow::Continue)
}

/// Refuses text for a model whose inline tensors are too large to spell
/// out as numbers.
fn text_size_ok(m: &proto::ModelProto, hint: &str) -> R<()> {
    let bytes = text::inline_tensor_bytes(m);
    if bytes > text::MAX_INLINE_TEXT_BYTES {
        return Err(CmdError(format!(
            "the model holds {} MiB of tensor values, too many to write as text (limit {} MiB); {hint}",
            bytes >> 20,
            text::MAX_INLINE_TEXT_BYTES >> 20
        )));
    }
    Ok(())
}

fn cmd_show(s: &mut Session, a: &Args) -> R<Flow> {
    no_args("show", a)?;
    if a.has("plan") {
        let t = plan(s)?.describe_plan();
        s.say(t.trim_end());
        return Ok(Flow::Continue);
    }
    let m = s.model()?;
    let t = if a.has("text") {
        text_size_ok(m, "'save PATH.txt --external-threshold BYTES' writes its text with large tensors in a data file")?;
        text::print_model(m)
    } else {
        text::pretty(m)
    };
    s.say(t.trim_end());
    Ok(Flow::Continue)
}

// ------------------------------------------------------------ inference

fn dims_json(dims: Option<&[Dim]>) -> Json {
    match dims {
        None => Json::Null,
        Some(d) => Json::Array(
            d.iter()
                .map(|x| match x {
                    Some(e) => match e.as_int() {
                        Some(v) => json!(v),
                        None => json!(e.to_string()),
                    },
                    None => json!("?"),
                })
                .collect(),
        ),
    }
}

fn shape_text(dims: Option<&[Dim]>) -> String {
    match dims {
        None => "?".into(),
        Some(d) if d.len() == 1 => format!("({},)", shape::format_dims(d)),
        // dims one by one: an expression like Max(0, L-2) holds commas too
        Some(d) => format!(
            "({})",
            d.iter()
                .map(|x| shape::format_dims(std::slice::from_ref(x)))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

fn ensure_report(s: &mut Session) -> R<()> {
    if s.report.is_none() {
        let mut m = s.model()?.clone();
        let r = shape::infer_model(&mut m);
        s.model = Some(m);
        s.report = Some(r);
    }
    Ok(())
}

fn cmd_infer(s: &mut Session, a: &Args) -> R<Flow> {
    no_args("infer", a)?;
    let mut m = s.model()?.clone();
    let r = shape::infer_model(&mut m);
    s.model = Some(m);
    let mut d = Data::new(&["name", "type", "source"], Json::Null);
    let mut values = Vec::new();
    for v in &r.values {
        let name = if v.scope.is_empty() {
            v.name.clone()
        } else {
            format!("{}:{}", v.scope, v.name)
        };
        d.rows
            .push(vec![name, v.ty.display(), v.source.name().into()]);
        let mut o = json!({
            "name": v.name,
            "elem_type": v.ty.elem().map(|e| e.name()).unwrap_or(match &v.ty {
                TypeInfo::Sequence(_) => "sequence",
                TypeInfo::Optional(_) => "optional",
                TypeInfo::Map(..) => "map",
                _ => "undefined",
            }),
            "shape": dims_json(v.ty.shape()),
            "source": v.source.name(),
        });
        if !v.scope.is_empty() {
            o["scope"] = json!(v.scope);
        }
        values.push(o);
    }
    let eqs: Vec<Json> = r
        .equations
        .iter()
        .map(|e| json!({"symbol": e.symbol, "expr": e.expr.to_string()}))
        .collect();
    d.json = json!({"values": values, "equations": eqs, "warnings": r.warnings});
    if !r.equations.is_empty() {
        d.footer.push(String::new());
        d.footer.push("equations:".into());
        for e in &r.equations {
            d.footer.push(format!("  {} = {}", e.symbol, e.expr));
        }
    }
    if !r.warnings.is_empty() {
        d.footer.push(String::new());
        for w in &r.warnings {
            d.footer.push(format!("warning: {w}"));
        }
    }
    s.report = Some(r);
    emit(s, a, d);
    Ok(Flow::Continue)
}

// ---------------------------------------------------------------- symbols

fn parse_expr(text: &str) -> R<Expr> {
    Expr::parse(text.trim()).map_err(|e| {
        let caret = e
            .pos
            .map(|p| {
                let t = text.trim();
                let col = t.get(..p).map_or(p, |head| head.chars().count());
                format!("\n{}", text::caret_excerpt(t, col))
            })
            .unwrap_or_default();
        CmdError(format!("{e}{caret}"))
    })
}

fn bindings_with_equations(s: &Session) -> Bindings {
    match &s.report {
        Some(r) => r.extend_bindings(&s.bindings),
        None => s.bindings.clone(),
    }
}

fn cmd_let(s: &mut Session, a: &Args) -> R<Flow> {
    let t = a.rest.trim();
    if t.is_empty() {
        let mut d = Data::new(&["symbol", "value"], json!(s.bindings));
        for (k, v) in &s.bindings {
            d.rows.push(vec![k.clone(), v.to_string()]);
        }
        if s.bindings.is_empty() && a.format == Format::Table {
            s.say("no bindings");
            return Ok(Flow::Continue);
        }
        emit(s, a, d);
        return Ok(Flow::Continue);
    }
    let (raw_name, value) =
        split_assignment(t).ok_or_else(|| CmdError("usage: let NAME = EXPR".into()))?;
    // (split_assignment unquotes the name) bare names are identifiers,
    // dots allowed (`p2o.DynamicDimension.0`); any other symbol is written
    // quoted (`let "batch size" = 2`)
    let quoted = t.trim_start().starts_with('"');
    if raw_name.is_empty() || (!quoted && !crate::expr::is_bare_symbol(&raw_name)) {
        return Err(CmdError(format!(
            "'{raw_name}' is not a symbol name (letters, digits, _ and inner dots; quote other names: \"...\")"
        )));
    }
    let name = raw_name.as_str();
    let e = parse_expr(&value)?;
    // the bindings are copied (to add the equations) only when needed, so
    // many `let` lines cost linear time
    let v = if e.symbols().iter().all(|k| s.bindings.contains_key(k)) {
        e.eval(&s.bindings)
    } else {
        e.eval(&bindings_with_equations(s))
    }
    .map_err(|err| CmdError(format!("let {name}: {err}")))?;
    // a value that contradicts an equation inference found is allowed (the
    // run will check it) but said
    let mut warnings = Vec::new();
    if let Some(r) = &s.report {
        let others: Bindings = s
            .bindings
            .iter()
            .filter(|(k, _)| k.as_str() != name)
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        for eq in r.equations.iter().filter(|eq| eq.symbol == name) {
            if let Ok(want) = eq.expr.eval(&others) {
                if want != v {
                    let given: Vec<String> = eq
                        .expr
                        .symbols()
                        .iter()
                        .filter_map(|k| others.get(k).map(|x| format!("{k} = {x}")))
                        .collect();
                    warnings.push(format!(
                        "warning: inference found {name} = {}, which is {want} with {}; {name} is now {v} (run and check will tell)",
                        eq.expr,
                        if given.is_empty() { "no bindings".to_string() } else { given.join(", ") }
                    ));
                }
            }
        }
    }
    for w in warnings {
        s.status(w);
    }
    s.bindings.insert(name.to_string(), v);
    s.auto_bound.remove(name);
    s.status(format!("{} = {v}", Expr::Sym(name.to_string())));
    Ok(Flow::Continue)
}

fn cmd_unlet(s: &mut Session, a: &Args) -> R<Flow> {
    if a.rest.trim().is_empty() {
        return Err("usage: unlet NAME".into());
    }
    let name = unquote_name(&a.rest).map_err(CmdError)?;
    let name = name.as_str();
    if s.bindings.remove(name).is_none() {
        return Err(CmdError(format!("'{name}' is not bound")));
    }
    s.auto_bound.remove(name);
    s.status(format!("unbound {name}"));
    Ok(Flow::Continue)
}

fn cmd_eval(s: &mut Session, a: &Args) -> R<Flow> {
    let t = a.rest.trim();
    if t.is_empty() {
        return Err("usage: eval EXPR".into());
    }
    let e = parse_expr(t)?;
    let b = bindings_with_equations(s);
    let r = e.substitute(&b);
    // evaluate for the errors (division by zero) when everything is bound
    let (text, j) = if r.symbols().is_empty() {
        let v = e.eval(&b).map_err(|err| CmdError(err.to_string()))?;
        (v.to_string(), json!({"expr": t, "value": v}))
    } else {
        (
            r.to_string(),
            json!({"expr": t, "simplified": r.to_string()}),
        )
    };
    if a.format == Format::Json {
        s.say(serde_json::to_string_pretty(&j).unwrap_or_default());
    } else if a.format == Format::Csv {
        let key = if j.get("value").is_some() {
            "value"
        } else {
            "simplified"
        };
        s.say(format!("expr,{key}\n{},{}", csv_cell(t), csv_cell(&text)));
    } else {
        s.say(text);
    }
    Ok(Flow::Continue)
}

fn csv_cell(s: &str) -> String {
    if s.contains([',', '"']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

fn resolved_text(v: &Option<Vec<Option<i64>>>) -> String {
    match v {
        None => "?".into(),
        Some(d) => {
            let parts: Vec<String> = d
                .iter()
                .map(|x| x.map(|v| v.to_string()).unwrap_or_else(|| "?".into()))
                .collect();
            if parts.len() == 1 {
                format!("({},)", parts[0])
            } else {
                format!("({})", parts.join(", "))
            }
        }
    }
}

fn resolved_json(v: &Option<Vec<Option<i64>>>, dims: Option<&[Dim]>) -> Json {
    match (v, dims) {
        (Some(r), Some(d)) => Json::Array(
            r.iter()
                .zip(d)
                .map(|(x, e)| match (x, e) {
                    (Some(v), _) => json!(v),
                    (None, Some(e)) => json!(e.to_string()),
                    (None, None) => json!("?"),
                })
                .collect(),
        ),
        _ => Json::Null,
    }
}

fn cmd_shapes(s: &mut Session, a: &Args) -> R<Flow> {
    no_args("shapes", a)?;
    ensure_report(s)?;
    let r = s.report.as_ref().ok_or("no inference report")?;
    let mut d = Data::new(&["name", "inferred", "resolved"], Json::Null);
    let mut arr = Vec::new();
    let extended = r.extend_bindings(&s.bindings);
    for v in r.values.iter().filter(|v| v.scope.is_empty()) {
        let dims = v.ty.shape();
        let res = dims.map(|d| shape::InferReport::resolve_extended(d, &extended));
        d.rows.push(vec![
            quote_name(&v.name),
            shape_text(dims),
            resolved_text(&res),
        ]);
        arr.push(json!({
            "name": v.name,
            "inferred": dims_json(dims),
            "resolved": resolved_json(&res, dims),
        }));
    }
    d.json = Json::Array(arr);
    emit(s, a, d);
    Ok(Flow::Continue)
}

// ------------------------------------------------------------------ inputs

/// The graph inputs: name, type (unknown dimensions as fresh symbols, as
/// inference sees them), and whether an initializer gives a default.
fn declared_inputs(s: &Session) -> R<Vec<(String, Option<TypeInfo>, bool)>> {
    let m = s.model()?;
    let g = m.graph.as_ref().ok_or("the model has no graph")?;
    let inits: std::collections::HashSet<&str> = g.initializer.iter().map(|t| t.name()).collect();
    Ok(g.input
        .iter()
        .zip(shape::input_types_with_fresh_dims(g))
        .map(|(i, ty)| (i.name().to_string(), ty, inits.contains(i.name())))
        .collect())
}

fn eval_tensor(s: &mut Session, text: &str) -> R<Value> {
    let b = bindings_with_equations(s);
    let base = s.base.clone();
    let mut rng = std::mem::replace(&mut s.rng, Rng::new(0));
    let res = {
        let mut env = Env {
            bindings: &b,
            rng: &mut rng,
            base: &base,
        };
        tensor_expr::eval(text, &mut env)
    };
    s.rng = rng;
    res.map_err(CmdError)
}

/// How many input names an error lists.
const NAMES_SHOWN: usize = 8;

/// "not an input": the inputs a user has to set (not those an initializer
/// gives a default), closest first.
fn not_an_input(name: &str, decl: &[(String, Option<TypeInfo>, bool)]) -> String {
    let mut names: Vec<&str> = decl
        .iter()
        .filter(|(_, _, init)| !init)
        .map(|(n, _, _)| n.as_str())
        .collect();
    names.sort_by_key(|n| (edit_distance(name, n), *n));
    let more = names.len().saturating_sub(NAMES_SHOWN);
    let shown: Vec<String> = names
        .iter()
        .take(NAMES_SHOWN)
        .map(|n| quote_name(n))
        .collect();
    let list = match (shown.len(), more) {
        (0, _) => "the model has no inputs to set".to_string(),
        (_, 0) => format!("inputs: {}", shown.join(", ")),
        _ => format!("closest inputs: {}, and {more} more", shown.join(", ")),
    };
    format!("'{name}' is not an input of the model ({list})")
}

/// A map typed in the shell, checked against the input's declared map type
/// and its values converted to the declared value type when exact.
fn declared_map(name: &str, m: crate::tensor::Map, ty: Option<&TypeInfo>) -> R<crate::tensor::Map> {
    let Some(ty) = ty else { return Ok(m) };
    let TypeInfo::Map(key, value) = ty else {
        return Err(CmdError(format!(
            "input '{name}' is not a map (declared {}), got a map",
            ty.display()
        )));
    };
    if (*key == DataType::String) != (m.key_type() == DataType::String) {
        return Err(CmdError(format!(
            "input '{name}' is declared with {key} keys, got {} keys",
            m.key_type()
        )));
    }
    match value.elem() {
        Some(want) if want != DataType::Undefined && want != m.value_type() => {
            let values = m
                .values()
                .convert_exact(want)
                .map_err(|e| CmdError(format!("input '{name}' has {want} values: {e}")))?;
            crate::tensor::Map::new(m.keys().clone(), values).map_err(|e| CmdError(e.0))
        }
        _ => Ok(m),
    }
}

/// Sets an input, converting to the declared element type when exact.
pub(super) fn set_input(s: &mut Session, name: &str, expr: &str) -> R<()> {
    let decl = declared_inputs(s)?;
    let Some((_, ty, _)) = decl.iter().find(|(n, _, _)| n == name) else {
        return Err(CmdError(not_an_input(name, &decl)));
    };
    let v = eval_tensor(s, expr).map_err(|e| CmdError(format!("input '{name}': {e}")))?;
    let v = match (v, ty.as_ref().and_then(|t| t.elem())) {
        (Value::Tensor(t), Some(want)) if want != DataType::Undefined && t.dtype() != want => {
            Value::Tensor(
                t.convert_exact(want)
                    .map_err(|e| CmdError(format!("input '{name}' is declared {want}: {e}")))?,
            )
        }
        (Value::Map(m), _) => Value::Map(declared_map(name, m, ty.as_ref())?),
        (v, _) => v,
    };
    if let (Value::Tensor(t), Some(shape)) = (&v, ty.as_ref().and_then(|t| t.shape())) {
        if t.rank() != shape.len() {
            return Err(CmdError(format!(
                "input '{name}' is declared with rank {} ({}), got shape {}",
                shape.len(),
                shape_text(Some(shape)),
                tuple(t.shape())
            )));
        }
    }
    s.inputs.insert(name.to_string(), v);
    Ok(())
}

fn cmd_set(s: &mut Session, a: &Args) -> R<Flow> {
    let (name, expr) =
        split_assignment(&a.rest).ok_or_else(|| CmdError("usage: set NAME = TENSOR".into()))?;
    set_input(s, &name, &expr)?;
    let desc = s
        .inputs
        .get(&name)
        .map(|v| v.describe())
        .unwrap_or_default();
    s.status(format!("{} = {desc}", quote_name(&name)));
    Ok(Flow::Continue)
}

fn cmd_inputs(s: &mut Session, a: &Args) -> R<Flow> {
    no_args("inputs", a)?;
    let decl = declared_inputs(s)?;
    let mut d = Data::new(&["name", "type", "value"], Json::Null);
    let mut arr = Vec::new();
    for (name, ty, has_init) in decl {
        let t = ty.map(|t| t.display()).unwrap_or_else(|| "?".into());
        let v = match s.inputs.get(&name) {
            Some(v) => v.describe(),
            None if has_init => "(initializer default)".into(),
            None => "(not set)".into(),
        };
        arr.push(json!({"name": name, "type": t, "value": v, "set": s.inputs.contains_key(&name)}));
        d.rows.push(vec![quote_name(&name), t, v]);
    }
    d.json = Json::Array(arr);
    emit(s, a, d);
    Ok(Flow::Continue)
}

/// Binds the symbols of the declared input shapes from the given values.
/// Symbols bound by an earlier run may change; those bound by `let` may not.
pub(super) fn bind_from_inputs(s: &mut Session) -> R<()> {
    let decl = declared_inputs(s)?;
    let given: Vec<shape::GivenInput> = decl
        .into_iter()
        .map(|(name, ty, _)| {
            let shape = match s.inputs.get(&name) {
                Some(Value::Tensor(t)) => Some(t.shape().to_vec()),
                _ => None,
            };
            (name, ty, shape)
        })
        .collect();
    let fixed: Bindings = s
        .bindings
        .iter()
        .filter(|(k, _)| !s.auto_bound.contains(*k))
        .map(|(k, v)| (k.clone(), *v))
        .collect();
    let found = shape::bind_symbols(&given, &fixed).map_err(CmdError)?;
    for (sym, v) in found {
        if !fixed.contains_key(&sym) {
            s.bindings.insert(sym.clone(), v);
            s.auto_bound.insert(sym);
        }
    }
    Ok(())
}

pub(super) fn plan(s: &mut Session) -> R<Arc<Plan>> {
    if let Some(p) = &s.plan {
        return Ok(p.clone());
    }
    let m = s.model()?;
    let p = Arc::new(Plan::new(m).map_err(|e| CmdError(e.0))?);
    s.plan = Some(p.clone());
    Ok(p)
}

fn assignments(s: &mut Session, a: &Args) -> R<()> {
    for (name, expr) in tensor_expr::parse_assignments(&a.rest).map_err(CmdError)? {
        set_input(s, &name, &expr)?;
    }
    Ok(())
}

pub(super) fn feed(s: &Session, p: &Plan) -> R<HashMap<String, Value>> {
    let missing: Vec<String> = p
        .required_inputs()
        .iter()
        .filter(|d| !s.inputs.contains_key(&d.name))
        .map(|d| quote_name(&d.name))
        .collect();
    if !missing.is_empty() {
        return Err(CmdError(format!(
            "input{} {} not set (use 'set NAME = TENSOR' or 'run NAME=TENSOR')",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", ")
        )));
    }
    Ok(s.inputs.clone().into_iter().collect())
}

pub(super) fn with_pool<T: Send>(s: &Session, f: impl FnOnce() -> T + Send) -> T {
    match &s.pool {
        Some(p) => p.install(f),
        None => f(),
    }
}

fn cmd_run(s: &mut Session, a: &Args) -> R<Flow> {
    s.model()?;
    assignments(s, a)?;
    let p = plan(s)?;
    let inputs = feed(s, &p)?;
    bind_from_inputs(s)?;
    let release = if a.has("release") {
        true
    } else if a.has("no-release") {
        false
    } else {
        s.config.release
    };
    let opts = RunOptions {
        events: s.config.events,
        release,
        max_values: s.config.max_values,
        ..Default::default()
    };
    super::debugger::start(s, p, inputs, opts)
}

/// Ends a run as `run` does: the outputs printed and the run kept in
/// `last_run` (a failed run keeps what it got to).
pub(super) fn complete_run(
    s: &mut Session,
    res: crate::runtime::RunResult,
    failure: Option<crate::runtime::RunError>,
) -> R<Flow> {
    if let Some(e) = failure {
        // keep what the run got to: its log up to the failing node and the
        // values held then (a run refused before any node keeps nothing)
        if res.events.is_empty() && res.held.is_empty() {
            return Err(CmdError(e.0));
        }
        let kept = if res.events.is_empty() {
            "the values held then are kept ('print NAME')"
        } else {
            "its event log up to the failure and the values held then are kept ('events', 'print NAME')"
        };
        s.last_run = Some(res);
        return Err(CmdError(format!(
            "{}\n  the run stopped there; {kept}",
            e.0
        )));
    }
    let o = print_options(s, false);
    let mut text = Vec::new();
    if res.dropped_events > 0 {
        s.status(format!(
            "note: the event log stopped at {} events (`config max-events`); {} later events were dropped",
            res.events.len(),
            res.dropped_events
        ));
    }
    for (name, v) in &res.outputs {
        text.push(format!("{} =\n{}", quote_name(name), render_value(v, &o)));
    }
    s.last_run = Some(res);
    s.say(text.join("\n"));
    Ok(Flow::Continue)
}

fn render_value(v: &Value, o: &PrintOptions) -> String {
    match v {
        Value::Tensor(t) => format!(
            "{}  # {} {}",
            render_tensor_with(t, o),
            t.dtype(),
            tuple(t.shape())
        ),
        Value::Sequence { items, elem_type } => {
            let mut out = format!("sequence of {} {elem_type} tensors", items.len());
            for (i, t) in items.iter().enumerate() {
                out.push_str(&format!("\n[{i}] {}", render_tensor_with(t, o)));
            }
            out
        }
        Value::Optional(None) => "None  # empty optional".into(),
        Value::Optional(Some(v)) => render_value(v, o),
        Value::Map(m) => format!(
            "{}  # map({}, {})",
            crate::tensor::render_map(m, o),
            m.key_type(),
            m.value_type()
        ),
        Value::MapSequence {
            key_type,
            value_type,
            items,
        } => {
            let mut out = format!(
                "sequence of {} maps ({key_type} to {value_type})",
                items.len()
            );
            for (i, m) in items.iter().enumerate() {
                out.push_str(&format!("\n[{i}] {}", crate::tensor::render_map(m, o)));
            }
            out
        }
    }
}

/// How the session prints tensors (`--full`: never summarised).
fn print_options(s: &Session, full: bool) -> PrintOptions {
    PrintOptions {
        precision: s.config.precision,
        threshold: if full {
            usize::MAX
        } else {
            s.config.print_threshold
        },
        line_width: super::line_width(&s.config),
    }
}

/// A map, or a sequence of maps (`seq`), as `print --format json|csv`
/// writes it: JSON keeps keys and values typed (`{"keys": [...], "values":
/// [...]}` per map); CSV is a header row of the keys, then one row of
/// values per map (the maps of a sequence must share their keys).
fn export_maps(name: &str, maps: &[crate::tensor::Map], seq: bool, format: &str) -> R<Vec<u8>> {
    let texts = |t: &crate::tensor::Tensor| -> Vec<String> {
        match t {
            crate::tensor::Tensor::Str(a) => a.iter().cloned().collect(),
            _ => t
                .head_scalars(t.len())
                .unwrap_or_default()
                .into_iter()
                .map(|v| v.exact_text())
                .collect(),
        }
    };
    let column = |t: &crate::tensor::Tensor| -> serde_json::Value {
        match t {
            crate::tensor::Tensor::Str(a) => json!(a.iter().collect::<Vec<_>>()),
            _ => json!(t.head_scalars(t.len()).unwrap_or_default()),
        }
    };
    match format {
        "json" => {
            let one = |m: &crate::tensor::Map| json!({"keys": column(m.keys()), "values": column(m.values())});
            let mut j = json!({"name": name});
            if let Some(m) = maps.first() {
                j["key_type"] = json!(m.key_type().code());
                j["value_type"] = json!(m.value_type().code());
            }
            if seq {
                j["maps"] = json!(maps.iter().map(one).collect::<Vec<_>>());
            } else if let Some(m) = maps.first() {
                j["keys"] = column(m.keys());
                j["values"] = column(m.values());
            }
            Ok(serde_json::to_string_pretty(&j)
                .unwrap_or_default()
                .into_bytes())
        }
        "csv" => {
            let Some(first) = maps.first() else {
                return Ok(Vec::new());
            };
            if let Some(i) = maps.iter().position(|m| m.keys() != first.keys()) {
                return Err(CmdError(format!(
                    "'{name}': map {i} has other keys than map 0, so the maps do not share CSV columns (use --format json)"
                )));
            }
            let rows: Vec<Vec<String>> = std::iter::once(texts(first.keys()))
                .chain(maps.iter().map(|m| texts(m.values())))
                .collect();
            let mut text = super::render::csv_records(rows.iter().map(|r| r.as_slice()));
            text.push('\n');
            Ok(text.into_bytes())
        }
        other => Err(CmdError(format!(
            "'{name}' is a map: print exports it as text, json or csv, not {other}"
        ))),
    }
}

/// A whole tensor as `print --format json|csv|npy` writes it.
fn export_tensor(name: &str, t: &crate::tensor::Tensor, format: &str) -> R<Vec<u8>> {
    let all = t.len();
    match format {
        "json" => {
            let values = match t {
                crate::tensor::Tensor::Str(a) => json!(a.iter().collect::<Vec<_>>()),
                _ => json!(t.head_scalars(all).unwrap_or_default()),
            };
            let j = json!({"name": name, "data_type": t.dtype().code(), "shape": t.shape(), "values": values});
            Ok(serde_json::to_string_pretty(&j)
                .unwrap_or_default()
                .into_bytes())
        }
        "csv" => {
            // one row per last-axis line (a scalar is one cell)
            let texts: Vec<String> = match t {
                crate::tensor::Tensor::Str(a) => a.iter().cloned().collect(),
                _ => t
                    .head_scalars(all)
                    .unwrap_or_default()
                    .into_iter()
                    .map(|v| v.exact_text())
                    .collect(),
            };
            let cols = t.shape().last().copied().unwrap_or(1).max(1);
            let mut text = super::render::csv_records(texts.chunks(cols));
            if !text.is_empty() {
                text.push('\n');
            }
            Ok(text.into_bytes())
        }
        "npy" => crate::tensor::write_npy(t).map_err(|e| CmdError(format!("'{name}': {e}"))),
        other => Err(CmdError(format!(
            "unknown format '{other}' for print (text, json, csv or npy)"
        ))),
    }
}

fn cmd_print(s: &mut Session, a: &Args) -> R<Flow> {
    if a.rest.trim().is_empty() {
        return Err(
            "usage: print NAME[INDEX] [--full] [--stats] [--format text|json|csv|npy] [--out FILE]"
                .into(),
        );
    }
    let arg = a.rest.trim();
    let bad_index = |e: super::slice::SliceError| CmdError(format!("bad index: {}", e.render(arg)));
    let (name_text, index_at) = super::slice::split(arg).map_err(bad_index)?;
    let index = match index_at {
        Some(at) => Some((super::slice::parse(arg, at).map_err(bad_index)?, at)),
        None => None,
    };
    let name = unquote_name(name_text).map_err(CmdError)?;
    let found = super::debugger::paused_value(s, &name).or_else(|| {
        s.last_run
            .as_ref()
            .and_then(|r| {
                r.outputs
                    .iter()
                    .find(|(n, _)| n == &name)
                    .map(|(_, v)| v)
                    .or_else(|| r.held.get(&name))
            })
            .cloned()
            .or_else(|| s.inputs.get(&name).cloned())
            .or_else(|| {
                let g = s.model.as_ref()?.graph.as_ref()?;
                let t = g.initializer.iter().find(|t| t.name() == name)?;
                crate::tensor::from_proto(t).ok().map(Value::Tensor)
            })
    });
    let format = a.value("format").unwrap_or("text");
    // `NAME[0, :3]`: the slice is printed under its own label
    let (found, label) = match (found, &index) {
        (Some(v), Some((idx, at))) => {
            let t = match &v {
                Value::Optional(Some(inner)) => inner.as_tensor(),
                other => other.as_tensor(),
            }
            .ok_or_else(|| {
                CmdError(format!(
                    "'{name}' is {}: only tensors can be indexed",
                    v.describe()
                ))
            })?;
            let part = super::slice::apply(t, idx).map_err(bad_index)?;
            let label = format!("{}{}", quote_name(&name), &arg[*at..]);
            (Some(Value::Tensor(part)), label)
        }
        (found, _) => (found, name.clone()),
    };
    let shown = if index.is_some() {
        label.clone()
    } else {
        quote_name(&label)
    };
    let name = label;
    match found {
        Some(v) if a.has("stats") => print_stats(s, &name, &v, format),
        Some(v) if format == "text" => {
            let o = print_options(s, a.has("full"));
            s.say(format!("{shown} =\n{}", render_value(&v, &o)));
            Ok(Flow::Continue)
        }
        Some(v) => {
            let bytes = match &v {
                Value::Map(m) => export_maps(&name, std::slice::from_ref(m), false, format)?,
                Value::MapSequence { items, .. } => export_maps(&name, items, true, format)?,
                _ => {
                    let t = match &v {
                        Value::Optional(Some(inner)) => inner.as_tensor(),
                        other => other.as_tensor(),
                    }
                    .ok_or_else(|| {
                        CmdError(format!(
                            "'{name}' is not a tensor or a map: --format {format} exports those"
                        ))
                    })?;
                    export_tensor(&name, t, format)?
                }
            };
            match a.value("out") {
                Some(path) => {
                    let path = crate::files::expand_home(path);
                    proto::write_atomic(Path::new(&path), &bytes)
                        .map_err(|e| CmdError(e.to_string()))?;
                    s.out_written = true;
                    s.status(format!("wrote '{name}' ({} bytes) to {path}", bytes.len()));
                }
                None if format == "npy" => {
                    return Err("--format npy writes binary: give --out FILE".into())
                }
                None => s.say(String::from_utf8_lossy(&bytes).trim_end()),
            }
            Ok(Flow::Continue)
        }
        None => {
            let released = s.last_run.as_ref().is_some_and(|r| {
                r.events
                    .iter()
                    .any(|e| e.action == EventAction::Remove && e.name == name)
            });
            Err(CmdError(if released {
                format!(
                    "'{name}' was released during the last run (run with --no-release to keep it)"
                )
            } else {
                let is_input = s
                    .model()
                    .ok()
                    .and_then(|m| m.graph.as_ref())
                    .is_some_and(|g| g.input.iter().any(|i| i.name() == name));
                if is_input {
                    format!(
                        "input '{name}' is not set yet (use 'set {0} = TENSOR' or 'run {0}=TENSOR')",
                        quote_name(&name)
                    )
                } else {
                    if super::debugger::is_paused(s) {
                        format!("no value named '{name}' is alive at the stop ('where' lists those alive)")
                    } else {
                        format!("no value named '{name}' (not an input, output, initializer, or value held after the run)")
                    }
                }
            }))
        }
    }
}

/// `print NAME --stats`: one row of statistics (table, JSON or CSV).
fn print_stats(s: &mut Session, name: &str, v: &Value, format: &str) -> R<Flow> {
    let t = match v {
        Value::Optional(Some(inner)) => inner.as_tensor(),
        other => other.as_tensor(),
    }
    .ok_or_else(|| {
        CmdError(format!(
            "'{name}' is {}: --stats needs a tensor",
            v.describe()
        ))
    })?;
    let st = t
        .stats()
        .ok_or_else(|| CmdError(format!("'{name}' holds strings: --stats needs numbers")))?;
    let f = match format {
        "text" => Format::Table,
        "json" => Format::Json,
        "csv" => Format::Csv,
        other => {
            return Err(CmdError(format!(
                "--stats prints as text, json or csv, not {other}"
            )))
        }
    };
    let mut j = serde_json::to_value(&st).unwrap_or_default();
    j["name"] = json!(name);
    j["elem_type"] = json!(t.dtype().to_string());
    j["shape"] = json!(t.shape());
    let mut d = Data::new(
        &[
            "name",
            "elem_type",
            "shape",
            "min",
            "max",
            "mean",
            "std",
            "nan",
            "inf",
        ],
        j,
    );
    let num = |x: Option<f64>| match (x, f) {
        (None, _) => String::new(),
        (Some(x), Format::Table) => crate::tensor::format_scalar(x, s.config.precision),
        (Some(x), _) => x.to_string(),
    };
    d.rows.push(vec![
        name.to_string(),
        t.dtype().to_string(),
        tuple(t.shape()),
        num(st.min),
        num(st.max),
        num(st.mean),
        num(st.std),
        st.nan.to_string(),
        st.inf.to_string(),
    ]);
    let text = d.render(f);
    s.say(text);
    Ok(Flow::Continue)
}

fn cmd_bench(s: &mut Session, a: &Args) -> R<Flow> {
    s.model()?;
    assignments(s, a)?;
    let runs = a.usize_flag("runs", 10)?;
    let warmup = a.usize_flag("warmup", 1)?;
    if runs == 0 {
        return Err("--runs must be at least 1".into());
    }
    let p = plan(s)?;
    let inputs = feed(s, &p)?;
    bind_from_inputs(s)?;
    let opts = RunOptions {
        events: false,
        release: true,
        max_values: 0,
        ..Default::default()
    };
    let mut times = Vec::with_capacity(runs);
    // a progress bar on a terminal's stderr once a bench passes a second
    let bar = super::render::progress_bar(
        (warmup + runs) as u64,
        "bench {bar:30} {pos}/{len} runs {elapsed}",
    );
    let started = Instant::now();
    let r: R<()> = with_pool(s, || {
        for i in 0..warmup + runs {
            let t0 = Instant::now();
            p.run(inputs.clone(), &opts).map_err(|e| {
                let done = i.saturating_sub(warmup);
                CmdError(format!("{} (after {done} of {runs} timed runs)", e.0))
            })?;
            if i >= warmup {
                times.push(t0.elapsed().as_secs_f64() * 1e3);
            }
            if started.elapsed().as_secs() >= 1 {
                bar.set_position(i as u64 + 1);
            }
        }
        Ok(())
    });
    bar.finish_and_clear();
    r?;
    times.sort_by(|x, y| x.total_cmp(y));
    let median = if times.len() % 2 == 1 {
        times[times.len() / 2]
    } else {
        (times[times.len() / 2 - 1] + times[times.len() / 2]) / 2.0
    };
    let (min, max) = (times[0], times[times.len() - 1]);
    let mut d = Data::new(
        &["runs", "min_ms", "median_ms", "max_ms"],
        json!({"runs": runs, "min_ms": min, "median_ms": median, "max_ms": max}),
    );
    d.rows.push(vec![
        runs.to_string(),
        format!("{min:.3}"),
        format!("{median:.3}"),
        format!("{max:.3}"),
    ]);
    emit(s, a, d);
    Ok(Flow::Continue)
}

// ------------------------------------------------------------ profile, memory

/// The last run's event log, or why there is none.
fn last_events(s: &Session) -> R<&[crate::runtime::Event]> {
    let r = s
        .last_run
        .as_ref()
        .ok_or_else(|| CmdError("no run yet: 'run' the model first".into()))?;
    if r.events.is_empty() {
        return Err(CmdError(
            "the last run kept no event log (config events on, then run again)".into(),
        ));
    }
    Ok(&r.events)
}

/// A bar of `frac` (0..=1) of `width` cells, in eighths.
fn bar(frac: f64, width: usize) -> String {
    const PARTS: [&str; 8] = ["", "▏", "▎", "▍", "▌", "▋", "▊", "▉"];
    let eighths = (frac.clamp(0.0, 1.0) * (width * 8) as f64).round() as usize;
    format!("{}{}", "█".repeat(eighths / 8), PARTS[eighths % 8])
}

fn node_json(n: &crate::runtime::EventNode) -> serde_json::Value {
    json!({"index": n.index, "op_type": n.op_type, "domain": n.domain, "name": n.name})
}

fn cmd_profile(s: &mut Session, a: &Args) -> R<Flow> {
    no_args("profile", a)?;
    let by_node = a.has("nodes");
    let rows = crate::runtime::usage::time_shares(last_events(s)?, by_node);
    let json_rows: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            let mut j = json!({"op_type": r.op_type, "count": r.count, "total_us": r.total_us, "share": r.share});
            if let Some(n) = &r.node {
                j["node"] = node_json(n);
            }
            j
        })
        .collect();
    let table = a.format == Format::Table;
    let mut headers = if by_node {
        vec!["node", "op_type", "name", "total_us", "share"]
    } else {
        vec!["op_type", "count", "total_us", "share"]
    };
    if table {
        headers.push("");
    }
    let mut d = Data::new(&headers, json!(json_rows));
    let top = rows.first().map_or(0.0, |r| r.share);
    for r in &rows {
        let mut row = match &r.node {
            Some(n) => vec![format!("#{}", n.index), r.op_type.clone(), n.name.clone()],
            None => vec![r.op_type.clone(), r.count.to_string()],
        };
        row.push(r.total_us.to_string());
        row.push(if table {
            format!("{:.1}%", r.share * 100.0)
        } else {
            format!("{:.6}", r.share)
        });
        if table {
            // bars scale to the largest row
            row.push(bar(if top > 0.0 { r.share / top } else { 0.0 }, 30));
        }
        d.rows.push(row);
    }
    if table {
        let total: u64 = rows.iter().map(|r| r.total_us).sum();
        d.footer.push(format!(
            "{} µs in {} nodes",
            total,
            rows.iter().map(|r| r.count).sum::<usize>()
        ));
    }
    emit(s, a, d);
    Ok(Flow::Continue)
}

fn cmd_memory(s: &mut Session, a: &Args) -> R<Flow> {
    no_args("memory", a)?;
    use crate::runtime::usage::{memory_series, peak};
    use crate::tensor::budget::human;
    let released = s
        .last_run
        .as_ref()
        .is_some_and(|r| r.events.iter().any(|e| e.action == EventAction::Remove));
    let series: Vec<_> = memory_series(last_events(s)?)
        .into_iter()
        .filter(|p| p.depth == 0)
        .collect();
    let top = peak(&series);
    if let Some(path) = a.value("svg") {
        let title = format!(
            "live tensor bytes after each node ({})",
            if released {
                "release on"
            } else {
                "nothing released"
            }
        );
        let text = super::memory_chart::svg(&series, top, &title);
        let path = crate::files::expand_home(path);
        proto::write_atomic(Path::new(&path), text.as_bytes())
            .map_err(|e| CmdError(e.to_string()))?;
        s.status(format!("wrote the memory chart to {path}"));
    }
    let peak_point = top.and_then(|i| series.get(i));
    // the weights are apart from the live values: used in place from the
    // model's files (mapped) or copied onto the heap (owned)
    let (mapped, owned) = s.plan.as_ref().map_or((0, 0), |p| p.weight_bytes());
    let rewritten = s.plan.as_ref().map_or(0, |p| p.rewritten_weight_bytes());
    let j = json!({
        "peak_bytes": peak_point.map_or(0, |p| p.live_bytes),
        "peak_node": peak_point.map(|p| node_json(&p.node)),
        "weights": {"mapped_bytes": mapped, "owned_bytes": owned, "rewritten_bytes": rewritten},
        "series": series.iter().map(|p| json!({"node": node_json(&p.node), "live_bytes": p.live_bytes})).collect::<Vec<_>>(),
    });
    let table = a.format == Format::Table;
    let mut headers = vec!["node", "op_type", "name", "live_bytes"];
    if table {
        headers.push("");
    }
    let mut d = Data::new(&headers, j);
    let max = peak_point.map_or(0, |p| p.live_bytes).max(1) as f64;
    for (i, p) in series.iter().enumerate() {
        let mut row = vec![
            format!("#{}", p.node.index),
            p.node.op_type.clone(),
            p.node.name.clone(),
            if table {
                human(p.live_bytes)
            } else {
                p.live_bytes.to_string()
            },
        ];
        if table {
            let mark = if Some(i) == top { " ← peak" } else { "" };
            row.push(format!("{}{mark}", bar(p.live_bytes as f64 / max, 30)));
        }
        d.rows.push(row);
    }
    if let (true, Some(p)) = (table, peak_point) {
        d.footer.push(format!(
            "peak {} after #{} {} '{}'{}",
            human(p.live_bytes),
            p.node.index,
            p.node.op_type,
            p.node.name,
            if released {
                ""
            } else {
                " (nothing was released: try run --release)"
            }
        ));
    }
    if table {
        d.footer.push(format!(
            "weights {} used in place from the model's files, {} copied on the heap{}",
            human(mapped),
            human(owned),
            if rewritten > 0 {
                format!(
                    ", {} rewritten by plan passes (folded BatchNormalization)",
                    human(rewritten)
                )
            } else {
                String::new()
            }
        ));
    }
    emit(s, a, d);
    Ok(Flow::Continue)
}

// ------------------------------------------------------------------ events

fn list_filter<T>(
    v: Option<&str>,
    parse: fn(&str) -> Option<T>,
    what: &str,
    all: &str,
) -> R<Option<Vec<T>>> {
    match v {
        None => Ok(None),
        Some(v) => v
            .split(',')
            .map(|x| {
                parse(x.trim()).ok_or_else(|| CmdError(format!("unknown {what} '{x}' ({all})")))
            })
            .collect::<R<Vec<T>>>()
            .map(Some),
    }
}

fn last_run(s: &Session) -> R<&crate::runtime::RunResult> {
    s.last_run
        .as_ref()
        .ok_or_else(|| CmdError("no run yet: use 'run' first".into()))
}

fn cmd_events(s: &mut Session, a: &Args) -> R<Flow> {
    no_args("events", a)?;
    let actions = list_filter(
        a.value("action"),
        EventAction::from_name,
        "action",
        "add, replace, remove, run_node",
    )?;
    let kinds = list_filter(
        a.value("kind"),
        EventKind::from_name,
        "kind",
        "input, initializer, intermediate, output, node",
    )?;
    let name = a
        .value("name")
        .map(|n| unquote_name(n).unwrap_or_else(|_| n.to_string()));
    if a.has("shapes") {
        ensure_report(s)?;
    }
    let run = last_run(s)?;
    if run.events.is_empty() && !s.config.events {
        return Err("the last run recorded no events ('config events on' to record them)".into());
    }
    let empty_report = shape::InferReport::default();
    let report = s.report.as_ref().unwrap_or(&empty_report);
    let evs: Vec<&crate::runtime::Event> = run
        .events
        .iter()
        .filter(|e| actions.as_ref().is_none_or(|a| a.contains(&e.action)))
        .filter(|e| kinds.as_ref().is_none_or(|k| k.contains(&e.kind)))
        .filter(|e| name.as_ref().is_none_or(|n| &e.name == n))
        .collect();
    let mut headers = vec![
        "index",
        "action",
        "kind",
        "name",
        "data_type",
        "shape",
        "value_count",
        "values",
        "string_values",
        "truncated",
        "node",
        "elapsed_us",
        "depth",
        "scope",
    ];
    // --shapes: each value event beside check's columns (the seed's final
    // table): inferred, resolved with the bindings, status
    let checks: Vec<Option<shape::CheckRow>> = if a.has("shapes") {
        headers.extend(["inferred", "resolved", "status"]);
        let is_value = |e: &crate::runtime::Event| {
            matches!(e.action, EventAction::Add | EventAction::Replace) && e.depth == 0
        };
        let produced: Vec<(String, Vec<usize>)> = evs
            .iter()
            .filter(|e| is_value(e))
            .map(|e| (e.name.clone(), e.shape.clone()))
            .collect();
        let mut rows = shape::check_shapes(report, &s.bindings, &produced).into_iter();
        evs.iter()
            .map(|e| if is_value(e) { rows.next() } else { None })
            .collect()
    } else {
        vec![]
    };
    let mut d = Data::new(&headers, Json::Null);
    let mut arr = Vec::with_capacity(evs.len());
    let prec = s.config.precision;
    for (k, e) in evs.iter().enumerate() {
        let check = checks.get(k).and_then(Option::as_ref);
        let node_json = e.node.as_ref().map(
            |n| json!({"index": n.index, "op_type": n.op_type, "domain": n.domain, "name": n.name}),
        );
        arr.push(json!({
            "index": e.index,
            "action": e.action.name(),
            "kind": e.kind.name(),
            "name": e.name,
            "data_type": e.data_type,
            "shape": e.shape,
            "value_count": e.value_count,
            "values": e.values,
            "string_values": e.string_values,
            "truncated": e.truncated,
            "node": node_json.clone().unwrap_or(Json::Null),
            "elapsed_us": e.elapsed_us,
            "depth": e.depth,
            "scope": e.scope,
        }));
        if let (Some(c), Some(Json::Object(o))) = (check, arr.last_mut()) {
            let dims = c.inferred.as_deref();
            o.insert("inferred".into(), dims_json(dims));
            o.insert("resolved".into(), resolved_json(&c.resolved, dims));
            o.insert("status".into(), json!(c.status.name()));
        }
        let vals = if e.string_values.is_empty() {
            let v: Vec<String> = e.values.iter().map(|x| x.table_text(prec)).collect();
            if v.is_empty() {
                String::new()
            } else {
                format!(
                    "[{}]{}",
                    v.join(", "),
                    if e.truncated { " ..." } else { "" }
                )
            }
        } else {
            let q: Vec<String> = e.string_values.iter().map(|v| quote_str(v)).collect();
            format!(
                "[{}]{}",
                q.join(", "),
                if e.truncated { " ..." } else { "" }
            )
        };
        let node_txt = e
            .node
            .as_ref()
            .map(|n| {
                let op = if n.domain.is_empty() {
                    n.op_type.clone()
                } else {
                    format!("{}.{}", n.domain, n.op_type)
                };
                format!("#{} {op}", n.index)
            })
            .unwrap_or_default();
        d.rows.push(vec![
            e.index.to_string(),
            e.action.name().into(),
            e.kind.name().into(),
            e.name.clone(),
            // the table names the type (`int64`); JSON and CSV keep the number
            match DataType::from_code(e.data_type) {
                Some(t) if e.data_type != 0 => t.name().to_string(),
                _ => String::new(),
            },
            format!("{:?}", e.shape),
            e.value_count.to_string(),
            vals,
            String::new(),
            e.truncated.to_string(),
            node_txt,
            e.elapsed_us.map(|u| u.to_string()).unwrap_or_default(),
            e.depth.to_string(),
            e.scope.clone(),
        ]);
        if a.has("shapes") {
            let row = d.rows.last_mut().expect("pushed above");
            match check {
                Some(c) => row.extend([
                    shape_text(c.inferred.as_deref()),
                    resolved_text(&c.resolved),
                    c.status.name().to_string(),
                ]),
                None => row.extend([String::new(), String::new(), String::new()]),
            }
        }
    }
    d.json = Json::Array(arr);
    if a.format == Format::Table {
        // the table view drops the columns that are empty for every row
        let keep: Vec<usize> = (0..headers.len())
            .filter(|&i| {
                matches!(headers[i], "index" | "action" | "kind" | "name" | "shape")
                    || d.rows.iter().any(|r| {
                        !r[i].is_empty()
                            && r[i] != "false"
                            && !(headers[i] == "depth" && r[i] == "0")
                    })
            })
            .collect();
        let h: Vec<String> = keep.iter().map(|&i| headers[i].to_string()).collect();
        let rows: Vec<Vec<String>> = d
            .rows
            .iter()
            .map(|r| keep.iter().map(|&i| r[i].clone()).collect())
            .collect();
        let mut t = if table_colors(a) {
            super::render::table_styled(&h, &rows, super::render::meaning_color)
        } else {
            super::render::table(&h, &rows)
        };
        t.push_str(&format!(
            "\n{} event{}",
            rows.len(),
            if rows.len() == 1 { "" } else { "s" }
        ));
        if let Some(why) = &run.failed {
            let first = why.lines().next().unwrap_or("");
            t.push_str(&format!("\nthe run failed, the log ends there: {first}"));
        }
        // removals asked for, and the run released nothing: say why
        let asks_remove = actions
            .as_ref()
            .is_some_and(|a| a.contains(&EventAction::Remove));
        if rows.is_empty()
            && asks_remove
            && !run.events.iter().any(|e| e.action == EventAction::Remove)
        {
            t.push_str(
                " (that run released nothing: release is off; `config release on` or `run --release`)",
            );
        }
        s.say(t);
        return Ok(Flow::Continue);
    }
    if a.format == Format::Csv {
        for (r, e) in d.rows.iter_mut().zip(&evs) {
            r[4] = e.data_type.to_string();
            // lists as JSON arrays: ["a b"] and ["a","b"] stay apart
            r[7] = if e.values.is_empty() {
                String::new()
            } else {
                json!(e.values).to_string()
            };
            r[8] = if e.string_values.is_empty() {
                String::new()
            } else {
                json!(e.string_values).to_string()
            };
            r[10] = e
                .node
                .as_ref()
                .map(|n| format!("{}:{}:{}:{}", n.index, n.domain, n.op_type, n.name))
                .unwrap_or_default();
        }
    }
    emit(s, a, d);
    Ok(Flow::Continue)
}

fn cmd_check(s: &mut Session, a: &Args) -> R<Flow> {
    no_args("check", a)?;
    ensure_report(s)?;
    let run = last_run(s)?;
    // every value a node produced, with its runtime shape, in run order
    let mut produced: Vec<(String, Vec<usize>)> = Vec::new();
    if !run.events.is_empty() {
        // a value produced twice (Replace) is checked once, at its last place
        let mut last: HashMap<&str, usize> = HashMap::new();
        let mut slots: Vec<Option<(String, Vec<usize>)>> = Vec::new();
        for e in &run.events {
            if matches!(e.action, EventAction::Add | EventAction::Replace)
                && matches!(e.kind, EventKind::Intermediate | EventKind::Output)
                && e.depth == 0
            {
                if let Some(old) = last.insert(e.name.as_str(), slots.len()) {
                    slots[old] = None;
                }
                slots.push(Some((e.name.clone(), e.shape.clone())));
            }
        }
        produced.extend(slots.into_iter().flatten());
    } else {
        let m = s.model()?;
        if let Some(g) = &m.graph {
            let outputs: HashMap<&str, &Value> =
                run.outputs.iter().map(|(k, v)| (k.as_str(), v)).collect();
            for n in &g.node {
                for o in &n.output {
                    let v = outputs.get(o.as_str()).copied().or_else(|| run.held.get(o));
                    if let Some(Value::Tensor(t)) = v {
                        produced.push((o.clone(), t.shape().to_vec()));
                    }
                }
            }
        }
    }
    let r = s.report.as_ref().ok_or("no inference report")?;
    let mut d = Data::new(
        &["name", "runtime", "inferred", "resolved", "status"],
        Json::Null,
    );
    let mut arr = Vec::new();
    let (mut ok, mut bad, mut unknown) = (0, 0, 0);
    for row in shape::check_shapes(r, &s.bindings, &produced) {
        match row.status {
            shape::CheckStatus::Ok => ok += 1,
            shape::CheckStatus::Mismatch => bad += 1,
            shape::CheckStatus::Unknown => unknown += 1,
        }
        let dims = row.inferred.as_deref();
        arr.push(json!({
            "name": row.name,
            "runtime": row.runtime,
            "inferred": dims_json(dims),
            "resolved": resolved_json(&row.resolved, dims),
            "status": row.status.name(),
        }));
        d.rows.push(vec![
            quote_name(&row.name),
            tuple(&row.runtime),
            shape_text(dims),
            resolved_text(&row.resolved),
            row.status.name().to_string(),
        ]);
    }
    d.json = Json::Array(arr);
    d.footer
        .push(format!("{ok} OK, {bad} MISMATCH, {unknown} UNKNOWN"));
    if let Some(why) = &run.failed {
        let first = why.lines().next().unwrap_or("");
        d.footer.push(format!(
            "the run failed ({first}): the values after that node were not produced"
        ));
    }
    emit(s, a, d);
    // a mismatch fails the command (a script stops, exit status 1) after
    // its table is printed
    if bad > 0 {
        return Err(CmdError(format!(
            "check: {bad} value{} whose runtime shape differs from the inferred one",
            if bad == 1 { "" } else { "s" }
        )));
    }
    Ok(Flow::Continue)
}

// ------------------------------------------------------------------ session

fn on_off(v: &str) -> R<bool> {
    match v {
        "on" | "true" | "1" | "yes" => Ok(true),
        "off" | "false" | "0" | "no" => Ok(false),
        other => Err(CmdError(format!("expected on or off, got '{other}'"))),
    }
}

/// A count of at least 1.
fn positive(key: &str, v: &str) -> R<usize> {
    match v.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(CmdError(format!(
            "{key} expects a positive integer, got '{v}'"
        ))),
    }
}

fn cmd_config(s: &mut Session, a: &Args) -> R<Flow> {
    let toks = lex::tokens(&a.rest);
    let c = &s.config;
    let show = |key: &str, c: &super::Config| -> Option<String> {
        Some(match key {
            "events" => if c.events { "on" } else { "off" }.into(),
            "release" => if c.release { "on" } else { "off" }.into(),
            "max-values" => c.max_values.to_string(),
            "precision" => c.precision.to_string(),
            "seed" => c.seed.to_string(),
            "threads" => c
                .threads
                .map(|t| t.to_string())
                .unwrap_or_else(|| format!("{} (all cores)", rayon::current_num_threads())),
            "max-memory" => format!(
                "{} ({} in use)",
                crate::tensor::budget::human(crate::tensor::budget::limit()),
                crate::tensor::budget::human(crate::tensor::budget::in_use())
            ),
            "max-iterations" => crate::runtime::limits::max_iterations().to_string(),
            "max-events" => crate::runtime::limits::max_events().to_string(),
            "print-threshold" => c.print_threshold.to_string(),
            "line-width" => match c.line_width {
                Some(w) => w.to_string(),
                None => format!("{} (the terminal's)", super::line_width(c)),
            },
            _ => return None,
        })
    };
    const KEYS: &[&str] = super::CONFIG_KEYS;
    match toks.as_slice() {
        [] => {
            let lines: Vec<String> = KEYS
                .iter()
                .map(|k| format!("{k:<16} {}", show(k, c).unwrap_or_default()))
                .collect();
            s.say(lines.join("\n"));
        }
        [key] => {
            let v = show(key, c)
                .ok_or_else(|| CmdError(format!("unknown option '{key}' ({})", KEYS.join(", "))))?;
            s.say(format!("{key} {v}"));
        }
        [key, value] => {
            let num = |v: &str| -> R<usize> {
                v.parse().map_err(|_| {
                    CmdError(format!("{key} expects a non-negative integer, got '{v}'"))
                })
            };
            match key.as_str() {
                "events" => s.config.events = on_off(value)?,
                "release" => s.config.release = on_off(value)?,
                "max-values" => s.config.max_values = num(value)?,
                "print-threshold" => s.config.print_threshold = num(value)?,
                "line-width" => {
                    s.config.line_width = match value.as_str() {
                        "auto" => None,
                        v => match num(v)? {
                            w @ 20..=100_000 => Some(w),
                            _ => return Err("line-width is between 20 and 100000, or auto".into()),
                        },
                    }
                }
                "precision" => {
                    let p = num(value)?;
                    if p > 17 {
                        return Err("precision is at most 17".into());
                    }
                    s.config.precision = p;
                }
                "seed" => {
                    let v: u64 = value
                        .parse()
                        .map_err(|_| CmdError(format!("seed expects an integer, got '{value}'")))?;
                    s.config.seed = v;
                    s.rng = Rng::new(v);
                }
                "max-memory" => crate::tensor::budget::set_limit(match value.as_str() {
                    "default" => None,
                    v => Some(crate::tensor::budget::parse_bytes(v).map_err(CmdError)?),
                }),
                "max-iterations" => {
                    crate::runtime::limits::set_max_iterations(positive(key, value)? as u64)
                }
                "max-events" => crate::runtime::limits::set_max_events(positive(key, value)?),
                "threads" => {
                    let n = num(value)?;
                    if n == 0 || n > 1024 {
                        return Err("threads must be between 1 and 1024".into());
                    }
                    let pool = rayon::ThreadPoolBuilder::new()
                        .num_threads(n)
                        .build()
                        .map_err(|e| CmdError(format!("cannot start {n} threads: {e}")))?;
                    s.pool = Some(Arc::new(pool));
                    s.config.threads = Some(n);
                }
                other => {
                    return Err(CmdError(format!(
                        "unknown option '{other}' ({})",
                        KEYS.join(", ")
                    )))
                }
            }
            let v = show(key, &s.config).unwrap_or_default();
            s.status(format!("{key} {v}"));
        }
        _ => return Err("usage: config [KEY [VALUE]]".into()),
    }
    Ok(Flow::Continue)
}

fn cmd_source(s: &mut Session, a: &Args) -> R<Flow> {
    let p = one_path("source", a)?;
    if s.source_depth >= 16 {
        return Err(CmdError(format!(
            "{p}: 'source' nested more than 16 deep (does a script source itself?)"
        )));
    }
    let text = super::read_script(Path::new(&p))?;
    let saved = std::mem::take(&mut s.out);
    s.source_depth += 1;
    let mut collected = saved;
    let mut errs = String::new();
    let mut notes = String::new();
    let (end, _) = {
        let mut print = |o: &str| {
            if !collected.is_empty() && !collected.ends_with('\n') {
                collected.push('\n');
            }
            collected.push_str(o);
        };
        let mut eprint = |o: &str| {
            errs.push_str(o);
            errs.push('\n');
        };
        let mut status = |o: &str| {
            notes.push_str(o);
            notes.push('\n');
        };
        let out = super::ScriptOutput {
            print: &mut print,
            status: &mut status,
            eprint: &mut eprint,
        };
        super::run_script(s, &p, &text, false, out)
    };
    s.source_depth -= 1;
    s.out = collected;
    s.status(notes.trim_end());
    match end {
        super::ScriptEnd::Failed(msg) => {
            // the message names the sourced file's line; the caller adds
            // where it was sourced from
            s.error_located = true;
            Err(CmdError(msg))
        }
        super::ScriptEnd::Quit => Ok(Flow::Quit),
        super::ScriptEnd::Done => Ok(Flow::Continue),
    }
}

fn cmd_help(s: &mut Session, a: &Args) -> R<Flow> {
    let topic = a.rest.trim();
    // wrapped to the terminal (75 columns when not a terminal)
    let width = super::line_width(&s.config);
    let wrap = |text: &str, first: &str, rest: &str| -> String {
        let opts = textwrap::Options::new(width)
            .initial_indent(first)
            .subsequent_indent(rest)
            .word_splitter(textwrap::WordSplitter::NoHyphenation);
        textwrap::fill(text, opts)
    };
    if topic.is_empty() {
        let w = COMMANDS.iter().map(|c| c.usage.len()).max().unwrap_or(0);
        let mut lines = vec!["commands:".to_string()];
        for c in COMMANDS {
            let first = c
                .help
                .split(". ")
                .next()
                .unwrap_or(c.help)
                .trim_end_matches('.');
            // usage and summary side by side when they fit, else the
            // summary on the next lines, indented
            if 2 + w + 2 + first.len() <= width {
                lines.push(format!("  {:<w$}  {first}", c.usage));
            } else {
                lines.push(format!("  {}", c.usage));
                lines.push(wrap(first, "      ", "      "));
            }
        }
        lines.push(String::new());
        lines.push(wrap(
            "'help COMMAND' for details; data commands take --format table|json|csv and --out FILE.",
            "",
            "",
        ));
        s.say(lines.join("\n"));
        return Ok(Flow::Continue);
    }
    let c = find(topic).ok_or_else(|| {
        CmdError(match suggest(topic) {
            Some(x) => format!("unknown command '{topic}'; did you mean '{x}'?"),
            None => format!("unknown command '{topic}'"),
        })
    })?;
    let mut lines = vec![
        format!("usage: {}", c.usage),
        String::new(),
        wrap(c.help, "", ""),
    ];
    if !c.aliases.is_empty() {
        lines.push(format!("aliases: {}", c.aliases.join(", ")));
    }
    if !c.flags.is_empty() {
        lines.push(String::new());
        lines.push("flags:".into());
        for f in c.flags {
            let head = match f.value {
                Some(v) => format!("--{} {v}", f.name),
                None => format!("--{}", f.name),
            };
            lines.push(wrap(
                &format!("{head:<28} {}", f.help),
                "  ",
                &" ".repeat(31),
            ));
        }
    }
    s.say(lines.join("\n"));
    Ok(Flow::Continue)
}

fn cmd_quit(_: &mut Session, _: &Args) -> R<Flow> {
    Ok(Flow::Quit)
}
