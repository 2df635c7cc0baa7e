//! The tool-calling loop against a scripted backend and a real SQLite file.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::common;

use common::*;
use navi::llm::scripted::{Scripted, ScriptedBackend, text_chunks};
use navi::llm::{ChatChunk, Role};
use navi::protocol::{AgentEvent, EventSink};
use serde_json::json;

#[tokio::test]
async fn plain_answer_is_streamed_and_persisted() {
    let h = harness(json!({}));
    h.backend
        .push_thinking_text("let me think", "Hello there friend");
    let s = h.store.create("p").unwrap();
    let (out, ev) = turn(&h, &s.id, "hi").await;
    let out = out.unwrap();
    assert_eq!(out.text, "Hello there friend");
    assert!(out.completed && !out.stopped);
    let k = kinds(&ev);
    assert_eq!(k.first(), Some(&"stream_start"));
    assert_eq!(k.last(), Some(&"stream_end"));
    let pos = |n: &str| k.iter().position(|x| *x == n).unwrap();
    assert!(
        pos("thinking_delta") < pos("thinking_end") && pos("thinking_end") < pos("stream_delta")
    );
    assert!(
        k.contains(&"turn_thinking") && k.contains(&"model_selected") && k.contains(&"token_usage")
    );
    let loaded = h.store.load(&s.id).unwrap().unwrap();
    let roles: Vec<Role> = loaded.display.iter().map(|m| m.msg.role).collect();
    assert_eq!(roles, vec![Role::User, Role::Assistant]);
    assert_eq!(loaded.display[1].msg.text(), "Hello there friend");
    assert_eq!(
        loaded.display[1].msg.thinking().as_deref(),
        Some("let me think")
    );
    assert_eq!(loaded.meta.title, "hi");
    assert!(loaded.meta.context_token_count > 0);
    // The request: system = persona + separator + profile prompt, then the user message.
    let req = &h.backend.requests()[0];
    assert_eq!(req.messages[0].role, Role::System);
    assert_eq!(
        req.messages[0].text(),
        format!("{PERSONA}\n\n---\n\nPROMPT-p")
    );
    assert_eq!(req.messages[1].text(), "hi");
    assert_eq!(req.temperature, Some(0.7));
}

#[tokio::test]
async fn tool_calls_run_in_order_and_results_are_paired() {
    let h = harness(json!({}));
    h.backend.push_tool_calls(&[
        ("echo", json!({"text": "one"})),
        ("echo", json!({"text": "two"})),
    ]);
    h.backend.push_text("done");
    let s = h.store.create("p").unwrap();
    let (out, ev) = turn(&h, &s.id, "do it").await;
    assert_eq!(out.unwrap().text, "done");
    let tool_events: Vec<String> = ev
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolStarted { tool, .. } => Some(format!("start {tool}")),
            AgentEvent::ToolCall {
                result, success, ..
            } => Some(format!("done {result} {success}")),
            _ => None,
        })
        .collect();
    assert_eq!(
        tool_events,
        vec![
            "start echo",
            "done echo: one true",
            "start echo",
            "done echo: two true"
        ]
    );
    let reqs = h.backend.requests();
    assert_eq!(reqs.len(), 2);
    let names: Vec<&str> = reqs[0].tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, vec!["todo", "scratchpad", "echo", "sleepy"]);
    let second = &reqs[1].messages;
    let call_ids: Vec<String> = second[2].tool_calls().map(|c| c.id.clone()).collect();
    assert_eq!(second[3].role, Role::Tool);
    assert_eq!(second[3].tool_call_id(), Some(call_ids[0].as_str()));
    assert_eq!(second[3].tool_name(), Some("echo"));
    assert_eq!(second[3].text(), "echo: one");
    assert_eq!(second[4].tool_call_id(), Some(call_ids[1].as_str()));
    let stored = h.store.load(&s.id).unwrap().unwrap();
    assert_eq!(
        stored.display.len(),
        5,
        "user, assistant(calls), 2 results, final"
    );
    assert_eq!(stored.display[2].success, Some(true));
}

