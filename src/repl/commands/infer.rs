use super::*;

pub(super) fn cmd_infer(s: &mut Session, a: &Args) -> R<Flow> {
    let mut m = s.model()?.clone();
    let r = shape::infer_model(&mut m);
    s.model = Some(m);
    let mut d = Data::new(&["name", "type", "source"], Json::Null);
    let mut values = Vec::new();
    for v in &r.values {
        let name = if v.scope.is_empty() {
            v.name.clone()
        } else {
            format!("{}:{}", v.scope, v.name)
        };
        d.rows
            .push(vec![name, v.ty.display(), v.source.name().into()]);
        let mut o = json!({
            "name": v.name,
            "elem_type": v.ty.elem().map(|e| e.name()).unwrap_or(match &v.ty {
                TypeInfo::Sequence(_) => "sequence",
                TypeInfo::Optional(_) => "optional",
                TypeInfo::Map(..) => "map",
                _ => "undefined",
            }),
            "shape": dims_json(v.ty.shape()),
            "source": v.source.name(),
        });
        if !v.scope.is_empty() {
            o["scope"] = json!(v.scope);
        }
        values.push(o);
    }
    let eqs: Vec<Json> = r
        .equations
        .iter()
        .map(|e| json!({"symbol": e.symbol, "expr": e.expr.to_string()}))
        .collect();
    d.json = json!({"values": values, "equations": eqs, "warnings": r.warnings});
    if !r.equations.is_empty() {
        d.footer.push(String::new());
        d.footer.push("equations:".into());
        for e in &r.equations {
            d.footer.push(format!("  {} = {}", e.symbol, e.expr));
        }
    }
    if !r.warnings.is_empty() {
        d.footer.push(String::new());
        for w in &r.warnings {
            d.footer.push(format!("warning: {w}"));
        }
    }
    s.report = Some(r);
    emit(s, a, d);
    Ok(Flow::Continue)
}
