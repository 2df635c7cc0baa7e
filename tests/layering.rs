//! The layering rules of docs/architecture.md, checked on the source: front
//! ends (`src/ui`) reach the core only through `app` (the session handle and
//! its reads) and `protocol`, never the store or the backends directly.
#![allow(clippy::unwrap_used, clippy::expect_used)]
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

/// Lines of `src/<dir>` that name one of `modules` (comments aside).
fn offenders(dir: &str, modules: &[&str]) -> Vec<String> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src").join(dir);
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    assert!(files.len() > 20, "src/{dir} has its files: {files:?}");
    let mut bad = Vec::new();
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            for m in modules {
                if code.contains(&format!("crate::{m}::")) || code.contains(&format!("crate::{m};"))
                {
                    bad.push(format!("{}:{}: {}", f.display(), i + 1, line.trim()));
                }
            }
        }
    }
    bad
}

#[test]
fn front_ends_import_neither_the_store_nor_the_backends() {
    let bad = offenders("ui", &["session", "llm"]);
    assert!(
        bad.is_empty(),
        "src/ui reaches past app/protocol:\n{}",
        bad.join("\n")
    );
}

#[test]
fn the_protocol_depends_on_nothing_else_in_the_crate() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/protocol");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    for f in files {
        let text = std::fs::read_to_string(&f).unwrap();
        for (i, line) in text.lines().enumerate() {
            let code = line.split("//").next().unwrap_or("");
            assert!(
                !code.contains("crate::"),
                "{}:{} uses the crate: {line}",
                f.display(),
                i + 1
            );
        }
    }
}
