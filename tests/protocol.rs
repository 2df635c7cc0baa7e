//! The protocol end to end: ops on a session handle drive a real session
//! (SQLite in a temp dir, the fake LLM server over HTTP), and the stored
//! session replays as the events the live turn emitted.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::support;

use navi::app::{App, AppOptions, OpenOptions, SessionChoice, SessionHandle};
use navi::config::{BackendKind, Config, Overrides, Paths};
use navi::protocol::{
    AgentEvent, CompactMode, Decision, INTERRUPTED, Op, OpError, SessionEvent, TurnEnd,
};
use serde_json::json;
use support::{FakeLlm, Reply};
use tokio::sync::mpsc::Receiver;

pub(crate) fn app(dir: &std::path::Path, fake: &FakeLlm) -> App {
    let profiles = dir.join("cfg/profiles/plain");
    std::fs::create_dir_all(&profiles).unwrap();
    let profile = json!({
        "id": "plain", "name": "Plain", "description": "test profile",
        "model": ["test-model"], "enabled_tools": ["http_request"], "llm_backend": "openai",
        "planning_enabled": false, "planning_phase1_enabled": false,
        "planning_phase3_enabled": false, "iteration_budget_enabled": false,
        "goal_anchoring_enabled": false, "anti_stall_enabled": false,
        "think_enabled": false
    });
    std::fs::write(profiles.join("config.json"), profile.to_string()).unwrap();
    std::fs::write(profiles.join("system_prompt.txt"), "Answer briefly.").unwrap();
    let mut c = Config::default();
    c.llm.backend = BackendKind::Openai;
    c.llm.openai_base_url = fake.openai_url();
    let paths = Paths {
        config_file: None,
        config_dir: dir.join("cfg"),
        data_dir: dir.join("data"),
        db_path: dir.join("data/navi.db"),
        log_dir: dir.join("data/logs"),
    };
    let opts = AppOptions {
        interactive: true,
        ..AppOptions::default()
    };
    let app = App::build(c, paths, Overrides::default(), opts).unwrap();
    assert!(
        app.profile_errors().is_empty(),
        "{:?}",
        app.profile_errors()
    );
    app
}

/// A new session of profile `plain`, stored at once, and its events.
fn open(app: &App) -> (SessionHandle, Receiver<SessionEvent>) {
    let opts = OpenOptions {
        profile: Some("plain".into()),
        ..OpenOptions::default()
    };
    let mut h = app.open_handle(&SessionChoice::New, opts).unwrap();
    let rx = h.take_events().unwrap();
    (h, rx)
}

