//! Execution control for the model debugger: the hook the executor calls
//! before each node and after each node's outputs are written
//! ([`Hook`]), breakpoints and watches ([`Breaks`]), and the hook that
//! pauses a run on its own thread ([`Debugger`]) while the shell inspects
//! it through a channel.
//!
//! A run without a hook does no extra work: the executor tests
//! `opts.debug` once per node.

use super::break_condition::Cond;
use crate::tensor::Value;
use crate::tensor::ValueMap;
use std::collections::HashMap;
use std::fmt;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex};

/// Where the executor is: a node of the graph at `depth` (0 = the main
/// graph, 1 = a Loop, Scan or If body of a main-graph node, ...).
pub struct At<'a> {
    /// The node's index in its graph (file order).
    pub index: usize,
    pub op_type: &'a str,
    pub domain: &'a str,
    pub name: &'a str,
    pub depth: usize,
    /// The name (or op type) of the node whose body this is; empty at depth 0.
    pub scope: &'a str,
    /// The step's position in execution order (0 = the first step).
    pub position: usize,
    pub inputs: &'a [Option<String>],
    pub outputs: &'a [Option<String>],
}

/// The values a node can see: its scope's, the cached constants, the
/// initializers and the enclosing scopes' (innermost last).
pub struct View<'a> {
    pub local: &'a ValueMap,
    pub cached: &'a ValueMap,
    pub init: &'a ValueMap,
    pub outer: &'a [&'a ValueMap],
}

impl View<'_> {
    /// A value by name, innermost scope first.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.local
            .get(name)
            .or_else(|| self.cached.get(name))
            .or_else(|| self.init.get(name))
            .or_else(|| self.outer.iter().rev().find_map(|m| m.get(name)))
    }

    /// Every value visible, by name (an inner one hides an outer one of
    /// the same name), with its bytes, sorted by name.
    pub fn alive(&self) -> Vec<(String, usize)> {
        let mut seen: HashMap<&str, usize> = HashMap::new();
        let layers = self
            .outer
            .iter()
            .copied()
            .chain([self.init, self.cached, self.local]);
        for m in layers {
            for (k, v) in m {
                seen.insert(k.as_str(), v.bytes());
            }
        }
        let mut out: Vec<(String, usize)> =
            seen.into_iter().map(|(k, b)| (k.to_string(), b)).collect();
        out.sort();
        out
    }
}

/// What the executor calls when a run has a hook. An `Err` ends the run
/// with that message.
pub trait Hook: Send + Sync + fmt::Debug {
    /// Before a node runs.
    fn before(&self, at: &At, view: &View) -> Result<(), String>;
    /// After a node's outputs are written (before its inputs are released).
    fn after(&self, at: &At, view: &View) -> Result<(), String>;
}

/// How `--node` names a node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum NodeSel {
    Name(String),
    /// A main-graph node by index (`#12`).
    Index(usize),
}

/// A breakpoint.
#[derive(Clone, Debug)]
pub struct Breakpoint {
    pub op: Option<String>,
    pub node: Option<NodeSel>,
    pub value: Option<String>,
    /// The condition's text and its parsed form.
    pub cond: Option<(String, Cond)>,
    pub hits: usize,
}

impl Breakpoint {
    /// A breakpoint that stops before a node (no value and no condition).
    pub fn is_before(&self) -> bool {
        self.value.is_none() && self.cond.is_none()
    }

    fn node_matches(&self, at: &At) -> bool {
        self.op.as_deref().is_none_or(|op| op == at.op_type)
            && match &self.node {
                None => true,
                Some(NodeSel::Name(n)) => n == at.name,
                Some(NodeSel::Index(i)) => at.depth == 0 && *i == at.index,
            }
    }

    /// How `breaks` shows it.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(op) = &self.op {
            parts.push(format!("--op {op}"));
        }
        match &self.node {
            Some(NodeSel::Name(n)) => parts.push(format!("--node {}", quote(n))),
            Some(NodeSel::Index(i)) => parts.push(format!("--node #{i}")),
            None => {}
        }
        if let Some(v) = &self.value {
            parts.push(format!("--value {}", quote(v)));
        }
        if let Some((text, _)) = &self.cond {
            parts.push(format!("--if {}", quote_always(text)));
        }
        parts.join(" ")
    }
}

fn quote(s: &str) -> String {
    if !s.is_empty()
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || "_./:-".contains(c))
    {
        s.to_string()
    } else {
        quote_always(s)
    }
}

fn quote_always(s: &str) -> String {
    format!("\"{}\"", s.replace('\\', "\\\\").replace('"', "\\\""))
}

/// One numbered entry of `breaks`.
#[derive(Clone, Debug)]
pub enum Entry {
    Break(Breakpoint),
    Watch(String),
}

/// The session's breakpoints and watches, numbered from 1 in the order set
/// (a deleted number is not reused).
#[derive(Clone, Debug, Default)]
pub struct Breaks {
    pub entries: Vec<(usize, Entry)>,
    pub next: usize,
}

