//! Checkpoints through the real binary (`navi --plain` on a pty, `navi run`
//! and `navi sessions diff`): a turn edits two files with `filesystem` and
//! deletes one with `terminal`; the summary, `/diff`, `/undo` (byte for
//! byte), `/rewind` (the next request lacks the rewound messages); inside
//! and outside a git repository, whose status, refs and stash stay as they
//! were.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::plain_support::{Home, Pty, contents};
use crate::support::{FakeLlm, Reply};
use serde_json::json;
use std::path::Path;
use std::process::Command;

const A: &[u8] = b"alpha\nline two\n";
const B: &[u8] = b"bravo\n\xff binary-ish tail\n";
const C: &[u8] = b"charlie\nto be deleted\n";

pub(crate) fn home_with_tools(fake: &FakeLlm) -> Home {
    let home = Home::new(&fake.ollama_url());
    let p = home.dir.path().join("cfg/profiles/tester/config.json");
    let mut cfg: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    cfg["enabled_tools"] = json!(["todo", "terminal", "filesystem"]);
    cfg["planning_enabled"] = json!(false);
    std::fs::write(&p, cfg.to_string()).unwrap();
    std::fs::write(
        home.dir.path().join("cfg/config.toml"),
        "[security]\napproval = \"auto\"\n",
    )
    .unwrap();
    home
}

pub(crate) fn git(ws: &Path, args: &[&str]) -> String {
    let o = Command::new("git")
        .args(args)
        .current_dir(ws)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap();
    assert!(o.status.success(), "git {args:?}: {o:?}");
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// status, refs, stash and index of the user's repository.
fn repo_state(ws: &Path) -> String {
    format!(
        "{}\n--\n{}\n--\n{}\n--\n{}",
        git(ws, &["status", "--porcelain=v1", "--untracked-files=all"]),
        git(ws, &["for-each-ref"]),
        git(ws, &["stash", "list"]),
        git(ws, &["ls-files", "--stage"]),
    )
}

fn script(fake: &FakeLlm) {
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "write", "path": "a.txt", "content": "alpha\nline 2 changed\nmore\n"}),
    ));
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "write", "path": "sub/b.txt", "content": "new bravo\n"}),
    ));
    fake.push(Reply::tool_call("terminal", json!({"command": "rm c.txt"})));
    fake.push(Reply::text("edited a and b, removed c"));
}