fn message(text: &str) -> Op {
    Op::UserMessage {
        text: text.into(),
        attachments: vec![],
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn submissions_start_steer_answer_and_the_session_replays_as_the_same_events() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start().await;
    let app = app(dir.path(), &fake);
    let (h, mut events) = open(&app);
    let url = format!("{}/nothing", fake.base_url);
    fake.push(Reply::tool_call("http_request", json!({ "url": url })));
    fake.push(Reply::text("I did not fetch it, as you asked."));

    h.submit(message("fetch the page")).unwrap();
    assert!(h.is_running());
    let mut live = Vec::new();
    let end = loop {
        match events.recv().await.unwrap() {
            SessionEvent::Agent { event } => {
                if let AgentEvent::ApprovalRequest { id, .. } = &event {
                    // Both go in while the call waits: the steer at the next safe point.
                    h.submit(Op::Steer {
                        text: "do not fetch it".into(),
                    })
                    .unwrap();
                    h.submit(Op::Approval {
                        id: id.clone(),
                        decision: Decision::Deny,
                    })
                    .unwrap();
                }
                live.push(event);
            }
            SessionEvent::TurnEnded { end, steers } => {
                assert!(steers.is_empty(), "the steer went in: {steers:?}");
                break end;
            }
        }
    };
    assert_eq!(end, TurnEnd::Done { completed: true });
    assert!(!h.is_running(), "the ended turn leaves the session idle");
    assert!(
        live.iter().any(|e| matches!(
            e,
            AgentEvent::StreamEnd { content, .. } if content == "I did not fetch it, as you asked."
        )),
        "{live:?}"
    );

    // The server saw the denial as the tool result and the steer after it.
    let chats = fake.chat_requests();
    assert_eq!(chats.len(), 2, "{chats:#?}");
    let second = &chats[1]["messages"];
    let tool = second
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert!(
        tool["content"].as_str().unwrap().contains("denied"),
        "{tool}"
    );
    // The steer is the user's own message after the result (a short
    // assistant note closes the batch, so the roles still alternate).
    let msgs = second.as_array().unwrap();
    let last = &msgs[msgs.len() - 1];
    assert_eq!(last["role"], "user", "{last}");
    assert_eq!(last["content"], "do not fetch it", "{last}");
    assert_eq!(msgs[msgs.len() - 2]["role"], "assistant");
    assert!(!tool["content"].as_str().unwrap().contains("The user adds"));
    // Nothing reached the URL the model wanted.
    assert!(fake.requests().iter().all(|r| r.path != "/nothing"));

    // Replayed from the database: the same tool call, result and answer the
    // live turn showed, plus the messages the user sent.
    let replay = app.history(&h.id()).unwrap();
    let kinds: Vec<&str> = replay.iter().map(AgentEvent::kind).collect();
    assert_eq!(kinds.first(), Some(&"user_message"), "{kinds:?}");
    let live_call = live
        .iter()
        .find(|e| matches!(e, AgentEvent::ToolCall { .. }))
        .unwrap();
    let replayed_call = replay
        .iter()
        .find(|e| matches!(e, AgentEvent::ToolCall { .. }))
        .unwrap();
    match (live_call, replayed_call) {
        (
            AgentEvent::ToolCall {
                tool: t1,
                args: a1,
                result: r1,
                success: s1,
                ..
            },
            AgentEvent::ToolCall {
                tool: t2,
                args: a2,
                result: r2,
                success: s2,
                ..
            },
        ) => {
            assert_eq!((t1, a1, s1), (t2, a2, s2));
            assert!(r2.starts_with(r1.lines().next().unwrap()), "{r1} / {r2}");
        }
        _ => unreachable!(),
    }
    assert!(
        replay.iter().any(
            |e| matches!(e, AgentEvent::UserMessage { message, .. } if message == "do not fetch it")
        ),
        "{kinds:?}"
    );
    assert_eq!(
        navi::protocol::last_answer(&replay),
        "I did not fetch it, as you asked."
    );

    // `/compact` as an op: one turn is all recent, so nothing changes and
    // the event says so with equal counts.
    h.submit(Op::Compact {
        mode: CompactMode::Now,
    })
    .unwrap();
    let mut said = None;
    let end = loop {
        match events.recv().await.unwrap() {
            SessionEvent::Agent {
                event:
                    AgentEvent::ContextCompressed {
                        messages_before,
                        messages_after,
                        ..
                    },
            } => said = Some((messages_before, messages_after)),
            SessionEvent::Agent { .. } => {}
            SessionEvent::TurnEnded { end, .. } => break end,
        }
    };
    assert_eq!(end, TurnEnd::Done { completed: true });
    let (before, after) = said.unwrap();
    assert_eq!(before, after);
    assert_eq!(fake.chat_requests().len(), 2, "no summary was asked for");
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_op_stops_the_running_turn_cooperatively() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start().await;
    let app = app(dir.path(), &fake);
    let (h, mut events) = open(&app);
    let long = "word ".repeat(400);
    fake.push(Reply::text(long).with_delay(20));
    h.submit(message("talk")).unwrap();
    let mut stopped = false;
    let mut sent_stop = false;
    let end = loop {
        match events.recv().await.unwrap() {
            SessionEvent::Agent {
                event: AgentEvent::StreamDelta { .. },
            } if !sent_stop => {
                sent_stop = true;
                h.submit(Op::Stop).unwrap();
            }
            SessionEvent::Agent {
                event: AgentEvent::StreamStopped,
            } => stopped = true,
            SessionEvent::Agent { .. } => {}
            SessionEvent::TurnEnded { end, .. } => break end,
        }
    };
    assert!(stopped, "the turn reports the stop");
    assert_eq!(end, TurnEnd::Stopped);
    assert!(!h.is_running());
    // A stop with no turn running says so.
    assert_eq!(h.submit(Op::Stop), Err(OpError::NotRunning));
    // What was streamed before the stop is kept and replays as an answer
    // followed by the stop notice.
    let replay = app.history(&h.id()).unwrap();
    let kinds: Vec<&str> = replay.iter().map(AgentEvent::kind).collect();
    assert!(kinds.ends_with(&["agent_message", "notice"]), "{kinds:?}");
    assert!(!replay.iter().any(|e| matches!(
        e,
        AgentEvent::ToolCall { result, .. } if result == INTERRUPTED
    )));
    h.close().await;
}
