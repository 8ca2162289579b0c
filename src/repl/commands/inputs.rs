use super::*;

pub(super) fn cmd_inputs(s: &mut Session, a: &Args) -> R<Flow> {
    let decl = declared_inputs(s)?;
    let mut d = Data::new(&["name", "type", "value"], Json::Null);
    let mut arr = Vec::new();
    for (name, ty, has_init) in decl {
        let t = ty.map(|t| t.display()).unwrap_or_else(|| "?".into());
        let v = match s.inputs.get(&name) {
            Some(v) => v.describe(),
            None if has_init => "(initializer default)".into(),
            None => "(not set)".into(),
        };
        arr.push(json!({"name": name, "type": t, "value": v, "set": s.inputs.contains_key(&name)}));
        d.rows.push(vec![quote_name(&name), t, v]);
    }
    d.json = Json::Array(arr);
    emit(s, a, d);
    Ok(Flow::Continue)
}
