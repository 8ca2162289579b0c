//! The command table, argument parsing and dispatch, and the helpers several
//! commands share. Each command's handler lives in its own file (`load.rs`
//! for `load`, ...); adding a command is one file and one line in `COMMANDS`.

use super::lex::{self, quote_name, split_assignment, unquote_name};
use super::render::{plain_text, tuple, Data, Format, Row};
use super::tensor_expr::{self, Env, Rng};
use super::{CmdResult, Flow, Session};
use crate::expr::{Bindings, Expr};
use crate::proto::{self, ExternalOptions};
use crate::runtime::{EventAction, EventKind, Plan, RunOptions};
use crate::shape::{self, Dim, TypeInfo};
use crate::tensor::ValueMap;
use crate::tensor::{quote_str, render_tensor_with, DataType, PrintOptions, Value};
use crate::text;
use anyhow::{anyhow, bail, Context};
use serde::Serialize;
use serde_json::{json, Value as Json};
use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::time::Instant;

mod bench;
mod check;
mod config;
mod eval;
mod events;
mod help;
mod infer;
mod inputs;
mod r#let;
mod load;
mod memory;
mod parse;
mod print;
mod profile;
mod quit;
mod run;
mod save;
mod set;
mod shapes;
mod show;
mod signature;
mod source;
mod unlet;

pub(super) type R<T> = CmdResult<T>;

pub use signature::{Arity, Flag, Kind, Positional, Signature};

/// One shell command.
pub struct Command {
    pub name: &'static str,
    pub aliases: &'static [&'static str],
    pub help: &'static str,
    /// Its positionals and flags: usage, checks, help and completion come
    /// from it.
    pub sig: Signature,
    pub handler: fn(&mut Session, &Args) -> R<Flow>,
}

/// Parsed arguments of a command.
pub struct Args {
    /// The positional text (flags removed).
    pub rest: String,
    /// The positional words (flags removed; empty for a raw command).
    pub pos: Vec<String>,
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
                .map_err(|_| anyhow!("--{f} expects a non-negative integer, got '{v}'")),
        }
    }
}

const FORMAT: Flag = Flag {
    name: "format",
    value: Some("F"),
    kind: Kind::Choice(&["table", "json", "csv"]),
    help: "output format: table (default), json or csv",
};

const OUT: Flag = Flag {
    name: "out",
    value: Some("FILE"),
    kind: Kind::Path,
    help: "write the output to FILE instead of the screen",
};

/// A signature of these positionals and flags (not raw, not a data
/// command, no exclusive flags).
const fn sig(positionals: &'static [Positional], flags: &'static [Flag]) -> Signature {
    Signature {
        positionals,
        flags,
        exclusive: &[],
        instead: None,
        raw: false,
        data: false,
    }
}

impl Signature {
    const fn raw(mut self) -> Self {
        self.raw = true;
        self
    }

    const fn data(mut self) -> Self {
        self.data = true;
        self
    }

