//! Models as converters write them (small text fixtures in
//! `tests/fixtures/converter/`): unknown dimensions spelled `-1`, `"?"`,
//! `""` or `?`, and declared shapes in foreign syntax. Each is loaded,
//! inferred, run and checked through the shell, as a user would.

use crate::common;

fn shell(script: &str) -> common::Output {
    let out = common::run(&["--no-color", "-c", script], None);
    assert_eq!(
        out.code, 0,
        "stdout:\n{}\nstderr:\n{}",
        out.stdout, out.stderr
    );
    out
}

#[test]
fn unknown_dims_are_each_their_own_symbol() {
    let out = shell(
        "load tests/fixtures/converter/unknown_dims.txt; infer; \
         run x=rand(2,3,4,5) z=rand(7,2); check; let",
    );
    let o = &out.stdout;
    // one fresh symbol per unknown input dimension, carried by inference
    assert!(o.contains("float[unk__1,3,unk__2,unk__3]"), "{o}");
    assert!(o.contains("float[unk__4,2]"), "{o}");
    // the run binds each from the tensor given: no clash between the
    // unknowns of x (2, 4, 5), and -1 is never taken as a size
    for (sym, v) in [("unk__1", 2), ("unk__2", 4), ("unk__3", 5), ("unk__4", 7)] {
        assert!(
            o.lines()
                .any(|l| l.split_whitespace().collect::<Vec<_>>() == [sym, &v.to_string()]),
            "{sym} = {v} missing:\n{o}"
        );
    }
    assert!(o.contains("4 OK, 0 MISMATCH, 0 UNKNOWN"), "{o}");
}

/// Every fixture survives binary -> text -> binary through the shell's
/// `save` and `load`, unchanged.
#[test]
fn converter_fixtures_survive_a_text_round_trip() {
    let dir = std::env::temp_dir().join(format!("onnx-light-quirks-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for fixture in ["unknown_dims", "foreign_dims", "odd_names"] {
        let src = format!("tests/fixtures/converter/{fixture}.txt");
        let (bin, txt, bin2) = (dir.join("a.onnx"), dir.join("b.txt"), dir.join("c.onnx"));
        shell(&format!(
            "load {src}; save {}; load {}; save {}; load {}; save {}",
            bin.display(),
            bin.display(),
            txt.display(),
            txt.display(),
            bin2.display()
        ));
        assert_eq!(
            std::fs::read(&bin).unwrap(),
            std::fs::read(&bin2).unwrap(),
            "{fixture}: binary -> text -> binary changed the model"
        );
        if fixture == "unknown_dims" {
            let text = std::fs::read_to_string(&txt).unwrap();
            assert!(text.contains(r#"float[-1,3,"?",""] x"#), "{text}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn foreign_declared_dims_are_read_and_merged_with_inference() {
    let out = shell(
        "load tests/fixtures/converter/foreign_dims.txt; infer --format json; \
         run x=rand(1,3,30,41); check",
    );
    let (json, rest) = out.stdout.split_once("\n}\n").expect("the infer JSON ends");
    let v: serde_json::Value = serde_json::from_str(&format!("{json}\n}}")).unwrap();
    let find = |name: &str| {
        v["values"]
            .as_array()
            .unwrap()
            .iter()
            .find(|r| r["name"] == name)
            .unwrap_or_else(|| panic!("no value {name} in {v}"))
            .clone()
    };
    // sympy's floor(height/2 - 1/2) + 1 is read, and agrees with inference
    let c1 = find("c1");
    assert_eq!(c1["source"], "both", "{c1}");
    assert_eq!(c1["shape"][2], "(height-1)//2+1", "{c1}");
    // a wrong declaration loses to inference, with a warning naming the
    // value and the node
    let bad = find("bad");
    assert_eq!(bad["source"], "inferred", "{bad}");
    assert_eq!(bad["shape"][2], "(height-1)//2+1", "{bad}");
    assert!(
        v["warnings"].as_array().unwrap().iter().any(|w| w
            .as_str()
            .unwrap()
            .contains("node 3 (Identity): 'bad' axis 2 is declared height//2+7 but inferred (height-1)//2+1")),
        "{}",
        v["warnings"]
    );
    // `?` and free text are unknown, refined by inference; tf2onnx's
    // unk__214 is a symbol inference solves
    let c2 = find("c2");
    assert_eq!(c2["shape"][3], "(width-1)//2+1", "{c2}");
    assert!(v["equations"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["symbol"] == "unk__214" && e["expr"] == "1"));
    // the output declared as floor(height/4 - 1/4) + 1 agrees
    assert_eq!(find("y")["shape"][2], "(height-1)//4+1");
    assert!(rest.contains("5 OK, 0 MISMATCH, 0 UNKNOWN"), "{rest}");
}

#[test]
fn every_name_the_printer_writes_parses_back() {
    use onnx_light::text;
    let src =
        std::fs::read_to_string(common::root().join("tests/fixtures/converter/odd_names.txt"))
            .unwrap();
    let m = text::parse_model(&src).unwrap();
    assert_eq!(text::expressible(&m), Ok(()));
    let printed = text::print_model(&m);
    let back = text::parse_model(&printed).unwrap_or_else(|e| panic!("{e}\n{printed}"));
    assert_eq!(back, m, "{printed}");
    assert_eq!(text::print_model(&back), printed);
    // and the shell runs it through the quoted names
    let out = shell(
        "load tests/fixtures/converter/odd_names.txt; run \"in:0\"=[1.0,2.0] \"cond.1\"=true",
    );
    assert!(
        out.stdout.contains("\"out/0\" =\n[2. 3.]"),
        "{}",
        out.stdout
    );
}