#[tokio::test]
async fn bad_calls_become_error_results_not_aborts() {
    let h = harness(json!({}));
    h.backend.push(Scripted::Chunks(vec![
        ChatChunk::ToolCalls(vec![
            navi::llm::ToolCall {
                id: "a".into(),
                name: "nope".into(),
                arguments: json!({}),
            },
            navi::llm::ToolCall {
                id: "b".into(),
                name: "echo".into(),
                arguments: json!("{not json"),
            },
            navi::llm::ToolCall {
                id: "c".into(),
                name: "echo".into(),
                arguments: json!({}),
            },
        ]),
        ChatChunk::Done {
            finish_reason: None,
        },
    ]));
    h.backend.push_text("recovered");
    let s = h.store.create("p").unwrap();
    let (out, ev) = turn(&h, &s.id, "x").await;
    assert_eq!(out.unwrap().text, "recovered");
    let results: Vec<(String, bool)> = ev
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCall {
                result, success, ..
            } => Some((result.clone(), *success)),
            _ => None,
        })
        .collect();
    assert_eq!(results.len(), 3);
    assert!(results[0].0.contains("unknown tool 'nope'") && !results[0].1);
    assert!(results[1].0.contains("not valid JSON") && !results[1].1);
    assert!(results[2].0.contains("missing required argument 'text'") && !results[2].1);
    // The model saw all three errors.
    let last = h.backend.requests().pop().unwrap();
    let tool_msgs: Vec<String> = last
        .messages
        .iter()
        .filter(|m| m.role == Role::Tool)
        .map(|m| m.text().into_owned())
        .collect();
    assert_eq!(tool_msgs.len(), 3);
}

#[tokio::test]
async fn iteration_cap_ends_with_a_toolless_summary() {
    let h = harness(json!({"max_iterations": 2}));
    h.backend.push_tool_calls(&[("echo", json!({"text": "1"}))]);
    h.backend.push_tool_calls(&[("echo", json!({"text": "2"}))]);
    h.backend.push_text("Summary: did 1 and 2, 3 is left.");
    let s = h.store.create("p").unwrap();
    let (out, ev) = turn(&h, &s.id, "go").await;
    let out = out.unwrap();
    assert!(!out.completed);
    assert_eq!(out.text, "Summary: did 1 and 2, 3 is left.");
    assert!(
        ev.iter().any(
            |e| matches!(e, AgentEvent::Warning { message } if message.contains("limit of 2"))
        )
    );
    let reqs = h.backend.requests();
    assert_eq!(reqs.len(), 3);
    assert!(reqs[2].tools.is_empty(), "the summary call offers no tools");
    assert!(
        reqs[2]
            .messages
            .last()
            .unwrap()
            .text()
            .contains("Do not call any tools")
    );
    assert_eq!(kinds(&ev).last(), Some(&"stream_end"));
}

#[tokio::test]
async fn stop_during_tool_pairs_every_call_and_saves() {
    let h = harness(json!({}));
    h.backend
        .push_tool_calls(&[("sleepy", json!({})), ("echo", json!({"text": "never"}))]);
    let s = h.store.create("p").unwrap();
    let (sink, mut rx) = EventSink::channel(1000);
    let cancel = tokio_util::sync::CancellationToken::new();
    let agent = h.agent.clone();
    let (open, c2) = (h.open(&s.id), cancel.clone());
    let task = tokio::spawn(async move { agent.run_stream(&open, "work", &sink, &c2).await });
    let mut events = Vec::new();
    while let Some(e) = rx.recv().await {
        let started_sleepy = matches!(&e, AgentEvent::ToolStarted { tool, .. } if tool == "sleepy");
        events.push(e);
        if started_sleepy {
            cancel.cancel();
        }
    }
    let out = task.await.unwrap().unwrap();
    assert!(out.stopped);
    assert_eq!(kinds(&events).last(), Some(&"stream_stopped"));
    let loaded = h.store.load(&s.id).unwrap().unwrap();
    let results: Vec<String> = loaded
        .context
        .iter()
        .filter(|m| m.msg.role == Role::Tool)
        .map(|m| m.msg.text().into_owned())
        .collect();
    assert_eq!(
        results,
        vec![
            "Error: operation cancelled by user",
            "operation cancelled by user"
        ]
    );
    assert_eq!(
        h.backend.requests().len(),
        1,
        "no model call after the stop"
    );
    assert!(
        loaded
            .display
            .last()
            .unwrap()
            .msg
            .text()
            .contains("stopped")
    );
}