    const fn exclusive(mut self, groups: &'static [&'static [&'static str]]) -> Self {
        self.exclusive = groups;
        self
    }

    const fn instead(mut self, flag: &'static str) -> Self {
        self.instead = Some(flag);
        self
    }
}

macro_rules! pos {
    ($name:expr, $kind:ident, $arity:ident, $help:expr) => {
        Positional {
            name: $name,
            kind: Kind::$kind,
            arity: Arity::$arity,
            help: $help,
        }
    };
}

macro_rules! cmd {
    ($name:expr, $aliases:expr, $help:expr, $sig:expr, $h:expr) => {
        Command {
            name: $name,
            aliases: $aliases,
            help: $help,
            sig: $sig,
            handler: $h,
        }
    };
}

/// Every command of the shell.
pub static COMMANDS: &[Command] = &[
    cmd!("load", &[], "Load a model: binary protobuf (.onnx, external data beside it allowed) or ONNX text syntax.", sig(&[pos!("PATH", Path, Required, "a model file: binary protobuf (.onnx) or ONNX text")], &[]), load::cmd_load),
    cmd!("parse", &[], "Parse a model given inline in ONNX text syntax; an unclosed bracket continues on the next lines.", sig(&[pos!("TEXT", Text, Required, "the model in ONNX text syntax")], &[]).raw(), parse::cmd_parse),
    cmd!("save", &[], "Save the model: .onnx as binary protobuf, anything else as ONNX text. Written atomically.", sig(&[pos!("PATH", Path, Required, "the file to write (.onnx: binary protobuf, else ONNX text)")], &[Flag { name: "external-threshold", value: Some("BYTES"), kind: Kind::Integer, help: "tensors of at least BYTES go to PATH.data, referenced from the model (binary or text)" }]), save::cmd_save),
    cmd!("show", &[], "Pretty summary of the model (opsets, graph, inputs, initializers, numbered nodes, outputs), with --text its canonical ONNX text, with --plan the steps an unobserved run executes after the plan-time passes (fused steps name the nodes they cover).", sig(&[], &[Flag { name: "text", value: None, kind: Kind::Text, help: "print the canonical text syntax" }, Flag { name: "plan", value: None, kind: Kind::Text, help: "print the executed plan (fused steps, the nodes each covers)" }, OUT]).exclusive(&[&["text", "plan"]]), show::cmd_show),
    cmd!("infer", &[], "Infer every value's element type and shape (symbolic), write graph.value_info, and list the equations found (M = 2*N).", sig(&[], &[FORMAT, OUT]).data(), infer::cmd_infer),
    cmd!("let", &[], "Bind a symbol to an integer (EXPR may use bound symbols); without arguments, list the bindings.", sig(&[pos!("NAME = EXPR", SymbolAssign, Optional, "a symbol, '=' and an integer expression (NAME = EXPR)")], &[FORMAT, OUT]).raw().data(), r#let::cmd_let),
    cmd!("unlet", &[], "Drop a binding.", sig(&[pos!("NAME", Symbol, Required, "a bound symbol")], &[]), unlet::cmd_unlet),
    cmd!("eval", &[], "Evaluate a dimension expression with the bindings; with unbound symbols, print it simplified. Integers and symbols (N, p2o.DynamicDimension.0, or any name quoted: \"batch size\"); operators + - * // (floor division) % (floor modulo) and parentheses; functions Max(a, b, ...), Min(a, b, ...), CeilToInt(a, b) (ceiling of a/b).", sig(&[pos!("EXPR", DimExpr, Required, "a dimension expression")], &[FORMAT, OUT]).data(), eval::cmd_eval),
    cmd!("shapes", &[], "Every value's inferred shape next to the shape resolved with the bindings.", sig(&[], &[FORMAT, OUT]).data(), shapes::cmd_shapes),
    cmd!("set", &[], "Set a model input to a tensor expression (arange(8).reshape(2,4), rand(N,4), [1, 2]...). Tensor expressions: literals [1, 2], [[1., 2.], [3., 4.]], [\"a\", \"b\"], [true, false]; maps {\"a\": 1.5, \"b\": 2} or {1: \"x\"} (inputs of type map, e.g. DictVectorizer's); constructors arange(stop) or arange(start, stop[, step]), zeros(d, ...), ones(d, ...), full([d, ...], value), eye(n), linspace(a, b, n), rand(d, ...) (uniform in [0, 1), seeded by config seed), randn(d, ...) (normal), npy(\"file.npy\"), pb(\"file.pb\"); methods .reshape(d, ...) (one -1 allowed), .astype(TYPE) (float, int64, ...), .T / .transpose(perm...). Dimensions may be bound symbols (rand(N, 4)).", sig(&[pos!("NAME = TENSOR", InputAssign, Required, "an input, '=' and a tensor expression (NAME = TENSOR)")], &[]).raw(), set::cmd_set),
    cmd!("inputs", &[], "Declared inputs, their types, and the values set.", sig(&[], &[FORMAT, OUT]).data(), inputs::cmd_inputs),
    cmd!("run", &[], "Set the given inputs, run the model, print the outputs. TENSOR is a tensor expression ('help set' lists them).", sig(&[pos!("NAME=TENSOR", TensorAssign, Repeated, "an input set to a tensor expression")], &[Flag { name: "release", value: None, kind: Kind::Text, help: "release intermediates after their last use (this run)" }, Flag { name: "no-release", value: None, kind: Kind::Text, help: "keep every intermediate (this run)" }]).exclusive(&[&["release", "no-release"]]), run::cmd_run),
    cmd!("print", &[], "Print a value: an input, an output, an initializer, or a value still held after the run. NAME[INDEX] prints part of a tensor, numpy-style: integers (negative from the end), start:stop:step, ':' and '...' (print x[0, :3], print \"a.b\"[..., -1]); it works with --stats and --format. Large tensors are summarised numpy-style (config print-threshold); --full prints every element; --stats prints min, max, mean, std and the NaN and infinity counts instead; --format json|csv|npy exports the whole tensor (npy needs --out). Maps print as dicts and export as JSON or CSV.", sig(&[pos!("NAME[INDEX]", ValueIndex, Required, "a value, optionally indexed numpy-style")], &[Flag { name: "full", value: None, kind: Kind::Text, help: "every element, never summarised" }, Flag { name: "stats", value: None, kind: Kind::Text, help: "min, max, mean, std, NaN and infinity counts" }, Flag { name: "format", value: Some("text|json|csv|npy"), kind: Kind::Choice(&["text", "json", "csv", "npy"]), help: "text (default), or the whole tensor as JSON, CSV or .npy" }, OUT]), print::cmd_print),
    cmd!("bench", &[], "Run the model K+N times with events off; print min, median and max milliseconds.", sig(&[pos!("NAME=TENSOR", TensorAssign, Repeated, "an input set to a tensor expression")], &[Flag { name: "runs", value: Some("N"), kind: Kind::Integer, help: "timed runs (default 10)" }, Flag { name: "warmup", value: Some("K"), kind: Kind::Integer, help: "untimed runs first (default 1)" }, FORMAT, OUT]).data(), bench::cmd_bench),
    cmd!("events", &[], "The event log of the last run, filtered; --shapes adds check's columns (inferred, resolved shape, status) to each value.", sig(&[], &[Flag { name: "action", value: Some("A[,A]"), kind: Kind::ChoiceList(&["add", "replace", "remove", "run_node"]), help: "add, replace, remove, run_node" }, Flag { name: "kind", value: Some("K[,K]"), kind: Kind::ChoiceList(&["input", "initializer", "intermediate", "output", "node"]), help: "input, initializer, intermediate, output, node" }, Flag { name: "name", value: Some("NAME"), kind: Kind::EventName, help: "one value or node name" }, Flag { name: "shapes", value: None, kind: Kind::Text, help: "add inferred shape, resolved shape and OK/MISMATCH/UNKNOWN to each value event" }, FORMAT, OUT]).data(), events::cmd_events),
    cmd!("profile", &[], "Where the last run's time went: per operator type (count, total microseconds, share), or per node with --nodes, largest first, with a bar chart in the table. Needs the event log (config events on).", sig(&[], &[Flag { name: "nodes", value: None, kind: Kind::Text, help: "one row per node instead of per operator type" }, FORMAT, OUT]).data(), profile::cmd_profile),
    cmd!("memory", &[], "Bytes of live values (inputs, initializers, intermediates, outputs) after each node of the last run, with a bar chart and the peak marked; --svg writes the chart as a picture. Run with release on and off to see what release frees.", sig(&[], &[Flag { name: "svg", value: Some("FILE"), kind: Kind::Path, help: "write the chart as an SVG picture" }, FORMAT, OUT]).data(), memory::cmd_memory),
    cmd!("check", &[], "For every value the last run produced: runtime shape, inferred shape, resolved shape, OK/MISMATCH/UNKNOWN.", sig(&[], &[FORMAT, OUT]).data(), check::cmd_check),
    cmd!("config", &[], "Show or set options: events on|off, release on|off, max-values N, precision N, print-threshold N (tensors with more elements print summarised, default 1000), line-width N|auto, seed N, threads N, max-memory SIZE|default (4G, 512M), max-iterations N, max-events N.", sig(&[pos!("KEY", ConfigKey, Optional, "an option"), pos!("VALUE", ConfigValue, Optional, "the option's new value")], &[]), config::cmd_config),
    cmd!("dump", &[], "Write values of the last run to DIR as .npy files (with --pb also .pb TensorProto files) and DIR/manifest.json: [{name, file, elem_type, shape, node_index}] (node_index: the node that wrote the value, null for inputs and initializers). By default the graph outputs and intermediates; --all adds the inputs and initializers; --values names some (quoted when not identifiers: --values \"a.b\",c). File names are the value names made safe (characters other than letters, digits, '.', '-', '_' become '_', repeats get _2, _3...); the manifest maps names to files. Values released by the last run (release on) are written during a second run on the same inputs, each as it is produced (random operators then draw again). Only values of the main graph are dumped (not those inside Loop, If or Scan bodies); sequences and maps are skipped. On a failure the files written are removed and no manifest is written.", sig(&[pos!("DIR", Path, Required, "the folder to write")], &[Flag { name: "values", value: Some("a,b"), kind: Kind::NameList, help: "the values to write (comma-separated names)" }, Flag { name: "all", value: None, kind: Kind::Text, help: "also the inputs and initializers" }, Flag { name: "pb", value: None, kind: Kind::Text, help: "also write each value as a .pb TensorProto" }]).exclusive(&[&["values", "all"]]), super::dump::cmd_dump),
    cmd!("compare", &[], "Run this model and REF (another model file: the same network before an optimisation or a conversion, or a dump folder with manifest.json) on the same inputs (the session's, plus NAME=TENSOR as for run), keeping every intermediate, and report the first node (in this model's execution order) whose output differs beyond tolerance (|a - b| <= atol + rtol * |b|; defaults rtol 1e-3, atol 1e-7 as 'test'). Values match by name (same element type and shape), else by position: the next unmatched REF value of the same type and shape between the neighbouring name matches. REF's inputs are matched by name, else by position. Only values of the main graph are compared. JSON: {first_divergence: {node: {index, op_type, domain, name}, value, max_abs, max_rel} or null, matched, values: [...] (with --all: name, ref, max_abs, max_rel, ok per matched value)}. Afterwards 'print NAME' shows any value of this model's run.", sig(&[pos!("REF", Path, Required, "a model file or a dump folder"), pos!("NAME=TENSOR", TensorAssign, Repeated, "an input set to a tensor expression")], &[Flag { name: "rtol", value: Some("R"), kind: Kind::Text, help: "relative tolerance (default 1e-3)" }, Flag { name: "atol", value: Some("A"), kind: Kind::Text, help: "absolute tolerance (default 1e-7)" }, Flag { name: "all", value: None, kind: Kind::Text, help: "one row per matched value" }, FORMAT, OUT]).data(), super::compare::cmd_compare),
    cmd!("source", &[], "Run a script inside the current session.", sig(&[pos!("PATH", Path, Required, "a script file")], &[]), source::cmd_source),
    cmd!("help", &[], "List the commands, or describe one.", sig(&[pos!("COMMAND", CommandName, Optional, "a command")], &[]), help::cmd_help),
    cmd!("break", &[], "Set a breakpoint for 'run'. With --op and/or --node only, the run stops before a matching node (--node #INDEX: a main-graph node by index; NAME: a node of any graph, Loop/Scan/If bodies included). With --value and/or --if it stops after the node that writes the value (--value: that value; --if alone: any value) when the condition holds. EXPR is a condition on the value's statistics, the value named by any identifier: 'max(abs(z)) > 1e4', 'isnan(z)', 'any(isinf(z))', 'all(isfinite(z))', 'mean(z) < 0 and std(z) > 1 or not isnan(z)'; min, max, mean, std (over the finite elements, as print --stats), count; + - * /, comparisons, and/or/not (&& || !). A malformed condition is refused with its column. Breakpoints and watches share one numbered list ('breaks').", sig(&[], &[Flag { name: "op", value: Some("OP"), kind: Kind::OpType, help: "stop before a node of this operator type" }, Flag { name: "node", value: Some("NAME|#INDEX"), kind: Kind::NodeName, help: "stop before this node" }, Flag { name: "value", value: Some("NAME"), kind: Kind::ValueName, help: "stop after the node that writes this value" }, Flag { name: "if", value: Some("EXPR"), kind: Kind::Condition, help: "stop after a value is written when EXPR holds" }]).raw(), super::debugger::cmd_break),
    cmd!("breaks", &[], "List the breakpoints and watches, numbered (the numbers 'delete' takes), with how often each breakpoint stopped a run.", sig(&[], &[FORMAT, OUT]).data(), super::debugger::cmd_breaks),
    cmd!("delete", &[], "Remove breakpoints or watches by number ('breaks' lists them), or all of them.", sig(&[pos!("N", Integer, OneOrMore, "a breakpoint number (see 'breaks')")], &[Flag { name: "all", value: None, kind: Kind::Text, help: "remove every breakpoint and watch" }]).instead("all"), super::debugger::cmd_delete),
    cmd!("watch", &[], "Print a value's statistics (element type, shape, min, max, mean, std, NaN and infinity counts) each time a run writes it, inside Loop/Scan/If bodies too. Listed by 'breaks'; removed by 'unwatch NAME' or 'delete N'.", sig(&[pos!("NAME", ValueName, Required, "a value name")], &[]), super::debugger::cmd_watch),
    cmd!("unwatch", &[], "Stop watching a value.", sig(&[pos!("NAME", ValueName, Required, "a watched value name")], &[]), super::debugger::cmd_unwatch),
    cmd!("step", &[], "At a stop: run N more nodes (default 1; nodes inside Loop/Scan/If bodies count) and stop again.", sig(&[pos!("N", Count, Optional, "a count of nodes (1 or more)")], &[]), super::debugger::cmd_step),
    cmd!("continue", &["cont"], "At a stop: run on to the next breakpoint or to the end (then the outputs print as after a plain run).", sig(&[], &[]), super::debugger::cmd_continue),
    cmd!("finish", &[], "At a stop: run to the end ignoring breakpoints (watches still print).", sig(&[], &[]), super::debugger::cmd_finish),
    cmd!("where", &[], "At a stop: the node (before it runs, or after it wrote a value; the body, depth and iteration inside a Loop/Scan/If), its inputs with statistics, and the values alive with their bytes. 'print NAME' and 'print NAME --stats' read any value alive at the stop. Ctrl-C during 'run' stops it the same way ('continue' resumes); any command but where, print, step, continue, finish, break, breaks, delete, watch, unwatch, help, show, inputs and eval abandons the stopped run.", sig(&[], &[FORMAT, OUT]).data(), super::debugger::cmd_where),
    cmd!("quit", &["exit"], "Leave the shell.", sig(&[], &[]), quit::cmd_quit),
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
    let sig = &c.sig;
    if sig.raw {
        // a raw command still takes its data flags at the very end
        let mut rest = text.trim().to_string();
        if sig.data {
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
            format = Format::parse(&f).map_err(anyhow::Error::msg)?;
        }
        c.check_args(&[], &rest, &|f| flags.contains_key(f))?;
        return Ok(Args {
            rest,
            pos: Vec::new(),
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
            let f = sig.flags.iter().find(|f| f.name == name).ok_or_else(|| {
                let known: Vec<String> =
                    sig.flags.iter().map(|f| format!("--{}", f.name)).collect();
                anyhow!(if known.is_empty() {
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
                            anyhow!("--{name} needs a value ({})", f.value.unwrap_or(""))
                        })?)
                    }
                }
            } else {
                if inline.is_some() {
                    bail!("--{name} takes no value");
                }
                None
            };
            if let (Kind::Integer, Some(v)) = (f.kind, &v) {
                if v.parse::<u64>().is_err() {
                    bail!("--{name} expects a non-negative integer, got '{v}'");
                }
            }
            flags.insert(f.name, v);
        } else {
            pos.push(t.clone());
        }
        i += 1;
    }
    // data commands share one --format; others (print) read theirs
    if let Some(f) = flags.get("format").cloned().flatten().filter(|_| sig.data) {
        format = Format::parse(&f).map_err(anyhow::Error::msg)?;
    }
    let rest = pos.join(" ");
    c.check_args(&pos, &rest, &|f| flags.contains_key(f))?;
    Ok(Args {
        rest,
        pos,
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
        anyhow!(match suggest(name) {
            Some(s) => format!("unknown command '{name}'; did you mean '{s}'? (try 'help')"),
            None => format!("unknown command '{name}' (try 'help')"),
        })
    })?;
    let rest = if c.sig.raw {
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
        proto::write_atomic(Path::new(&path), &bytes)?;
    }
    flow
}

/// Whether tables get meaning colours: colour is on (standard output is a
/// terminal, no `--no-color`/`NO_COLOR`) and the output is not a file.
pub(super) fn table_colors(a: &Args) -> bool {
    colored::control::SHOULD_COLORIZE.should_colorize() && a.value("out").is_none()
}

/// An error about the arguments of the command `name`, with its usage.
pub(super) fn usage_error(name: &str, what: &str) -> anyhow::Error {
    match find(name) {
        Some(c) => c.arg_error(what),
        None => anyhow!("{name}: {what}"),
    }
}

/// The path a command's positional `i` names (the signature checked it
/// is there); `~/m.onnx` is the home folder's, as in a shell.
pub(super) fn path_arg(a: &Args, i: usize) -> String {
    let p = a.pos.get(i).map(String::as_str).unwrap_or("");
    crate::files::expand_home(p.trim_matches('"'))
}

pub(super) fn emit(s: &mut Session, a: &Args, d: Data) {
    let text = d.render_styled(a.format, table_colors(a));
    s.say(text);
}

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

/// Whether a file starts as UTF-8 text (its first 4 KiB; a character cut
/// by that boundary still counts as text).
pub(super) fn looks_like_text(path: &Path) -> std::io::Result<bool> {
    let head = crate::files::read_head(path, 4096)?;
    Ok(match std::str::from_utf8(&head) {
        Ok(_) => true,
        Err(e) => e.error_len().is_none(),
    })
}

/// Refuses text for a model whose inline tensors are too large to spell
/// out as numbers.
fn text_size_ok(m: &proto::ModelProto, hint: &str) -> R<()> {
    let bytes = text::inline_tensor_bytes(m);
    if bytes > text::MAX_INLINE_TEXT_BYTES {
        bail!(
            "the model holds {} MiB of tensor values, too many to write as text (limit {} MiB); {hint}",
            bytes >> 20,
            text::MAX_INLINE_TEXT_BYTES >> 20
        );
    }
    Ok(())
}

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
        anyhow!("{e}{caret}")
    })
}

