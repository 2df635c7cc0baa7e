//! The protocol end to end: `App::submit` drives a real session (SQLite in a
//! temp dir, the fake LLM server over HTTP), and the stored session replays
//! as the events the live turn emitted.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::support;

use navi::app::submit::Started;
use navi::app::{App, AppOptions, RunHandle, SessionChoice};
use navi::config::{BackendKind, Config, Overrides, Paths};
use navi::protocol::{AgentEvent, CompactMode, Decision, INTERRUPTED, Submission};
use serde_json::json;
use support::{FakeLlm, Reply};

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
    assert!(app.profiles.errors.is_empty(), "{:?}", app.profiles.errors);
    app
}

fn turn(started: Option<Started>) -> RunHandle {
    match started {
        Some(Started::Turn(h)) => h,
        _ => panic!("a user message starts a turn"),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn submissions_start_steer_answer_and_the_session_replays_as_the_same_events() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start().await;
    let app = app(dir.path(), &fake);
    let meta = app
        .open_session(&SessionChoice::New, Some("plain"))
        .unwrap();
    let url = format!("{}/nothing", fake.base_url);
    fake.push(Reply::tool_call("http_request", json!({ "url": url })));
    fake.push(Reply::text("I did not fetch it, as you asked."));

    let mut run = turn(app.submit(&meta.id, Submission::UserMessage("fetch the page".into())));
    assert!(app.runs.is_running(&meta.id));
    let mut live = Vec::new();
    while let Some(ev) = run.events.recv().await {
        if let AgentEvent::ApprovalRequest { id, .. } = &ev {
            // Both go in while the call waits: the steer at the next safe point.
            let none = app.submit(&meta.id, Submission::Steer("do not fetch it".into()));
            assert!(none.is_none());
            app.submit(
                &meta.id,
                Submission::Approval {
                    id: id.clone(),
                    decision: Decision::Deny,
                },
            );
        }
        live.push(ev);
    }
    let outcome = run.task.await.unwrap().unwrap();
    assert_eq!(outcome.text, "I did not fetch it, as you asked.");
    assert!(!app.runs.is_running(&meta.id), "the ended turn is unlisted");

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
    // The steer follows the result it was typed after (joined to it, so the
    // roles still alternate for strict chat templates).
    assert!(
        tool["content"]
            .as_str()
            .unwrap()
            .ends_with("The user adds: do not fetch it"),
        "{tool}"
    );
    // Nothing reached the URL the model wanted.
    assert!(fake.requests().iter().all(|r| r.path != "/nothing"));

    // Replayed from the database: the same tool call, result and answer the
    // live turn showed, plus the messages the user sent.
    let replay = navi::session::replay::load_events(&app.store, &meta.id)
        .unwrap()
        .unwrap();
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

    // `/compact` as a submission: one turn is all recent, so nothing changes
    // and the event says so with equal counts.
    let Some(Started::Compaction(mut c)) =
        app.submit(&meta.id, Submission::Compact(CompactMode::Now))
    else {
        panic!("/compact starts a compaction");
    };
    let mut said = None;
    while let Some(ev) = c.events.recv().await {
        if let AgentEvent::ContextCompressed {
            messages_before,
            messages_after,
            ..
        } = ev
        {
            said = Some((messages_before, messages_after));
        }
    }
    let (before, after) = c.task.await.unwrap().unwrap();
    assert_eq!(said, Some((before, after)));
    assert_eq!(before, after);
    assert_eq!(fake.chat_requests().len(), 2, "no summary was asked for");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stop_submission_stops_the_running_turn_cooperatively() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start().await;
    let app = app(dir.path(), &fake);
    let meta = app
        .open_session(&SessionChoice::New, Some("plain"))
        .unwrap();
    let long = "word ".repeat(400);
    fake.push(Reply::text(long).with_delay(20));
    let mut run = turn(app.submit(&meta.id, Submission::UserMessage("talk".into())));
    let mut stopped = false;
    let mut sent_stop = false;
    while let Some(ev) = run.events.recv().await {
        match ev {
            AgentEvent::StreamDelta { .. } if !sent_stop => {
                sent_stop = true;
                assert!(app.submit(&meta.id, Submission::Stop).is_none());
            }
            AgentEvent::StreamStopped => stopped = true,
            _ => {}
        }
    }
    assert!(stopped, "the turn reports the stop");
    let outcome = run.task.await.unwrap().unwrap();
    assert!(outcome.stopped);
    assert!(!app.runs.is_running(&meta.id));
    // A stop with no turn running is a no-op, not an error.
    assert!(app.submit(&meta.id, Submission::Stop).is_none());
    // What was streamed before the stop is kept and replays as an answer
    // followed by the stop notice.
    let replay = navi::session::replay::load_events(&app.store, &meta.id)
        .unwrap()
        .unwrap();
    let kinds: Vec<&str> = replay.iter().map(AgentEvent::kind).collect();
    assert!(kinds.ends_with(&["agent_message", "notice"]), "{kinds:?}");
    assert!(!replay.iter().any(|e| matches!(
        e,
        AgentEvent::ToolCall { result, .. } if result == INTERRUPTED
    )));
}
