use super::*;

/// The live tensor bytes after one node of the last run.
#[derive(Serialize, Default)]
struct MemoryLine {
    node: Json,
    live_bytes: usize,
    #[serde(skip)]
    bar: String,
}

impl Row for MemoryLine {
    fn cell_in(&self, column: &str, format: Format) -> Option<String> {
        match column {
            "node" => Some(format!("#{}", plain_text(&self.node["index"]))),
            "op_type" | "name" => Some(plain_text(&self.node[column])),
            "live_bytes" if format == Format::Table => {
                Some(crate::tensor::budget::human(self.live_bytes))
            }
            "" => Some(self.bar.clone()),
            _ => None,
        }
    }
}

pub(super) fn cmd_memory(s: &mut Session, a: &Args) -> R<Flow> {
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
        let text = crate::repl::memory_chart::svg(&series, top, &title);
        let path = crate::files::expand_home(path);
        proto::write_atomic(Path::new(&path), text.as_bytes())?;
        s.status(format!("wrote the memory chart to {path}"));
    }
    let peak_point = top.and_then(|i| series.get(i));
    // the weights are apart from the live values: used in place from the
    // model's files (mapped) or copied onto the heap (owned)
    let (mapped, owned) = s.plan.as_ref().map_or((0, 0), |p| p.weight_bytes());
    let rewritten = s.plan.as_ref().map_or(0, |p| p.rewritten_weight_bytes());
    let table = a.format == Format::Table;
    let max = peak_point.map_or(0, |p| p.live_bytes).max(1) as f64;
    let lines: Vec<MemoryLine> = series
        .iter()
        .enumerate()
        .map(|(i, p)| MemoryLine {
            node: node_json(&p.node),
            live_bytes: p.live_bytes,
            bar: format!(
                "{}{}",
                bar(p.live_bytes as f64 / max, 30),
                if Some(i) == top { " ← peak" } else { "" }
            ),
        })
        .collect();
    let mut columns = vec!["node", "op_type", "name", "live_bytes"];
    if table {
        columns.push("");
    }
    let peak_bytes = peak_point.map_or(0, |p| p.live_bytes);
    let peak_node = peak_point.map(|p| node_json(&p.node));
    let mut d = Data::from_rows_in(&lines, &columns, a.format).in_document(|series| {
        json!({
            "peak_bytes": peak_bytes,
            "peak_node": peak_node,
            "weights": {"mapped_bytes": mapped, "owned_bytes": owned, "rewritten_bytes": rewritten},
            "series": series,
        })
    });
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
