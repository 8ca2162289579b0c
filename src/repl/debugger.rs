//! The debugger's commands: `break`, `breaks`, `delete`, `watch`,
//! `unwatch`, `step`, `continue`, `finish`, `where`, and the paused run
//! they drive.
//!
//! `run` executes the plan on a worker thread with a
//! [`Debugger`](crate::runtime::debug::Debugger) hook. At a stop the worker
//! blocks and serves inspections (closures over the values the node sees)
//! sent from the shell until `step`, `continue` or `finish` resumes it;
//! `run` returns and leaves the run in [`Session::paused`]. A command that
//! is not one of [`KEEPS_PAUSE`] abandons the paused run first.

use super::commands::{complete_run, usage_error, Args};
use super::lex::{self, quote_name};
use super::render::{tuple, Data, Format, Row};
use super::{CmdResult, Flow, Session};
use crate::runtime::break_condition;
use crate::runtime::debug::{
    Breakpoint, Debugger, Entry, NodeSel, Reason, Request, Resume, Stop, View,
};
use crate::runtime::{Plan, RunError, RunOptions, RunResult};
use crate::tensor::Value;
use crate::tensor::ValueMap;
use anyhow::{anyhow, bail, Context};
use serde::Serialize;
use serde_json::json;
use std::sync::mpsc::{channel, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

type R<T> = CmdResult<T>;

/// Commands that leave a paused run paused (every other one abandons it).
pub const KEEPS_PAUSE: &[&str] = &[
    "where", "print", "step", "continue", "finish", "break", "breaks", "delete", "watch",
    "unwatch", "help", "show", "inputs", "eval",
];

/// The stack of the run's thread (as the shell's: nesting is bounded well
/// below it).
const RUN_STACK_BYTES: usize = 256 << 20;

type Done = (RunResult, Option<RunError>);

/// A run on its worker thread.
pub struct Worker {
    requests: Sender<Request>,
    stops: Receiver<Stop>,
    done: Receiver<Done>,
    thread: Option<JoinHandle<()>>,
    watch_lines: Arc<Mutex<Vec<String>>>,
}

impl Worker {
    /// Ends the run (abandoning it if it is paused) and waits for its thread.
    fn shutdown(&mut self) -> Option<Done> {
        let _ = self.requests.send(Request::Resume(Resume::Abandon));
        // no stop follows an abandon; wait for the hook to let go
        while self.stops.recv().is_ok() {
            let _ = self.requests.send(Request::Resume(Resume::Abandon));
        }
        let done = self.done.recv().ok();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        crate::runtime::limits::set_pause_on_interrupt(false);
        done
    }

    fn take_watch_lines(&self) -> Vec<String> {
        std::mem::take(&mut *self.watch_lines.lock().unwrap_or_else(|e| e.into_inner()))
    }
}

impl Drop for Worker {
    fn drop(&mut self) {
        if self.thread.is_some() {
            self.shutdown();
        }
    }
}

/// A run stopped at a breakpoint, a step or a Ctrl-C.
pub struct Paused {
    worker: Worker,
    pub stop: Stop,
}

/// Abandons the paused run, if any; says so when `why` names the command.
pub fn abandon(s: &mut Session, why: Option<&str>) {
    if let Some(mut p) = s.paused.take() {
        p.worker.shutdown();
        if let Some(cmd) = why {
            s.status(format!("note: '{cmd}' abandoned the paused run"));
        }
    }
}

/// Starts a run under the debugger and waits for its first stop or its end.
pub fn start(s: &mut Session, plan: Arc<Plan>, inputs: ValueMap, mut opts: RunOptions) -> R<Flow> {
    abandon(s, None);
    let (stop_tx, stop_rx) = channel();
    let (req_tx, req_rx) = channel();
    let (done_tx, done_rx) = channel();
    let hook = Arc::new(Debugger::new(s.breaks.clone(), stop_tx, req_rx, None));
    let watch_lines = hook.watch_lines.clone();
    opts.debug = Some(hook);
    let pool = s.pool.clone();
    crate::runtime::limits::set_pause_on_interrupt(true);
    let thread = std::thread::Builder::new()
        .name("onnx-light-run".into())
        .stack_size(RUN_STACK_BYTES)
        .spawn(move || {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| match &pool {
                Some(p) => p.install(|| plan.run_partial(inputs, &opts)),
                None => plan.run_partial(inputs, &opts),
            }));
            // the hook (and its stop sender) goes first: the shell then
            // knows no stop will come
            drop(opts);
            let done = result.unwrap_or_else(|p| {
                let what = crate::runtime::limits::panic_message(p.as_ref());
                (
                    RunResult::default(),
                    Some(RunError::Internal(format!(
                        "internal error in the run: {what}"
                    ))),
                )
            });
            let _ = done_tx.send(done);
        })
        .inspect_err(|_| crate::runtime::limits::set_pause_on_interrupt(false))
        .context("cannot start the run's thread")?;
    s.last_run = None;
    let worker = Worker {
        requests: req_tx,
        stops: stop_rx,
        done: done_rx,
        thread: Some(thread),
        watch_lines,
    };
    wait(s, worker)
}

