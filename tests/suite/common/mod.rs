//! Helpers for the integration tests: run the built binary.

#![allow(dead_code)]

use std::io::Write;
use std::path::PathBuf;
use std::process::{Command, Stdio};

pub struct Output {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Runs `onnx-light ARGS` (from the repository root) with optional stdin.
pub fn run(args: &[&str], stdin: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_onnx-light"));
    cmd.args(args)
        .current_dir(root())
        .env_remove("NO_COLOR")
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().expect("the binary starts");
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .expect("stdin is piped")
            .write_all(text.as_bytes())
            .expect("stdin accepts the script");
    }
    let out = child.wait_with_output().expect("the binary finishes");
    let o = Output {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    };
    assert!(
        !o.stderr.contains("panicked at") && !o.stdout.contains("panicked at"),
        "the binary panicked:\n{}",
        o.stderr
    );
    o
}

/// Runs inline commands (`-c`).
pub fn cmds(c: &str) -> Output {
    run(&["--no-color", "-c", c], None)
}

pub const SEED: &str = r#"parse <ir_version: 10, opset_import: ["" : 18]>
agraph (float[N,4] x) => (float[M,2] y)
<float two = {2.0}, int64[2] target_shape = {-1, 2}>
{
  z = Mul(x, two)
  w = Add(z, x)
  y = Reshape(w, target_shape)
}"#;

/// A test whose data (`../shared/...`) is absent: says so loudly on
/// stderr and lets the test pass, unless `ONNX_LIGHT_REQUIRE_DATA` is set
/// (as `.ci/run` does, where the data is always there), which makes it a
/// failure.
pub fn data_missing(what: &str) {
    if std::env::var_os("ONNX_LIGHT_REQUIRE_DATA").is_some() {
        panic!("{what} (ONNX_LIGHT_REQUIRE_DATA is set: the data must be there)");
    }
    eprintln!("SKIPPED (data missing): {what}");
}

pub mod scaled_model;

/// The real models folder: `$ONNX_LIGHT_MODELS_DIR`, else `../shared/models`
/// beside the repository.
pub fn models_dir() -> PathBuf {
    std::env::var_os("ONNX_LIGHT_MODELS_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root().join("../shared/models"))
}

/// A fresh, empty folder under the system temp dir, named by the test
/// binary's `prefix`, the process and `tag`; removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(prefix: &str, tag: &str) -> TempDir {
        let p =
            std::env::temp_dir().join(format!("onnx-light-{prefix}-{}-{tag}", std::process::id()));
        let _ = std::fs::remove_dir_all(&p);
        std::fs::create_dir_all(&p).expect("temp dir is created");
        TempDir(p)
    }

    pub fn path(&self) -> &std::path::Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
