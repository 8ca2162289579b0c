//! Line editing for the interactive shell: a rustyline helper that lists
//! completions for command names, flags, and arguments by the kind their
//! command's signature declares: file paths, `config` keys and values, graph
//! input names (`run`, `set`, `bench`), value names (`print`, `watch`),
//! event names (`events --name`), command names (`help`), flag choices.
//!
//! The helper reads the session's names from a [`CompletionNames`] snapshot
//! the shell loop refreshes after every command (see
//! [`Session::completion_names`]): rustyline owns the helper while the
//! session is free to change between lines.
//!
//! Every Enter ends a line: a command with unbalanced brackets is continued
//! by the shell loop itself, with its own prompt (see
//! [`super::interactive`]), so typed-ahead lines are never joined.

use super::commands::{find, Command, Kind, COMMANDS};
use super::lex;
use super::Session;
use rustyline::completion::{Completer, FilenameCompleter, Pair};
use rustyline::highlight::Highlighter;
use rustyline::hint::Hinter;
use rustyline::validate::Validator;
use rustyline::{Context, Helper};
use std::cell::RefCell;
use std::collections::BTreeSet;
use std::rc::Rc;

/// The names the shell completes that come from the session.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CompletionNames {
    /// Graph inputs that are not initializers (what `run`/`set` take).
    pub inputs: Vec<String>,
    /// Values `print` can show: outputs and values held after the last run,
    /// inputs set, initializers.
    pub values: Vec<String>,
    /// Names in the last run's event log (values and nodes).
    pub events: Vec<String>,
}

