//! Embeds the shipped assets (profiles, manuals, themes, persona, model catalog)
//! into the binary, so an installed `navi` works without a repository checkout.
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().map(|e| e.path()).collect();
    entries.sort();
    for path in entries {
        if path.is_dir() {
            collect(&path, out);
        } else {
            out.push(path);
        }
    }
}

fn main() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap_or_default());
    let mut files = Vec::new();
    for dir in ["profiles", "manuals", "themes"] {
        println!("cargo:rerun-if-changed={dir}");
        collect(&root.join(dir), &mut files);
    }
    for single in ["persona.txt", "models.toml"] {
        println!("cargo:rerun-if-changed={single}");
        let p = root.join(single);
        if p.is_file() {
            files.push(p);
        }
    }
    let mut code = String::from(
        "/// Files shipped inside the binary: (path relative to the repo root, contents).\npub static FILES: &[(&str, &str)] = &[\n",
    );
    for f in files {
        let Ok(rel) = f.strip_prefix(&root) else {
            continue;
        };
        let rel = rel.to_string_lossy().replace('\\', "/");
        if rel.ends_with(".swp") || rel.ends_with('~') || std::fs::read_to_string(&f).is_err() {
            continue;
        }
        let _ = writeln!(
            code,
            "    ({rel:?}, include_str!({:?})),",
            f.to_string_lossy()
        );
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default()).join("embedded.rs");
    if let Err(e) = std::fs::write(&out, code) {
        println!("cargo:warning=cannot write {}: {e}", out.display());
    }
}
