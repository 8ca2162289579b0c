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
            .map(|x| {
                parse(x.trim()).ok_or_else(|| CmdError(format!("unknown {what} '{x}' ({all})")))
            })
            .collect::<R<Vec<T>>>()
            .map(Some),
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
        return Err("the last run recorded no events ('config events on' to record them)".into());
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
    let mut d = Data::new(&headers, Json::Null);
    let mut arr = Vec::with_capacity(evs.len());
    let prec = s.config.precision;
    for (k, e) in evs.iter().enumerate() {
        let check = checks.get(k).and_then(Option::as_ref);
        let node_json = e.node.as_ref().map(
            |n| json!({"index": n.index, "op_type": n.op_type, "domain": n.domain, "name": n.name}),
        );
        arr.push(json!({
            "index": e.index,
            "action": e.action.name(),
            "kind": e.kind.name(),
            "name": e.name,
            "data_type": e.data_type,
            "shape": e.shape,
            "value_count": e.value_count,
            "values": e.values,
            "string_values": e.string_values,
            "truncated": e.truncated,
            "node": node_json.clone().unwrap_or(Json::Null),
            "elapsed_us": e.elapsed_us,
            "depth": e.depth,
            "scope": e.scope,
        }));
        if let (Some(c), Some(Json::Object(o))) = (check, arr.last_mut()) {
            let dims = c.inferred.as_deref();
            o.insert("inferred".into(), dims_json(dims));
            o.insert("resolved".into(), resolved_json(&c.resolved, dims));
            o.insert("status".into(), json!(c.status.name()));
        }
        let vals = if e.string_values.is_empty() {
            let v: Vec<String> = e.values.iter().map(|x| x.table_text(prec)).collect();
            if v.is_empty() {
                String::new()
            } else {
                format!(
                    "[{}]{}",
                    v.join(", "),
                    if e.truncated { " ..." } else { "" }
                )
            }
        } else {
            let q: Vec<String> = e.string_values.iter().map(|v| quote_str(v)).collect();
            format!(
                "[{}]{}",
                q.join(", "),
                if e.truncated { " ..." } else { "" }
            )
        };
        let node_txt = e
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
        d.rows.push(vec![
            e.index.to_string(),
            e.action.name().into(),
            e.kind.name().into(),
            e.name.clone(),
            // the table names the type (`int64`); JSON and CSV keep the number
            match DataType::from_code(e.data_type) {
                Some(t) if e.data_type != 0 => t.name().to_string(),
                _ => String::new(),
            },
            format!("{:?}", e.shape),
            e.value_count.to_string(),
            vals,
            String::new(),
            e.truncated.to_string(),
            node_txt,
            e.elapsed_us.map(|u| u.to_string()).unwrap_or_default(),
            e.depth.to_string(),
            e.scope.clone(),
        ]);
        if a.has("shapes") {
            let row = d.rows.last_mut().expect("pushed above");
            match check {
                Some(c) => row.extend([
                    shape_text(c.inferred.as_deref()),
                    resolved_text(&c.resolved),
                    c.status.name().to_string(),
                ]),
                None => row.extend([String::new(), String::new(), String::new()]),
            }
        }
    }
    d.json = Json::Array(arr);
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
    if a.format == Format::Csv {
        for (r, e) in d.rows.iter_mut().zip(&evs) {
            r[4] = e.data_type.to_string();
            // lists as JSON arrays: ["a b"] and ["a","b"] stay apart
            r[7] = if e.values.is_empty() {
                String::new()
            } else {
                json!(e.values).to_string()
            };
            r[8] = if e.string_values.is_empty() {
                String::new()
            } else {
                json!(e.string_values).to_string()
            };
            r[10] = e
                .node
                .as_ref()
                .map(|n| format!("{}:{}:{}:{}", n.index, n.domain, n.op_type, n.name))
                .unwrap_or_default();
        }
    }
    emit(s, a, d);
    Ok(Flow::Continue)
}