impl Session {
    /// A snapshot of the names completion offers, sorted and deduplicated.
    pub fn completion_names(&self) -> CompletionNames {
        let graph = self.model.as_ref().and_then(|m| m.graph.as_ref());
        let inits: BTreeSet<&str> = graph
            .map(|g| g.initializer.iter().map(|t| t.name()).collect())
            .unwrap_or_default();
        let mut inputs: Vec<String> = graph
            .map(|g| {
                g.input
                    .iter()
                    .map(|i| i.name())
                    .filter(|n| !n.is_empty() && !inits.contains(n))
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        inputs.sort();
        inputs.dedup();
        let mut values: BTreeSet<String> = self.inputs.keys().cloned().collect();
        values.extend(inits.iter().map(|s| s.to_string()));
        let mut events = BTreeSet::new();
        if let Some(r) = &self.last_run {
            values.extend(r.outputs.iter().map(|(n, _)| n.clone()));
            values.extend(r.held.keys().cloned());
            events.extend(r.events.iter().map(|e| e.name.clone()));
        }
        values.remove("");
        events.remove("");
        CompletionNames {
            inputs,
            values: values.into_iter().collect(),
            events: events.into_iter().collect(),
        }
    }
}

use super::{config_value_choices, CONFIG_KEYS};

/// The shell's rustyline helper.
pub struct ShellHelper {
    files: FilenameCompleter,
    names: Rc<RefCell<CompletionNames>>,
}

impl Default for ShellHelper {
    fn default() -> Self {
        ShellHelper::new(Rc::default())
    }
}

impl ShellHelper {
    /// A helper completing from `names` (the shell loop keeps it current).
    pub fn new(names: Rc<RefCell<CompletionNames>>) -> Self {
        ShellHelper {
            files: FilenameCompleter::new(),
            names,
        }
    }

    /// The completions at byte `pos` of `line`: where the replaced word
    /// starts and the candidates.
    pub fn candidates(&self, line: &str, pos: usize) -> (usize, Vec<Pair>) {
        let (start, mut v) = self.unsorted_candidates(line, pos);
        v.sort_by(|a, b| a.display.cmp(&b.display));
        v.dedup_by(|a, b| a.display == b.display);
        (start, v)
    }

    fn unsorted_candidates(&self, line: &str, pos: usize) -> (usize, Vec<Pair>) {
        let before = &line[..pos];
        let word_start = before
            .rfind(char::is_whitespace)
            .map(|i| i + 1)
            .unwrap_or(0);
        let word = &before[word_start..];
        let words: Vec<&str> = before[..word_start].split_whitespace().collect();
        let Some(&cmd) = words.first() else {
            let names = COMMANDS
                .iter()
                .flat_map(|c| std::iter::once(c.name).chain(c.aliases.iter().copied()));
            return (word_start, pairs(names, word, " "));
        };
        let Some(c) = find(cmd) else {
            return (pos, vec![]);
        };
        // the word right after a flag that takes a value is that value
        let prev = words.last().copied().unwrap_or("");
        if let Some(flag) = prev.strip_prefix("--") {
            if let Some(f) = c
                .sig
                .flags
                .iter()
                .find(|f| f.name == flag && f.value.is_some())
            {
                let at = Place {
                    line,
                    pos,
                    word_start,
                    word,
                };
                return self.complete_kind(f.kind, &at, &[], true);
            }
        }
        if let Some(prefix) = word.strip_prefix("--") {
            let v = c
                .sig
                .flags
                .iter()
                .filter(|f| f.name.starts_with(prefix))
                .map(|f| Pair {
                    display: format!("--{}", f.name),
                    replacement: format!("--{} ", f.name),
                })
                .collect();
            return (word_start, v);
        }
        // the positional the word fills, from the signature
        let before_words = positional_words(c, words.get(1..).unwrap_or(&[]));
        let Some(p) = c.sig.positional_at(before_words.len()) else {
            return (pos, vec![]);
        };
        // an assignment completes its name only
        if p.kind == Kind::InputAssign && !before_words.is_empty() {
            return (pos, vec![]);
        }
        let at = Place {
            line,
            pos,
            word_start,
            word,
        };
        self.complete_kind(p.kind, &at, &before_words, false)
    }

    /// The candidates for an argument of kind `kind` (a flag's value when
    /// `flag`, else a positional after the positional words `before`).
    fn complete_kind(
        &self,
        kind: Kind,
        at: &Place<'_>,
        before: &[&str],
        flag: bool,
    ) -> (usize, Vec<Pair>) {
        let (word, start) = (at.word, at.word_start);
        // a flag's value is followed by a space, so is a config key
        let end = if flag { " " } else { "" };
        let names = self.names.borrow();
        match kind {
            Kind::Path => self
                .files
                .complete_path(at.line, at.pos)
                .unwrap_or((at.pos, vec![])),
            Kind::CommandName => {
                let names = COMMANDS.iter().map(|c| c.name);
                (start, pairs(names, word, end))
            }
            Kind::ConfigKey => (start, pairs(CONFIG_KEYS.iter().copied(), word, " ")),
            Kind::ConfigValue => {
                let key = before.first().copied().unwrap_or("");
                let values = config_value_choices(key).iter().copied();
                (start, pairs(values, word, end))
            }
            Kind::Choice(c) | Kind::ChoiceList(c) => (start, pairs(c.iter().copied(), word, end)),
            Kind::ValueName | Kind::ValueIndex => {
                let values = names.values.iter().map(String::as_str);
                (start, quoted_pairs(values, word, end))
            }
            Kind::EventName => {
                let values = names.events.iter().map(String::as_str);
                (start, quoted_pairs(values, word, end))
            }
            Kind::InputName => {
                let inputs = names.inputs.iter().map(String::as_str);
                (start, quoted_pairs(inputs, word, end))
            }
            Kind::TensorAssign if !word.contains('=') => {
                let inputs = names.inputs.iter().map(String::as_str);
                (start, quoted_pairs(inputs, word, "="))
            }
            Kind::InputAssign => {
                let inputs = names.inputs.iter().map(String::as_str);
                (start, quoted_pairs(inputs, word, " = "))
            }
            _ => (at.pos, vec![]),
        }
    }
}

/// Where completion happens: the line, the cursor, the word being typed.
struct Place<'a> {
    line: &'a str,
    pos: usize,
    word_start: usize,
    word: &'a str,
}

/// The positional words among `words` (those after the command name):
/// flags and the values of flags that take one left out.
fn positional_words<'a>(c: &Command, words: &[&'a str]) -> Vec<&'a str> {
    let mut out = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let w = words[i];
        if let Some(body) = w.strip_prefix("--") {
            let takes_value = !body.contains('=')
                && c.sig
                    .flags
                    .iter()
                    .any(|f| f.name == body && f.value.is_some());
            i += if takes_value { 2 } else { 1 };
            continue;
        }
        out.push(w);
        i += 1;
    }
    out
}

