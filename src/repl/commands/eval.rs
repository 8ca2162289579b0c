use super::*;

pub(super) fn cmd_eval(s: &mut Session, a: &Args) -> R<Flow> {
    let t = a.rest.trim();
    let e = parse_expr(t)?;
    let b = bindings_with_equations(s);
    let r = e.substitute(&b);
    // evaluate for the errors (division by zero) when everything is bound
    let (text, j) = if r.symbols().is_empty() {
        let v = e.eval(&b)?;
        (v.to_string(), json!({"expr": t, "value": v}))
    } else {
        (
            r.to_string(),
            json!({"expr": t, "simplified": r.to_string()}),
        )
    };
    if a.format == Format::Json {
        s.say(serde_json::to_string_pretty(&j).unwrap_or_default());
    } else if a.format == Format::Csv {
        let key = if j.get("value").is_some() {
            "value"
        } else {
            "simplified"
        };
        s.say(format!("expr,{key}\n{},{}", csv_cell(t), csv_cell(&text)));
    } else {
        s.say(text);
    }
    Ok(Flow::Continue)
}

fn csv_cell(s: &str) -> String {
    if s.contains([',', '"']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}
