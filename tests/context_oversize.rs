//! Oversized items are made to fit (issue 12 item 3): a 30 KB tool result, a
//! 1 MB tool argument and a 5 MB message on a 2k window leave the next
//! request small and the turn working; the full text is on disk and in the
//! transcript.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::{context_support, support};

use context_support::*;
use navi::config::BackendKind;
use navi::llm::Role;
use serde_json::{Value, json};
use support::Reply;

/// The tool message of a recorded request.
fn tool_message(body: &Value) -> Option<String> {
    body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .and_then(|m| m["content"].as_str().map(String::from))
}

/// The path named in a "[navi: … in PATH — …]" / "stored in PATH]" note.
fn stored_path(text: &str) -> std::path::PathBuf {
    let start = text.find("/").unwrap();
    let rest = &text[start..];
    let end = rest.find([' ', ']']).unwrap_or(rest.len());
    std::path::PathBuf::from(rest[..end].trim_end_matches(['.', ',']))
}

async fn reader(edit: impl FnOnce(&mut navi::config::Config)) -> Ctx {
    let mut ctx = setup_with(BackendKind::Openai, edit, true).await;
    ctx.sid = ctx.store.create("reader").unwrap().id;
    ctx.release();
    ctx
}

#[tokio::test]
async fn a_30_kb_tool_result_is_cut_in_the_context_stored_in_full_and_readable() {
    // Reads are allowed in `allowed` only; the session's files dir is
    // elsewhere (under the data dir).
    let allowed = tempfile::tempdir().unwrap();
    let root = allowed.path().display().to_string();
    let ctx = reader(|c| c.security.fs_allowed_paths = vec![root]).await;
    let big = allowed.path().join("big.txt");
    let text: String = (0..1500)
        .map(|i| format!("row {i:05} of the report\n"))
        .collect();
    assert!(text.len() > 30_000);
    std::fs::write(&big, &text).unwrap();
    ctx.fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "read", "path": big.display().to_string(), "limit": 5000}),
    ));
    ctx.fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "list", "path": ctx._dir.path().join("data/session_files").join(&ctx.sid).display().to_string()}),
    ));
    ctx.fake.push(Reply::text("read it"));
    ctx.fake.push(Reply::text("next turn works"));
    turn(&ctx, "read big.txt").await.0.unwrap();
    let (out, _) = turn(&ctx, "and now?").await;
    assert_eq!(out.unwrap().text, "next turn works");
    let requests = ctx.fake.chat_requests();
    for (n, r) in requests.iter().enumerate() {
        assert!(estimated(r) < WINDOW, "request {n} is over the window");
    }
    let cut = tool_message(&requests[1]).unwrap();
    assert!(cut.len() < 4_000, "{} bytes in the context", cut.len());
    assert!(cut.contains("row 00000"), "head kept");
    assert!(cut.contains("the output of filesystem is"), "{cut}");
    let path = stored_path(&cut[cut.find("The full text is in").unwrap()..]);
    let stored = std::fs::read_to_string(&path).unwrap();
    let s = ctx.store.load(&ctx.sid).unwrap().unwrap();
    let shown = s
        .display
        .iter()
        .find(|m| m.msg.role == Role::Tool)
        .unwrap()
        .msg
        .text()
        .clone();
    assert_eq!(stored, shown, "the file holds what the transcript shows");
    assert!(shown.len() > 20_000);
    assert!(cut.contains(shown.lines().last().unwrap()), "tail kept");
    // Listing the session's files dir works although the roots are restricted.
    let listing = requests[2]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .nth(1)
        .unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(listing.contains("output-filesystem"), "{listing}");
}

#[tokio::test]
async fn a_1_mb_tool_argument_reaches_the_tool_but_later_requests_carry_a_reference() {
    let ctx = reader(|c| c.security.fs_allowed_paths = vec!["*".into()]).await;
    let target = ctx._dir.path().join("out.txt");
    let content = "abcdefgh\n".repeat(120_000);
    ctx.fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "write", "path": target.display().to_string(), "content": content}),
    ));
    ctx.fake.push(Reply::text("written"));
    ctx.fake.push(Reply::text("still fine"));
    let (out, _) = turn(&ctx, "write the file").await;
    out.unwrap();
    turn(&ctx, "ok?").await.0.unwrap();
    assert_eq!(std::fs::read_to_string(&target).unwrap(), content);
    let requests = ctx.fake.chat_requests();
    for (n, r) in requests.iter().enumerate() {
        let size = r.to_string().len();
        assert!(size < 40_000, "request {n} is {size} bytes");
    }
    let args = requests[1]["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["tool_calls"].is_array())
        .unwrap()["tool_calls"][0]["function"]["arguments"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(args.contains("bytes, stored in"), "{args}");
    let v: Value = serde_json::from_str(&args).unwrap();
    assert_eq!(v["path"], json!(target.display().to_string()));
    let path = stored_path(&v["content"].as_str().unwrap()[300..]);
    assert_eq!(std::fs::read_to_string(path).unwrap(), content);
    // The transcript keeps the call as it was made.
    let s = ctx.store.load(&ctx.sid).unwrap().unwrap();
    let shown = s.display.iter().find(|m| m.msg.has_tool_calls()).unwrap();
    assert_eq!(
        shown.msg.tool_calls().next().unwrap().arguments["content"],
        json!(content)
    );
}

#[tokio::test]
async fn a_5_mb_message_is_stored_and_previewed() {
    let ctx = setup(BackendKind::Openai, |_| {}).await;
    let message: String = (0..110_000)
        .map(|i| format!("log line {i:06}: ok status=200 path=/api/v1/items\n"))
        .collect();
    assert!(message.len() > 5_000_000);
    ctx.fake.push(Reply::text("that is a big log"));
    let (out, _) = turn(&ctx, &message).await;
    assert_eq!(out.unwrap().text, "that is a big log");
    let req = ctx.fake.chat_requests().pop().unwrap();
    assert!(estimated(&req) < WINDOW);
    let sent = req["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(sent.starts_with("log line 000000"), "{}", &sent[..80]);
    assert!(sent.contains("log line 109999"));
    assert!(sent.contains("the user's message is"));
    let path = stored_path(&sent[sent.find("The full text is in").unwrap()..]);
    assert_eq!(std::fs::read_to_string(path).unwrap(), message);
    let s = ctx.store.load(&ctx.sid).unwrap().unwrap();
    assert!(s.display.iter().any(|m| m.msg.text() == message));
    assert!(s.context.iter().all(|m| m.msg.text().len() < 10_000));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_5_mb_stdin_message_through_navi_run() {
    let ctx = setup(BackendKind::Openai, |_| {}).await;
    ctx.release();
    ctx.store.delete(&ctx.sid).unwrap();
    let dir = ctx._dir.path().to_path_buf();
    let message: String = (0..100_000)
        .map(|i| format!("stdin line {i:06}\n"))
        .collect();
    ctx.fake.push(Reply::text("GOT IT"));
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_navi"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", &dir)
        .env("NAVI_DATA_DIR", dir.join("data"))
        .env("NAVI_CONFIG_DIR", dir.join("config"))
        .env("OPENAI_BASE_URL", ctx.fake.openai_url())
        .args(["--backend", "openai", "run", "--profile", "tester"])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let m2 = message.clone();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let _ = stdin.write_all(m2.as_bytes());
    });
    let out = tokio::task::block_in_place(|| child.wait_with_output().unwrap());
    writer.join().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("GOT IT"));
    let req = ctx.fake.chat_requests().pop().unwrap();
    assert!(estimated(&req) < WINDOW);
    assert!(req.to_string().contains("stdin line 099999"));
}
