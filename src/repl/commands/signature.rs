//! A command's signature: its typed positionals and its flags. The usage
//! line, the argument checks, `help COMMAND` and completion are all derived
//! from it (nushell's model), so a command declares its arguments once.

use super::{Command, R};
use anyhow::{anyhow, bail};

/// What an argument (a positional or a flag's value) is; completion and
/// validation follow from it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    /// A file or folder path (completes file names; `~` is the home folder).
    Path,
    /// A value of the loaded model (completes the value names).
    ValueName,
    /// A symbol of dimension expressions (quoted when not an identifier).
    Symbol,
    /// A value with an optional numpy-style index, `NAME[INDEX]` (the rest
    /// of the line).
    ValueIndex,
    /// A graph input name (completes the inputs a user sets).
    InputName,
    /// A name in the last run's event log (completes those names).
    EventName,
    /// A node of the model (by name or `#INDEX`).
    NodeName,
    /// An operator type.
    OpType,
    /// A shell command (completes the command names).
    CommandName,
    /// A `config` key (completes the keys of [`crate::repl::CONFIG_KEYS`]).
    ConfigKey,
    /// The value of the `config` key before it (completes its choices).
    ConfigValue,
    /// A non-negative integer.
    Integer,
    /// An integer of at least 1.
    Count,
    /// A dimension expression (the rest of the line).
    DimExpr,
    /// A boolean condition on a value's statistics.
    Condition,
    /// `NAME=TENSOR` assignments (the rest of the line).
    TensorAssign,
    /// `NAME = TENSOR`: one input set to a tensor expression (the rest).
    InputAssign,
    /// `NAME = EXPR`: one symbol bound to an integer (the rest).
    SymbolAssign,
    /// One of these words.
    Choice(&'static [&'static str]),
    /// A comma-separated list of these words.
    ChoiceList(&'static [&'static str]),
    /// A comma-separated list of names.
    NameList,
    /// Free text (the rest of the line).
    Text,
}

impl Kind {
    /// Whether the argument takes the rest of the line (spaces included),
    /// not one word.
    pub fn is_rest(self) -> bool {
        matches!(
            self,
            Kind::ValueIndex
                | Kind::DimExpr
                | Kind::TensorAssign
                | Kind::InputAssign
                | Kind::SymbolAssign
                | Kind::Text
        )
    }
}

/// How many times a positional is given.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arity {
    Required,
    Optional,
    /// Zero or more.
    Repeated,
    /// One or more.
    OneOrMore,
}

/// A positional argument.
pub struct Positional {
    /// The placeholder the usage shows (`PATH`, `NAME=TENSOR`).
    pub name: &'static str,
    pub kind: Kind,
    pub arity: Arity,
    /// What it is, for `help COMMAND` and for errors ("expected ...").
    pub help: &'static str,
}

/// A flag of a command: `--name` or `--name VALUE`.
pub struct Flag {
    pub name: &'static str,
    /// The value's placeholder, `None` for a switch.
    pub value: Option<&'static str>,
    /// What the value is (ignored for a switch).
    pub kind: Kind,
    pub help: &'static str,
}

/// The arguments of a command.
pub struct Signature {
    pub positionals: &'static [Positional],
    pub flags: &'static [Flag],
    /// Flags that exclude each other (`[--text|--plan]`).
    pub exclusive: &'static [&'static [&'static str]],
    /// A switch given instead of the positionals (`delete N [N ...] | --all`).
    pub instead: Option<&'static str>,
    /// The argument text is taken as is (no flag parsing besides the data
    /// flags at the very end); its one positional is the whole text.
    pub raw: bool,
    /// Accepts `--format` and `--out` (a data command).
    pub data: bool,
}

/// `--name VALUE` as the usage shows it.
fn flag_text(f: &Flag) -> String {
    match f.value {
        Some(v) => format!("--{} {v}", f.name),
        None => format!("--{}", f.name),
    }
}

impl Signature {
    /// The arguments after the command's name in its usage line:
    /// positionals (nested brackets for consecutive optionals), then the
    /// flags in declaration order, exclusive ones grouped.
    pub fn usage_args(&self) -> String {
        let mut parts: Vec<String> = Vec::new();
        let mut open = 0;
        let mut pos = String::new();
        for p in self.positionals {
            let sep = if pos.is_empty() || pos.ends_with('[') {
                ""
            } else {
                " "
            };
            match p.arity {
                Arity::Required => pos.push_str(&format!("{sep}{}", p.name)),
                Arity::Optional => {
                    pos.push_str(&format!("{sep}[{}", p.name));
                    open += 1;
                }
                Arity::Repeated => pos.push_str(&format!("{sep}[{} ...]", p.name)),
                Arity::OneOrMore => pos.push_str(&format!("{sep}{0} [{0} ...]", p.name)),
            }
        }
        pos.push_str(&"]".repeat(open));
        if let Some(i) = self.instead {
            pos.push_str(&format!(" | --{i}"));
        }
        if !pos.is_empty() {
            parts.push(pos);
        }
        let mut done: Vec<&str> = Vec::new();
        for f in self.flags {
            if Some(f.name) == self.instead || done.contains(&f.name) {
                continue;
            }
            match self.exclusive.iter().find(|g| g.contains(&f.name)) {
                Some(group) => {
                    let members: Vec<&Flag> = group
                        .iter()
                        .filter_map(|n| self.flags.iter().find(|f| f.name == *n))
                        .collect();
                    let sep = if members.iter().any(|f| f.value.is_some()) {
                        " | "
                    } else {
                        "|"
                    };
                    let texts: Vec<String> = members.iter().map(|f| flag_text(f)).collect();
                    parts.push(format!("[{}]", texts.join(sep)));
                    done.extend(group.iter());
                }
                None => parts.push(format!("[{}]", flag_text(f))),
            }
        }
        parts.join(" ")
    }

