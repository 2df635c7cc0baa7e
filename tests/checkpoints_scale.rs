//! Checkpoints that never stall a turn (issue 35 item 2), through the real
//! binary: in a workspace over `[checkpoints].max_files` a turn that runs a
//! command is not recorded and says so (a `filesystem` write still is); a
//! first snapshot too large to wait for runs in the background while a
//! command's turn goes on (and says its changes cannot be undone), and
//! later turns are recorded once it is done; with `enabled = false`
//! nothing is recorded or said.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::checkpoints::home_with_tools;
use crate::plain_support::Home;
use crate::support::{FakeLlm, Reply};
use serde_json::json;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

pub(crate) fn run(home: &Home, ws: &Path, args: &[&str]) -> String {
    let mut c = home.run_command(args);
    c.arg("--approve-all").current_dir(ws);
    let out = c.stdin(Stdio::null()).output().unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

pub(crate) fn files(ws: &Path, n: usize) {
    for d in 0..n.div_ceil(100) {
        let dir = ws.join(format!("d{d}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..100.min(n - d * 100) {
            std::fs::write(dir.join(format!("f{f}.txt")), format!("{d}/{f}\n")).unwrap();
        }
    }
}

pub(crate) fn write_turn(fake: &FakeLlm, file: &str) {
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "write", "path": file, "content": "written\n"}),
    ));
    fake.push(Reply::text("wrote it"));
}

pub(crate) fn command_turn(fake: &FakeLlm, file: &str) {
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": format!("echo written > {file}")}),
    ));
    fake.push(Reply::text("wrote it"));
}

pub(crate) fn config(home: &Home, extra: &str) {
    let p = home.dir.path().join("cfg/config.toml");
    let mut t = std::fs::read_to_string(&p).unwrap();
    t.push_str(extra);
    std::fs::write(p, t).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_over_the_limit_is_not_recorded_and_each_turn_says_so() {
    let fake = FakeLlm::start().await;
    let home = home_with_tools(&fake);
    config(&home, "[checkpoints]\nmax_files = 50\n");
    let ws = home.dir.path().join("ws");
    files(&ws, 120);
    for (i, f) in ["x.txt", "y.txt"].iter().enumerate() {
        command_turn(&fake, f);
        let args: Vec<&str> = if i == 0 {
            vec!["write"]
        } else {
            vec!["-c", "write"]
        };
        let err = run(&home, &ws, &args);
        assert!(
            err.contains("checkpoints are off in this workspace: it holds more than 50 files"),
            "{err}"
        );
        assert!(!err.contains("changed 1 file"), "{err}");
        assert_eq!(std::fs::read_to_string(ws.join(f)).unwrap(), "written\n");
    }
    // A file tool's write is recorded from its path alone: no limit.
    write_turn(&fake, "z.txt");
    let err = run(&home, &ws, &["-c", "write"]);
    assert!(
        err.contains("turn 3 changed 1 file (+1 -0): added z.txt"),
        "{err}"
    );
    assert!(!err.contains("checkpoints are off"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn checkpoints_can_be_turned_off() {
    let fake = FakeLlm::start().await;
    let home = home_with_tools(&fake);
    config(&home, "[checkpoints]\nenabled = false\n");
    let ws = home.dir.path().join("ws");
    files(&ws, 3);
    write_turn(&fake, "x.txt");
    let err = run(&home, &ws, &["write"]);
    assert!(
        !err.contains("checkpoint") && !err.contains("changed 1 file"),
        "{err}"
    );
    assert!(!home.data().join("checkpoints").exists());
}

/// 2,500 new files: more than a turn that runs a command waits for. The
/// first turn goes on without its checkpoint (and says so); the snapshot
/// finishes in the background (even after `navi run` exits); the next turn
/// is recorded.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_large_first_snapshot_runs_in_the_background() {
    let fake = FakeLlm::start().await;
    let home = home_with_tools(&fake);
    let ws = home.dir.path().join("ws");
    files(&ws, 2_500);
    command_turn(&fake, "x.txt");
    let err = run(&home, &ws, &["write x"]);
    assert!(
        err.contains(
            "navi is recording this workspace for the first time (2,500 files, in the background)"
        ),
        "{err}"
    );
    assert!(!err.contains("turn 1 changed"), "{err}");
    assert_eq!(
        std::fs::read_to_string(ws.join("x.txt")).unwrap(),
        "written\n"
    );
    // Wait for the background snapshot (a finished index, no lock).
    let t = Instant::now();
    loop {
        let dirs: Vec<_> = std::fs::read_dir(home.data().join("checkpoints"))
            .unwrap()
            .flatten()
            .map(|d| d.path().join("git"))
            .filter(|g| g.join("HEAD").exists())
            .collect();
        let ready = dirs.iter().any(|g| {
            let names: Vec<String> = std::fs::read_dir(g)
                .unwrap()
                .flatten()
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .collect();
            names
                .iter()
                .any(|n| n.starts_with("index-") && !n.contains('.'))
                && !names.iter().any(|n| n.ends_with(".lock"))
        });
        if ready {
            break;
        }
        assert!(
            t.elapsed() < Duration::from_secs(180),
            "the background snapshot never finished"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    command_turn(&fake, "y.txt");
    let err = run(&home, &ws, &["-c", "write y"]);
    assert!(
        err.contains("turn 2 changed 1 file (+1 -0): added y.txt"),
        "{err}"
    );
    assert!(!err.contains("checkpoint skipped"), "{err}");
}
