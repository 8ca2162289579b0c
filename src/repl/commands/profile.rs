use super::*;

pub(super) fn cmd_profile(s: &mut Session, a: &Args) -> R<Flow> {
    let by_node = a.has("nodes");
    let rows = crate::runtime::usage::time_shares(last_events(s)?, by_node);
    let json_rows: Vec<serde_json::Value> = rows
        .iter()
        .map(|r| {
            let mut j = json!({"op_type": r.op_type, "count": r.count, "total_us": r.total_us, "share": r.share});
            if let Some(n) = &r.node {
                j["node"] = node_json(n);
            }
            j
        })
        .collect();
    let table = a.format == Format::Table;
    let mut headers = if by_node {
        vec!["node", "op_type", "name", "total_us", "share"]
    } else {
        vec!["op_type", "count", "total_us", "share"]
    };
    if table {
        headers.push("");
    }
    let mut d = Data::new(&headers, json!(json_rows));
    let top = rows.first().map_or(0.0, |r| r.share);
    for r in &rows {
        let mut row = match &r.node {
            Some(n) => vec![format!("#{}", n.index), r.op_type.clone(), n.name.clone()],
            None => vec![r.op_type.clone(), r.count.to_string()],
        };
        row.push(r.total_us.to_string());
        row.push(if table {
            format!("{:.1}%", r.share * 100.0)
        } else {
            format!("{:.6}", r.share)
        });
        if table {
            // bars scale to the largest row
            row.push(bar(if top > 0.0 { r.share / top } else { 0.0 }, 30));
        }
        d.rows.push(row);
    }
    if table {
        let total: u64 = rows.iter().map(|r| r.total_us).sum();
        d.footer.push(format!(
            "{} µs in {} nodes",
            total,
            rows.iter().map(|r| r.count).sum::<usize>()
        ));
    }
    emit(s, a, d);
    Ok(Flow::Continue)
}