fn bindings_with_equations(s: &Session) -> Bindings {
    match &s.report {
        Some(r) => r.extend_bindings(&s.bindings),
        None => s.bindings.clone(),
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

/// The graph inputs: name, type (unknown dimensions as fresh symbols, as
/// inference sees them), and whether an initializer gives a default.
fn declared_inputs(s: &Session) -> R<Vec<(String, Option<TypeInfo>, bool)>> {
    let m = s.model()?;
    let g = m.graph.as_ref().context("the model has no graph")?;
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
    res.map_err(anyhow::Error::msg)
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
        bail!(
            "input '{name}' is not a map (declared {}), got a map",
            ty.display()
        );
    };
    if (*key == DataType::String) != (m.key_type() == DataType::String) {
        bail!(
            "input '{name}' is declared with {key} keys, got {} keys",
            m.key_type()
        );
    }
    match value.elem() {
        Some(want) if want != DataType::Undefined && want != m.value_type() => {
            let values = m
                .values()
                .convert_exact(want)
                .with_context(|| format!("input '{name}' has {want} values"))?;
            Ok(crate::tensor::Map::new(m.keys().clone(), values)?)
        }
        _ => Ok(m),
    }
}

/// Sets an input, converting to the declared element type when exact.
pub(super) fn set_input(s: &mut Session, name: &str, expr: &str) -> R<()> {
    let decl = declared_inputs(s)?;
    let Some((_, ty, _)) = decl.iter().find(|(n, _, _)| n == name) else {
        bail!(not_an_input(name, &decl));
    };
    let v = eval_tensor(s, expr).with_context(|| format!("input '{name}'"))?;
    let v = match (v, ty.as_ref().and_then(|t| t.elem())) {
        (Value::Tensor(t), Some(want)) if want != DataType::Undefined && t.dtype() != want => {
            Value::Tensor(
                t.convert_exact(want)
                    .with_context(|| format!("input '{name}' is declared {want}"))?,
            )
        }
        (Value::Map(m), _) => Value::Map(declared_map(name, m, ty.as_ref())?),
        (v, _) => v,
    };
    if let (Value::Tensor(t), Some(shape)) = (&v, ty.as_ref().and_then(|t| t.shape())) {
        if t.rank() != shape.len() {
            bail!(
                "input '{name}' is declared with rank {} ({}), got shape {}",
                shape.len(),
                shape_text(Some(shape)),
                tuple(t.shape())
            );
        }
    }
    s.inputs.insert(name.to_string(), v);
    Ok(())
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
    let found = shape::bind_symbols(&given, &fixed).map_err(anyhow::Error::msg)?;
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
    // a PlanError's text already holds its source's: the text only
    let p = Arc::new(Plan::new(m).map_err(|e| anyhow!("{e}"))?);
    s.plan = Some(p.clone());
    Ok(p)
}

fn assignments(s: &mut Session, a: &Args) -> R<()> {
    for (name, expr) in tensor_expr::parse_assignments(&a.rest).map_err(anyhow::Error::msg)? {
        set_input(s, &name, &expr)?;
    }
    Ok(())
}

pub(super) fn feed(s: &Session, p: &Plan) -> R<ValueMap> {
    let missing: Vec<String> = p
        .required_inputs()
        .iter()
        .filter(|d| !s.inputs.contains_key(&d.name))
        .map(|d| quote_name(&d.name))
        .collect();
    if !missing.is_empty() {
        bail!(
            "input{} {} not set (use 'set NAME = TENSOR' or 'run NAME=TENSOR')",
            if missing.len() == 1 { "" } else { "s" },
            missing.join(", ")
        );
    }
    Ok(s.inputs.clone().into_iter().collect())
}

pub(super) fn with_pool<T: Send>(s: &Session, f: impl FnOnce() -> T + Send) -> T {
    match &s.pool {
        Some(p) => p.install(f),
        None => f(),
    }
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
            // a RunError's text already holds its source's: the text only
            bail!("{e}");
        }
        let kept = if res.events.is_empty() {
            "the values held then are kept ('print NAME')"
        } else {
            "its event log up to the failure and the values held then are kept ('events', 'print NAME')"
        };
        s.last_run = Some(res);
        bail!("{}\n  the run stopped there; {kept}", e);
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

/// The last run's event log, or why there is none.
fn last_events(s: &Session) -> R<&[crate::runtime::Event]> {
    let r = s
        .last_run
        .as_ref()
        .ok_or_else(|| anyhow!("no run yet: 'run' the model first"))?;
    if r.events.is_empty() {
        bail!("the last run kept no event log (config events on, then run again)");
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

fn last_run(s: &Session) -> R<&crate::runtime::RunResult> {
    s.last_run
        .as_ref()
        .ok_or_else(|| anyhow!("no run yet: use 'run' first"))
}
