//! Turns recorded from the paths their file tools name (issue 35 item 2),
//! through the real binary: a `filesystem` write in a 50,000-file
//! workspace is recorded and undone without a snapshot of the whole tree; a
//! command later in the same turn makes the turn a whole one, so a file no
//! tool named is recorded and undone too, and the files written before the
//! command come back as they were before the turn; a directory deleted
//! after a file in it was written, and a path through a linked directory,
//! come back right.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::checkpoints::home_with_tools;
use crate::checkpoints_scale::{config, files, run, write_turn};
use crate::plain_support::{Home, piped};
use crate::support::{FakeLlm, Reply};
use serde_json::json;
use std::path::Path;

fn plain(home: &Home, ws: &Path, input: &str) -> String {
    let mut c = home.command("dumb", &[]);
    c.arg("-c").current_dir(ws);
    let (_, out, err) = piped(c, input);
    format!("{out}{err}")
}

fn read(ws: &Path, f: &str) -> String {
    std::fs::read_to_string(ws.join(f)).unwrap()
}

/// 50,000 files, more than `max_files` allows a whole snapshot of: the
/// write is recorded all the same, listed, and undone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_tool_write_in_a_large_workspace_is_recorded_and_undone() {
    let fake = FakeLlm::start().await;
    let home = home_with_tools(&fake);
    config(&home, "[checkpoints]\nmax_files = 10000\n");
    let ws = home.dir.path().join("ws");
    files(&ws, 50_000);
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "write", "path": "d7/f3.txt", "content": "changed\n"}),
    ));
    write_turn(&fake, "new.txt");
    let err = run(&home, &ws, &["edit"]);
    assert!(
        err.contains("turn 1 changed 2 files (+2 -1): changed d7/f3.txt (+1 -1), added new.txt"),
        "{err}"
    );
    assert!(!err.contains("checkpoint"), "{err}");
    let all = plain(&home, &ws, "/undo\n");
    assert!(all.contains("undid the file changes of turn 1"), "{all}");
    assert_eq!(read(&ws, "d7/f3.txt"), "7/3\n");
    assert!(!ws.join("new.txt").exists());
    assert_eq!(read(&ws, "d499/f99.txt"), "499/99\n");
}

/// A file tool writes, then a command writes a file no tool named and
/// changes the first one again: one record with all three, undone whole.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_command_after_a_file_tool_makes_the_turn_a_whole_one() {
    let fake = FakeLlm::start().await;
    let home = home_with_tools(&fake);
    let ws = home.dir.path().join("ws");
    files(&ws, 300);
    std::fs::write(ws.join("a.txt"), "a0\n").unwrap();
    std::fs::write(ws.join("keep.txt"), "k0\n").unwrap();
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "write", "path": "a.txt", "content": "a1\n"}),
    ));
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": "echo made > b.txt && echo k1 > keep.txt && echo a2 >> a.txt"}),
    ));
    fake.push(Reply::text("done"));
    let err = run(&home, &ws, &["edit"]);
    assert!(err.contains("turn 1 changed 3 files"), "{err}");
    for f in ["a.txt", "b.txt", "keep.txt"] {
        assert!(err.contains(f), "{f}: {err}");
    }
    assert_eq!(read(&ws, "a.txt"), "a1\na2\n");
    let all = plain(&home, &ws, "/undo\n");
    assert!(all.contains("undid the file changes of turn 1"), "{all}");
    assert_eq!(read(&ws, "a.txt"), "a0\n");
    assert_eq!(read(&ws, "keep.txt"), "k0\n");
    assert!(!ws.join("b.txt").exists());
}

/// Two batches in one turn: a file in `d` is written, then `d` is deleted;
/// a write through a linked directory. `/undo` puts back the file's
/// content from before the turn, the rest of `d`, and removes the new file
/// at its real path.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn later_calls_of_a_turn_keep_what_earlier_ones_found() {
    let fake = FakeLlm::start().await;
    let home = home_with_tools(&fake);
    let ws = home.dir.path().join("ws");
    std::fs::create_dir_all(ws.join("d")).unwrap();
    std::fs::create_dir_all(ws.join("real")).unwrap();
    std::fs::write(ws.join("d/x.txt"), "x0\n").unwrap();
    std::fs::write(ws.join("d/y.txt"), "y0\n").unwrap();
    std::os::unix::fs::symlink("real", ws.join("link")).unwrap();
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "write", "path": "d/x.txt", "content": "x1\n"}),
    ));
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "delete", "path": "d", "recursive": true}),
    ));
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "write", "path": "link/n.txt", "content": "n\n"}),
    ));
    fake.push(Reply::text("done"));
    let err = run(&home, &ws, &["edit"]);
    assert!(!ws.join("d").exists(), "{err}");
    assert!(
        err.contains("turn 1 changed 3 files") && err.contains("added real/n.txt"),
        "{err}"
    );
    let all = plain(&home, &ws, "/undo\n");
    assert!(all.contains("undid the file changes of turn 1"), "{all}");
    assert_eq!(read(&ws, "d/x.txt"), "x0\n");
    assert_eq!(read(&ws, "d/y.txt"), "y0\n");
    assert!(!ws.join("real/n.txt").exists());
    assert!(ws.join("link").symlink_metadata().unwrap().is_symlink());
}