/// Candidates among `names` that start with `word`, each followed by `end`.
fn pairs<'a>(names: impl IntoIterator<Item = &'a str>, word: &str, end: &str) -> Vec<Pair> {
    names
        .into_iter()
        .filter(|n| n.starts_with(word))
        .map(|n| Pair {
            display: n.to_string(),
            replacement: format!("{n}{end}"),
        })
        .collect()
}

/// Like [`pairs`] for value names: a name that is not an identifier is
/// inserted quoted, and matches either as typed quoted or bare.
fn quoted_pairs<'a>(names: impl IntoIterator<Item = &'a str>, word: &str, end: &str) -> Vec<Pair> {
    names
        .into_iter()
        .filter_map(|n| {
            let q = lex::quote_name(n);
            (q.starts_with(word) || n.starts_with(word)).then(|| Pair {
                display: n.to_string(),
                replacement: format!("{q}{end}"),
            })
        })
        .collect()
}

impl Completer for ShellHelper {
    type Candidate = Pair;

    fn complete(
        &self,
        line: &str,
        pos: usize,
        _ctx: &Context<'_>,
    ) -> rustyline::Result<(usize, Vec<Pair>)> {
        Ok(self.candidates(line, pos))
    }
}

impl Hinter for ShellHelper {
    type Hint = String;
}

impl Highlighter for ShellHelper {}

/// Every line is accepted at Enter; the shell loop continues incomplete
/// commands with a continuation prompt.
impl Validator for ShellHelper {}

impl Helper for ShellHelper {}

#[cfg(test)]
mod tests {
    use super::*;

    fn helper(names: CompletionNames) -> ShellHelper {
        ShellHelper::new(Rc::new(RefCell::new(names)))
    }

    fn complete(h: &ShellHelper, line: &str) -> (usize, Vec<String>) {
        let (start, v) = h.candidates(line, line.len());
        (start, v.into_iter().map(|p| p.replacement).collect())
    }

    fn names() -> CompletionNames {
        CompletionNames {
            inputs: vec!["gpu_0/data_0".into(), "x".into(), "xmask".into()],
            values: vec!["w".into(), "x".into(), "y".into()],
            events: vec!["Add_0".into(), "z".into()],
        }
    }

    #[test]
    fn command_names_at_the_start_and_after_help() {
        let h = helper(CompletionNames::default());
        let (start, v) = complete(&h, "sh");
        assert_eq!(start, 0);
        assert_eq!(v, ["shapes ", "show "]);
        let (start, v) = complete(&h, "help s");
        assert_eq!(start, 5);
        assert_eq!(v, ["save", "set", "shapes", "show", "source", "step"]);
        assert!(complete(&h, "help show s").1.is_empty());
    }

    #[test]
    fn config_keys_then_their_values() {
        let h = helper(CompletionNames::default());
        assert_eq!(complete(&h, "config re").1, ["release "]);
        assert_eq!(complete(&h, "config release ").1, ["off", "on"]);
        assert_eq!(complete(&h, "config events o").1, ["off", "on"]);
        assert_eq!(complete(&h, "config events of").1, ["off"]);
        // never a key in the value's place
        assert!(complete(&h, "config precision ").1.is_empty());
        assert!(complete(&h, "config release on ").1.is_empty());
        let all = complete(&h, "config ").1;
        assert!(all.contains(&"max-iterations ".to_string()), "{all:?}");
    }

    #[test]
    fn graph_inputs_after_run_set_and_bench() {
        let h = helper(names());
        assert_eq!(complete(&h, "run x").1, ["x=", "xmask="]);
        assert_eq!(complete(&h, "run xm").1, ["xmask="]);
        assert_eq!(complete(&h, "run x=[1] xm").1, ["xmask="]);
        assert_eq!(complete(&h, "bench --runs 3 xm").1, ["xmask="]);
        assert_eq!(complete(&h, "run g").1, ["\"gpu_0/data_0\"="]);
        assert_eq!(complete(&h, "run \"gpu").1, ["\"gpu_0/data_0\"="]);
        assert!(complete(&h, "run x=ar").1.is_empty());
        assert_eq!(complete(&h, "set xm").1, ["xmask = "]);
        assert!(complete(&h, "set x = ").1.is_empty());
        let (start, _) = complete(&h, "run x");
        assert_eq!(start, 4);
    }

