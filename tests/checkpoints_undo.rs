//! `/undo` never loses work and any file name can be undone (issue 37
//! item 6), through the real binary: names with a newline, bytes that are
//! not UTF-8 and escape sequences are recorded, shown escaped (summary,
//! `--json` event, `/diff`) and undone byte for byte; a file someone else
//! changed during the turn, while none of its tools ran, is not put back
//! without `--force`; a workspace below the top of a repository is recorded
//! from the repository's index and objects, which stay untouched.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::checkpoints::{git, home_with_tools};
use crate::plain_support::{Home, piped};
use crate::support::{FakeLlm, Reply};
use serde_json::json;
use std::ffi::OsStr;
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Stdio;
use std::time::{Duration, Instant};

fn run(home: &Home, ws: &Path, args: &[&str]) -> std::process::Output {
    let mut c = home.run_command(args);
    c.arg("--approve-all").current_dir(ws);
    c.stdin(Stdio::null()).output().unwrap()
}

fn plain(home: &Home, ws: &Path, input: &str) -> String {
    let mut c = home.command("dumb", &[]);
    c.arg("-c").current_dir(ws);
    let (_, out, err) = piped(c, input);
    format!("{out}{err}")
}

fn name(b: &[u8]) -> &Path {
    Path::new(OsStr::from_bytes(b))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn any_file_name_is_recorded_shown_escaped_and_undone() {
    let fake = FakeLlm::start().await;
    let home = home_with_tools(&fake);
    let ws = home.dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join(name(b"old\nname.txt")), "old\n").unwrap();
    std::fs::write(ws.join(name(b"gone\xfe.txt")), "to delete\n").unwrap();
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": r#"printf 'x\n' > "$(printf 'a\nb.txt')"; printf 'y\n' > "$(printf 'bad\377.txt')"; printf 'z\n' > "$(printf 'esc\033[31mred\033]0;title\007.txt')"; printf 'new\n' > "$(printf 'old\nname.txt')"; rm "$(printf 'gone\376.txt')""#}),
    ));
    fake.push(Reply::text("made odd names"));
    let out = run(&home, &ws, &["--json", "odd names"]);
    assert!(out.status.success(), "{out:?}");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let ev: serde_json::Value = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
        .find(|v| v["type"] == "files_changed")
        .unwrap_or_else(|| panic!("no files_changed event: {stdout}"));
    let paths: Vec<&str> = ev["files"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["path"].as_str().unwrap())
        .collect();
    for p in [
        "\"a\\nb.txt\"",
        "\"bad\\xff.txt\"",
        "\"esc\\x1b[31mred\\x1b]0;title\\x07.txt\"",
        "\"old\\nname.txt\"",
        "\"gone\\xfe.txt\"",
    ] {
        assert!(paths.contains(&p), "{p} in {paths:?}");
    }
    for p in &paths {
        assert!(!p.chars().any(char::is_control), "{p:?}");
    }

    let all = plain(&home, &ws, "/diff\n/undo\n");
    assert!(
        !all.contains('\u{1b}') && !all.contains('\u{7}'),
        "raw escapes: {all:?}"
    );
    assert!(all.contains("── added \"a\\nb.txt\" (+1 -0)"), "{all}");
    assert!(
        all.contains("── changed \"old\\nname.txt\" (+1 -1)"),
        "{all}"
    );
    assert!(all.contains("── deleted \"gone\\xfe.txt\""), "{all}");
    assert!(all.contains("removed \"esc\\x1b[31mred"), "{all}");
    assert!(all.contains("undid the file changes of turn 1"), "{all}");
    let mut left: Vec<Vec<u8>> = std::fs::read_dir(&ws)
        .unwrap()
        .map(|e| e.unwrap().file_name().as_bytes().to_vec())
        .collect();
    left.sort();
    assert_eq!(
        left,
        vec![b"gone\xfe.txt".to_vec(), b"old\nname.txt".to_vec()]
    );
    assert_eq!(
        std::fs::read(ws.join(name(b"old\nname.txt"))).unwrap(),
        b"old\n"
    );
    assert_eq!(
        std::fs::read(ws.join(name(b"gone\xfe.txt"))).unwrap(),
        b"to delete\n"
    );
}