#[tokio::test]
async fn stop_mid_stream_keeps_partial_text() {
    let h = harness(json!({}));
    h.backend.push(Scripted::ChunksThenHang(vec![
        ChatChunk::Text("partial ".into()),
        ChatChunk::Text("answer".into()),
    ]));
    let s = h.store.create("p").unwrap();
    let (sink, mut rx) = EventSink::channel(1000);
    let cancel = tokio_util::sync::CancellationToken::new();
    let agent = h.agent.clone();
    let (open, c2) = (h.open(&s.id), cancel.clone());
    let task = tokio::spawn(async move { agent.run_stream(&open, "tell me", &sink, &c2).await });
    let mut deltas = 0;
    while let Some(e) = rx.recv().await {
        if matches!(e, AgentEvent::StreamDelta { .. }) {
            deltas += 1;
            if deltas == 2 {
                cancel.cancel();
            }
        }
    }
    let out = task.await.unwrap().unwrap();
    assert!(out.stopped);
    assert_eq!(out.text, "partial answer");
    let loaded = h.store.load(&s.id).unwrap().unwrap();
    assert_eq!(loaded.context.last().unwrap().msg.text(), "partial answer");
    // The next turn works and sees the partial answer.
    h.backend.push_text("continuing");
    let (out2, _) = turn(&h, &s.id, "go on").await;
    assert_eq!(out2.unwrap().text, "continuing");
    let req = h.backend.requests().pop().unwrap();
    let contents: Vec<String> = req.messages.iter().map(|m| m.text().into_owned()).collect();
    assert!(
        contents.iter().any(|c| c == "partial answer") && contents.iter().any(|c| c == "go on")
    );
}

#[tokio::test]
async fn stop_during_prefill_makes_no_answer() {
    let h = harness(json!({}));
    h.backend.push(Scripted::ChunksThenHang(vec![]));
    let s = h.store.create("p").unwrap();
    let (sink, mut rx) = EventSink::channel(1000);
    let cancel = tokio_util::sync::CancellationToken::new();
    let agent = h.agent.clone();
    let (open, c2) = (h.open(&s.id), cancel.clone());
    let task = tokio::spawn(async move { agent.run_stream(&open, "slow", &sink, &c2).await });
    tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    cancel.cancel();
    let out = tokio::time::timeout(std::time::Duration::from_secs(5), task)
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert!(out.stopped && out.text.is_empty());
    let mut k = Vec::new();
    while let Some(e) = rx.recv().await {
        k.push(e.kind());
    }
    assert_eq!(k.last(), Some(&"stream_stopped"));
    // No answer: the user message, then the note that closes the stopped
    // turn (so the next message stands alone); nothing shown as an answer.
    let loaded = h.store.load(&s.id).unwrap().unwrap();
    assert_eq!(loaded.context.len(), 2, "{:?}", loaded.context);
    assert_eq!(loaded.context[0].msg.text(), "slow");
    assert_eq!(loaded.context[1].msg.role, Role::Assistant);
    assert!(
        loaded.context[1].msg.text().starts_with("(stopped"),
        "{:?}",
        loaded.context
    );
    assert!(
        !loaded
            .display
            .iter()
            .any(|m| m.msg.role == Role::Assistant && m.msg.text().contains("stopped")),
        "the note is for the model, not the transcript"
    );
}

#[tokio::test]
async fn llm_error_is_reported_as_event_and_error() {
    let h = harness(json!({}));
    h.backend
        .push(Scripted::Fail(navi::llm::LlmError::ModelNotFound {
            backend: "ollama".into(),
            model: "m".into(),
            hint: "ollama pull m".into(),
        }));
    let s = h.store.create("p").unwrap();
    let (out, ev) = turn(&h, &s.id, "hi").await;
    let err = out.unwrap_err().to_string();
    assert!(err.contains("ollama pull m"), "{err}");
    assert!(
        ev.iter().any(
            |e| matches!(e, AgentEvent::Error { message } if message.contains("ollama pull m"))
        )
    );
}

#[tokio::test]
async fn image_results_go_to_context_only() {
    struct Img;
    #[async_trait::async_trait]
    impl navi::tools::Tool for Img {
        fn name(&self) -> &str {
            "echo"
        }
        fn description(&self) -> &str {
            "img"
        }
        fn parameters(&self) -> serde_json::Value {
            json!({"type":"object"})
        }
        async fn execute(
            &self,
            _a: &serde_json::Value,
            _c: &navi::tools::ToolContext,
        ) -> navi::tools::ToolResult {
            navi::tools::ToolResult::ok("image/png, 4 bytes").with_image("image/png", "AAAA")
        }
    }
    let h = harness(json!({}));
    h.agent
        .tools
        .write()
        .unwrap()
        .register_builtin(std::sync::Arc::new(Img));
    h.backend.push_tool_calls(&[("echo", json!({}))]);
    h.backend.push_text("I see it");
    let s = h.store.create("p").unwrap();
    let _ = turn(&h, &s.id, "look").await;
    let loaded = h.store.load(&s.id).unwrap().unwrap();
    assert!(
        loaded
            .display
            .iter()
            .all(|m| m.msg.images().next().is_none())
    );
    let with_img: Vec<_> = loaded
        .context
        .iter()
        .filter(|m| m.msg.has_images())
        .collect();
    assert_eq!(with_img.len(), 1);
    assert_eq!(with_img[0].msg.images().next().unwrap().base64, "AAAA");
    let req = h.backend.requests().pop().unwrap();
    assert!(req.messages.iter().any(|m| m.image_count() == 1));
}

