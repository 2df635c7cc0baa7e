//! `navi acp` with sessions in two working directories: one core serves
//! both (one database writer thread), and each session's tools work in its
//! own directory.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::acp_support::{Home, client_or_skip};
use crate::support::{FakeLlm, Reply};
use serde_json::json;
use std::time::Duration;

/// How many `navi acp` processes of `home` (found by their HOME) there are,
/// and how many threads named `navi-db-writer` they have between them.
fn writer_threads(home: &std::path::Path) -> (usize, usize) {
    let want = format!("HOME={}", home.display());
    let (mut procs, mut writers) = (0, 0);
    for e in std::fs::read_dir("/proc").unwrap().flatten() {
        let p = e.path();
        let Ok(cmd) = std::fs::read(p.join("cmdline")) else {
            continue;
        };
        let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
        if !cmd.trim_end().ends_with(" acp") {
            continue;
        }
        let Ok(env) = std::fs::read(p.join("environ")) else {
            continue;
        };
        if !env.split(|b| *b == 0).any(|v| v == want.as_bytes()) {
            continue;
        }
        procs += 1;
        for t in std::fs::read_dir(p.join("task"))
            .into_iter()
            .flatten()
            .flatten()
        {
            if std::fs::read_to_string(t.path().join("comm"))
                .is_ok_and(|c| c.trim() == "navi-db-writer")
            {
                writers += 1;
            }
        }
    }
    (procs, writers)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sessions_in_two_directories_share_one_core_and_work_in_their_own() {
    let Some(client) =
        client_or_skip("sessions_in_two_directories_share_one_core_and_work_in_their_own")
    else {
        return;
    };
    let fake = FakeLlm::start().await;
    let home = Home::new(&fake);
    let (alpha, beta) = (home.path("work/alpha"), home.path("work/beta"));
    std::fs::create_dir_all(&alpha).unwrap();
    std::fs::create_dir_all(&beta).unwrap();
    std::fs::write(alpha.join("ALPHA-MARKER.txt"), "a").unwrap();
    std::fs::write(beta.join("BETA-MARKER.txt"), "b").unwrap();
    let (alpha, beta) = (
        std::fs::canonicalize(alpha).unwrap(),
        std::fs::canonicalize(beta).unwrap(),
    );
    for who in ["a", "b"] {
        fake.push(Reply::tool_call("terminal", json!({"command": "ls"})));
        fake.push(Reply::text(format!("listed for {who}")));
    }
    // Watch the agent process while the client drives it.
    let root = home.dir.path().to_path_buf();
    let watching = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(true));
    let w = watching.clone();
    let watcher = tokio::spawn(async move {
        let mut seen = (0, 0);
        while w.load(std::sync::atomic::Ordering::SeqCst) {
            let now = writer_threads(&root);
            seen = (seen.0.max(now.0), seen.1.max(now.1));
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        seen
    });
    let d = home
        .drive(
            &client,
            json!([
                {"op": "initialize"},
                {"op": "new", "as": "a", "cwd": alpha},
                {"op": "new", "as": "b", "cwd": beta},
                {"op": "setMode", "session": "a", "mode": "tester"},
                {"op": "setMode", "session": "b", "mode": "tester"},
                {"op": "prompt", "session": "a", "text": "list it"},
                {"op": "prompt", "session": "b", "text": "list it"},
                {"op": "sleep", "ms": 500},
                {"op": "list", "cwd": alpha},
            ]),
            "allow_once",
        )
        .await;
    watching.store(false, std::sync::atomic::Ordering::SeqCst);
    let (procs, writers) = watcher.await.unwrap();
    let dump = d.dump();
    assert_eq!(d.exit_code(), 0, "{dump}");
    for r in d.results("prompt") {
        assert_eq!(r["result"]["stopReason"], "end_turn", "{dump}");
    }
    // Each session's `ls` ran in its own directory.
    let listing = |name: &str| {
        home.rows(&d.id(name))
            .into_iter()
            .filter(|(role, _, _)| role == "tool")
            .map(|(_, content, _)| content)
            .collect::<String>()
    };
    let (a, b) = (listing("a"), listing("b"));
    assert!(
        a.contains("ALPHA-MARKER") && !a.contains("BETA-MARKER"),
        "{a}"
    );
    assert!(
        b.contains("BETA-MARKER") && !b.contains("ALPHA-MARKER"),
        "{b}"
    );
    // Listing one directory's sessions: alpha's, with its directory.
    let listed = d.results("list")[0]["result"]["sessions"].clone();
    let listed = listed.as_array().unwrap_or_else(|| panic!("{dump}"));
    let ids: Vec<&str> = listed
        .iter()
        .map(|s| s["sessionId"].as_str().unwrap())
        .collect();
    assert_eq!(ids, [d.id("a").as_str()], "{dump}");
    assert_eq!(listed[0]["cwd"], alpha.to_str().unwrap(), "{dump}");
    // One core: one database writer thread for both sessions (a tool's
    // child, between fork and exec, shows the agent's command line too, but
    // not its threads).
    assert!(procs >= 1, "the agent process was watched");
    assert_eq!(writers, 1, "one writer thread serves both sessions");
}
