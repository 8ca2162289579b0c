//! The command line (SPEC §1): global flags in any position around `test`,
//! `help`, `-c` and scripts, `--` ending the options, and exit 2 for a bad
//! invocation.

use crate::common;

use common::{cmds, run};
use onnx_light::proto::to_proto;
use onnx_light::tensor::Tensor;
use prost::Message;
use std::path::{Path, PathBuf};

/// A backend-layout case folder: `y = Neg(x)` with one data set.
fn neg_case(root: &Path) -> PathBuf {
    let case = root.join("test_neg");
    let data = case.join("test_data_set_0");
    std::fs::create_dir_all(&data).unwrap();
    let model = case.join("model.onnx");
    let o = cmds(&format!(
        "parse <ir_version: 10, opset_import: [\"\" : 18]> g (float[2] x) => (float[2] y) {{ y = Neg(x) }}\nsave {}",
        model.display()
    ));
    assert_eq!(o.code, 0, "{}", o.stderr);
    let pb = |name: &str, v: Vec<f32>| {
        to_proto(&Tensor::from_vec(&[2], v).unwrap(), name).encode_to_vec()
    };
    std::fs::write(data.join("input_0.pb"), pb("x", vec![1.0, -2.5])).unwrap();
    std::fs::write(data.join("output_0.pb"), pb("y", vec![-1.0, 2.5])).unwrap();
    case
}

fn scratch(tag: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("onnx-light-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn no_color_goes_before_or_after_test_and_its_paths() {
    let dir = scratch("flags-test");
    let case = neg_case(&dir);
    let c = case.to_string_lossy().to_string();
    for args in [
        vec!["--no-color", "test", &c],
        vec!["test", "--no-color", &c],
        vec!["test", &c, "--no-color"],
        vec!["test", "--rtol", "0.01", &c, "--no-color", "--atol", "0"],
    ] {
        let o = run(&args, None);
        assert_eq!(
            (o.code, o.stdout.as_str()),
            (0, "ok test_neg\n1 passed, 0 failed\n"),
            "{args:?}: {}",
            o.stderr
        );
    }
    let o = run(&["--no-color", "test", "--json", &c], None);
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v: serde_json::Value = serde_json::from_str(&o.stdout).expect("JSON on stdout");
    assert_eq!(v[0]["name"], "test_neg");
    assert_eq!(v[0]["passed"], true);
    // bad values and options are bad invocations
    for args in [
        vec!["test", &c, "--rtol", "-1"],
        vec!["test", &c, "--atol", "x"],
        vec!["test", &c, "--rtol"],
        vec!["test", &c, "--bogus"],
        vec!["--no-color", "test"],
        vec!["--keep-going", "test", &c],
        vec!["-c", "eval 1", "test", &c],
    ] {
        let o = run(&args, None);
        assert_eq!(o.code, 2, "{args:?}: {}{}", o.stdout, o.stderr);
        assert!(o.stderr.starts_with("error: "), "{args:?}: {}", o.stderr);
        assert!(o.stderr.contains("usage:"), "{args:?}: {}", o.stderr);
    }
    // after `--`, `test` is a script's name, not the subcommand
    let o = run(&["--no-color", "--", "test", &c], None);
    assert_eq!(o.code, 2, "{}", o.stderr);
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn global_flags_go_anywhere_in_script_mode_and_help() {
    for args in [
        vec!["--no-color", "-c", "eval 3"],
        vec!["-c", "eval 3", "--no-color"],
        vec!["--keep-going", "-c", "eval 3", "--no-color"],
        vec!["-c", "eval 3", "--keep-going", "--no-color", "--no-color"],
    ] {
        let o = run(&args, None);
        assert_eq!(
            (o.code, o.stdout.as_str()),
            (0, "3\n"),
            "{args:?}: {}",
            o.stderr
        );
    }
    // --keep-going after the scripts still continues past the failure
    let o = run(
        &["-c", "eval 1\nbogus\neval 2", "--no-color", "--keep-going"],
        None,
    );
    assert_eq!((o.code, o.stdout.as_str()), (1, "1\n2\n"), "{}", o.stderr);
    // -c takes the next argument whatever it looks like
    let o = run(&["--no-color", "-c", "-1"], None);
    assert_eq!(o.code, 1, "a line '-1' is not a command: {}", o.stdout);
    for args in [
        vec!["help", "bench", "--no-color"],
        vec!["--no-color", "help", "bench"],
        vec!["help", "--no-color", "bench"],
    ] {
        let o = run(&args, None);
        assert_eq!(o.code, 0, "{args:?}: {}", o.stderr);
        assert!(o.stdout.contains("--runs"), "{args:?}: {}", o.stdout);
        // one command's help, not the program's usage
        assert!(
            o.stdout.starts_with("usage: bench"),
            "{args:?}: {}",
            o.stdout
        );
        assert!(
            !o.stdout.contains("interactive shell"),
            "{args:?}: {}",
            o.stdout
        );
    }
    let o = run(&["help", "--no-color"], None);
    assert!(o.stdout.starts_with("usage:") && o.stdout.contains("commands:"));
    for args in [
        vec!["-h"],
        vec!["--help"],
        vec!["--no-color", "-h"],
        vec!["-c", "eval 1", "--help"],
    ] {
        let o = run(&args, None);
        assert_eq!(o.code, 0, "{args:?}");
        assert!(o.stdout.starts_with("usage:"), "{args:?}: {}", o.stdout);
    }
    for args in [
        vec!["-V"],
        vec!["--version"],
        vec!["--no-color", "--version"],
    ] {
        let o = run(&args, None);
        assert_eq!(o.code, 0, "{args:?}");
        assert_eq!(
            o.stdout,
            format!("onnx-light {}\n", env!("CARGO_PKG_VERSION"))
        );
    }
    for args in [
        vec!["--bogus"],
        vec!["-c"],
        vec!["-", "-"],
        vec!["--no-color", "-x"],
    ] {
        let o = run(&args, None);
        assert_eq!(o.code, 2, "{args:?}: {}", o.stderr);
        assert!(o.stderr.starts_with("error: "), "{args:?}: {}", o.stderr);
    }
    assert!(run(&["--bogus"], None).stderr.contains("'--bogus'"));
}
