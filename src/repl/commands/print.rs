use super::*;

/// `print NAME --stats`: the value's type and shape, then its statistics.
/// The JSON object lists the statistics first (`count` included), the
/// table the name first; the table prints numbers at the session's
/// precision, CSV in full.
#[derive(Serialize, Default)]
struct StatsLine {
    #[serde(flatten)]
    stats: crate::tensor::Stats,
    name: String,
    elem_type: String,
    shape: Vec<usize>,
    #[serde(skip)]
    precision: usize,
}

impl Row for StatsLine {
    const COLUMNS: &'static [&'static str] = &[
        "name",
        "elem_type",
        "shape",
        "min",
        "max",
        "mean",
        "std",
        "nan",
        "inf",
    ];

    fn cell_in(&self, column: &str, format: Format) -> Option<String> {
        let num = |x: Option<f64>| match (x, format) {
            (None, _) => String::new(),
            (Some(x), Format::Table) => crate::tensor::format_scalar(x, self.precision),
            (Some(x), _) => x.to_string(),
        };
        Some(match column {
            "shape" => tuple(&self.shape),
            "min" => num(self.stats.min),
            "max" => num(self.stats.max),
            "mean" => num(self.stats.mean),
            "std" => num(self.stats.std),
            _ => return None,
        })
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
                bail!(
                    "'{name}': map {i} has other keys than map 0, so the maps do not share CSV columns (use --format json)"
                );
            }
            let rows: Vec<Vec<String>> = std::iter::once(texts(first.keys()))
                .chain(maps.iter().map(|m| texts(m.values())))
                .collect();
            let mut text = crate::repl::render::csv_records(rows.iter().map(|r| r.as_slice()));
            text.push('\n');
            Ok(text.into_bytes())
        }
        other => Err(anyhow!(
            "'{name}' is a map: print exports it as text, json or csv, not {other}"
        )),
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
            let mut text = crate::repl::render::csv_records(texts.chunks(cols));
            if !text.is_empty() {
                text.push('\n');
            }
            Ok(text.into_bytes())
        }
        "npy" => crate::tensor::write_npy(t).with_context(|| format!("'{name}'")),
        other => Err(anyhow!(
            "unknown format '{other}' for print (text, json, csv or npy)"
        )),
    }
}

pub(super) fn cmd_print(s: &mut Session, a: &Args) -> R<Flow> {
    let arg = a.rest.trim();
    let bad_index = |e: crate::repl::slice::SliceError| anyhow!("bad index: {}", e.render(arg));
    let (name_text, index_at) = crate::repl::slice::split(arg).map_err(bad_index)?;
    let index = match index_at {
        Some(at) => Some((crate::repl::slice::parse(arg, at).map_err(bad_index)?, at)),
        None => None,
    };
    let name = unquote_name(name_text).map_err(anyhow::Error::msg)?;
    let found = crate::repl::debugger::paused_value(s, &name).or_else(|| {
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
                crate::proto::from_proto(t).ok().map(Value::Tensor)
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
            .ok_or_else(|| anyhow!("'{name}' is {}: only tensors can be indexed", v.describe()))?;
            let part = crate::repl::slice::apply(t, idx).map_err(bad_index)?;
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
                        anyhow!(
                            "'{name}' is not a tensor or a map: --format {format} exports those"
                        )
                    })?;
                    export_tensor(&name, t, format)?
                }
            };
            match a.value("out") {
                Some(path) => {
                    let path = crate::files::expand_home(path);
                    proto::write_atomic(Path::new(&path), &bytes)?;
                    s.out_written = true;
                    s.status(format!("wrote '{name}' ({} bytes) to {path}", bytes.len()));
                }
                None if format == "npy" => {
                    bail!("--format npy writes binary: give --out FILE")
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
            Err(anyhow!(if released {
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
                    if crate::repl::debugger::is_paused(s) {
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
    .ok_or_else(|| anyhow!("'{name}' is {}: --stats needs a tensor", v.describe()))?;
    let st = t
        .stats()
        .ok_or_else(|| anyhow!("'{name}' holds strings: --stats needs numbers"))?;
    let f = match format {
        "text" => Format::Table,
        "json" => Format::Json,
        "csv" => Format::Csv,
        other => {
            bail!("--stats prints as text, json or csv, not {other}")
        }
    };
    let row = StatsLine {
        stats: st,
        name: name.to_string(),
        elem_type: t.dtype().to_string(),
        shape: t.shape().to_vec(),
        precision: s.config.precision,
    };
    let d = Data::from_rows_in(std::slice::from_ref(&row), StatsLine::COLUMNS, f).one_object();
    let text = d.render(f);
    s.say(text);
    Ok(Flow::Continue)
}
