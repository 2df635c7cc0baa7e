//! Conversation integrity, case by case (issue 31): each named seam between
//! features, driven through the session handle against the fake LLM server
//! and checked on the requests the server received.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::support::checker;
use crate::support::{FakeLlm, Fault, Reply};
use navi::app::{App, OpenOptions, Reply as OpReply, SessionChoice, SessionHandle};
use navi::protocol::{
    AgentEvent, CompactMode, Decision, InputAttachment, Op, SessionEvent, TurnEnd,
};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::sync::mpsc::Receiver;

fn planner_profile(dir: &std::path::Path) {
    let d = dir.join("cfg/profiles/planner");
    std::fs::create_dir_all(&d).unwrap();
    let p = json!({
        "id": "planner", "name": "planner", "description": "plans every turn",
        "model": ["test-model"], "enabled_tools": ["todo", "http_request"],
        "llm_backend": "openai", "planning_enabled": true,
        "planning_phase1_enabled": true, "planning_phase3_enabled": true,
        "planning_phase2_enabled": false, "planning_mandatory": true,
        "iteration_budget_enabled": false, "goal_anchoring_enabled": false,
        "anti_stall_enabled": false, "think_enabled": false
    });
    std::fs::write(d.join("config.json"), p.to_string()).unwrap();
    std::fs::write(d.join("system_prompt.txt"), "Plan, then answer.").unwrap();
}

fn setup(dir: &std::path::Path, fake: &FakeLlm) -> App {
    planner_profile(dir);
    crate::conversation_gen::app(dir, fake)
}

fn open(app: &App, profile: &str) -> (SessionHandle, Receiver<SessionEvent>) {
    let opts = OpenOptions {
        profile: Some(profile.into()),
        ..OpenOptions::default()
    };
    let mut h = app.open_handle(&SessionChoice::New, opts).unwrap();
    let rx = h.take_events().unwrap();
    (h, rx)
}

fn msg(text: &str) -> Op {
    Op::UserMessage {
        text: text.into(),
        attachments: vec![],
    }
}

async fn next(rx: &mut Receiver<SessionEvent>) -> SessionEvent {
    tokio::time::timeout(Duration::from_secs(20), rx.recv())
        .await
        .expect("an event in time")
        .expect("the stream stays open")
}

async fn until_end(rx: &mut Receiver<SessionEvent>) -> TurnEnd {
    loop {
        if let SessionEvent::TurnEnded { end, .. } = next(rx).await {
            return end;
        }
    }
}

async fn approval_id(rx: &mut Receiver<SessionEvent>) -> String {
    loop {
        match next(rx).await {
            SessionEvent::Agent {
                event: AgentEvent::ApprovalRequest { id, .. },
            } => return id,
            SessionEvent::TurnEnded { end, .. } => panic!("ended before the question: {end:?}"),
            _ => {}
        }
    }
}

fn last_two(body: &Value) -> (Value, Value) {
    let m = body["messages"].as_array().unwrap();
    (m[m.len() - 2].clone(), m[m.len() - 1].clone())
}

