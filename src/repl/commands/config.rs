use super::*;

fn on_off(v: &str) -> R<bool> {
    match v {
        "on" | "true" | "1" | "yes" => Ok(true),
        "off" | "false" | "0" | "no" => Ok(false),
        other => Err(anyhow!("expected on or off, got '{other}'")),
    }
}

/// A count of at least 1.
fn positive(key: &str, v: &str) -> R<usize> {
    match v.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(n),
        _ => Err(anyhow!("{key} expects a positive integer, got '{v}'")),
    }
}

pub(super) fn cmd_config(s: &mut Session, a: &Args) -> R<Flow> {
    let toks = &a.pos;
    let c = &s.config;
    let show = |key: &str, c: &crate::repl::Config| -> Option<String> {
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
                None => format!("{} (the terminal's)", crate::repl::line_width(c)),
            },
            _ => return None,
        })
    };
    const KEYS: &[&str] = crate::repl::CONFIG_KEYS;
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
                .ok_or_else(|| anyhow!("unknown option '{key}' ({})", KEYS.join(", ")))?;
            s.say(format!("{key} {v}"));
        }
        [key, value] => {
            let num = |v: &str| -> R<usize> {
                v.parse()
                    .map_err(|_| anyhow!("{key} expects a non-negative integer, got '{v}'"))
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
                            _ => bail!("line-width is between 20 and 100000, or auto"),
                        },
                    }
                }
                "precision" => {
                    let p = num(value)?;
                    if p > 17 {
                        bail!("precision is at most 17");
                    }
                    s.config.precision = p;
                }
                "seed" => {
                    let v: u64 = value
                        .parse()
                        .map_err(|_| anyhow!("seed expects an integer, got '{value}'"))?;
                    s.config.seed = v;
                    s.rng = Rng::new(v);
                }
                "max-memory" => crate::tensor::budget::set_limit(match value.as_str() {
                    "default" => None,
                    v => Some(crate::tensor::budget::parse_bytes(v).map_err(anyhow::Error::msg)?),
                }),
                "max-iterations" => {
                    crate::runtime::limits::set_max_iterations(positive(key, value)? as u64)
                }
                "max-events" => crate::runtime::limits::set_max_events(positive(key, value)?),
                "threads" => {
                    let n = num(value)?;
                    if n == 0 || n > 1024 {
                        bail!("threads must be between 1 and 1024");
                    }
                    let pool = rayon::ThreadPoolBuilder::new()
                        .num_threads(n)
                        .build()
                        // as a source its I/O error would show twice
                        .map_err(|e| anyhow!("cannot start {n} threads: {e}"))?;
                    s.pool = Some(Arc::new(pool));
                    s.config.threads = Some(n);
                }
                other => {
                    bail!("unknown option '{other}' ({})", KEYS.join(", "))
                }
            }
            let v = show(key, &s.config).unwrap_or_default();
            s.status(format!("{key} {v}"));
        }
        _ => return Err(usage_error("config", "too many arguments")),
    }
    Ok(Flow::Continue)
}
