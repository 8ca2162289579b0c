use super::*;

/// One produced value of `check`: its runtime shape beside the inferred
/// and resolved ones, and their agreement.
#[derive(Serialize, Default)]
struct CheckLine {
    name: String,
    runtime: Vec<usize>,
    inferred: Json,
    resolved: Json,
    status: &'static str,
    #[serde(skip)]
    inferred_text: String,
    #[serde(skip)]
    resolved_text: String,
}

impl Row for CheckLine {
    fn cell(&self, field: &str) -> Option<String> {
        match field {
            "name" => Some(quote_name(&self.name)),
            "runtime" => Some(tuple(&self.runtime)),
            "inferred" => Some(self.inferred_text.clone()),
            "resolved" => Some(self.resolved_text.clone()),
            _ => None,
        }
    }
}

pub(super) fn cmd_check(s: &mut Session, a: &Args) -> R<Flow> {
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
    let r = s.report.as_ref().context("no inference report")?;
    let mut rows = Vec::new();
    let (mut ok, mut bad, mut unknown) = (0, 0, 0);
    for row in shape::check_shapes(r, &s.bindings, &produced) {
        match row.status {
            shape::CheckStatus::Ok => ok += 1,
            shape::CheckStatus::Mismatch => bad += 1,
            shape::CheckStatus::Unknown => unknown += 1,
        }
        let dims = row.inferred.as_deref();
        rows.push(CheckLine {
            inferred: dims_json(dims),
            resolved: resolved_json(&row.resolved, dims),
            status: row.status.name(),
            inferred_text: shape_text(dims),
            resolved_text: resolved_text(&row.resolved),
            name: row.name,
            runtime: row.runtime,
        });
    }
    let mut d = Data::from_rows(&rows);
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
        bail!(
            "check: {bad} value{} whose runtime shape differs from the inferred one",
            if bad == 1 { "" } else { "s" }
        );
    }
    Ok(Flow::Continue)
}