/// Someone edits a file while the model is answering (no tool running):
/// `/undo` names it and changes nothing until `--force`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_changed_during_the_turn_by_someone_else_needs_force() {
    let fake = FakeLlm::start().await;
    let home = home_with_tools(&fake);
    let ws = home.dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("f.txt"), "f original\n").unwrap();
    std::fs::write(ws.join("g.txt"), "g original\n").unwrap();
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": "echo by the tool > f.txt"}),
    ));
    // The answer comes late: the user edits g.txt meanwhile.
    fake.push(Reply::text("done").with_prefill(7000));
    let mut c = home.run_command(&["--approve-all", "edit f"]);
    c.current_dir(&ws)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    let child = c.spawn().unwrap();
    let t = Instant::now();
    while fake.chat_requests().len() < 2 {
        assert!(t.elapsed() < Duration::from_secs(60), "the tool never ran");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // Well after the tool ended (navi allows 2 s of slack).
    tokio::time::sleep(Duration::from_millis(2600)).await;
    std::fs::write(ws.join("g.txt"), "the user's edit\n").unwrap();
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("turn 1 changed 2 files"), "{err}");

    let all = plain(&home, &ws, "/undo\n");
    assert!(
        all.contains("not restored")
            && all.contains("g.txt (changed during the turn while none of its tools ran)"),
        "{all}"
    );
    assert!(all.contains("--force"), "{all}");
    assert!(
        !all.contains("f.txt ("),
        "the tool's own change is not in doubt: {all}"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("g.txt")).unwrap(),
        "the user's edit\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("f.txt")).unwrap(),
        "by the tool\n"
    );
    let all = plain(&home, &ws, "/undo --force\n");
    assert!(all.contains("undid the file changes of turn 1"), "{all}");
    assert_eq!(
        std::fs::read_to_string(ws.join("g.txt")).unwrap(),
        "g original\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("f.txt")).unwrap(),
        "f original\n"
    );
}

/// Two turns; the user edits the first turn's file between them:
/// `/rewind 1 --files` would lose that edit, so it asks.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edit_between_two_undone_turns_needs_force() {
    let fake = FakeLlm::start().await;
    let home = home_with_tools(&fake);
    let ws = home.dir.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    std::fs::write(ws.join("n.txt"), "one\n").unwrap();
    for (content, msg) in [("two\n", "first"), ("four\n", "second")] {
        fake.push(Reply::tool_call(
            "filesystem",
            json!({"action": "write", "path": "n.txt", "content": content}),
        ));
        fake.push(Reply::text("ok"));
        let args: Vec<&str> = if msg == "first" {
            vec![msg]
        } else {
            vec!["-c", msg]
        };
        assert!(run(&home, &ws, &args).status.success());
        if msg == "first" {
            std::fs::write(ws.join("n.txt"), "three (mine)\n").unwrap();
        }
    }
    let all = plain(&home, &ws, "/rewind 1 --files\n");
    assert!(
        all.contains("n.txt (changed between navi's turns)"),
        "{all}"
    );
    assert_eq!(std::fs::read_to_string(ws.join("n.txt")).unwrap(), "four\n");
    // `/undo` of the last turn alone puts back the user's version.
    let all = plain(&home, &ws, "/undo\n");
    assert!(all.contains("undid the file changes of turn 2"), "{all}");
    assert_eq!(
        std::fs::read_to_string(ws.join("n.txt")).unwrap(),
        "three (mine)\n"
    );
}

