use super::*;

/// One value of `shapes`: its inferred shape and that shape resolved with
/// the bindings.
#[derive(Serialize, Default)]
struct ShapeLine {
    name: String,
    inferred: Json,
    resolved: Json,
    #[serde(skip)]
    inferred_text: String,
    #[serde(skip)]
    resolved_text: String,
}

impl Row for ShapeLine {
    fn cell(&self, field: &str) -> Option<String> {
        match field {
            "name" => Some(quote_name(&self.name)),
            "inferred" => Some(self.inferred_text.clone()),
            "resolved" => Some(self.resolved_text.clone()),
            _ => None,
        }
    }
}

pub(super) fn cmd_shapes(s: &mut Session, a: &Args) -> R<Flow> {
    ensure_report(s)?;
    let r = s.report.as_ref().context("no inference report")?;
    let extended = r.extend_bindings(&s.bindings);
    let rows: Vec<ShapeLine> = r
        .values
        .iter()
        .filter(|v| v.scope.is_empty())
        .map(|v| {
            let dims = v.ty.shape();
            let res = dims.map(|d| shape::InferReport::resolve_extended(d, &extended));
            ShapeLine {
                name: v.name.clone(),
                inferred: dims_json(dims),
                resolved: resolved_json(&res, dims),
                inferred_text: shape_text(dims),
                resolved_text: resolved_text(&res),
            }
        })
        .collect();
    emit(s, a, Data::from_rows(&rows));
    Ok(Flow::Continue)
}
