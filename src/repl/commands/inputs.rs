use super::*;

/// One declared input of `inputs`: its type and the value set for it.
#[derive(Serialize, Default)]
struct InputLine {
    name: String,
    #[serde(rename = "type")]
    ty: String,
    value: String,
    set: bool,
}

impl Row for InputLine {
    const JSON_ONLY: &'static [&'static str] = &["set"];

    fn cell(&self, field: &str) -> Option<String> {
        (field == "name").then(|| quote_name(&self.name))
    }
}

pub(super) fn cmd_inputs(s: &mut Session, a: &Args) -> R<Flow> {
    let decl = declared_inputs(s)?;
    let rows: Vec<InputLine> = decl
        .into_iter()
        .map(|(name, ty, has_init)| {
            let value = match s.inputs.get(&name) {
                Some(v) => v.describe(),
                None if has_init => "(initializer default)".into(),
                None => "(not set)".into(),
            };
            InputLine {
                ty: ty.map(|t| t.display()).unwrap_or_else(|| "?".into()),
                value,
                set: s.inputs.contains_key(&name),
                name,
            }
        })
        .collect();
    emit(s, a, Data::from_rows(&rows));
    Ok(Flow::Continue)
}
