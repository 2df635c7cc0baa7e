//! `navi acp` and file edits, driven by the TypeScript ACP client SDK: what
//! the editor is shown of an edit (a diff against the file's old text, with
//! absolute paths) when asked for permission and when the call completes.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::acp_support::{Home, client_or_skip};
use crate::support::{FakeLlm, Reply};
use serde_json::json;

/// An edit of an existing file reaches the client as a diff against the
/// file as it was: one changed line, not the whole file as new.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_edit_of_an_existing_file_carries_its_old_text() {
    let Some(client) = client_or_skip("acp_edit_of_an_existing_file_carries_its_old_text") else {
        return;
    };
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "write", "path": "./a.txt", "content": "one\nTWO\nthree\n"}),
    ));
    fake.push(Reply::text("changed"));
    let home = Home::new(&fake);
    std::fs::write(home.work().join("a.txt"), "one\ntwo\nthree\n").unwrap();
    let d = home
        .drive(
            &client,
            json!([
                {"op": "initialize"},
                {"op": "new", "as": "a"},
                {"op": "prompt", "session": "a", "text": "edit"},
                {"op": "end"}
            ]),
            "allow_once",
        )
        .await;
    let dump = d.dump();
    let id = d.id("a");
    let abs = home.work().join("a.txt").to_string_lossy().into_owned();
    let perms = d.permissions();
    let asked = &perms[0]["request"]["toolCall"];
    assert_eq!(
        asked["content"][0]["oldText"], "one\ntwo\nthree\n",
        "{dump}"
    );
    assert_eq!(asked["content"][0]["path"], abs.as_str(), "{dump}");
    let ups = d.updates(&id);
    let done = ups
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call_update" && u["status"] == "completed")
        .unwrap_or_else(|| panic!("{dump}"));
    let diff = &done["content"][0];
    assert_eq!(diff["type"], "diff", "{dump}");
    assert_eq!(diff["path"], abs.as_str());
    assert_eq!(diff["oldText"], "one\ntwo\nthree\n");
    assert_eq!(diff["newText"], "one\nTWO\nthree\n");
    assert_eq!(
        std::fs::read_to_string(home.work().join("a.txt")).unwrap(),
        "one\nTWO\nthree\n"
    );
}
