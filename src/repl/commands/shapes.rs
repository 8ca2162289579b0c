use super::*;

pub(super) fn cmd_shapes(s: &mut Session, a: &Args) -> R<Flow> {
    ensure_report(s)?;
    let r = s.report.as_ref().ok_or("no inference report")?;
    let mut d = Data::new(&["name", "inferred", "resolved"], Json::Null);
    let mut arr = Vec::new();
    let extended = r.extend_bindings(&s.bindings);
    for v in r.values.iter().filter(|v| v.scope.is_empty()) {
        let dims = v.ty.shape();
        let res = dims.map(|d| shape::InferReport::resolve_extended(d, &extended));
        d.rows.push(vec![
            quote_name(&v.name),
            shape_text(dims),
            resolved_text(&res),
        ]);
        arr.push(json!({
            "name": v.name,
            "inferred": dims_json(dims),
            "resolved": resolved_json(&res, dims),
        }));
    }
    d.json = Json::Array(arr);
    emit(s, a, d);
    Ok(Flow::Continue)
}
