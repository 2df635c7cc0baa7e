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
        // The path is spelled through CARGO_MANIFEST_DIR, not written out:
        // this file's length (and so the source positions rustc gives every
        // file after it, which reach the object code) would otherwise depend
        // on where the checkout is, and with them the names ThinLTO gives
        // local functions, which the startup order lists.
        let _ = writeln!(
            code,
            "    ({rel:?}, include_str!(concat!(env!(\"CARGO_MANIFEST_DIR\"), {:?}))),",
            format!("/{rel}")
        );
    }
    code.push_str("];\n");
    let out = PathBuf::from(std::env::var("OUT_DIR").unwrap_or_default()).join("embedded.rs");
    if let Err(e) = std::fs::write(&out, code) {
        println!("cargo:warning=cannot write {}: {e}", out.display());
    }
    release_link_args(&root);
}

/// Release builds of the binary lay out the functions a one-shot `navi run`
/// executes side by side (`benches/startup-order.txt`, written by
/// `benches/startup_order.py`): the kernel maps code in 64 KB windows, and
/// spread over the whole text those functions kept ~11 MB of it resident
/// (docs/performance.md). Only where the linker is rust-lld (x86_64 Linux,
/// rustc 1.90 or later, no other linker configured); names the file lists
/// that no longer exist are ignored. `NAVI_NO_STARTUP_ORDER=1` turns it off.
///
/// The same release builds link a fixed-address (non-PIE) executable, as Go
/// does for its binaries: a PIE navi made the dynamic loader apply ~53,000
/// relocations at every start, writing (copying) ~235 pages of
/// `.data.rel.ro`, a third of a one-shot run's page faults
/// (docs/performance-aichat.md). Shared libraries, heap, stack and mmap
/// stay randomized. `NAVI_PIE=1` keeps the position-independent executable.
fn release_link_args(root: &Path) {
    println!("cargo:rerun-if-changed=benches/startup-order.txt");
    println!("cargo:rerun-if-env-changed=NAVI_NO_STARTUP_ORDER");
    println!("cargo:rerun-if-env-changed=NAVI_PIE");
    let var = |k: &str| std::env::var(k).unwrap_or_default();
    let order = root.join("benches/startup-order.txt");
    let flags = var("CARGO_ENCODED_RUSTFLAGS");
    let ours = var("PROFILE") == "release"
        && var("TARGET") == "x86_64-unknown-linux-gnu"
        && std::env::var_os("RUSTC_LINKER").is_none()
        && !flags.contains("linker")
        && !flags.contains("fuse-ld")
        && !flags.contains("relocation-model")
        && rustc_links_with_lld();
    if !ours {
        return;
    }
    if std::env::var_os("NAVI_PIE").is_none() {
        println!("cargo:rustc-link-arg-bins=-no-pie");
    }
    if std::env::var_os("NAVI_NO_STARTUP_ORDER").is_some() || !order.is_file() {
        return;
    }
    // Stored several names a line; the linker wants one a line.
    let Ok(names) = std::fs::read_to_string(&order) else {
        return;
    };
    let list: String = names.split_whitespace().map(|n| format!("{n}\n")).collect();
    let out = PathBuf::from(var("OUT_DIR")).join("startup-order.txt");
    if std::fs::write(&out, list).is_ok() {
        println!(
            "cargo:rustc-link-arg-bins=-Wl,--symbol-ordering-file={}",
            out.display()
        );
        println!("cargo:rustc-link-arg-bins=-Wl,--no-warn-symbol-ordering");
    }
}

/// rustc links x86_64 Linux binaries with its own lld from 1.90 on.
fn rustc_links_with_lld() -> bool {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let Ok(out) = std::process::Command::new(rustc).arg("-V").output() else {
        return false;
    };
    let text = String::from_utf8_lossy(&out.stdout);
    let mut parts = text
        .split_whitespace()
        .nth(1)
        .unwrap_or("")
        .split('.')
        .map(|p| p.parse::<u32>().unwrap_or(0));
    let (major, minor) = (parts.next().unwrap_or(0), parts.next().unwrap_or(0));
    major > 1 || (major == 1 && minor >= 90)
}