    /// The positional that a word at `index` (0-based, flags and their
    /// values left out) fills, if any.
    pub fn positional_at(&self, index: usize) -> Option<&'static Positional> {
        for (i, p) in self.positionals.iter().enumerate() {
            if i == index
                || p.kind.is_rest()
                || matches!(p.arity, Arity::Repeated | Arity::OneOrMore)
            {
                return Some(p);
            }
        }
        None
    }
}

impl Command {
    /// The usage line: the name, then the arguments from the signature.
    pub fn usage(&self) -> String {
        let args = self.sig.usage_args();
        if args.is_empty() {
            self.name.to_string()
        } else {
            format!("{} {args}", self.name)
        }
    }

    /// An error about this command's arguments, with its usage.
    pub fn arg_error(&self, what: &str) -> anyhow::Error {
        anyhow!("{}: {what} (usage: {})", self.name, self.usage())
    }

    /// Checks the positionals (`pos`: the words left after the flags, or
    /// for a raw command its whole text) and the flags given against the
    /// signature: counts, kinds that can be checked alone, exclusive flags.
    pub fn check_args(&self, pos: &[String], text: &str, has: &dyn Fn(&str) -> bool) -> R<()> {
        let sig = &self.sig;
        for g in sig.exclusive {
            let given: Vec<&&str> = g.iter().filter(|n| has(n)).collect();
            if given.len() > 1 {
                bail!(
                    "{}: --{} and --{} exclude each other",
                    self.name,
                    given[0],
                    given[1]
                );
            }
        }
        if let Some(i) = sig.instead.filter(|i| has(i)) {
            if !text.trim().is_empty() {
                let names: Vec<&str> = sig.positionals.iter().map(|p| p.name).collect();
                return Err(self.arg_error(&format!("give {} or --{i}, not both", names.join(" "))));
            }
            return Ok(());
        }
        if sig.raw && sig.positionals.is_empty() {
            // the handler reads its flags from the text (`break`)
            return Ok(());
        }
        if sig.positionals.is_empty() {
            if !text.trim().is_empty() {
                bail!(
                    "{} takes no arguments, got '{}' (usage: {})",
                    self.name,
                    text.trim(),
                    self.usage()
                );
            }
            return Ok(());
        }
        if sig.raw {
            // the one positional is the whole text
            return match sig.positionals.first() {
                Some(p) => self.check_rest(p, text.trim()),
                None => Ok(()),
            };
        }
        let mut i = 0;
        for p in sig.positionals {
            if p.kind.is_rest() {
                return self.check_rest(p, rest_text(text, i));
            }
            match p.arity {
                Arity::Required | Arity::Optional => match pos.get(i) {
                    Some(t) => {
                        self.check_kind(p, t)?;
                        i += 1;
                    }
                    None if p.arity == Arity::Required => {
                        return Err(self.arg_error(&format!("missing {}", p.name)))
                    }
                    None => {}
                },
                Arity::Repeated | Arity::OneOrMore => {
                    if pos.len() <= i && p.arity == Arity::OneOrMore {
                        return Err(self.arg_error(&format!("missing {}", p.name)));
                    }
                    for t in pos.iter().skip(i) {
                        self.check_kind(p, t)?;
                    }
                    i = pos.len();
                }
            }
        }
        if let Some(extra) = pos.get(i) {
            return Err(self.arg_error(&format!("unexpected '{extra}'")));
        }
        Ok(())
    }

    /// Checks a positional that takes the rest of the text, `t`.
    fn check_rest(&self, p: &Positional, t: &str) -> R<()> {
        if !t.is_empty() {
            self.check_kind(p, t)
        } else if matches!(p.arity, Arity::Required | Arity::OneOrMore) {
            Err(self.arg_error(&format!("missing {}", p.name)))
        } else {
            Ok(())
        }
    }

    /// Checks one argument of a kind that can be checked alone.
    fn check_kind(&self, p: &Positional, t: &str) -> R<()> {
        let ok = match p.kind {
            Kind::Integer => t.parse::<u64>().is_ok(),
            Kind::Count => t.parse::<u64>().is_ok_and(|n| n >= 1),
            Kind::InputAssign | Kind::SymbolAssign => super::split_assignment(t).is_some(),
            Kind::Choice(c) => c.contains(&t),
            _ => true,
        };
        if ok {
            Ok(())
        } else {
            Err(self.arg_error(&format!("expected {}, got '{t}'", p.help)))
        }
    }
}