async fn scenario(in_git: bool) {
    let fake = FakeLlm::start().await;
    let home = home_with_tools(&fake);
    let ws = home.dir.path().join("ws");
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::write(ws.join("a.txt"), A).unwrap();
    std::fs::write(ws.join("sub/b.txt"), B).unwrap();
    std::fs::write(ws.join("c.txt"), C).unwrap();
    std::fs::write(ws.join("ignored.log"), "noise").unwrap();
    let before_repo = in_git.then(|| {
        git(&ws, &["init", "-q"]);
        std::fs::write(ws.join(".gitignore"), "*.log\n").unwrap();
        git(&ws, &["add", "."]);
        git(&ws, &["commit", "-qm", "base"]);
        std::fs::write(ws.join("a.txt"), "stashed edit\n").unwrap();
        git(&ws, &["stash", "-q"]);
        std::fs::write(ws.join("untracked.md"), "mine\n").unwrap();
        repo_state(&ws)
    });
    script(&fake);
    let mut cmd = home.command("xterm-256color", &[("NO_COLOR", "1")]);
    cmd.current_dir(&ws);
    let mut pty = Pty::spawn(cmd);
    pty.wait_prompt();
    pty.send("please edit the files\r");
    pty.wait_for("── context ");
    pty.wait_prompt();
    let shown = pty.text();
    assert!(shown.contains("edited a and b, removed c"), "{shown}");
    assert!(shown.contains("turn 1 changed 3 files"), "{shown}");
    for f in [
        "changed a.txt (+2 -1)",
        "deleted c.txt (+0 -2)",
        "sub/b.txt",
    ] {
        assert!(shown.contains(f), "summary lacks {f}: {shown}");
    }
    assert_eq!(std::fs::read(ws.join("sub/b.txt")).unwrap(), b"new bravo\n");
    assert!(!ws.join("c.txt").exists());

    pty.send("/diff\r");
    pty.wait_for("── changed a.txt");
    pty.wait_for("+line 2 changed");
    pty.wait_for("── deleted c.txt");
    pty.wait_for("-to be deleted");
    pty.wait_for("── changed sub/b.txt");
    pty.wait_prompt();

    pty.send("/undo\r");
    pty.wait_for("undid the file changes of turn 1");
    pty.wait_prompt();
    assert_eq!(std::fs::read(ws.join("a.txt")).unwrap(), A);
    assert_eq!(std::fs::read(ws.join("sub/b.txt")).unwrap(), B);
    assert_eq!(std::fs::read(ws.join("c.txt")).unwrap(), C);
    pty.send("/undo\r");
    pty.wait_for("nothing to undo");
    pty.wait_prompt();

    pty.send("/rewind 7\r");
    pty.wait_for("no message 7");
    pty.wait_prompt();
    pty.send("/rewind 1\r");
    pty.wait_for("rewound to before message 1");
    pty.wait_prompt();
    fake.push(Reply::text("fresh start"));
    pty.send("second attempt\r");
    pty.wait_for("fresh start");
    pty.wait_prompt();
    pty.send("\x04");
    assert_eq!(pty.exit_code(), 0);

    let reqs = fake.chat_requests();
    let last = contents(reqs.last().unwrap());
    assert!(
        last.iter().any(|c| c == "second attempt"),
        "new message sent: {last:?}"
    );
    assert!(
        !last
            .iter()
            .any(|c| c.contains("please edit the files") || c.contains("edited a and b")),
        "rewound messages left out of the request: {last:?}"
    );
    // Kept in the stored history, marked.
    let out = Command::new(env!("CARGO_BIN_EXE_navi"))
        .args(["sessions", "show", "1"])
        .env("NAVI_DATA_DIR", home.data())
        .env("NAVI_CONFIG_DIR", home.dir.path().join("cfg"))
        .env("HOME", home.dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("[rewound] you: please edit the files")
            && text.contains("[rewound] navi: edited a and b, removed c")
            && text.contains("second attempt"),
        "{text}"
    );
    // `navi sessions diff` from the shell.
    let out = Command::new(env!("CARGO_BIN_EXE_navi"))
        .args(["sessions", "diff", "1"])
        .env("NAVI_DATA_DIR", home.data())
        .env("NAVI_CONFIG_DIR", home.dir.path().join("cfg"))
        .env("HOME", home.dir.path())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{out:?}");
    assert!(
        text.contains("turn 1 (undone)") && text.contains("-to be deleted"),
        "{text}"
    );
    if let Some(before) = before_repo {
        assert_eq!(
            repo_state(&ws),
            before,
            "the user's repository is untouched"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_is_summarised_diffed_undone_and_rewound_outside_git() {
    scenario(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_is_summarised_diffed_undone_and_rewound_inside_a_git_repository() {
    scenario(true).await;
}

/// `navi run`: the summary on stderr, `files_changed` with `--json`; the
/// workspace holds navi's own data dir, which is left out. Then plain mode
/// (piped) refuses to overwrite a file edited by hand (naming it) until
/// `--force`, and answers bad input with a message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_reports_changes_and_undo_respects_hand_edits() {
    let fake = FakeLlm::start().await;
    let home = home_with_tools(&fake);
    let ws = home.dir.path();
    let run = |args: &[&str]| {
        let mut c = home.run_command(args);
        c.arg("--approve-all");
        c.stdin(std::process::Stdio::null()).output().unwrap()
    };
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "write", "path": "notes.md", "content": "one\ntwo\n"}),
    ));
    fake.push(Reply::text("wrote notes"));
    let out = run(&["--json", "write notes"]);
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let ev: serde_json::Value = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["type"] == "files_changed")
        .unwrap_or_else(|| panic!("no files_changed event: {stdout}"));
    assert_eq!(
        ev,
        json!({"type": "files_changed", "turn": 1, "files": [
            {"path": "notes.md", "status": "added", "added": 2, "removed": 0}
        ]})
    );

    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "write", "path": "notes.md", "content": "one\nTWO\n"}),
    ));
    fake.push(Reply::text("changed notes"));
    let out = run(&["-c", "change notes"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("turn 2 changed 1 file (+1 -1): changed notes.md (+1 -1)"),
        "{stderr}"
    );
    std::fs::write(ws.join("notes.md"), "edited by hand\n").unwrap();

    let plain = |input: &str| {
        let mut c = home.command("dumb", &[]);
        c.arg("-c");
        crate::plain_support::piped(c, input)
    };
    let (_, out, err) = plain("/undo\n/diff 9\n/rewind 9\n/rewind x\n");
    let all = format!("{out}{err}");
    assert!(
        all.contains("not restored") && all.contains("notes.md") && all.contains("--force"),
        "{all}"
    );
    assert!(all.contains("turn 9 changed no files"), "{all}");
    assert!(all.contains("no message 9"), "{all}");
    assert!(all.contains("'x' is not a message number"), "{all}");
    assert_eq!(
        std::fs::read_to_string(ws.join("notes.md")).unwrap(),
        "edited by hand\n"
    );
    let (_, out, err) = plain("/undo --force\n/undo\n/undo\n");
    let all = format!("{out}{err}");
    assert!(all.contains("undid the file changes of turn 2"), "{all}");
    assert!(all.contains("undid the file changes of turn 1"), "{all}");
    assert!(all.contains("nothing to undo"), "{all}");
    assert!(!ws.join("notes.md").exists(), "turn 1 added it: undone");
    assert!(ws.join("data").is_dir(), "navi's data dir is not touched");
}