/// Waits for the worker's next stop (the run is left paused) or its end
/// (completed as a plain run).
fn wait(s: &mut Session, mut worker: Worker) -> R<Flow> {
    let stop = worker.stops.recv();
    for l in worker.take_watch_lines() {
        s.say(l);
    }
    match stop {
        Ok(stop) => {
            let why = match stop.reason {
                Reason::Breakpoint(n) => format!("breakpoint {n}"),
                Reason::Step => "step".to_string(),
                Reason::Interrupt => "Ctrl-C".to_string(),
            };
            s.say(format!("stopped {} [{why}]", stop.describe()));
            if stop.reason == Reason::Interrupt {
                // a script ends at a Ctrl-C; the shell forgets it before
                // the next command
                crate::runtime::limits::interrupt();
            }
            s.paused = Some(Paused { worker, stop });
            Ok(Flow::Continue)
        }
        Err(_) => {
            let done = worker.shutdown();
            for l in worker.take_watch_lines() {
                s.say(l);
            }
            let (res, failure) = done.unwrap_or_else(|| {
                (
                    RunResult::default(),
                    Some(RunError::Internal("the run ended without a result".into())),
                )
            });
            complete_run(s, res, failure)
        }
    }
}

fn not_paused() -> anyhow::Error {
    anyhow!("no run is stopped (set a breakpoint with 'break', then 'run'; Ctrl-C during a run stops it too)")
}

fn resume(s: &mut Session, r: Resume) -> R<Flow> {
    let p = s.paused.take().ok_or_else(not_paused)?;
    let Paused { worker, .. } = p;
    if worker.requests.send(Request::Resume(r)).is_err() {
        bail!("the paused run is gone");
    }
    wait(s, worker)
}

/// Runs `f` on the paused worker with the values the stopped node sees.
fn inspect<T: Send + 'static>(
    s: &Session,
    f: impl FnOnce(&View, &Stop) -> T + Send + 'static,
) -> Option<T> {
    let p = s.paused.as_ref()?;
    let (tx, rx) = channel();
    let req = Request::Inspect(Box::new(move |v: &View, st: &Stop| {
        let _ = tx.send(f(v, st));
    }));
    p.worker.requests.send(req).ok()?;
    rx.recv().ok()
}

/// A value alive at the stop (a deep copy), for `print`.
pub fn paused_value(s: &Session, name: &str) -> Option<Value> {
    let name = name.to_string();
    inspect(s, move |v, _| v.get(&name).cloned()).flatten()
}

/// Whether a run is paused.
pub fn is_paused(s: &Session) -> bool {
    s.paused.is_some()
}

// ---------------------------------------------------------------- commands

/// Splits `--flag VALUE` / `--flag=VALUE` pairs of a raw argument text.
fn flag_pairs(text: &str) -> R<Vec<(String, String)>> {
    let toks = lex::tokens(text);
    let mut out = Vec::new();
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        let Some(body) = t.strip_prefix("--") else {
            return Err(usage_error("break", &format!("unexpected '{t}'")));
        };
        let (name, value) = match body.split_once('=') {
            Some((n, v)) => (n.to_string(), v.to_string()),
            None => {
                i += 1;
                let v = toks
                    .get(i)
                    .ok_or_else(|| anyhow!("break: --{body} needs a value"))?;
                (body.to_string(), v.clone())
            }
        };
        out.push((name, unquote(&value)));
        i += 1;
    }
    Ok(out)
}