/// The text after the first `n` words (flags already removed).
fn rest_text(text: &str, n: usize) -> &str {
    let mut t = text.trim_start();
    for _ in 0..n {
        let words = super::lex::split_top(t, char::is_whitespace);
        match words.into_iter().find(|w| !w.is_empty()) {
            Some(w) => match t.find(w.as_str()) {
                Some(at) => t = t[at + w.len()..].trim_start(),
                None => return "",
            },
            None => return "",
        }
    }
    t.trim()
}

#[cfg(test)]
mod tests {
    use super::super::{find, COMMANDS};
    use super::*;
    use crate::repl::Session;

    fn usage(name: &str) -> String {
        find(name).map(|c| c.usage()).unwrap_or_default()
    }

    #[test]
    fn usages_come_from_the_signatures() {
        assert_eq!(usage("load"), "load PATH");
        assert_eq!(usage("quit"), "quit");
        assert_eq!(usage("config"), "config [KEY [VALUE]]");
        assert_eq!(usage("delete"), "delete N [N ...] | --all");
        assert_eq!(usage("show"), "show [--text|--plan] [--out FILE]");
        assert_eq!(usage("dump"), "dump DIR [--values a,b | --all] [--pb]");
        assert_eq!(usage("let"), "let [NAME = EXPR] [--format F] [--out FILE]");
        assert_eq!(
            usage("run"),
            "run [NAME=TENSOR ...] [--release|--no-release]"
        );
        assert_eq!(
            usage("bench"),
            "bench [NAME=TENSOR ...] [--runs N] [--warmup K] [--format F] [--out FILE]"
        );
        for c in COMMANDS {
            let u = c.usage();
            assert!(u.starts_with(c.name), "{u}");
            for p in c.sig.positionals {
                assert!(u.contains(p.name), "{}: {u} lacks {}", c.name, p.name);
            }
            for f in c.sig.flags {
                assert!(
                    u.contains(&format!("--{}", f.name)),
                    "{u} lacks --{}",
                    f.name
                );
            }
            // a data command takes --format and --out, and says so
            if c.sig.data {
                assert!(u.contains("[--format F] [--out FILE]"), "{u}");
            }
            for g in c.sig.exclusive {
                for n in *g {
                    assert!(
                        c.sig.flags.iter().any(|f| f.name == *n),
                        "{}: --{n}",
                        c.name
                    );
                }
            }
        }
    }

    #[test]
    fn a_wrong_argument_count_is_refused_with_the_usage() {
        for c in COMMANDS {
            let mut s = Session::new();
            let u = format!("(usage: {})", c.usage());
            let unbounded = c.sig.raw
                || c.sig.positionals.iter().any(|p| {
                    p.kind.is_rest() || matches!(p.arity, Arity::Repeated | Arity::OneOrMore)
                });
            if !unbounded {
                let words = vec!["w"; c.sig.positionals.len() + 1].join(" ");
                let e = s.execute(&format!("{} {words}", c.name)).err();
                let e = e.map(|e| format!("{e:#}")).unwrap_or_default();
                assert!(e.contains(&u), "{} {words}: {e}", c.name);
            }
            let required = c
                .sig
                .positionals
                .iter()
                .find(|p| matches!(p.arity, Arity::Required | Arity::OneOrMore));
            if let Some(p) = required {
                let e = s
                    .execute(c.name)
                    .err()
                    .map(|e| format!("{e:#}"))
                    .unwrap_or_default();
                assert_eq!(e, format!("{}: missing {} {u}", c.name, p.name));
            }
        }
    }

    #[test]
    fn kinds_are_checked_before_the_handler_runs() {
        let mut s = Session::new();
        let mut err = |line: &str| {
            s.execute(line)
                .err()
                .map(|e| format!("{e:#}"))
                .unwrap_or_default()
        };
        assert_eq!(
            err("step 0"),
            "step: expected a count of nodes (1 or more), got '0' (usage: step [N])"
        );
        assert!(err("set x").starts_with("set: expected an input, '=' and a tensor expression"));
        assert!(err("delete 1 --all").contains("not both"));
        assert_eq!(
            err("show --text --plan"),
            "show: --text and --plan exclude each other"
        );
        assert_eq!(
            err("bench --runs many"),
            "--runs expects a non-negative integer, got 'many'"
        );
        assert!(err("quit now").starts_with("quit takes no arguments, got 'now'"));
    }

    #[test]
    fn positionals_by_word_index() {
        let c = find("compare").map(|c| &c.sig);
        let kinds: Vec<Option<Kind>> = (0..3)
            .map(|i| c.and_then(|c| c.positional_at(i)).map(|p| p.kind))
            .collect();
        assert_eq!(
            kinds,
            [
                Some(Kind::Path),
                Some(Kind::TensorAssign),
                Some(Kind::TensorAssign)
            ]
        );
        let help = find("help").map(|c| &c.sig);
        assert!(help.and_then(|c| c.positional_at(1)).is_none());
    }
}