    #[test]
    fn values_after_print_and_events_name() {
        let h = helper(names());
        assert_eq!(complete(&h, "print ").1, ["w", "x", "y"]);
        assert_eq!(complete(&h, "print y").1, ["y"]);
        assert_eq!(complete(&h, "events --name ").1, ["Add_0 ", "z "]);
        assert_eq!(
            complete(&h, "events --action re").1,
            ["remove ", "replace "]
        );
        assert_eq!(
            complete(&h, "events --kind in").1,
            ["initializer ", "input ", "intermediate "]
        );
        assert_eq!(complete(&h, "events --na").1, ["--name "]);
        assert_eq!(
            complete(&h, "check --format ").1,
            ["csv ", "json ", "table "]
        );
        assert_eq!(complete(&h, "bench --format j").1, ["json "]);
        assert!(complete(&h, "bench --runs ").1.is_empty());
    }

    #[test]
    fn paths_after_load_list_a_folders_contents() {
        let dir = std::env::temp_dir().join(format!("onnx_light_complete_{}", std::process::id()));
        let sub = dir.join("models");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::write(sub.join("a.onnx"), b"").unwrap();
        std::fs::write(sub.join("b.onnx"), b"").unwrap();
        let h = helper(CompletionNames::default());
        let base = dir.display().to_string();
        let line = format!("load {base}/mod");
        let (start, v) = complete(&h, &line);
        assert_eq!(start, 5);
        assert_eq!(v, [format!("{base}/models/")]);
        let line = format!("events --out {base}/mod");
        assert_eq!(complete(&h, &line).1, [format!("{base}/models/")]);
        // the next Tab, on the completed folder, lists what is inside
        let line = format!("load {base}/models/");
        let (_, mut v) = complete(&h, &line);
        v.sort();
        assert_eq!(
            v,
            [
                format!("{base}/models/a.onnx"),
                format!("{base}/models/b.onnx")
            ]
        );
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn argument_kinds_from_the_signatures() {
        let h = helper(names());
        // a CommandName, a ValueName (watch, break --value), an event name
        assert_eq!(complete(&h, "help unw").1, ["unwatch"]);
        assert_eq!(complete(&h, "watch ").1, ["w", "x", "y"]);
        assert_eq!(complete(&h, "break --value y").1, ["y "]);
        assert_eq!(complete(&h, "config line-width ").1, ["auto"]);
        // past the signature's positionals, nothing
        assert!(complete(&h, "watch x ").1.is_empty());
        assert!(complete(&h, "step ").1.is_empty());
        // REF is a path, then come the assignments
        assert_eq!(complete(&h, "compare ref.onnx xm").1, ["xmask="]);
        // flags and their values are not positionals
        assert_eq!(complete(&h, "print --format json ").1, ["w", "x", "y"]);
        assert_eq!(
            complete(&h, "print --format ").1,
            ["csv ", "json ", "npy ", "text "]
        );
    }

    #[test]
    fn every_path_positional_completes_files() {
        let dir = std::env::temp_dir().join(format!("onnx_light_paths_{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("model.onnx"), b"").unwrap();
        let h = helper(names());
        let base = dir.display().to_string();
        for c in COMMANDS {
            let Some(i) =
                (0..4).find(|&i| c.sig.positional_at(i).map(|p| p.kind) == Some(Kind::Path))
            else {
                continue;
            };
            let words = vec!["w"; i].join(" ");
            let line = format!(
                "{} {words}{}{base}/mo",
                c.name,
                if i > 0 { " " } else { "" }
            );
            assert_eq!(
                complete(&h, &line).1,
                [format!("{base}/model.onnx")],
                "{line}"
            );
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn session_names_leave_out_initializers() {
        let mut s = Session::new();
        let text = "parse <ir_version: 10, opset_import: [\"\" : 18]>\n\
                    g (float[N,4] x, float[4] w) => (float[N,4] y)\n\
                    <float[4] w = {1.0, 2.0, 3.0, 4.0}>\n{ y = Add(x, w) }";
        s.execute(text).unwrap();
        let n = s.completion_names();
        assert_eq!(n.inputs, ["x"]);
        assert_eq!(n.values, ["w"]);
        assert!(n.events.is_empty());
        s.execute("run x=[[1,2,3,4]]").unwrap();
        let n = s.completion_names();
        assert_eq!(n.values, ["w", "x", "y"]);
        assert!(n.events.contains(&"y".to_string()), "{:?}", n.events);
    }
}
