//! The integration tests are one binary (`tests/all.rs`): a file in `tests/`
//! that no module declaration reaches from there would never run, silently.
//! This fails instead, naming the file and the line to add.
use crate::support::source_graph::module_files;
use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for e in std::fs::read_dir(dir).unwrap() {
        let p = e.unwrap().path();
        if p.is_dir() {
            rust_files(&p, out);
        } else if p.extension().is_some_and(|x| x == "rs") {
            out.push(p);
        }
    }
}

/// Files under `tests/` that are not test modules: programs that build
/// fixtures (run by hand, see their header).
const NOT_MODULES: &[&str] = &["fixtures/"];

#[test]
fn every_rust_file_in_tests_is_a_module_of_the_one_test_binary() {
    let tests = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests");
    let mut reached = Vec::new();
    module_files(&tests.join("all.rs"), true, &mut reached);
    let reached: Vec<PathBuf> = reached
        .iter()
        .filter_map(|p| p.canonicalize().ok())
        .collect();
    assert!(
        reached.len() > 50,
        "all.rs declares the test modules: {reached:?}"
    );
    let mut files = Vec::new();
    rust_files(&tests, &mut files);
    let mut missing = Vec::new();
    for f in files {
        let rel = f.strip_prefix(&tests).unwrap().display().to_string();
        if NOT_MODULES.iter().any(|p| rel.starts_with(p)) {
            continue;
        }
        if !reached.contains(&f.canonicalize().unwrap()) {
            missing.push(match rel.strip_suffix(".rs") {
                Some(name) if !name.contains('/') => {
                    format!("tests/{rel}: add `#[path = \"{rel}\"] mod {name};` to tests/all.rs")
                }
                _ => format!("tests/{rel}: declare it (`mod x;`) in the test module beside it"),
            });
        }
    }
    assert!(
        missing.is_empty(),
        "test files that never run (not reached from tests/all.rs):\n{}",
        missing.join("\n")
    );
}