impl Breaks {
    pub fn add(&mut self, e: Entry) -> usize {
        self.next += 1;
        self.entries.push((self.next, e));
        self.next
    }

    fn watched(&self, name: &str) -> bool {
        self.entries
            .iter()
            .any(|(_, e)| matches!(e, Entry::Watch(w) if w == name))
    }
}

/// Why a run stopped.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reason {
    Breakpoint(usize),
    Step,
    Interrupt,
}

/// A stop: the node, before it runs or after it wrote `value`.
#[derive(Clone, Debug)]
pub struct Stop {
    pub index: usize,
    pub op_type: String,
    pub domain: String,
    pub name: String,
    pub inputs: Vec<Option<String>>,
    /// `Some(value)` for a stop after the node wrote that value.
    pub after: Option<String>,
    pub reason: Reason,
    pub depth: usize,
    pub scope: String,
    /// The iteration (from 1) of the body being run, and the op type of
    /// the node that runs it, when `depth > 0`.
    pub iteration: Option<(u64, String)>,
}

impl Stop {
    /// `before #12 Conv 'conv1'`, `after #3 Add 'add' (wrote 'y')`, with
    /// the body it is in.
    pub fn describe(&self) -> String {
        let name = if self.name.is_empty() {
            String::new()
        } else {
            format!(" '{}'", self.name)
        };
        let mut s = match &self.after {
            None => format!("before #{} {}{name}", self.index, self.op_type),
            Some(v) => format!("after #{} {}{name} (wrote '{v}')", self.index, self.op_type),
        };
        if self.depth > 0 {
            s.push_str(&format!(" in the body of '{}'", self.scope));
            if let Some((i, op)) = &self.iteration {
                s.push_str(&format!(" ({op}, depth {}, iteration {i})", self.depth));
            }
        }
        s
    }
}

/// An inspection run on the paused worker with what the node sees.
pub type Inspect = Box<dyn FnOnce(&View, &Stop) + Send>;

/// How to go on from a stop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Resume {
    /// To the next breakpoint.
    Continue,
    /// N more nodes (any depth).
    Step(usize),
    /// To the end, ignoring breakpoints.
    Finish,
    /// End the run with an error.
    Abandon,
}

/// What the shell sends a paused run.
pub enum Request {
    Inspect(Inspect),
    Resume(Resume),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    Run,
    Step(usize),
    Finish,
    Abandoned,
}

#[derive(Debug)]
struct Control {
    mode: Mode,
    /// Per depth: iterations started of the body running there, and the
    /// op type of the node running at that depth.
    frames: Vec<(u64, String)>,
}

/// The message a run ends with when the shell abandons it.
pub const ABANDONED: &str = "the paused run was abandoned";

/// The hook of a run under the debugger: checks breakpoints and watches;
/// at a stop it sends the [`Stop`] and serves [`Request`]s until a resume.
pub struct Debugger {
    breaks: Arc<Mutex<Breaks>>,
    ctl: Mutex<Control>,
    stops: Mutex<Sender<Stop>>,
    requests: Mutex<Receiver<Request>>,
    /// Lines printed by watches, taken by the shell at each stop and at
    /// the end.
    pub watch_lines: Arc<Mutex<Vec<String>>>,
}

impl fmt::Debug for Debugger {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("Debugger")
    }
}

impl Debugger {
    pub fn new(
        breaks: Arc<Mutex<Breaks>>,
        stops: Sender<Stop>,
        requests: Receiver<Request>,
        step_first: Option<usize>,
    ) -> Debugger {
        Debugger {
            breaks,
            ctl: Mutex::new(Control {
                mode: step_first.map_or(Mode::Run, Mode::Step),
                frames: Vec::new(),
            }),
            stops: Mutex::new(stops),
            requests: Mutex::new(requests),
            watch_lines: Arc::new(Mutex::new(Vec::new())),
        }
    }

    fn ctl(&self) -> std::sync::MutexGuard<'_, Control> {
        self.ctl.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn breaks(&self) -> std::sync::MutexGuard<'_, Breaks> {
        self.breaks.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn iteration(&self, at: &At) -> Option<(u64, String)> {
        if at.depth == 0 {
            return None;
        }
        let c = self.ctl();
        let parent = c.frames.get(at.depth - 1).map(|f| f.1.clone())?;
        let n = c.frames.get(at.depth).map(|f| f.0)?;
        Some((n, parent))
    }

