//! Draining a backend stream in tests, with a deadline so a hung stream fails
//! the test instead of hanging it.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use super::fake_llm::{FakeLlm, Fault, Reply};
use navi::llm::{ChatChunk, ChatMessage, ChatRequest, LlmBackend, LlmError};
use std::time::Duration;

pub const LIMIT: Duration = Duration::from_secs(15);

/// The request most backend tests send.
pub fn req() -> ChatRequest {
    ChatRequest::new("test-model", vec![ChatMessage::user("hi")])
}

/// All chunks until the end, and the error that ended the stream, if any.
pub async fn run(b: &dyn LlmBackend, req: &ChatRequest) -> (Vec<ChatChunk>, Option<LlmError>) {
    tokio::time::timeout(LIMIT, async {
        let mut stream = match b.stream_chat(req).await {
            Ok(s) => s,
            Err(e) => return (Vec::new(), Some(e)),
        };
        let mut chunks = Vec::new();
        while let Some(item) = futures_util::StreamExt::next(&mut stream).await {
            match item {
                Ok(c) => chunks.push(c),
                Err(e) => return (chunks, Some(e)),
            }
        }
        (chunks, None)
    })
    .await
    .expect("the stream did not end in time")
}

/// Scripts fault `f`, runs [`req`] through `b`, and checks the error is one line.
pub async fn fault_with(
    b: &dyn LlmBackend,
    fake: &FakeLlm,
    f: Fault,
) -> (Vec<ChatChunk>, LlmError) {
    fake.push(Reply::fault(f.clone()));
    let (chunks, err) = run(b, &req()).await;
    let err = err.expect("expected an error");
    let msg = err.to_string();
    eprintln!("{f:?} -> {msg}");
    assert!(!msg.contains('\n'), "one line: {msg}");
    (chunks, err)
}
