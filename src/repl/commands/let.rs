use super::*;

/// One binding of `let`: a symbol and its value.
#[derive(Serialize, Default)]
struct BindingLine {
    symbol: String,
    value: i64,
}

impl Row for BindingLine {}

pub(super) fn cmd_let(s: &mut Session, a: &Args) -> R<Flow> {
    let t = a.rest.trim();
    if t.is_empty() {
        let rows: Vec<BindingLine> = s
            .bindings
            .iter()
            .map(|(symbol, &value)| BindingLine {
                symbol: symbol.clone(),
                value,
            })
            .collect();
        // the JSON is one object, symbol → value
        let d = Data::from_rows(&rows).in_document(|_| {
            Json::Object(
                rows.iter()
                    .map(|r| (r.symbol.clone(), json!(r.value)))
                    .collect(),
            )
        });
        if s.bindings.is_empty() && a.format == Format::Table {
            s.say("no bindings");
            return Ok(Flow::Continue);
        }
        emit(s, a, d);
        return Ok(Flow::Continue);
    }
    let (raw_name, value) =
        split_assignment(t).ok_or_else(|| usage_error("let", "expected NAME = EXPR"))?;
    // (split_assignment unquotes the name) bare names are identifiers,
    // dots allowed (`p2o.DynamicDimension.0`); any other symbol is written
    // quoted (`let "batch size" = 2`)
    let quoted = t.trim_start().starts_with('"');
    if raw_name.is_empty() || (!quoted && !crate::expr::is_bare_symbol(&raw_name)) {
        bail!(
            "'{raw_name}' is not a symbol name (letters, digits, _ and inner dots; quote other names: \"...\")"
        );
    }
    let name = raw_name.as_str();
    let e = parse_expr(&value)?;
    // the bindings are copied (to add the equations) only when needed, so
    // many `let` lines cost linear time
    let v = if e.symbols().iter().all(|k| s.bindings.contains_key(k)) {
        e.eval(&s.bindings)
    } else {
        e.eval(&bindings_with_equations(s))
    }
    .with_context(|| format!("let {name}"))?;
    // a value that contradicts an equation inference found is allowed (the
    // run will check it) but said
    let mut warnings = Vec::new();
    if let Some(r) = &s.report {
        let others: Bindings = s
            .bindings
            .iter()
            .filter(|(k, _)| k.as_str() != name)
            .map(|(k, v)| (k.clone(), *v))
            .collect();
        for eq in r.equations.iter().filter(|eq| eq.symbol == name) {
            if let Ok(want) = eq.expr.eval(&others) {
                if want != v {
                    let given: Vec<String> = eq
                        .expr
                        .symbols()
                        .iter()
                        .filter_map(|k| others.get(k).map(|x| format!("{k} = {x}")))
                        .collect();
                    warnings.push(format!(
                        "warning: inference found {name} = {}, which is {want} with {}; {name} is now {v} (run and check will tell)",
                        eq.expr,
                        if given.is_empty() { "no bindings".to_string() } else { given.join(", ") }
                    ));
                }
            }
        }
    }
    for w in warnings {
        s.status(w);
    }
    s.bindings.insert(name.to_string(), v);
    s.auto_bound.remove(name);
    s.status(format!("{} = {v}", Expr::Sym(name.to_string())));
    Ok(Flow::Continue)
}
