use super::*;

/// One inferred value: the JSON carries its element type and shape apart;
/// the table shows them as one type (`float[N, 3]`), and a value of a
/// subgraph by its scoped name (`body:x`).
#[derive(Serialize, Default)]
struct InferLine {
    name: String,
    elem_type: &'static str,
    shape: Json,
    source: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    scope: Option<String>,
    #[serde(skip)]
    type_text: String,
}

impl Row for InferLine {
    const COLUMNS: &'static [&'static str] = &["name", "type", "source"];

    fn cell(&self, column: &str) -> Option<String> {
        match column {
            "name" => Some(match &self.scope {
                Some(scope) => format!("{scope}:{}", self.name),
                None => self.name.clone(),
            }),
            "type" => Some(self.type_text.clone()),
            _ => None,
        }
    }
}

pub(super) fn cmd_infer(s: &mut Session, a: &Args) -> R<Flow> {
    let mut m = s.model()?.clone();
    let r = shape::infer_model(&mut m);
    s.model = Some(m);
    let rows: Vec<InferLine> = r
        .values
        .iter()
        .map(|v| InferLine {
            name: v.name.clone(),
            elem_type: v.ty.elem().map(|e| e.name()).unwrap_or(match &v.ty {
                TypeInfo::Sequence(_) => "sequence",
                TypeInfo::Optional(_) => "optional",
                TypeInfo::Map(..) => "map",
                _ => "undefined",
            }),
            shape: dims_json(v.ty.shape()),
            source: v.source.name(),
            scope: (!v.scope.is_empty()).then(|| v.scope.clone()),
            type_text: v.ty.display(),
        })
        .collect();
    let eqs: Vec<Json> = r
        .equations
        .iter()
        .map(|e| json!({"symbol": e.symbol, "expr": e.expr.to_string()}))
        .collect();
    let warnings = r.warnings.clone();
    let mut d = Data::from_rows(&rows)
        .in_document(|values| json!({"values": values, "equations": eqs, "warnings": warnings}));
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
