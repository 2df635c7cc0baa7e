//! The cost of a checkpoint (see `navi::checkpoint`) on a workspace of
//! 50,000 files (1,000 directories of 50 small text files, plus an ignored
//! `target/` of 5,000 files that `.gitignore` keeps out).
//!
//! Measured: the first checkpoint (every file hashed into the shadow
//! repository), a checkpoint with nothing changed (what most turns pay),
//! one after 10 files changed, and the diff of two checkpoints.
//!
//! Run: `cargo bench --bench checkpoint` (needs `git`; prints one line per
//! case). Results: docs/performance.md ("Checkpoints").
#![allow(clippy::unwrap_used, clippy::expect_used)]

use navi::checkpoint::shadow::Shadow;
use std::time::Instant;

const DIRS: usize = 1_000;
const PER_DIR: usize = 50;

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let ws = tmp.path().join("ws");
    let data = tmp.path().join("data");
    for d in 0..DIRS {
        let dir = ws.join(format!("src/m{d:04}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..PER_DIR {
            let body = format!("// file {d}/{f}\nfn f{f}() -> u32 {{ {d} + {f} }}\n");
            std::fs::write(dir.join(format!("f{f:02}.rs")), body).unwrap();
        }
    }
    std::fs::write(ws.join(".gitignore"), "target/\n").unwrap();
    for i in 0..5_000 {
        let dir = ws.join(format!("target/o{}", i / 100));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(format!("{i}.o")), "x").unwrap();
    }
    println!("workspace: {} files (+5,000 ignored)", DIRS * PER_DIR);
    let t = Instant::now();
    let sh = Shadow::open(&data, &ws, "bench").unwrap();
    let (first, _) = sh.snapshot().unwrap();
    println!("first checkpoint:      {:>8.1} ms", ms(t));
    let mut same = Vec::new();
    for _ in 0..5 {
        let t = Instant::now();
        let (tree, _) = sh.snapshot().unwrap();
        assert_eq!(tree, first);
        same.push(ms(t));
    }
    same.sort_by(|a, b| a.total_cmp(b));
    println!("unchanged (median/5):  {:>8.1} ms", same[2]);
    for i in 0..10 {
        std::fs::write(ws.join(format!("src/m{i:04}/f00.rs")), "changed\n").unwrap();
    }
    let t = Instant::now();
    let (after, _) = sh.snapshot().unwrap();
    println!("10 files changed:      {:>8.1} ms", ms(t));
    let t = Instant::now();
    let changes = sh.changes(&first, &after).unwrap();
    assert_eq!(changes.len(), 10);
    println!("diff of the two:       {:>8.1} ms", ms(t));
    let size: u64 = walk(&data.join("checkpoints"));
    println!("shadow repository:     {:>8.1} MB", size as f64 / 1e6);
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1000.0
}

fn walk(p: &std::path::Path) -> u64 {
    let Ok(rd) = std::fs::read_dir(p) else {
        return 0;
    };
    rd.flatten()
        .map(|e| match e.metadata() {
            Ok(m) if m.is_dir() => walk(&e.path()),
            Ok(m) => m.len(),
            Err(_) => 0,
        })
        .sum()
}
