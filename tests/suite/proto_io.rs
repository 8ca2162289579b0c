//! Binary model I/O: round trips of real models, corrupt input, and
//! external data (layout written by `save_model`, hostile locations).
//!
//! The round trip reads `../shared/onnx-backend/node/*/model.onnx` (or
//! `$ONNX_BACKEND_DIR/*/model.onnx`) and `../shared/models/*/model.onnx`,
//! skipping, with a message, the folders that are absent.

use crate::common;

use common::TempDir;

use onnx_light::proto::{
    decode_model, encode_model, load_model, save_model, ExternalOptions, GraphProto, ModelProto,
    OperatorSetIdProto, StringStringEntryProto, TensorProto,
};
use std::path::{Path, PathBuf};

/// Re-encoded bytes equal the file's bytes for at least this many models
/// (all of the backend suite and the two CNNs when this was recorded; a
/// writer that orders fields differently, or unknown fields, would break
/// byte identity but not the model round trip).
const MIN_BYTE_IDENTICAL: usize = 1886;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn backend_dir() -> PathBuf {
    match std::env::var_os("ONNX_BACKEND_DIR") {
        Some(d) => PathBuf::from(d),
        None => root().join("../shared/onnx-backend/node"),
    }
}

/// `DIR/*/model.onnx` for each folder that exists, sorted.
fn model_files() -> (Vec<PathBuf>, bool) {
    let mut files = Vec::new();
    let mut all_present = true;
    for dir in [backend_dir(), root().join("../shared/models")] {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            common::data_missing(&format!("no models under {}", dir.display()));
            all_present = false;
            continue;
        };
        let mut found: Vec<PathBuf> = entries
            .filter_map(|e| e.ok())
            .map(|e| e.path().join("model.onnx"))
            .filter(|p| p.is_file())
            .collect();
        found.sort();
        files.extend(found);
    }
    (files, all_present)
}

#[test]
fn real_models_round_trip() {
    let (files, all_present) = model_files();
    if files.is_empty() {
        common::data_missing("no model files found");
        return;
    }
    let mut identical = 0;
    let mut differing = Vec::new();
    for path in &files {
        let original = std::fs::read(path).expect("model file is readable");
        let model =
            load_model(path).unwrap_or_else(|e| panic!("{} does not load: {e}", path.display()));
        let bytes = encode_model(&model);
        let back = decode_model(&bytes)
            .unwrap_or_else(|e| panic!("{}: re-encoded bytes do not decode: {e}", path.display()));
        // compare encodings, not structs, so that NaN floats count as equal
        assert!(
            back == model || encode_model(&back) == bytes,
            "{}: decode(encode(model)) differs from the model",
            path.display()
        );
        if bytes == original {
            identical += 1;
        } else {
            differing.push(path.display().to_string());
        }
    }
    eprintln!(
        "round trip: {} models, {identical} byte-identical, {} differ",
        files.len(),
        differing.len()
    );
    for d in differing.iter().take(10) {
        eprintln!("  not byte-identical: {d}");
    }
    if all_present && std::env::var_os("ONNX_BACKEND_DIR").is_none() {
        assert!(
            identical >= MIN_BYTE_IDENTICAL,
            "byte-identical count dropped: {identical} < {MIN_BYTE_IDENTICAL}"
        );
    }
}

/// Offsets at which a model's top-level fields end: a prefix cut there is a
/// valid (smaller) message; a cut anywhere else is not.
fn top_level_boundaries(bytes: &[u8]) -> Vec<usize> {
    fn varint(b: &[u8], pos: &mut usize) -> u64 {
        let mut v = 0u64;
        let mut shift = 0;
        loop {
            let byte = b[*pos];
            *pos += 1;
            v |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return v;
            }
            shift += 7;
        }
    }
    let mut out = vec![0];
    let mut pos = 0;
    while pos < bytes.len() {
        let key = varint(bytes, &mut pos);
        match key & 7 {
            0 => {
                varint(bytes, &mut pos);
            }
            1 => pos += 8,
            2 => {
                let len = varint(bytes, &mut pos) as usize;
                pos += len;
            }
            5 => pos += 4,
            w => panic!("unexpected wire type {w} in a test model"),
        }
        out.push(pos);
    }
    out
}

