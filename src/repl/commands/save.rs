use super::*;

pub(super) fn cmd_save(s: &mut Session, a: &Args) -> R<Flow> {
    let p = path_arg(a, 0);
    let m = s.model()?;
    let path = Path::new(&p);
    let threshold = match a.value("external-threshold") {
        Some(v) => Some(
            v.parse::<usize>()
                .map_err(|_| anyhow!("--external-threshold expects a byte count, got '{v}'"))?,
        ),
        None => None,
    };
    if p.ends_with(".onnx") {
        let opts = ExternalOptions {
            threshold,
            file_name: None,
        };
        proto::save_model(m, path, &opts)?;
    } else {
        // text: large tensors may go to PATH.data, referenced by location
        let external;
        let (m, pending) = match threshold {
            Some(th) => {
                let mut c = m.clone(); // tensor bytes are shared, not copied
                let pending = proto::externalize(&mut c, path, th, None)?;
                external = c;
                (&external, pending)
            }
            None => (m, None),
        };
        text_size_ok(
            m,
            "save it with --external-threshold BYTES to keep large tensors in a data file",
        )?;
        let mut t = text::print_model(m);
        if !t.ends_with('\n') {
            t.push('\n');
        }
        proto::write_model_files(path, t.as_bytes(), pending)?;
    }
    s.status(format!("saved {p}"));
    Ok(Flow::Continue)
}
