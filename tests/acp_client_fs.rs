//! `navi acp` with an editor that offers its file system and terminals
//! (`fs/read_text_file`, `fs/write_text_file`, `terminal/*`), driven by the
//! TypeScript ACP client SDK playing that editor (tests/acp/client.mjs): a
//! read sees the unsaved buffer, a write lands in the editor (on disk only
//! when it saves), a command runs in the editor's terminal shown in the
//! call, and an editor that fails or kills gives the model a clear result.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::acp_support::{Drive, Home, client_or_skip};
use crate::support::{FakeLlm, Reply};
use serde_json::{Value, json};

fn everything() -> Value {
    json!({"fs": {"readTextFile": true, "writeTextFile": true}, "terminal": true})
}

/// One session, one prompt, as an editor with `caps` and `editor` settings.
async fn run(home: &Home, client: &std::path::Path, caps: Value, editor: Value) -> (Drive, String) {
    let d = home
        .drive(
            client,
            json!([
                {"op": "initialize", "caps": caps, "editor": editor},
                {"op": "new", "as": "a"},
                {"op": "prompt", "session": "a", "text": "go"},
                {"op": "end"}
            ]),
            "allow_once",
        )
        .await;
    let id = d.id("a");
    (d, id)
}

/// The client's log entries of type `t`.
fn logged<'a>(d: &'a Drive, t: &str) -> Vec<&'a Value> {
    d.log().iter().filter(|e| e["t"] == t).collect()
}

/// The tool results the model was sent, as one text.
fn sent(fake: &FakeLlm) -> String {
    fake.chat_requests()
        .iter()
        .map(|r| r.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

fn prompt_result(d: &Drive) -> Value {
    d.results("prompt")[0]["result"].clone()
}

/// A read sees the editor's unsaved buffer; the edit's diff starts from
/// it; the write goes to the editor, and the disk stays as it was while
/// the editor has not saved (the model is told so).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_edit_reads_and_writes_the_editors_unsaved_buffer() {
    let Some(client) = client_or_skip("acp_edit_reads_and_writes_the_editors_unsaved_buffer")
    else {
        return;
    };
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "read", "path": "a.txt"}),
    ));
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "write", "path": "a.txt", "content": "one\nTWO\nthree\n"}),
    ));
    fake.push(Reply::text("edited"));
    let home = Home::new(&fake);
    let file = home.work().join("a.txt");
    std::fs::write(&file, "one\ntwo\nthree\n").unwrap();
    let path = file.to_string_lossy().into_owned();
    let buffer = "one\ntwo (unsaved)\nthree\n";
    let editor = json!({"buffers": {path.clone(): buffer}});
    let (d, id) = run(&home, &client, everything(), editor).await;
    let dump = d.dump();
    assert_eq!(prompt_result(&d)["stopReason"], "end_turn", "{dump}");
    // The model read the buffer, not the disk.
    let text = sent(&fake);
    assert!(text.contains("two (unsaved)"), "{text}");
    let reads = logged(&d, "fs_read");
    assert!(reads.iter().all(|r| r["path"] == path.as_str()), "{dump}");
    // The permission question's diff starts from the buffer.
    let asked = &d.permissions()[0]["request"]["toolCall"]["content"][0];
    assert_eq!(asked["oldText"], buffer, "{dump}");
    assert_eq!(asked["newText"], "one\nTWO\nthree\n", "{dump}");
    // The write reached the editor, once, whole; the disk is unchanged.
    let writes = logged(&d, "fs_write");
    assert_eq!(writes.len(), 1, "{dump}");
    assert_eq!(writes[0]["path"], path.as_str());
    assert_eq!(writes[0]["content"], "one\nTWO\nthree\n");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "one\ntwo\nthree\n");
    assert!(text.contains("not saved it to disk yet"), "{text}");
    let done = d
        .updates(&id)
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "tool_call_update" && u["status"] == "completed")
        .count();
    assert_eq!(done, 2, "{dump}");
}

/// An editor that saves its writes: the file on disk changes (so the
/// checkpoint sees it), an append extends the buffer's text, and a new
/// file is created.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_write_saved_by_the_editor_reaches_the_disk() {
    let Some(client) = client_or_skip("acp_write_saved_by_the_editor_reaches_the_disk") else {
        return;
    };
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "append", "path": "log.txt", "content": "third\n"}),
    ));
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "write", "path": "sub/new.txt", "content": "fresh\n"}),
    ));
    fake.push(Reply::text("done"));
    let home = Home::new(&fake);
    let log = home.work().join("log.txt");
    std::fs::write(&log, "first\n").unwrap();
    let editor = json!({
        "buffers": {log.to_string_lossy(): "first\nsecond\n"},
        "save": true
    });
    let (d, _) = run(&home, &client, everything(), editor).await;
    let dump = d.dump();
    assert_eq!(prompt_result(&d)["stopReason"], "end_turn", "{dump}");
    assert_eq!(
        std::fs::read_to_string(&log).unwrap(),
        "first\nsecond\nthird\n"
    );
    let fresh = home.work().join("sub/new.txt");
    assert_eq!(std::fs::read_to_string(&fresh).unwrap(), "fresh\n");
    let asked = &d.permissions()[0]["request"]["toolCall"]["content"][0];
    assert_eq!(asked["oldText"], "first\nsecond\n", "{dump}");
    assert_eq!(asked["newText"], "first\nsecond\nthird\n", "{dump}");
    let text = sent(&fake);
    assert!(text.contains("through the editor"), "{text}");
    assert!(!text.contains("not saved"), "{text}");
}

