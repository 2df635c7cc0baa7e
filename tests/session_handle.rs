//! The session handle end to end: ops in, one event stream out, against the
//! fake LLM server over HTTP and a real SQLite file. Two sessions in one
//! process, each with its own model and profile; a message while a turn
//! runs is refused; a stop ends the turn with everything saved; closing
//! releases the lock; a new session closed with nothing sent leaves no row.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::support::{FakeLlm, Reply};
use navi::app::{App, OpenOptions, SessionChoice, SessionHandle};
use navi::protocol::{AgentEvent, Decision, Op, OpError, SessionEvent, TurnEnd};
use serde_json::json;
use tokio::sync::mpsc::Receiver;

fn msg(text: &str) -> Op {
    Op::UserMessage {
        text: text.into(),
        attachments: vec![],
    }
}

/// Events until the turn ends, and how it ended.
async fn until_end(rx: &mut Receiver<SessionEvent>) -> (Vec<AgentEvent>, TurnEnd) {
    let mut seen = Vec::new();
    loop {
        let ev = tokio::time::timeout(std::time::Duration::from_secs(20), rx.recv())
            .await
            .expect("the turn ends in time")
            .expect("the stream stays open while the handle lives");
        match ev {
            SessionEvent::Agent { event } => seen.push(event),
            SessionEvent::TurnEnded { end, .. } => return (seen, end),
        }
    }
}