/// A planned turn's three replies: analysis, plan, answer.
fn push_planned(fake: &FakeLlm, answer: &str) {
    fake.push(Reply::text("Task: do it\nSubtasks: one\nREFLECT: no"));
    fake.push(Reply::text("Milestones: done\n1. Do the thing — SELF"));
    fake.push(Reply::text(answer));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_a_stop_during_a_tool_the_next_message_is_the_users_own() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start().await;
    let app = setup(dir.path(), &fake);
    let (h, mut rx) = open(&app, "plain");
    let url = format!("{}/nothing", fake.base_url);
    fake.push(Reply::tool_call("http_request", json!({"url": url})));
    h.submit(msg("fetch the page")).unwrap();
    approval_id(&mut rx).await;
    h.submit(Op::Stop).unwrap();
    assert_eq!(until_end(&mut rx).await, TurnEnd::Stopped);
    fake.push(Reply::text("Hello!"));
    h.submit(msg("hello there")).unwrap();
    assert_eq!(until_end(&mut rx).await, TurnEnd::Done { completed: true });
    let reqs = fake.chat_requests();
    checker::all_shaped(&reqs).unwrap();
    let (before, last) = last_two(reqs.last().unwrap());
    assert_eq!(last["role"], "user");
    assert_eq!(last["content"], "hello there");
    assert_eq!(before["role"], "assistant", "the stopped turn is closed");
    assert!(!reqs.last().unwrap().to_string().contains("The user adds"));
    checker::extends(&reqs[0], &reqs[1]).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_turn_is_never_glued_to_the_next_message() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start().await;
    let app = setup(dir.path(), &fake);
    let (h, mut rx) = open(&app, "plain");
    fake.push(Reply::text("one"));
    h.submit(msg("first")).unwrap();
    until_end(&mut rx).await;
    fake.push(Reply::fault(Fault::Status(400, "scripted failure".into())));
    h.submit(msg("second, unanswered")).unwrap();
    assert!(matches!(until_end(&mut rx).await, TurnEnd::Failed { .. }));
    fake.push(Reply::text("three"));
    h.submit(msg("third")).unwrap();
    assert_eq!(until_end(&mut rx).await, TurnEnd::Done { completed: true });
    let reqs = fake.chat_requests();
    checker::all_shaped(&reqs).unwrap();
    let last = reqs.last().unwrap()["messages"].as_array().unwrap().clone();
    let users: Vec<&str> = last
        .iter()
        .filter(|m| m["role"] == "user")
        .map(|m| m["content"].as_str().unwrap())
        .collect();
    assert_eq!(users, ["first", "second, unanswered", "third"]);
    let note = &last[last.len() - 2];
    assert_eq!(note["role"], "assistant");
    assert!(
        note["content"].as_str().unwrap().contains("failed"),
        "{note}"
    );
    // The failed request and the next share their prefix (prompt cache).
    checker::extends(&reqs[1], &reqs[2]).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewind_and_pins_work_on_planned_turns() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start().await;
    let app = setup(dir.path(), &fake);
    let (h, mut rx) = open(&app, "planner");
    push_planned(&fake, "first answer");
    h.submit(msg("build the first part of the report")).unwrap();
    assert_eq!(until_end(&mut rx).await, TurnEnd::Done { completed: true });
    assert_eq!(fake.chat_requests().len(), 3, "a planned turn");
    // A tool turn, planned too.
    fake.push(Reply::text("Task: list\nSubtasks: one\nREFLECT: no"));
    fake.push(Reply::text("Milestones: done\n1. Add it — TOOL: todo"));
    fake.push(Reply::tool_call(
        "todo",
        json!({"action": "add", "items": ["x"]}),
    ));
    fake.push(Reply::text("added"));
    h.submit(msg("add the second part to the list")).unwrap();
    assert_eq!(until_end(&mut rx).await, TurnEnd::Done { completed: true });
    // The pin holds through /compact.
    h.submit(Op::Pin {
        index: 1,
        pinned: true,
    })
    .unwrap();
    fake.push(Reply::text("SUMMARY of the work"));
    h.submit(Op::Compact {
        mode: CompactMode::Now,
    })
    .unwrap();
    let end = until_end(&mut rx).await;
    push_planned(&fake, "third answer");
    h.submit(msg("now write the third part")).unwrap();
    assert_eq!(until_end(&mut rx).await, TurnEnd::Done { completed: true });
    let reqs = fake.chat_requests();
    checker::all_shaped(&reqs).unwrap();
    let last = reqs.last().unwrap().to_string();
    assert!(
        last.contains("build the first part of the report"),
        "the pinned message is kept ({end:?}): {last}"
    );
    // /rewind 3, a planned turn after the compaction: no "summarised by a
    // compaction" (the plan added to its context copy does not hide it).
    let r = h.submit(Op::Rewind {
        message: 3,
        files: true,
        force: false,
    });
    assert!(matches!(r, Ok(OpReply::Rewound { .. })), "{r:?}");
    push_planned(&fake, "redone");
    h.submit(msg("write the third part again")).unwrap();
    assert_eq!(until_end(&mut rx).await, TurnEnd::Done { completed: true });
    let reqs = fake.chat_requests();
    let last = reqs.last().unwrap().to_string();
    assert!(!last.contains("now write the third part"), "{last}");
    assert!(last.contains("write the third part again"));
    checker::all_shaped(&reqs).unwrap();
    // Edit-and-resend on the first, planned message: a rewind to 1.
    let r = h.submit(Op::Rewind {
        message: 1,
        files: false,
        force: false,
    });
    assert!(matches!(r, Ok(OpReply::Rewound { .. })), "{r:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rewind_with_files_never_restores_files_alone() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start().await;
    let app = setup(dir.path(), &fake);
    let (h, mut rx) = open(&app, "plain");
    for t in ["one", "two"] {
        fake.push(Reply::text(format!("answer {t}")));
        h.submit(msg(t)).unwrap();
        until_end(&mut rx).await;
    }
    // Message 3 does not exist: refused before anything is restored.
    let r = h.submit(Op::Rewind {
        message: 3,
        files: true,
        force: false,
    });
    assert!(r.is_err());
    let r = h.submit(Op::Rewind {
        message: 2,
        files: true,
        force: false,
    });
    assert!(matches!(r, Ok(OpReply::Rewound { .. })), "{r:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn planning_decides_on_what_the_user_typed() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start().await;
    let app = setup(dir.path(), &fake);
    // Not mandatory: the gate decides (a short request is not planned).
    let cfg = dir.path().join("cfg/profiles/planner/config.json");
    let mut p: Value = serde_json::from_str(&std::fs::read_to_string(&cfg).unwrap()).unwrap();
    p["planning_mandatory"] = json!(false);
    std::fs::write(&cfg, p.to_string()).unwrap();
    let app2 = crate::conversation_gen::app(dir.path(), &fake);
    drop(app);
    let (h, mut rx) = open(&app2, "planner");
    fake.push(Reply::text("A summary."));
    h.submit(Op::UserMessage {
        text: "summarise".into(),
        attachments: vec![InputAttachment::Text {
            name: "README.md".into(),
            text: "A long line of the readme, with many words in it.\n".repeat(200),
        }],
    })
    .unwrap();
    assert_eq!(until_end(&mut rx).await, TurnEnd::Done { completed: true });
    let reqs = fake.chat_requests();
    assert_eq!(
        reqs.len(),
        1,
        "no planner call for a short request: {reqs:#?}"
    );
    assert!(reqs[0].to_string().contains("A long line of the readme"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_template_without_tools_gets_tool_turns_as_text() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start().await;
    fake.set_strict_template(true);
    fake.set_props(Some(json!({
        "default_generation_settings": {"n_ctx": 8192}, "total_slots": 1,
        "chat_template_caps": {"supports_tools": false, "supports_tool_calls": false}
    })));
    let app = setup(dir.path(), &fake);
    let (h, mut rx) = open(&app, "plain");
    fake.push(Reply::tool_call(
        "todo",
        json!({"action": "add", "items": ["x"]}),
    ));
    fake.push(Reply::text("added"));
    h.submit(msg("add x to the list")).unwrap();
    assert_eq!(until_end(&mut rx).await, TurnEnd::Done { completed: true });
    // A stop at the approval question, a steer, then a follow-up.
    let url = format!("{}/nothing", fake.base_url);
    fake.push(Reply::tool_call("http_request", json!({"url": url})));
    h.submit(msg("fetch it")).unwrap();
    let id = approval_id(&mut rx).await;
    h.submit(Op::Steer {
        text: "and be quick".into(),
    })
    .unwrap();
    fake.push(Reply::text("fetched"));
    h.submit(Op::Approval {
        id,
        decision: Decision::Deny,
    })
    .unwrap();
    assert_eq!(until_end(&mut rx).await, TurnEnd::Done { completed: true });
    fake.push(Reply::text("fine"));
    h.submit(msg("thanks")).unwrap();
    assert_eq!(until_end(&mut rx).await, TurnEnd::Done { completed: true });
    let reqs = fake.chat_requests();
    for r in &reqs {
        assert_eq!(crate::support::fake_llm::strict::refusal(r), None, "{r:#}");
    }
    let last = reqs.last().unwrap().to_string();
    assert!(last.contains("[result of todo]"), "{last}");
    assert!(last.contains("and be quick"));
}