    /// Reports the stop and serves requests until told to go on.
    fn pause(
        &self,
        at: &At,
        view: &View,
        after: Option<&str>,
        reason: Reason,
    ) -> Result<(), String> {
        let stop = Stop {
            index: at.index,
            op_type: at.op_type.to_string(),
            domain: at.domain.to_string(),
            name: at.name.to_string(),
            inputs: at.inputs.to_vec(),
            after: after.map(str::to_string),
            reason,
            depth: at.depth,
            scope: at.scope.to_string(),
            iteration: self.iteration(at),
        };
        let sent = self
            .stops
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .send(stop.clone());
        if sent.is_err() {
            self.ctl().mode = Mode::Abandoned;
            return Err(ABANDONED.into());
        }
        let requests = self.requests.lock().unwrap_or_else(|e| e.into_inner());
        loop {
            match requests.recv() {
                Ok(Request::Inspect(f)) => f(view, &stop),
                Ok(Request::Resume(r)) => {
                    let mode = match r {
                        Resume::Continue => Mode::Run,
                        // the node stopped before runs now and counts
                        Resume::Step(n) if after.is_none() => Mode::Step(n.saturating_sub(1)),
                        Resume::Step(n) => Mode::Step(n),
                        Resume::Finish => Mode::Finish,
                        Resume::Abandon => Mode::Abandoned,
                    };
                    self.ctl().mode = mode;
                    return if mode == Mode::Abandoned {
                        Err(ABANDONED.into())
                    } else {
                        Ok(())
                    };
                }
                Err(_) => {
                    self.ctl().mode = Mode::Abandoned;
                    return Err(ABANDONED.into());
                }
            }
        }
    }
}

impl Hook for Debugger {
    fn before(&self, at: &At, view: &View) -> Result<(), String> {
        let mode = {
            let mut c = self.ctl();
            if c.mode == Mode::Abandoned {
                return Err(ABANDONED.into());
            }
            c.frames.truncate(at.depth + 1);
            while c.frames.len() <= at.depth {
                c.frames.push((0, String::new()));
            }
            let f = &mut c.frames[at.depth];
            if at.position == 0 {
                f.0 += 1;
            }
            f.1 = at.op_type.to_string();
            c.mode
        };
        if super::limits::interrupted() {
            super::limits::clear_interrupt();
            return self.pause(at, view, None, Reason::Interrupt);
        }
        match mode {
            Mode::Finish | Mode::Abandoned => return Ok(()),
            Mode::Step(0) => return self.pause(at, view, None, Reason::Step),
            Mode::Step(n) => self.ctl().mode = Mode::Step(n - 1),
            Mode::Run => {}
        }
        let hit = {
            let mut b = self.breaks();
            b.entries.iter_mut().find_map(|(id, e)| match e {
                Entry::Break(bp) if bp.is_before() && bp.node_matches(at) => {
                    bp.hits += 1;
                    Some(*id)
                }
                _ => None,
            })
        };
        match hit {
            Some(id) => self.pause(at, view, None, Reason::Breakpoint(id)),
            None => Ok(()),
        }
    }

    fn after(&self, at: &At, view: &View) -> Result<(), String> {
        let mode = self.ctl().mode;
        if mode == Mode::Abandoned {
            return Err(ABANDONED.into());
        }
        let written = at.outputs.iter().flatten();
        let mut hit = None;
        {
            let mut b = self.breaks();
            if b.entries.is_empty() {
                return Ok(());
            }
            for name in written {
                let Some(v) = view.local.get(name) else {
                    continue;
                };
                if b.watched(name) {
                    let line = watch_line(name, v, at, self.iteration(at));
                    self.watch_lines
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .push(line);
                }
                if mode == Mode::Finish || hit.is_some() {
                    continue;
                }
                for (id, e) in b.entries.iter_mut() {
                    let Entry::Break(bp) = e else { continue };
                    if bp.is_before() || !bp.node_matches(at) {
                        continue;
                    }
                    if bp.value.as_ref().is_some_and(|want| want != name) {
                        continue;
                    }
                    if bp.cond.as_ref().is_some_and(|(_, c)| !c.holds(v)) {
                        continue;
                    }
                    bp.hits += 1;
                    hit = Some((*id, name.clone()));
                    break;
                }
            }
        }
        match hit {
            Some((id, name)) => self.pause(at, view, Some(&name), Reason::Breakpoint(id)),
            None => Ok(()),
        }
    }
}

/// The line a watch prints when its value is written.
fn watch_line(name: &str, v: &Value, at: &At, iteration: Option<(u64, String)>) -> String {
    let mut place = format!("#{} {}", at.index, at.op_type);
    if at.depth > 0 {
        place.push_str(&format!(" in '{}'", at.scope));
        if let Some((i, _)) = iteration {
            place.push_str(&format!(" iteration {i}"));
        }
    }
    let t = match v {
        Value::Optional(Some(inner)) => inner.as_tensor(),
        other => other.as_tensor(),
    };
    let stats = match t {
        None => v.describe(),
        Some(t) => match t.stats() {
            None => format!("{} {:?}", t.dtype(), t.shape()),
            Some(s) => {
                let f = |x: Option<f64>| x.map_or("-".to_string(), |x| format!("{x:.6}"));
                format!(
                    "{} {:?} min {} max {} mean {} std {} nan {} inf {}",
                    t.dtype(),
                    t.shape(),
                    f(s.min),
                    f(s.max),
                    f(s.mean),
                    f(s.std),
                    s.nan,
                    s.inf
                )
            }
        },
    };
    format!("watch '{name}' ({place}): {stats}")
}
