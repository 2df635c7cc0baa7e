//! What the sandbox adds to starting a `terminal` command: the same `true`
//! run through the real tool, unsandboxed (`full-access`) and sandboxed
//! (`workspace-write`: an empty workspace; a `.git` at the top of 50
//! directories; a tree of 5,000 directories and 50,000 files holding 20
//! nested repositories, where the git scan before and after each call and
//! the bind mounts of the carve-outs show).
//!
//! `cargo bench --bench sandbox_spawn` (env `NAVI_BENCH_RUNS`, default 200).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use navi::config::{Config, Paths};
use navi::protocol::EventSink;
use navi::tools::builtin::terminal::TerminalTool;
use navi::tools::{Tool, ToolContext, ToolEnv};
use serde_json::json;
use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

fn ctx(root: &Path, mode: &str) -> ToolContext {
    let work = root.join("work");
    let mut config = Config::default();
    config.sandbox.mode = mode.into();
    let paths = Paths {
        config_file: None,
        config_dir: root.join("config"),
        data_dir: root.join("data"),
        db_path: root.join("data/navi.db"),
        log_dir: root.join("data/logs"),
    };
    let (events, _rx) = EventSink::channel(16);
    ToolContext {
        session_id: "bench".into(),
        parent_session_id: None,
        call_id: "c".into(),
        env: Arc::new(ToolEnv::new(Arc::new(config), paths)),
        cancel: CancellationToken::new(),
        events,
        origin: None,
        tool_list: Arc::new(Vec::new()),
        step_validation: false,
        session: Arc::new(navi::tools::SessionTools::new("bench", work, None)),
        owner: None,
        call_info: None,
    }
}

fn percentile(sorted: &[Duration], p: f64) -> f64 {
    let i = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[i].as_secs_f64() * 1000.0
}

async fn measure(label: &str, ctx: &ToolContext, runs: usize) {
    let args = json!({"command": "true"});
    for _ in 0..10 {
        assert!(TerminalTool.execute(&args, ctx).await.success);
    }
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let t = Instant::now();
        let r = TerminalTool.execute(&args, ctx).await;
        times.push(t.elapsed());
        assert!(r.success, "{:?}", r.error);
    }
    times.sort();
    println!(
        "{label:<48} min {:5.2}  p10 {:5.2}  median {:5.2}  p90 {:5.2} ms  ({runs} runs)",
        percentile(&times, 0.0),
        percentile(&times, 0.1),
        percentile(&times, 0.5),
        percentile(&times, 0.9)
    );
}

/// 5,000 directories (50 × 100), 10 files each, a repository in 20 of them.
fn big_tree(work: &Path) {
    for a in 0..50 {
        for b in 0..100 {
            let d = work.join(format!("a{a}/b{b}"));
            std::fs::create_dir_all(&d).unwrap();
            for f in 0..10 {
                std::fs::write(d.join(format!("f{f}")), "x").unwrap();
            }
            if b == 0 && a < 20 {
                std::fs::create_dir_all(d.join(".git/hooks")).unwrap();
                std::fs::write(d.join(".git/config"), "[core]\n").unwrap();
            }
        }
    }
    std::fs::create_dir_all(work.join(".git")).unwrap();
}

fn main() {
    let runs: usize = std::env::var("NAVI_BENCH_RUNS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(200);
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().canonicalize().unwrap();
    for d in ["work", "config", "data", "gitwork/.git/hooks"] {
        std::fs::create_dir_all(root.join(d)).unwrap();
    }
    for i in 0..50 {
        std::fs::create_dir_all(root.join(format!("gitwork/dir{i}"))).unwrap();
    }
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        measure(
            "terminal `true`, full-access (no sandbox)",
            &ctx(&root, "full-access"),
            runs,
        )
        .await;
        measure(
            "terminal `true`, workspace-write",
            &ctx(&root, "workspace-write"),
            runs,
        )
        .await;
        let git_root = root.join("gitwork-root");
        std::fs::create_dir_all(&git_root).unwrap();
        std::fs::rename(root.join("gitwork"), git_root.join("work")).unwrap();
        for d in ["config", "data"] {
            std::fs::create_dir_all(git_root.join(d)).unwrap();
        }
        measure(
            "terminal `true`, workspace-write, .git + 50 dirs",
            &ctx(&git_root, "workspace-write"),
            runs,
        )
        .await;
        let big_root = root.join("big-root");
        big_tree(&big_root.join("work"));
        for d in ["config", "data"] {
            std::fs::create_dir_all(big_root.join(d)).unwrap();
        }
        // Directories are trusted by the scan two seconds after a change.
        std::thread::sleep(Duration::from_secs(3));
        measure(
            "terminal `true`, workspace-write, 5k dirs/50k files/20 repos",
            &ctx(&big_root, "workspace-write"),
            runs,
        )
        .await;
    });
}