/// A token without its surrounding quotes (`"..."` or `'...'`).
fn unquote(t: &str) -> String {
    for q in ['"', '\''] {
        if t.len() >= 2 && t.starts_with(q) && t.ends_with(q) {
            let inner = &t[1..t.len() - 1];
            return inner
                .replace(&format!("\\{q}"), &q.to_string())
                .replace("\\\\", "\\");
        }
    }
    t.to_string()
}

pub fn cmd_break(s: &mut Session, a: &Args) -> R<Flow> {
    let mut bp = Breakpoint {
        op: None,
        node: None,
        value: None,
        cond: None,
        hits: 0,
    };
    for (name, v) in flag_pairs(&a.rest)? {
        let twice = || anyhow!("break: --{name} given twice");
        match name.as_str() {
            "op" => {
                if bp.op.replace(v).is_some() {
                    return Err(twice());
                }
            }
            "node" => {
                let sel =
                    match v.strip_prefix('#') {
                        Some(i) => NodeSel::Index(i.parse().map_err(|_| {
                            anyhow!("break: --node #{i}: expected a node index (#12)")
                        })?),
                        None => NodeSel::Name(v),
                    };
                if bp.node.replace(sel).is_some() {
                    return Err(twice());
                }
            }
            "value" => {
                if bp.value.replace(v).is_some() {
                    return Err(twice());
                }
            }
            "if" => {
                let c = break_condition::parse(&v)
                    .map_err(anyhow::Error::msg)
                    .with_context(|| format!("break --if \"{v}\""))?;
                if bp.cond.replace((v, c)).is_some() {
                    return Err(twice());
                }
            }
            other => {
                let known: Vec<String> = super::commands::find("break")
                    .map(|c| {
                        c.sig
                            .flags
                            .iter()
                            .map(|f| format!("--{}", f.name))
                            .collect()
                    })
                    .unwrap_or_default();
                bail!(
                    "break: unknown flag --{other} (flags: {})",
                    known.join(", ")
                );
            }
        }
    }
    if bp.op.is_none() && bp.node.is_none() && bp.value.is_none() && bp.cond.is_none() {
        return Err(usage_error("break", "give at least one flag"));
    }
    let text = bp.describe();
    let when = if bp.is_before() {
        "stops before the node"
    } else {
        "stops after the node that writes the value"
    };
    let n = lock(s).add(Entry::Break(bp));
    s.say(format!("breakpoint {n}: {text} ({when})"));
    Ok(Flow::Continue)
}

fn lock(s: &Session) -> std::sync::MutexGuard<'_, crate::runtime::debug::Breaks> {
    s.breaks.lock().unwrap_or_else(|e| e.into_inner())
}

/// One breakpoint or watch of `breaks`: its number, kind, what it stops on
/// or prints, and how often it stopped a run (breakpoints only).
#[derive(Serialize, Default)]
struct BreakLine {
    number: usize,
    kind: &'static str,
    what: String,
    hits: Option<usize>,
}

impl Row for BreakLine {
    const COLUMNS: &'static [&'static str] = &["#", "kind", "what", "hits"];

    fn cell(&self, column: &str) -> Option<String> {
        (column == "#").then(|| self.number.to_string())
    }
}

pub fn cmd_breaks(s: &mut Session, a: &Args) -> R<Flow> {
    let rows: Vec<BreakLine> = lock(s)
        .entries
        .iter()
        .map(|(n, e)| match e {
            Entry::Break(b) => BreakLine {
                number: *n,
                kind: "break",
                what: b.describe(),
                hits: Some(b.hits),
            },
            Entry::Watch(w) => BreakLine {
                number: *n,
                kind: "watch",
                what: quote_name(w),
                hits: None,
            },
        })
        .collect();
    if rows.is_empty() {
        s.say("no breakpoints or watches");
        return Ok(Flow::Continue);
    }
    let f = a.format;
    s.say(Data::from_rows(&rows).render(f));
    Ok(Flow::Continue)
}

