//! The `onnx-light` binary: a thin shell over the library.

use onnx_light::runtime::backend;
use std::path::PathBuf;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if args.first().map(|s| s.as_str()) == Some("test") {
        let json = args.iter().any(|a| a == "--json");
        let paths: Vec<PathBuf> = args[1..]
            .iter()
            .filter(|a| !a.starts_with("--"))
            .map(PathBuf::from)
            .collect();
        if paths.is_empty() {
            eprintln!("usage: onnx-light test PATH... [--json]");
            return ExitCode::from(2);
        }
        let cases = match backend::collect_cases(&paths) {
            Ok(c) => c,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        };
        let results: Vec<_> = cases.iter().map(|c| backend::run_case(c)).collect();
        let failed = results.iter().filter(|r| !r.passed).count();
        if json {
            println!("{}", serde_json::to_string_pretty(&results).unwrap_or_default());
        } else {
            for r in &results {
                if r.passed {
                    println!("ok {}", r.name);
                } else {
                    println!("FAIL {}: {}", r.name, r.reason);
                }
            }
            println!("{} passed, {} failed", results.len() - failed, failed);
        }
        return if failed == 0 { ExitCode::SUCCESS } else { ExitCode::from(1) };
    }
    ExitCode::SUCCESS
}