fn open(app: &App, opts: OpenOptions) -> (SessionHandle, Receiver<SessionEvent>) {
    let mut h = app.open_handle(&SessionChoice::New, opts).unwrap();
    let rx = h.take_events().unwrap();
    assert!(h.take_events().is_none(), "the stream is taken once");
    (h, rx)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_sessions_in_one_process_keep_their_own_model() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start().await;
    let app = crate::protocol::app(dir.path(), &fake);
    let (a, mut ra) = open(
        &app,
        OpenOptions {
            model: Some("model-a".into()),
            ..Default::default()
        },
    );
    let (b, mut rb) = open(
        &app,
        OpenOptions {
            model: Some("model-b".into()),
            ..Default::default()
        },
    );
    assert_ne!(a.id(), b.id());
    fake.push(Reply::text("Answer one.").with_delay(300));
    fake.push(Reply::text("Answer two.").with_delay(300));
    a.submit(msg("first question")).unwrap();
    b.submit(msg("second question")).unwrap();
    let ((_, ea), (_, eb)) = tokio::join!(until_end(&mut ra), until_end(&mut rb));
    assert_eq!(ea, TurnEnd::Done { completed: true });
    assert_eq!(eb, TurnEnd::Done { completed: true });
    let chats = fake.chat_requests();
    assert_eq!(chats.len(), 2, "{chats:#?}");
    for c in &chats {
        let text = c["messages"].to_string();
        let want = if text.contains("first question") {
            "model-a"
        } else {
            "model-b"
        };
        assert_eq!(c["model"], want, "{c}");
    }
    // Switching one session's model leaves the other's alone.
    a.submit(Op::SwitchModel {
        model: Some("model-c".into()),
    })
    .unwrap();
    fake.push(Reply::text("Three."));
    fake.push(Reply::text("Four."));
    a.submit(msg("third")).unwrap();
    until_end(&mut ra).await;
    b.submit(msg("fourth")).unwrap();
    until_end(&mut rb).await;
    let chats = fake.chat_requests();
    assert_eq!(chats[2]["model"], "model-c");
    assert_eq!(chats[3]["model"], "model-b");
    // Both are stored rows now, each with its own messages.
    let rows = app.sessions().unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(rows.iter().all(|r| r.message_count >= 4), "{rows:?}");
    a.close().await;
    b.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_busy_session_refuses_a_message_and_a_stop_saves_the_turn() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start().await;
    let app = crate::protocol::app(dir.path(), &fake);
    let (h, mut rx) = open(&app, OpenOptions::default());
    assert_eq!(h.submit(Op::Stop), Err(OpError::NotRunning));
    let long: String = (0..200).map(|i| format!("word{i} ")).collect();
    fake.push(Reply::text(long).with_delay(40));
    h.submit(msg("talk for a while")).unwrap();
    assert!(h.is_running());
    assert_eq!(h.submit(msg("another")), Err(OpError::Busy));
    assert_eq!(
        h.submit(Op::SwitchProfile {
            profile: "plain".into()
        }),
        Err(OpError::Busy)
    );
    // Wait for some answer text, then stop.
    loop {
        match rx.recv().await.unwrap() {
            SessionEvent::Agent {
                event: AgentEvent::StreamDelta { .. },
            } => break,
            SessionEvent::TurnEnded { end, .. } => panic!("ended early: {end:?}"),
            _ => {}
        }
    }
    h.submit(Op::Stop).unwrap();
    let (_, end) = until_end(&mut rx).await;
    assert_eq!(end, TurnEnd::Stopped);
    assert!(!h.is_running());
    // Stored: the user's message and the partial answer.
    let history = h.history().unwrap();
    assert!(
        matches!(history.first(), Some(AgentEvent::UserMessage { message, .. }) if message == "talk for a while"),
        "{history:?}"
    );
    assert!(
        history
            .iter()
            .any(|e| matches!(e, AgentEvent::AgentMessage { content, .. } if content.starts_with("word0"))),
        "{history:?}"
    );
    // Only one request reached the server: the refused message never ran.
    assert_eq!(fake.chat_requests().len(), 1);
    let id = h.id();
    h.close().await;
    // Closed: another navi could take the lock now (this process too).
    let again = app
        .open_handle(&SessionChoice::Id(id.clone()), OpenOptions::default())
        .unwrap();
    assert_eq!(again.id(), id);
    again.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approvals_pins_renames_and_profiles_go_through_ops() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start().await;
    let app = crate::protocol::app(dir.path(), &fake);
    let (h, mut rx) = open(
        &app,
        OpenOptions {
            pending: true,
            ..Default::default()
        },
    );
    // Pending: nothing stored until the first message.
    assert!(app.sessions().unwrap().is_empty());
    let url = format!("{}/nothing", fake.base_url);
    fake.push(Reply::tool_call("http_request", json!({ "url": url })));
    fake.push(Reply::text("Not fetched."));
    h.submit(msg("fetch it")).unwrap();
    let mut asked = false;
    let end = loop {
        match rx.recv().await.unwrap() {
            SessionEvent::Agent {
                event: AgentEvent::ApprovalRequest { id, .. },
            } => {
                asked = true;
                assert!(matches!(
                    h.submit(Op::Approval {
                        id: "no-such-request".into(),
                        decision: Decision::Once
                    }),
                    Err(OpError::Invalid(_))
                ));
                h.submit(Op::Approval {
                    id,
                    decision: Decision::Deny,
                })
                .unwrap();
            }
            SessionEvent::Agent { .. } => {}
            SessionEvent::TurnEnded { end, .. } => break end,
        }
    };
    assert!(asked);
    assert_eq!(end, TurnEnd::Done { completed: true });
    assert!(fake.requests().iter().all(|r| r.path != "/nothing"));

    let pinned = h
        .submit(Op::Pin {
            index: 0,
            pinned: true,
        })
        .unwrap()
        .lines();
    assert!(
        pinned[0].starts_with("📌 pinned #2 (assistant: "),
        "{pinned:?}"
    );
    assert!(matches!(
        h.submit(Op::Pin {
            index: 99,
            pinned: true
        }),
        Err(OpError::Invalid(_))
    ));
    h.submit(Op::Rename {
        title: "Renamed here".into(),
    })
    .unwrap();
    assert!(matches!(
        h.submit(Op::SwitchProfile {
            profile: "nope".into()
        }),
        Err(OpError::Invalid(m)) if m.contains("available: ")
    ));
    let rows = app.sessions().unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].title, "Renamed here");
    assert!(h.history().unwrap().iter().any(
        |e| matches!(e, AgentEvent::AgentMessage { pinned: true, content } if content == "Not fetched.")
    ));
    h.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_session_closed_without_a_message_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start().await;
    let app = crate::protocol::app(dir.path(), &fake);
    let (pending, _rx) = open(
        &app,
        OpenOptions {
            pending: true,
            ..Default::default()
        },
    );
    // Bad input is refused before anything starts.
    assert!(matches!(
        pending.submit(msg("   ")),
        Err(OpError::Invalid(_))
    ));
    let missing = dir.path().join("missing.txt");
    let bad = Op::UserMessage {
        text: "read this".into(),
        attachments: vec![navi::protocol::InputAttachment::Path { path: missing }],
    };
    assert!(matches!(pending.submit(bad), Err(OpError::Invalid(m)) if m.contains("missing.txt")));
    assert!(!pending.is_running());
    pending.close().await;
    let (created, _rx2) = open(&app, OpenOptions::default());
    assert_eq!(
        app.sessions().unwrap().len(),
        1,
        "a non-pending new session has its row"
    );
    created.close().await;
    assert!(app.sessions().unwrap().is_empty(), "closed empty: removed");
    assert!(fake.chat_requests().is_empty());
}

#[test]
fn ops_and_events_are_json() {
    let op = Op::UserMessage {
        text: "hi".into(),
        attachments: vec![navi::protocol::InputAttachment::Text {
            name: "a.txt".into(),
            text: "x".into(),
        }],
    };
    let s = serde_json::to_string(&op).unwrap();
    assert_eq!(
        s,
        r#"{"type":"user_message","text":"hi","attachments":[{"type":"text","name":"a.txt","text":"x"}]}"#
    );
    assert_eq!(serde_json::from_str::<Op>(&s).unwrap(), op);
    let stop: Op = serde_json::from_str(r#"{"type":"stop"}"#).unwrap();
    assert_eq!(stop, Op::Stop);
    let ev = SessionEvent::TurnEnded {
        end: TurnEnd::Stopped,
        steers: vec![],
    };
    let s = serde_json::to_string(&ev).unwrap();
    assert_eq!(s, r#"{"kind":"turn_ended","end":{"type":"stopped"}}"#);
    assert!(serde_json::from_str::<Op>(r#"{"type":"launch_missiles"}"#).is_err());
}