pub fn cmd_delete(s: &mut Session, a: &Args) -> R<Flow> {
    if a.has("all") {
        let n = lock(s).entries.len();
        lock(s).entries.clear();
        s.say(format!(
            "deleted {n} breakpoint{}/watch{}",
            plural(n),
            if n == 1 { "" } else { "es" }
        ));
        return Ok(Flow::Continue);
    }
    let mut nums = Vec::new();
    for t in &a.pos {
        let n: usize = t
            .parse()
            .map_err(|_| anyhow!("delete: '{t}' is not a breakpoint number (see 'breaks')"))?;
        if !lock(s).entries.iter().any(|(k, _)| *k == n) {
            bail!("delete: no breakpoint or watch {n} (see 'breaks')");
        }
        nums.push(n);
    }
    lock(s).entries.retain(|(k, _)| !nums.contains(k));
    s.say(format!(
        "deleted {}",
        nums.iter()
            .map(|n| n.to_string())
            .collect::<Vec<_>>()
            .join(", ")
    ));
    Ok(Flow::Continue)
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        ""
    } else {
        "s"
    }
}

pub fn cmd_watch(s: &mut Session, a: &Args) -> R<Flow> {
    let name = lex::unquote_name(&a.rest).map_err(|e| usage_error("watch", &e))?;
    let n = lock(s).add(Entry::Watch(name.clone()));
    s.say(format!(
        "watch {n}: '{name}' (its statistics print each time it is written)"
    ));
    Ok(Flow::Continue)
}

pub fn cmd_unwatch(s: &mut Session, a: &Args) -> R<Flow> {
    let name = lex::unquote_name(&a.rest).map_err(|e| usage_error("unwatch", &e))?;
    let mut b = lock(s);
    let before = b.entries.len();
    b.entries
        .retain(|(_, e)| !matches!(e, Entry::Watch(w) if *w == name));
    let removed = before - b.entries.len();
    drop(b);
    if removed == 0 {
        bail!("unwatch: '{name}' is not watched (see 'breaks')");
    }
    s.say(format!("'{name}' is no longer watched"));
    Ok(Flow::Continue)
}

pub fn cmd_step(s: &mut Session, a: &Args) -> R<Flow> {
    // the signature checked the count (an integer of at least 1)
    let n = match a.pos.first() {
        None => 1,
        Some(t) => t.parse::<usize>().ok().filter(|&n| n >= 1).ok_or_else(|| {
            usage_error(
                "step",
                &format!("expected a count of nodes (1 or more), got '{t}'"),
            )
        })?,
    };
    if s.paused.is_none() {
        return Err(not_paused());
    }
    resume(s, Resume::Step(n))
}

pub fn cmd_continue(s: &mut Session, _: &Args) -> R<Flow> {
    resume(s, Resume::Continue)
}

pub fn cmd_finish(s: &mut Session, _: &Args) -> R<Flow> {
    resume(s, Resume::Finish)
}

/// One input of the stopped node: a row of `where`.
#[derive(Default, Serialize)]
struct InputRow {
    name: String,
    elem_type: String,
    shape: Option<Vec<usize>>,
    min: Option<f64>,
    max: Option<f64>,
    mean: Option<f64>,
    std: Option<f64>,
    nan: Option<usize>,
    inf: Option<usize>,
    /// What the shape column says of a value that is not a tensor.
    #[serde(skip)]
    note: String,
    /// Significant digits of the statistics in the table.
    #[serde(skip)]
    precision: usize,
}

impl InputRow {
    fn new(
        name: &str,
        elem_type: String,
        shape: Option<Vec<usize>>,
        stats: Option<crate::tensor::Stats>,
        note: String,
    ) -> InputRow {
        let st = stats.as_ref();
        InputRow {
            name: name.to_string(),
            elem_type,
            shape,
            min: st.and_then(|x| x.min),
            max: st.and_then(|x| x.max),
            mean: st.and_then(|x| x.mean),
            std: st.and_then(|x| x.std),
            nan: st.map(|x| x.nan),
            inf: st.map(|x| x.inf),
            note,
            precision: 0,
        }
    }
}

