//! Content-block messages through the agent loop and a real SQLite file:
//! a thinking block's signature and a reasoning item's encrypted payload
//! come back unchanged in the next request (a tool loop with thinking is
//! not rejected), also after the session is reloaded from the store.
use crate::common;

use common::*;
use navi::llm::scripted::Scripted;
use navi::llm::{Block, ChatChunk, Role, Thinking, ToolCall, Usage};
use serde_json::json;

fn signed(text: &str, sig: &str) -> Thinking {
    Thinking {
        text: text.into(),
        signature: Some(sig.into()),
        ..Thinking::default()
    }
}

fn done() -> Vec<ChatChunk> {
    vec![
        ChatChunk::Usage(Usage::default()),
        ChatChunk::Done {
            finish_reason: Some("stop".into()),
        },
    ]
}

#[tokio::test]
async fn signed_thinking_and_reasoning_items_go_back_unchanged() {
    let h = harness(json!({}));
    // Call 1: signed thinking, streamed in two pieces, then a tool call.
    let mut first = vec![
        ChatChunk::Thinking("I should ".into()),
        ChatChunk::Thinking("echo.".into()),
        ChatChunk::Reasoning(signed("I should echo.", "SIG-1")),
        ChatChunk::Thinking("redacted".into()),
        ChatChunk::Reasoning(Thinking {
            text: "redacted".into(),
            encrypted: Some("ENC-2".into()),
            id: Some("rs_2".into()),
            ..Thinking::default()
        }),
        ChatChunk::ToolCalls(vec![ToolCall {
            id: "toolu_1".into(),
            name: "echo".into(),
            arguments: json!({"text": "hi"}),
        }]),
    ];
    first.extend(done());
    h.backend.push(Scripted::Chunks(first));
    // Call 2: the answer, its thinking cut short (no finished block).
    let mut second = vec![
        ChatChunk::Thinking("Done".into()),
        ChatChunk::Text("It said hi.".into()),
    ];
    second.extend(done());
    h.backend.push(Scripted::Chunks(second));
    let s = h.store.create("p").unwrap();
    let (out, _) = turn(&h, &s.id, "echo hi").await;
    assert_eq!(out.unwrap().text, "It said hi.");

    let reqs = h.backend.requests();
    assert_eq!(reqs.len(), 2);
    let asst = reqs[1]
        .messages
        .iter()
        .find(|m| m.role == Role::Assistant)
        .unwrap();
    let want = vec![
        signed("I should echo.", "SIG-1"),
        Thinking {
            text: "redacted".into(),
            encrypted: Some("ENC-2".into()),
            id: Some("rs_2".into()),
            ..Thinking::default()
        },
    ];
    assert_eq!(asst.thinking_blocks().cloned().collect::<Vec<_>>(), want);
    assert!(matches!(asst.blocks.last(), Some(Block::ToolCall(c)) if c.id == "toolu_1"));

    // Stored and read back whole, in both buffers.
    let loaded = h.store.load(&s.id).unwrap().unwrap();
    for buf in [&loaded.display, &loaded.context] {
        let stored = buf.iter().find(|m| m.msg.has_tool_calls()).unwrap();
        assert_eq!(&stored.msg, asst);
        let last = buf.last().unwrap();
        assert_eq!(last.msg.text(), "It said hi.");
        assert_eq!(
            last.msg.thinking_blocks().cloned().collect::<Vec<_>>(),
            vec![Thinking::text("Done")]
        );
    }

    // The next turn, from the store: the same blocks go out again.
    h.backend.push_text("ok");
    let (out, _) = turn(&h, &s.id, "again").await;
    out.unwrap();
    let last = h.backend.requests().pop().unwrap();
    let again = last
        .messages
        .iter()
        .find(|m| m.role == Role::Assistant)
        .unwrap();
    assert_eq!(again, asst);
}