fn sample_model_bytes() -> Vec<u8> {
    let (files, _) = model_files();
    let pick = files
        .iter()
        .find(|p| p.to_string_lossy().contains("light_squeezenet"))
        .or_else(|| {
            files
                .iter()
                .find(|p| p.to_string_lossy().contains("test_conv"))
        })
        .or(files.first());
    match pick {
        Some(p) => std::fs::read(p).expect("model file is readable"),
        None => encode_model(&big_model(&[("w", 300), ("b", 40)])),
    }
}

#[test]
fn truncated_models_are_errors_not_panics() {
    let bytes = sample_model_bytes();
    let boundaries = top_level_boundaries(&bytes);
    // every cut point for the first and last 4 KiB, then a stride
    let n = bytes.len();
    let mut cuts: Vec<usize> = (0..n.min(4096)).collect();
    cuts.extend((n.saturating_sub(4096)..n).filter(|&k| k >= 4096));
    cuts.extend((4096..n.saturating_sub(4096)).step_by(97));
    let mut errors = 0;
    for &k in &cuts {
        let res = std::panic::catch_unwind(|| decode_model(&bytes[..k]).is_ok());
        let ok = res.unwrap_or_else(|_| panic!("decoding a {k}-byte prefix panicked"));
        if boundaries.contains(&k) {
            assert!(
                ok,
                "a prefix ending on a field boundary ({k}) is a valid message"
            );
        } else {
            assert!(
                !ok,
                "a prefix cut inside a field ({k} of {n} bytes) decoded"
            );
            errors += 1;
        }
    }
    eprintln!("truncation: {} cuts, {errors} errors", cuts.len());
    // and through load_model: an error naming the file
    let dir = TempDir::new("proto-io", "trunc");
    let path = dir.path().join("cut.onnx");
    let k = (1..n).rev().find(|k| !boundaries.contains(k)).unwrap_or(1);
    std::fs::write(&path, &bytes[..k]).unwrap();
    let err = load_model(&path).expect_err("a truncated model does not load");
    assert!(err.to_string().contains("cut.onnx"), "{err}");
    assert!(
        err.to_string().contains("not a valid ONNX protobuf"),
        "{err}"
    );
}

#[test]
fn random_and_mutated_bytes_never_panic() {
    // xorshift64*: deterministic, no dependency
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move || {
        state ^= state >> 12;
        state ^= state << 25;
        state ^= state >> 27;
        state.wrapping_mul(0x2545_f491_4f6c_dd1d)
    };
    let mut rejected = 0;
    let rounds = 3000;
    for i in 0..rounds {
        let len = (next() % 512) as usize;
        let buf: Vec<u8> = (0..len).map(|_| next() as u8).collect();
        let r = std::panic::catch_unwind(|| decode_model(&buf).is_err());
        if r.unwrap_or_else(|_| panic!("random input {i} made the decoder panic")) {
            rejected += 1;
        }
    }
    // flip bytes of a real model
    let model = sample_model_bytes();
    for i in 0..1000 {
        let mut buf = model.clone();
        for _ in 0..1 + next() % 4 {
            let at = (next() as usize) % buf.len();
            buf[at] = next() as u8;
        }
        let r = std::panic::catch_unwind(|| {
            if let Ok(m) = decode_model(&buf) {
                // whatever decodes also re-encodes
                let _ = encode_model(&m);
            }
        });
        assert!(r.is_ok(), "mutated model {i} made the decoder panic");
    }
    eprintln!("random bytes: {rejected} of {rounds} rejected");
    assert!(rejected > rounds / 2, "most random inputs are rejected");
}

#[test]
fn a_file_that_is_not_a_model_is_an_error() {
    let dir = TempDir::new("proto-io", "notmodel");
    let path = dir.path().join("x.onnx");
    std::fs::write(&path, b"ir_version: 8\nthis is text, not protobuf\n").unwrap();
    assert!(load_model(&path).is_err());
    let missing = dir.path().join("missing.onnx");
    let err = load_model(&missing).expect_err("a missing model is an error");
    assert!(err.to_string().contains("missing.onnx"), "{err}");
}

// ---------------------------------------------------------------------------
// external data