impl Row for InputRow {
    const COLUMNS: &'static [&'static str] = &[
        "input",
        "elem_type",
        "shape",
        "min",
        "max",
        "mean",
        "std",
        "nan",
        "inf",
    ];

    fn cell(&self, field: &str) -> Option<String> {
        let stat = |x: Option<f64>| {
            x.map_or(String::new(), |x| {
                crate::tensor::format_scalar(x, self.precision)
            })
        };
        Some(match field {
            "input" => quote_name(&self.name),
            "shape" => self
                .shape
                .as_deref()
                .map(tuple)
                .unwrap_or_else(|| self.note.clone()),
            "min" => stat(self.min),
            "max" => stat(self.max),
            "mean" => stat(self.mean),
            "std" => stat(self.std),
            _ => return None,
        })
    }
}

/// One value alive at the stop, with its bytes: a row of `where`.
#[derive(Default, Serialize)]
struct AliveRow {
    name: String,
    bytes: usize,
}

impl Row for AliveRow {
    const COLUMNS: &'static [&'static str] = &["alive (largest first)", "bytes"];

    fn cell(&self, field: &str) -> Option<String> {
        (field == "alive (largest first)").then(|| quote_name(&self.name))
    }
}

/// Alive values `where` lists as text (JSON lists them all).
const WHERE_ALIVE_ROWS: usize = 12;

pub fn cmd_where(s: &mut Session, a: &Args) -> R<Flow> {
    if s.paused.is_none() {
        return Err(not_paused());
    }
    let got = inspect(s, |v, st| {
        let inputs: Vec<InputRow> = st
            .inputs
            .iter()
            .flatten()
            .map(|n| {
                let val = v.get(n);
                let t = val.and_then(|x| match x {
                    Value::Optional(Some(inner)) => inner.as_tensor(),
                    other => other.as_tensor(),
                });
                InputRow::new(
                    n,
                    val.map(|x| x.dtype().to_string()).unwrap_or_default(),
                    t.map(|t| t.shape().to_vec()),
                    t.and_then(|t| t.stats()),
                    match val {
                        None => "(no value)".into(),
                        Some(x) if t.is_none() => x.describe(),
                        _ => String::new(),
                    },
                )
            })
            .collect();
        (inputs, v.alive())
    });
    let (inputs, alive) = got.ok_or_else(|| anyhow!("the paused run did not answer"))?;
    let Some(st) = s.paused.as_ref().map(|p| p.stop.clone()) else {
        return Err(not_paused());
    };
    let p = s.config.precision;
    let inputs: Vec<InputRow> = inputs
        .into_iter()
        .map(|r| InputRow { precision: p, ..r })
        .collect();
    let d = Data::from_rows(&inputs);
    if a.format == Format::Json {
        let alive: Vec<AliveRow> = alive
            .iter()
            .map(|(n, b)| AliveRow {
                name: n.clone(),
                bytes: *b,
            })
            .collect();
        let node =
            json!({"index": st.index, "op_type": st.op_type, "domain": st.domain, "name": st.name});
        let j = json!({"node": node, "inputs": d.json, "alive": alive});
        s.say(serde_json::to_string_pretty(&j).unwrap_or_default());
        return Ok(Flow::Continue);
    }
    if a.format == Format::Csv {
        s.say(d.render(Format::Csv));
        return Ok(Flow::Continue);
    }
    let mut text = format!("stopped {}", st.describe());
    if !inputs.is_empty() {
        text.push('\n');
        text.push_str(&d.render(Format::Table));
    }
    let total: usize = alive.iter().map(|(_, b)| b).sum();
    // the largest first; a real model holds hundreds of small weights
    let mut largest: Vec<&(String, usize)> = alive.iter().collect();
    largest.sort_by(|x, y| y.1.cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
    let shown: Vec<AliveRow> = largest
        .iter()
        .take(WHERE_ALIVE_ROWS)
        .map(|(n, b)| AliveRow {
            name: n.clone(),
            bytes: *b,
        })
        .collect();
    let al = Data::from_rows(&shown);
    text.push_str(&format!(
        "\n{} value{} alive, {} bytes",
        alive.len(),
        plural(alive.len()),
        total
    ));
    text.push('\n');
    text.push_str(&al.render(Format::Table));
    if alive.len() > WHERE_ALIVE_ROWS {
        text.push_str(&format!(
            "\n... and {} smaller (where --format json lists every value)",
            alive.len() - WHERE_ALIVE_ROWS
        ));
    }
    s.say(text);
    Ok(Flow::Continue)
}