/// An editor that offers fs but fails: a read and a write each end as a
/// tool error naming the file and what the editor said; nothing is
/// written, and the turn goes on to the model's answer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_editor_failing_a_read_or_a_write_is_a_tool_error() {
    let Some(client) = client_or_skip("acp_editor_failing_a_read_or_a_write_is_a_tool_error")
    else {
        return;
    };
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "read", "path": "a.txt"}),
    ));
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "write", "path": "a.txt", "content": "lost?\n"}),
    ));
    fake.push(Reply::text("carried on"));
    let home = Home::new(&fake);
    let file = home.work().join("a.txt");
    std::fs::write(&file, "kept\n").unwrap();
    let editor = json!({"failRead": "buffer is locked", "failWrite": "read-only buffer"});
    let (d, id) = run(&home, &client, everything(), editor).await;
    let dump = d.dump();
    assert_eq!(prompt_result(&d)["stopReason"], "end_turn", "{dump}");
    let text = sent(&fake);
    assert!(text.contains("the editor could not read"), "{text}");
    assert!(text.contains("buffer is locked"), "{text}");
    assert!(text.contains("the editor could not write"), "{text}");
    assert!(text.contains("read-only buffer"), "{text}");
    assert!(text.contains("nothing was written"), "{text}");
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "kept\n");
    let failed = d
        .updates(&id)
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "tool_call_update" && u["status"] == "failed")
        .count();
    assert_eq!(failed, 2, "{dump}");
    assert!(d.text(&id, "agent_message_chunk").contains("carried on"));
    // Stored as the model saw them.
    let rows = home.rows(&id);
    assert!(
        rows.iter()
            .any(|(role, c, _)| role == "tool" && c.contains("buffer is locked")),
        "{rows:?}"
    );
}

/// The neighbours: a file that exists only in the editor is read with the
/// line window navi applies to disk files; an editor that offers writes but
/// not reads gets the write (the diff from the disk); a path outside the
/// allowed roots is refused before the editor is asked.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_editor_fs_windows_partial_offers_and_roots() {
    let Some(client) = client_or_skip("acp_editor_fs_windows_partial_offers_and_roots") else {
        return;
    };
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "read", "path": "draft.md", "offset": 2, "limit": 1}),
    ));
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "write", "path": "/tmp/navi-acp-outside.txt", "content": "x"}),
    ));
    fake.push(Reply::text("read"));
    let home = Home::new(&fake);
    let work = home.work();
    std::fs::write(
        home.path("cfg/config.toml"),
        format!(
            "[security]\nfs_allowed_paths = [{:?}]\n",
            work.to_string_lossy()
        ),
    )
    .unwrap();
    let draft = work.join("draft.md").to_string_lossy().into_owned();
    let editor = json!({"buffers": {draft.clone(): "line-1\nline-2\nline-3\n"}});
    let (d, _) = run(&home, &client, everything(), editor).await;
    let dump = d.dump();
    let text = sent(&fake);
    assert!(text.contains("line-2"), "{text}");
    assert!(!text.contains("line-3"), "{text}");
    assert!(text.contains("showing lines 2-2 of 3"), "{text}");
    assert!(!work.join("draft.md").exists());
    // The write outside the roots never reached the editor.
    assert!(logged(&d, "fs_write").is_empty(), "{dump}");
    assert!(text.contains("outside the allowed roots"), "{text}");
    assert!(!std::path::Path::new("/tmp/navi-acp-outside.txt").exists());

    // Writes offered, reads not: the write goes to the editor, nothing is
    // read through it, and the diff starts from the disk.
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "write", "path": "b.txt", "content": "new\n"}),
    ));
    fake.push(Reply::text("done"));
    let home = Home::new(&fake);
    std::fs::write(home.work().join("b.txt"), "old\n").unwrap();
    let caps = json!({"fs": {"readTextFile": false, "writeTextFile": true}, "terminal": false});
    let (d, _) = run(&home, &client, caps, json!({"save": true})).await;
    let dump = d.dump();
    assert!(logged(&d, "fs_read").is_empty(), "{dump}");
    assert_eq!(logged(&d, "fs_write").len(), 1, "{dump}");
    let asked = &d.permissions()[0]["request"]["toolCall"]["content"][0];
    assert_eq!(asked["oldText"], "old\n", "{dump}");
    assert_eq!(
        std::fs::read_to_string(home.work().join("b.txt")).unwrap(),
        "new\n"
    );
}