fn float_tensor(name: &str, n: usize) -> TensorProto {
    let raw: Vec<u8> = (0..n)
        .flat_map(|i| (i as f32 * 0.5).to_le_bytes())
        .collect();
    TensorProto {
        name: Some(name.into()),
        dims: vec![n as i64],
        data_type: Some(1),
        raw_data: Some(raw.into()),
        ..Default::default()
    }
}

/// A model whose graph just lists float initializers of the given lengths.
fn big_model(inits: &[(&str, usize)]) -> ModelProto {
    ModelProto {
        ir_version: Some(10),
        producer_name: Some("proto_io test".into()),
        opset_import: vec![OperatorSetIdProto {
            domain: Some(String::new()),
            version: Some(21),
        }],
        graph: Some(GraphProto {
            name: Some("g".into()),
            initializer: inits.iter().map(|(n, k)| float_tensor(n, *k)).collect(),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn files_in(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[test]
fn save_with_threshold_writes_one_data_file_and_loads_back() {
    let dir = TempDir::new("proto-io", "save");
    let model = big_model(&[("a", 1000), ("small", 10), ("b", 3000), ("c", 257)]);
    let path = dir.path().join("m.onnx");
    let opts = ExternalOptions {
        threshold: Some(1024),
        ..Default::default()
    };
    save_model(&model, &path, &opts).expect("save with external data");
    assert_eq!(files_in(dir.path()), ["m.onnx", "m.onnx.data"]);

    // the model file refers to the data file; the small tensor stays inline
    let raw = decode_model(&std::fs::read(&path).unwrap()).unwrap();
    let inits = &raw.graph.as_ref().unwrap().initializer;
    for t in inits {
        let external = t.data_location == Some(1);
        assert_eq!(external, t.name() != "small", "{}", t.name());
        if external {
            assert!(t.raw_data.is_none());
            let loc = t.external_data.iter().find(|kv| kv.key() == "location");
            assert_eq!(loc.unwrap().value(), "m.onnx.data");
        }
    }
    let data_len = std::fs::metadata(dir.path().join("m.onnx.data"))
        .unwrap()
        .len();
    assert!(data_len >= (1000 + 3000 + 257) * 4);

    let back = load_model(&path).expect("load with external data");
    assert_eq!(back, model);

    // a chosen file name, and a relative path from the current folder
    let opts = ExternalOptions {
        threshold: Some(0),
        file_name: Some("weights.bin".into()),
    };
    let path2 = dir.path().join("n.onnx");
    save_model(&model, &path2, &opts).unwrap();
    assert!(dir.path().join("weights.bin").is_file());
    assert_eq!(load_model(&path2).unwrap(), model);

    // a file name that leaves the folder is refused
    for bad in ["../w.bin", "sub/w.bin", "/tmp/w.bin", ""] {
        let opts = ExternalOptions {
            threshold: Some(0),
            file_name: Some(bad.into()),
        };
        let err = save_model(&model, &dir.path().join("o.onnx"), &opts)
            .expect_err("a file name with a path is refused");
        assert!(err.message.contains("plain file name"), "{bad}: {err}");
    }
}

#[test]
fn nothing_above_the_threshold_writes_no_data_file() {
    let dir = TempDir::new("proto-io", "nodata");
    let model = big_model(&[("a", 10)]);
    let path = dir.path().join("m.onnx");
    let opts = ExternalOptions {
        threshold: Some(1 << 20),
        ..Default::default()
    };
    save_model(&model, &path, &opts).unwrap();
    assert_eq!(files_in(dir.path()), ["m.onnx"]);
    assert_eq!(load_model(&path).unwrap(), model);
}

/// Writes `m.onnx` whose one initializer points at external data with the
/// given key/value pairs, plus a 64-byte `data.bin`; returns the load error.
fn load_with_external(dir: &Path, entries: &[(&str, &str)]) -> String {
    std::fs::write(dir.join("data.bin"), [7u8; 64]).unwrap();
    let mut model = big_model(&[("w", 4)]);
    let t = &mut model.graph.as_mut().unwrap().initializer[0];
    t.raw_data = None;
    t.data_location = Some(1);
    t.external_data = entries
        .iter()
        .map(|(k, v)| StringStringEntryProto {
            key: Some(k.to_string()),
            value: Some(v.to_string()),
        })
        .collect();
    let path = dir.join("m.onnx");
    std::fs::write(&path, encode_model(&model)).unwrap();
    match load_model(&path) {
        Ok(_) => "loaded".into(),
        Err(e) => e.to_string(),
    }
}

#[test]
fn valid_external_reference_loads() {
    let dir = TempDir::new("proto-io", "valid");
    let msg = load_with_external(
        dir.path(),
        &[("location", "data.bin"), ("offset", "16"), ("length", "16")],
    );
    assert_eq!(msg, "loaded");
    let m = load_model(&dir.path().join("m.onnx")).unwrap();
    let t = &m.graph.unwrap().initializer[0];
    assert_eq!(t.raw_data.as_deref(), Some(&[7u8; 16][..]));
    assert!(t.external_data.is_empty() && t.data_location.is_none());
    // no length: up to the end of the file
    let msg = load_with_external(dir.path(), &[("location", "data.bin"), ("offset", "48")]);
    assert_eq!(msg, "loaded");
    // a sub-folder inside the model's folder is fine
    std::fs::create_dir(dir.path().join("sub")).unwrap();
    std::fs::write(dir.path().join("sub/d.bin"), [1u8; 16]).unwrap();
    let msg = load_with_external(dir.path(), &[("location", "sub/d.bin")]);
    assert_eq!(msg, "loaded");
}

#[test]
fn hostile_external_locations_are_refused() {
    let dir = TempDir::new("proto-io", "hostile");
    let d = dir.path();
    let outside = TempDir::new("proto-io", "hostile-outside");
    std::fs::write(outside.path().join("secret.bin"), [1u8; 64]).unwrap();

    let cases: Vec<(Vec<(&str, String)>, &str)> = vec![
        (vec![("location", "/etc/passwd".into())], "absolute"),
        (
            vec![(
                "location",
                outside.path().join("secret.bin").display().to_string(),
            )],
            "absolute",
        ),
        (vec![("location", "../secret.bin".into())], "'..'"),
        (vec![("location", "sub/../../secret.bin".into())], "'..'"),
        (
            vec![("location", "link.bin".into())],
            "outside the model's folder",
        ),
        (
            vec![("location", "linkdir/secret.bin".into())],
            "outside the model's folder",
        ),
        (vec![("location", "missing.bin".into())], "missing.bin"),
        (vec![("location", "".into())], "empty"),
        (vec![("offset", "0".into())], "no location"),
        (
            vec![("location", "data.bin".into()), ("offset", "65".into())],
            "past the end",
        ),
        (
            vec![
                ("location", "data.bin".into()),
                ("offset", "60".into()),
                ("length", "8".into()),
            ],
            "past the end",
        ),
        (
            vec![("location", "data.bin".into()), ("length", "65".into())],
            "past the end",
        ),
        (
            vec![
                ("location", "data.bin".into()),
                ("offset", "18446744073709551615".into()),
                ("length", "2".into()),
            ],
            "past the end",
        ),
        (
            vec![("location", "data.bin".into()), ("offset", "-1".into())],
            "offset",
        ),
        (
            vec![("location", "data.bin".into()), ("length", "lots".into())],
            "length",
        ),
        (vec![("location", ".".into())], "not a regular file"),
    ];
    #[cfg(unix)]
    {
        std::os::unix::fs::symlink(outside.path().join("secret.bin"), d.join("link.bin")).unwrap();
        std::os::unix::fs::symlink(outside.path(), d.join("linkdir")).unwrap();
    }
    for (entries, want) in &cases {
        if cfg!(not(unix)) && want.contains("outside") {
            continue;
        }
        let entries: Vec<(&str, &str)> = entries.iter().map(|(k, v)| (*k, v.as_str())).collect();
        let msg = load_with_external(d, &entries);
        assert_ne!(msg, "loaded", "{entries:?} was accepted");
        assert!(
            msg.contains(want),
            "{entries:?}: error '{msg}' lacks '{want}'"
        );
        assert!(
            msg.contains("m.onnx"),
            "{entries:?}: error '{msg}' lacks the model path"
        );
    }
}

#[test]
fn external_data_in_subgraphs_and_attributes_is_saved_and_loaded() {
    use onnx_light::proto::{AttributeProto, NodeProto};
    let dir = TempDir::new("proto-io", "subgraph");
    let inner = GraphProto {
        name: Some("body".into()),
        initializer: vec![float_tensor("inner", 600)],
        ..Default::default()
    };
    let mut model = big_model(&[("outer", 600)]);
    model.graph.as_mut().unwrap().node.push(NodeProto {
        op_type: Some("If".into()),
        output: vec!["y".into()],
        input: vec!["c".into()],
        attribute: vec![
            AttributeProto {
                name: Some("then_branch".into()),
                r#type: Some(5),
                g: Some(inner.clone()),
                ..Default::default()
            },
            AttributeProto {
                name: Some("value".into()),
                r#type: Some(4),
                t: Some(float_tensor("attr", 600)),
                ..Default::default()
            },
        ],
        ..Default::default()
    });
    let path = dir.path().join("m.onnx");
    let opts = ExternalOptions {
        threshold: Some(1000),
        ..Default::default()
    };
    save_model(&model, &path, &opts).unwrap();
    let raw = decode_model(&std::fs::read(&path).unwrap()).unwrap();
    let n = &raw.graph.as_ref().unwrap().node[0];
    assert_eq!(
        n.attribute[0].g.as_ref().unwrap().initializer[0].data_location,
        Some(1)
    );
    assert_eq!(n.attribute[1].t.as_ref().unwrap().data_location, Some(1));
    assert_eq!(load_model(&path).unwrap(), model);
}

/// Resident memory of this process in KiB (Linux), to show that loading
/// does not copy external data.
fn rss_kib() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[test]
fn external_data_past_4_gib_loads_without_copying() {
    use std::os::unix::fs::FileExt;
    const GIB: u64 = 1 << 30;
    let dir = TempDir::new("proto-io", "huge");
    // a sparse 5 GiB data file: no disk is used for the holes
    let data = std::fs::File::create(dir.path().join("huge.bin")).unwrap();
    data.set_len(5 * GIB).unwrap();
    let marker: Vec<u8> = (0..64u32).flat_map(|i| (i as f32).to_le_bytes()).collect();
    let far = 4 * GIB + 64;
    data.write_all_at(&marker, far).unwrap();
    drop(data);

    let external = |name: &str, n: u64, offset: u64| TensorProto {
        name: Some(name.into()),
        dims: vec![n as i64],
        data_type: Some(1),
        data_location: Some(1),
        external_data: [
            ("location", "huge.bin".to_string()),
            ("offset", offset.to_string()),
            ("length", (n * 4).to_string()),
        ]
        .into_iter()
        .map(|(k, v)| StringStringEntryProto {
            key: Some(k.into()),
            value: Some(v),
        })
        .collect(),
        ..Default::default()
    };
    let mut model = big_model(&[]);
    let g = model.graph.as_mut().unwrap();
    let big_n = (2 * GIB + 256) / 4; // one tensor over protobuf's 2 GiB limit
    g.initializer.push(external("big", big_n, 0));
    g.initializer.push(external("far", 64, far));
    let path = dir.path().join("m.onnx");
    std::fs::write(&path, encode_model(&model)).unwrap();

    let before = rss_kib();
    let m = load_model(&path).expect("a model with 5 GiB of external data loads");
    let after = rss_kib();
    if let (Some(b), Some(a)) = (before, after) {
        assert!(
            a.saturating_sub(b) < 1 << 20,
            "loading grew resident memory by {} KiB",
            a - b
        );
    }
    let inits = &m.graph.as_ref().unwrap().initializer;
    assert_eq!(
        inits[0].raw_data.as_ref().map(|r| r.len() as u64),
        Some(big_n * 4)
    );
    assert_eq!(inits[1].raw_data.as_deref(), Some(&marker[..]));
    let t = onnx_light::proto::from_proto(&inits[1]).unwrap();
    assert_eq!(t.to_f64_vec().unwrap()[63], 63.0);

    // saved inline it would pass protobuf's limit: refused, nothing written
    let out = dir.path().join("inline.onnx");
    let err = save_model(&m, &out, &ExternalOptions::default())
        .expect_err("a model over 2 GiB cannot be one protobuf file");
    assert!(err.message.contains("2 GiB"), "{err}");
    assert!(!out.exists());
    // with a threshold, only the small tensor would stay inline: allowed
    // (not written here: it would copy 2 GiB to disk)
}
