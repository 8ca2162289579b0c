use super::*;

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
            .map(|x| parse(x.trim()).ok_or_else(|| anyhow!("unknown {what} '{x}' ({all})")))
            .collect::<R<Vec<T>>>()
            .map(Some),
    }
}

/// One event of the last run's log. The JSON carries the event as the
/// SPEC spells it (with `inferred`, `resolved` and `status` under
/// `--shapes`); the table names the element type and prints the values as
/// a list, CSV keeps the type's number and writes lists as JSON arrays.
#[derive(Serialize, Default)]
struct EventLine {
    index: usize,
    action: &'static str,
    kind: &'static str,
    name: String,
    data_type: i32,
    shape: Vec<usize>,
    value_count: usize,
    values: Json,
    string_values: Vec<String>,
    truncated: bool,
    node: Json,
    elapsed_us: Option<u64>,
    depth: usize,
    scope: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    inferred: Option<Json>,
    #[serde(skip_serializing_if = "Option::is_none")]
    resolved: Option<Json>,
    #[serde(skip_serializing_if = "Option::is_none")]
    status: Option<&'static str>,
    /// Table texts: the values list, the node (`#3 Conv`), the check.
    #[serde(skip)]
    values_text: String,
    #[serde(skip)]
    node_text: String,
    #[serde(skip)]
    node_csv: String,
    #[serde(skip)]
    check_text: [String; 2],
}

impl EventLine {
    fn new(e: &crate::runtime::Event, check: Option<&shape::CheckRow>, prec: usize) -> EventLine {
        let listed = |items: Vec<String>| {
            if items.is_empty() {
                String::new()
            } else {
                format!(
                    "[{}]{}",
                    items.join(", "),
                    if e.truncated { " ..." } else { "" }
                )
            }
        };
        let values_text = if e.string_values.is_empty() {
            listed(e.values.iter().map(|x| x.table_text(prec)).collect())
        } else {
            listed(e.string_values.iter().map(|v| quote_str(v)).collect())
        };
        let node_text = e
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
        let node_csv = e
            .node
            .as_ref()
            .map(|n| format!("{}:{}:{}:{}", n.index, n.domain, n.op_type, n.name))
            .unwrap_or_default();
        let dims = check.and_then(|c| c.inferred.as_deref());
        EventLine {
            index: e.index,
            action: e.action.name(),
            kind: e.kind.name(),
            name: e.name.clone(),
            data_type: e.data_type,
            shape: e.shape.clone(),
            value_count: e.value_count,
            values: json!(e.values),
            string_values: e.string_values.clone(),
            truncated: e.truncated,
            node: e.node.as_ref().map(node_json).unwrap_or(Json::Null),
            elapsed_us: e.elapsed_us,
            depth: e.depth,
            scope: e.scope.clone(),
            inferred: check.map(|_| dims_json(dims)),
            resolved: check.map(|c| resolved_json(&c.resolved, dims)),
            status: check.map(|c| c.status.name()),
            values_text,
            node_text,
            node_csv,
            check_text: check
                .map(|c| [shape_text(dims), resolved_text(&c.resolved)])
                .unwrap_or_default(),
        }
    }
}

impl Row for EventLine {
    fn cell_in(&self, column: &str, format: Format) -> Option<String> {
        let csv = format == Format::Csv;
        // lists in CSV as JSON arrays: ["a b"] and ["a","b"] stay apart
        let json_list = |empty: bool, v: String| if empty { String::new() } else { v };
        Some(match column {
            "data_type" if csv => self.data_type.to_string(),
            // the table names the type (`int64`)
            "data_type" => match DataType::from_code(self.data_type) {
                Some(t) if self.data_type != 0 => t.name().to_string(),
                _ => String::new(),
            },
            "shape" => format!("{:?}", self.shape),
            "values" if csv => json_list(
                self.values.as_array().is_none_or(|v| v.is_empty()),
                self.values.to_string(),
            ),
            "values" => self.values_text.clone(),
            "string_values" if csv => json_list(
                self.string_values.is_empty(),
                json!(self.string_values).to_string(),
            ),
            "string_values" => String::new(),
            "node" if csv => self.node_csv.clone(),
            "node" => self.node_text.clone(),
            "inferred" => self.check_text[0].clone(),
            "resolved" => self.check_text[1].clone(),
            "status" => self.status.unwrap_or_default().to_string(),
            _ => return None,
        })
    }
}

pub(super) fn cmd_events(s: &mut Session, a: &Args) -> R<Flow> {
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
        bail!("the last run recorded no events ('config events on' to record them)");
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
    let prec = s.config.precision;
    let lines: Vec<EventLine> = evs
        .iter()
        .enumerate()
        .map(|(k, e)| EventLine::new(e, checks.get(k).and_then(Option::as_ref), prec))
        .collect();
    let d = Data::from_rows_in(&lines, &headers, a.format);
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
            crate::repl::render::table_styled(&h, &rows, crate::repl::render::meaning_color)
        } else {
            crate::repl::render::table(&h, &rows)
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
    emit(s, a, d);
    Ok(Flow::Continue)
}