/// A workspace deleted after the turn: `/undo` says so, nothing is lost.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_in_a_deleted_workspace_says_so() {
    let fake = FakeLlm::start().await;
    let home = home_with_tools(&fake);
    let ws = home.dir.path().join("gone");
    std::fs::create_dir_all(&ws).unwrap();
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": "echo x > f.txt"}),
    ));
    fake.push(Reply::text("done"));
    let mut c = home.run_command(&["--approve-all", "make f"]);
    c.current_dir(&ws);
    let out = c.stdin(std::process::Stdio::null()).output().unwrap();
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("turn 1 changed 1 file"),
        "{out:?}"
    );
    // `-c` continues the session of the project navi starts in: the
    // deleted workspace's session is opened by its id instead.
    let mut l = std::process::Command::new(env!("CARGO_BIN_EXE_navi"));
    l.args(["sessions", "list", "--all", "--json"]);
    let l = home.setup_for_test(l, "dumb").output().unwrap();
    let listed: serde_json::Value = serde_json::from_slice(&l.stdout).unwrap();
    let id = listed[0]["id"].as_str().unwrap().to_string();
    std::fs::remove_dir_all(&ws).unwrap();
    let mut c = home.command("dumb", &[]);
    c.args(["-s", &id]);
    let (code, out, err) = crate::plain_support::piped(c, "/undo\n/diff\n");
    let all = format!("{out}{err}");
    assert_eq!(code, 0, "{all}");
    assert!(
        all.contains("nothing was restored") && all.contains("no longer exists"),
        "{all}"
    );
    assert!(all.contains("cannot show this turn"), "{all}");
}

/// Without git on PATH: a visible warning before the tool runs, and the
/// tool still runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn without_git_a_warning_comes_before_the_tool() {
    let fake = FakeLlm::start().await;
    let home = home_with_tools(&fake);
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "write", "path": "x.txt", "content": "x\n"}),
    ));
    fake.push(Reply::text("wrote x"));
    let mut c = home.run_command(&["--approve-all", "write x"]);
    c.env("PATH", home.dir.path().join("no-bin"));
    let out = c.stdin(std::process::Stdio::null()).output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    let warn = err
        .find("checkpoint unavailable: git is not installed")
        .unwrap_or_else(|| panic!("{err}"));
    let tool = err.find("✓ filesystem").unwrap_or_else(|| panic!("{err}"));
    assert!(warn < tool, "the warning comes before the tool: {err}");
    assert_eq!(
        std::fs::read_to_string(home.dir.path().join("x.txt")).unwrap(),
        "x\n"
    );
}

/// Two sessions in one workspace: each `/undo` restores only its own turn.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_in_one_workspace_keep_their_checkpoints_apart() {
    let fake = FakeLlm::start().await;
    let home = home_with_tools(&fake);
    let ws = home.dir.path();
    for (file, msg) in [("one.txt", "first session"), ("two.txt", "second session")] {
        fake.push(Reply::tool_call(
            "filesystem",
            json!({"action": "write", "path": file, "content": "made\n"}),
        ));
        fake.push(Reply::text("made it"));
        let mut c = home.run_command(&["--approve-all", msg]);
        let out = c.stdin(std::process::Stdio::null()).output().unwrap();
        assert!(out.status.success(), "{out:?}");
    }
    // `navi sessions list` puts the latest first: 2 is the first session.
    let mut c = home.command("dumb", &[]);
    c.args(["-s", "2"]);
    let (_, out, err) = crate::plain_support::piped(c, "/undo\n/undo\n");
    let all = format!("{out}{err}");
    assert!(all.contains("undid the file changes of turn 1"), "{all}");
    assert!(all.contains("nothing to undo"), "{all}");
    assert!(
        !ws.join("one.txt").exists(),
        "the first session's file is undone"
    );
    assert!(
        ws.join("two.txt").exists(),
        "the second session's file stays"
    );
}
