use super::*;

/// One operator type (or one node, with `--nodes`) of `profile`: its time
/// and its share of the run's node time.
#[derive(Serialize, Default)]
struct ProfileLine {
    op_type: String,
    count: usize,
    total_us: u64,
    share: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    node: Option<Json>,
    #[serde(skip)]
    bar: String,
}

impl Row for ProfileLine {
    fn cell_in(&self, column: &str, format: Format) -> Option<String> {
        let node = |field: &str| self.node.as_ref().map(|n| plain_text(&n[field]));
        match column {
            "node" => node("index").map(|i| format!("#{i}")),
            "name" => node("name"),
            "share" if format == Format::Table => Some(format!("{:.1}%", self.share * 100.0)),
            "share" => Some(format!("{:.6}", self.share)),
            "" => Some(self.bar.clone()),
            _ => None,
        }
    }
}

pub(super) fn cmd_profile(s: &mut Session, a: &Args) -> R<Flow> {
    let by_node = a.has("nodes");
    let rows = crate::runtime::usage::time_shares(last_events(s)?, by_node);
    let table = a.format == Format::Table;
    // bars scale to the largest row
    let top = rows.first().map_or(0.0, |r| r.share);
    let lines: Vec<ProfileLine> = rows
        .iter()
        .map(|r| ProfileLine {
            op_type: r.op_type.clone(),
            count: r.count,
            total_us: r.total_us,
            share: r.share,
            node: r.node.as_ref().map(node_json),
            bar: bar(if top > 0.0 { r.share / top } else { 0.0 }, 30),
        })
        .collect();
    let mut columns = if by_node {
        vec!["node", "op_type", "name", "total_us", "share"]
    } else {
        vec!["op_type", "count", "total_us", "share"]
    };
    if table {
        columns.push("");
    }
    let mut d = Data::from_rows_in(&lines, &columns, a.format);
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