#[tokio::test]
async fn model_priority_list_picks_first_available() {
    let profile = profile_json("p", json!({"model": ["big:70b", "test-model"]}));
    let h = harness_with(&[("p", profile)], ScriptedBackend::new());
    h.backend.push(Scripted::Chunks(text_chunks("ok")));
    let s = h.store.create("p").unwrap();
    let (_, ev) = turn(&h, &s.id, "hi").await;
    let reason = ev
        .iter()
        .find_map(|e| match e {
            AgentEvent::ModelSelected { model, reason } => Some((model.clone(), reason.clone())),
            _ => None,
        })
        .unwrap();
    assert_eq!(reason.0, "test-model");
    assert!(
        reason.1.contains("big:70b is not available"),
        "{}",
        reason.1
    );
    assert_eq!(h.backend.requests()[0].model, "test-model");
}

#[tokio::test]
async fn steer_goes_in_after_the_tool_batch_before_the_next_call() {
    let h = harness(json!({}));
    h.backend.push_tool_calls(&[
        ("echo", json!({"text": "one"})),
        ("echo", json!({"text": "two"})),
    ]);
    h.backend.push_text("steered answer");
    let s = h.store.create("p").unwrap();
    let open = h.open(&s.id);
    // Sent while the turn runs; the session's steers are only read at the
    // safe point.
    open.push_steer("use the second file instead");
    let (out, ev) = turn_in(&h, &open, "do it").await;
    assert_eq!(out.unwrap().text, "steered answer");
    let reqs = h.backend.requests();
    assert_eq!(reqs.len(), 2);
    assert!(
        reqs[0]
            .messages
            .iter()
            .all(|m| !m.text().contains("second file")),
        "the steer must wait for the safe point"
    );
    // The second call: both tool results, a short assistant note that closes
    // the batch, then the steer as a user message of its own.
    let roles: Vec<(Role, String)> = reqs[1]
        .messages
        .iter()
        .map(|m| (m.role, m.text().into_owned()))
        .collect();
    let n = roles.len();
    assert_eq!(
        roles[n - 1],
        (Role::User, "use the second file instead".into())
    );
    assert_eq!(roles[n - 2].0, Role::Assistant);
    assert_eq!(roles[n - 3].0, Role::Tool);
    assert_eq!(roles[n - 4].0, Role::Tool);
    let k = kinds(&ev);
    let steer = k.iter().position(|x| *x == "user_steer").unwrap();
    let last_tool = k.iter().rposition(|x| *x == "tool_call").unwrap();
    assert!(last_tool < steer, "{k:?}");
    assert!(open.take_steers().is_empty(), "taken exactly once");
    // Persisted where it went in.
    let loaded = h.store.load(&s.id).unwrap().unwrap();
    let shown: Vec<(Role, String)> = loaded
        .display
        .iter()
        .map(|m| (m.msg.role, m.msg.text().into_owned()))
        .collect();
    let at = shown
        .iter()
        .position(|(_, c)| c == "use the second file instead")
        .unwrap();
    assert_eq!(shown[at - 1].0, Role::Tool);
    assert_eq!(shown[at + 1], (Role::Assistant, "steered answer".into()));
}

#[tokio::test]
async fn a_steer_without_a_safe_point_stays_in_the_inbox() {
    let h = harness(json!({}));
    h.backend.push_text("plain answer");
    let s = h.store.create("p").unwrap();
    let open = h.open(&s.id);
    open.push_steer("too late");
    let (out, ev) = turn_in(&h, &open, "hi").await;
    assert_eq!(out.unwrap().text, "plain answer");
    assert!(!kinds(&ev).contains(&"user_steer"));
    assert_eq!(open.take_steers(), vec!["too late"]);
}
