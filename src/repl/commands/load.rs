use super::*;

pub(super) fn cmd_load(s: &mut Session, a: &Args) -> R<Flow> {
    let p = path_arg(a, 0);
    let path = Path::new(&p);
    if path.is_dir() {
        bail!("{p}: is a folder, not a model file");
    }
    // `.onnx`, or a file whose first bytes are not UTF-8 text, is binary;
    // only the head is read to decide, so a large binary model is never
    // read twice
    let is_binary = p.ends_with(".onnx") || !looks_like_text(path).with_context(|| p.clone())?;
    let model = if is_binary {
        proto::load_model(path)?
    } else {
        let text = crate::files::read_text(path).with_context(|| p.clone())?;
        let mut model = text::parse_model(&text).with_context(|| p.clone())?;
        // tensors declared with `["location": ...]` read their data from
        // beside the text file, confined to its folder like binary models
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d,
            _ => Path::new("."),
        };
        proto::resolve_external_data(&mut model, dir)
            .map_err(anyhow::Error::msg)
            .with_context(|| p.clone())?;
        model
    };
    let msg = format!("loaded {p}: {}", summary(&model));
    let note = s.set_model(model, &p);
    s.status(msg);
    if let Some(n) = note {
        s.status(n);
    }
    Ok(Flow::Continue)
}