/// A workspace below the top of the user's repository: recorded from the
/// repository's own index (only the changed file is hashed into navi's
/// store) and undone; the repository's index, refs and objects are as they
/// were.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workspace_inside_a_repository_leaves_the_repository_untouched() {
    let fake = FakeLlm::start().await;
    let home = home_with_tools(&fake);
    let top = home.dir.path().join("repo");
    let ws = top.join("pkg");
    std::fs::create_dir_all(ws.join("src")).unwrap();
    for i in 0..40 {
        std::fs::write(ws.join(format!("src/m{i}.rs")), format!("fn m{i}() {{}}\n")).unwrap();
    }
    std::fs::write(top.join("README"), "top\n").unwrap();
    std::fs::write(top.join(".gitignore"), "*.tmp\n").unwrap();
    git(&top, &["init", "-q"]);
    git(&top, &["add", "."]);
    git(&top, &["commit", "-qm", "base"]);
    std::fs::write(ws.join("scratch.tmp"), "ignored by the repository\n").unwrap();
    let objects = |t: &Path| {
        let mut v: Vec<String> = walk(&t.join(".git/objects"));
        v.sort();
        v
    };
    let before = (
        std::fs::read(top.join(".git/index")).unwrap(),
        git(&top, &["for-each-ref"]),
        objects(&top),
    );
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "write", "path": "src/m3.rs", "content": "fn m3() { changed() }\n"}),
    ));
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": "echo more > scratch.tmp; echo n > new.rs"}),
    ));
    fake.push(Reply::text("ok"));
    let out = run(&home, &ws, &["change m3"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("turn 1 changed 2 files")
            && err.contains("changed src/m3.rs (+1 -1)")
            && err.contains("added new.rs"),
        "{err}"
    );
    // Only what changed went into navi's own store.
    let shadow_blobs: usize = std::fs::read_dir(home.data().join("checkpoints"))
        .unwrap()
        .flatten()
        .map(|d| walk(&d.path().join("git/objects")).len())
        .sum();
    assert!(
        shadow_blobs < 20,
        "{shadow_blobs} objects copied for 41 files"
    );
    let all = plain(&home, &ws, "/undo\n");
    assert!(all.contains("undid the file changes of turn 1"), "{all}");
    assert_eq!(
        std::fs::read_to_string(ws.join("src/m3.rs")).unwrap(),
        "fn m3() {}\n"
    );
    assert!(!ws.join("new.rs").exists());
    let after = (
        std::fs::read(top.join(".git/index")).unwrap(),
        git(&top, &["for-each-ref"]),
        objects(&top),
    );
    assert!(before == after, "the user's repository changed");
}

/// Every file under `dir`, relative.
fn walk(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let Ok(rd) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in rd.flatten() {
        let p = e.path();
        if p.is_dir() {
            out.extend(
                walk(&p)
                    .into_iter()
                    .map(|s| format!("{}/{s}", e.file_name().to_string_lossy())),
            );
        } else {
            out.push(e.file_name().to_string_lossy().into_owned());
        }
    }
    out
}

/// Attachments: a link inside the workspace is not followed (a tool could
/// have made it); a link the user made elsewhere is.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attachment_through_a_link_in_the_workspace_is_refused() {
    let fake = FakeLlm::start().await;
    let home = home_with_tools(&fake);
    let ws = home.dir.path().join("ws");
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.txt"), "SECRET-KEY-123\n").unwrap();
    std::fs::write(ws.join("sub/notes.txt"), "my notes\n").unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.txt"), ws.join("notes.txt")).unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.join("dirlink")).unwrap();
    // The user's own link, outside the workspace, to a file in it.
    std::os::unix::fs::symlink(ws.join("sub/notes.txt"), outside.path().join("mine.txt")).unwrap();
    for f in ["notes.txt", "dirlink/secret.txt"] {
        let out = run(&home, &ws, &["-f", f, "read it"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains("symbolic link in a directory tools can write"),
            "{err}"
        );
    }
    fake.push(Reply::text("ok"));
    let all = plain(&home, &ws, "look at @notes.txt please\n");
    assert!(
        all.contains("symbolic link in a directory tools can write"),
        "{all}"
    );
    fake.push(Reply::text("read"));
    let mine = outside.path().join("mine.txt");
    let out = run(&home, &ws, &["-f", mine.to_str().unwrap(), "read mine"]);
    assert!(out.status.success(), "{out:?}");
    let sent: String = fake.chat_requests().iter().map(|r| r.to_string()).collect();
    assert!(sent.contains("my notes"), "the user's own link is followed");
    assert!(
        !sent.contains("SECRET-KEY-123"),
        "nothing from behind a planted link"
    );
}
