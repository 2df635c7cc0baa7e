//! The event loop in process: keys through a stream, agent events through a
//! channel, a fake `Host` recording what the UI asked for, frames drawn to a
//! `TestBackend`. Covers send → stream → idle, Ctrl-C/Esc stop, queueing,
//! approvals, slash commands, and quitting.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::tui_loop_support;
use crate::tui_support;

use crossterm::event::{Event, KeyCode, KeyModifiers};
use futures_util::StreamExt;
use navi::llm::ChatMessage;
use navi::protocol::Decision;
use navi::session::{MessageKind, StoredMessage};
use navi::ui::commands::SlashCommand;
use navi::ui::tui::event_loop::{EventLoop, LoopOptions};
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tui_loop_support::*;
use tui_support::*;

#[tokio::test]
async fn send_stream_and_go_idle() {
    let (screen, log) = run(|h| async move {
        h.until("backend check shown", |_, c| c.iter().any(|x| x.starts_with("error:cannot reach"))).await;
        h.typed("hello");
        h.enter();
        h.until("turn started", |s, _| s == "waiting for the model").await;
        h.send(0, json!({"type": "stream_start", "session_id": "s"})).await;
        for w in ["Hi ", "there, ", "friend."] {
            h.send(0, json!({"type": "stream_delta", "delta": w})).await;
        }
        h.send(0, json!({"type": "stream_end", "content": "Hi there, friend.", "context_tokens": 100, "max_context_tokens": 1000})).await;
        h.end_turn(0);
        h.until("idle", |s, c| s == "idle" && c.last().is_some_and(|x| x == "assistant:Hi there, friend.")).await;
        h.ctrl_c();
        h.ctrl_c();
    })
    .await;
    let l = log.lock().unwrap();
    assert_eq!(l.turns, vec!["hello"]);
    assert!(screen.contains("• Hi there, friend."), "{screen}");
    assert!(screen.contains("100/1k"), "{screen}");
}

#[tokio::test]
async fn ctrl_c_ladder_stops_cooperatively_then_quits() {
    let (screen, log) = run(|h| async move {
        h.typed("long job");
        h.enter();
        h.until("running", |s, _| s != "idle").await;
        h.send(0, json!({"type": "stream_delta", "delta": "partial "}))
            .await;
        // 1st: clears the composer.
        h.typed("draft");
        h.ctrl_c();
        // 2nd: stops the turn (cooperatively: the token, not an abort).
        h.ctrl_c();
        h.until("stopping", |s, _| s == "stopping…").await;
        assert!(h.log.lock().unwrap().cancels[0].is_cancelled());
        h.send(0, json!({"type": "stream_stopped"})).await;
        h.end_turn(0);
        h.until("stopped notice", |s, c| {
            s == "idle" && c.iter().any(|x| x == "notice:stopped by user")
        })
        .await;
        h.ctrl_c();
        h.ctrl_c();
    })
    .await;
    assert!(screen.contains("stopped by user"), "{screen}");
    assert_eq!(log.lock().unwrap().turns.len(), 1);
}

#[tokio::test]
async fn esc_stops_and_queued_message_waits_for_the_user() {
    let (_screen, log) = run(|h| async move {
        h.typed("first");
        h.enter();
        h.until("running", |s, _| s != "idle").await;
        h.typed("second");
        h.enter();
        h.key(KeyCode::Esc, KeyModifiers::NONE);
        h.until("stopping", |s, _| s == "stopping…").await;
        h.end_turn(0);
        // After a stop the queued message is kept, shown, and not sent.
        h.until("idle with the message held", |s, c| {
            s == "idle" && c.iter().any(|x| x.contains("1 queued message is kept"))
        })
        .await;
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert_eq!(h.log.lock().unwrap().turns.len(), 1);
        // Enter on the empty composer sends it.
        h.enter();
        h.until("second turn", |_, c| c.iter().any(|x| x == "user:second"))
            .await;
        h.end_turn(1);
        h.until("idle", |s, _| s == "idle").await;
        h.typed("/quit");
        h.enter();
    })
    .await;
    let l = log.lock().unwrap();
    assert_eq!(l.turns, vec!["first", "second"]);
    assert!(l.cancels[0].is_cancelled() && !l.cancels[1].is_cancelled());
    assert_eq!(l.commands, vec![SlashCommand::Quit]);
}

#[tokio::test]
async fn approvals_and_slash_commands() {
    let (_screen, log) = run(|h| async move {
        h.typed("/frobnicate");
        h.enter();
        h.until("hint", |_, c| c.iter().any(|x| x.starts_with("info:unknown command /frobnicate"))).await;
        h.typed("/session list");
        h.enter();
        h.until("list", |_, c| c.iter().any(|x| x == "info:LIST-OUTPUT")).await;
        h.typed("rm it");
        h.enter();
        h.until("running", |s, _| s != "idle").await;
        h.send(0, json!({"type": "tool_started", "id": "t9", "tool": "terminal", "args": {"command": "rm -rf x"}, "is_subagent": false})).await;
        h.send(0, json!({"type": "approval_request", "id": "t9", "tool": "terminal", "summary": "rm -rf x", "args": {}})).await;
        h.until("overlay", |s, _| s == "waiting for approval").await;
        h.key(KeyCode::Char('n'), KeyModifiers::NONE);
        h.until("answered", |s, _| s == "running terminal").await;
        h.send(0, json!({"type": "tool_call", "id": "t9", "tool": "terminal", "args": {}, "result": "denied", "success": false, "is_subagent": false})).await;
        h.end_turn(0);
        h.until("idle", |s, c| s == "idle" && c.iter().any(|x| x == "tool:terminal:Failed")).await;
        h.ctrl_c();
        h.ctrl_c();
    })
    .await;
    let l = log.lock().unwrap();
    assert_eq!(l.answers, vec![("t9".to_string(), Decision::Deny)]);
    // The unknown command never reached the dispatcher, nor the model.
    assert_eq!(l.commands, vec![SlashCommand::SessionList]);
    assert_eq!(l.turns, vec!["rm it"]);
}

#[tokio::test]
async fn closed_input_stops_the_turn_and_quits() {
    let (_screen, log) = run(|h| async move {
        h.typed("work");
        h.enter();
        h.until("running", |s, _| s != "idle").await;
        let log = h.log.clone();
        // The terminal goes away: no more input.
        drop(h);
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while !log.lock().unwrap().cancels[0].is_cancelled() {
            assert!(tokio::time::Instant::now() < deadline, "turn not stopped");
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
        // The turn finishes writing; its channel closes; the loop ends.
        let (tx, _) = mpsc::channel(1);
        log.lock().unwrap().senders[0] = tx;
    })
    .await;
    assert!(log.lock().unwrap().cancels[0].is_cancelled());
}

#[tokio::test]
async fn history_loads_after_the_first_frame_and_queues_early_messages() {
    let mut st = state();
    st.loading = true;
    let history = vec![
        StoredMessage::new(ChatMessage::user("old question"), MessageKind::Message),
        StoredMessage::new(ChatMessage::assistant("old answer"), MessageKind::Message),
    ];
    let (_screen, log) = run_with(st, Some(history), |h| async move {
        // The first frame is drawn before the history is there.
        h.until("a first frame", |_, _| true).await;
        {
            let l = h.log.lock().unwrap();
            assert!(
                !l.frames[0].1.iter().any(|c| c.contains("old")),
                "{:?}",
                l.frames[0]
            );
        }
        h.typed("new");
        h.enter();
        h.until("history, then the queued message", |_, c| {
            c.iter().any(|x| x == "user:new")
        })
        .await;
        h.end_turn(0);
        h.until("idle", |s, _| s == "idle").await;
        h.ctrl_c();
        h.ctrl_c();
    })
    .await;
    let l = log.lock().unwrap();
    assert_eq!(l.turns, vec!["new"]);
    let cells = &l.frames.last().unwrap().1;
    let pos = |p: &str| cells.iter().position(|c| c.starts_with(p)).unwrap();
    assert!(pos("user:old question") < pos("assistant:old answer"));
    assert!(pos("assistant:old answer") < pos("user:new"), "{cells:?}");
}

/// A todo list saved by one navi process shows in the side pane of the next
/// as soon as its session is resumed (real `App`, real SQLite file).
#[tokio::test]
async fn resumed_session_shows_its_saved_todo_list_at_once() {
    use navi::app::{App, AppOptions, SessionChoice};
    use navi::config::{Config, Overrides, Paths};
    use navi::ui::tui::host::AppHost;
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths {
        config_file: None,
        config_dir: dir.path().join("cfg"),
        data_dir: dir.path().join("data"),
        db_path: dir.path().join("data/navi.db"),
        log_dir: dir.path().join("data/logs"),
    };
    let config = Config::default();
    let build = || {
        App::build(
            config.clone(),
            paths.clone(),
            Overrides::default(),
            AppOptions::default(),
        )
        .unwrap()
    };
    let saved = {
        let app = build();
        let s = app.store.create("developer").unwrap();
        let todos = &app.agent.env.todos;
        todos.set_texts(
            &s.id,
            vec![
                ("Reproduce the login bug".into(), None),
                ("Write a failing test".into(), None),
                ("Fix the session check".into(), Some("SELF".into())),
            ],
        );
        let mut items = todos.get(&s.id);
        items[0].status = navi::protocol::TodoStatus::Done;
        items[1].status = navi::protocol::TodoStatus::InProgress;
        todos.set(&s.id, items);
        s.id
    };
    // A new process, on a new session: the pane is empty until the resume.
    let app = build();
    let Ok(st) = navi::ui::tui::initial_state(&app, &SessionChoice::New, None) else {
        panic!("initial_state failed");
    };
    let mut host = AppHost::new(&app);
    let (ktx, krx) = mpsc::unbounded_channel::<Event>();
    let mut input = Box::pin(futures_util::stream::unfold(krx, |mut rx| async move {
        rx.recv().await.map(|e| (Ok(e), rx))
    }))
    .fuse();
    let mut terminal = Terminal::new(TestBackend::new(100, 24)).unwrap();
    let mut lp = EventLoop::new(&mut host, st);
    let opts = LoopOptions {
        max_fps: 120,
        check_backend: false,
    };
    let counts = Arc::new(Mutex::new(Vec::<usize>::new()));
    let seen = counts.clone();
    let h = Harness {
        log: Arc::new(Mutex::new(Log::default())),
        keys: ktx,
    };
    let script = async move {
        let wait = |n: usize| {
            let seen = seen.clone();
            async move {
                for _ in 0..400 {
                    if seen.lock().unwrap().last() == Some(&n) {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(25)).await;
                }
                panic!("the todo pane never showed {n} items");
            }
        };
        h.typed("hi");
        wait(0).await;
        h.key(KeyCode::Char('u'), KeyModifiers::CONTROL);
        h.typed(&format!("/session resume {}", &saved[..8]));
        h.enter();
        wait(3).await;
        h.ctrl_c();
        h.ctrl_c();
    };
    let looped = lp.run(
        &mut terminal,
        &mut input,
        &opts,
        |_| {},
        |st| counts.lock().unwrap().push(st.side.todos.len()),
    );
    let (res, ()) = tokio::time::timeout(Duration::from_secs(20), async {
        tokio::join!(looped, script)
    })
    .await
    .expect("the loop did not quit");
    res.unwrap();
    let mut buf = ratatui::buffer::Buffer::empty(ratatui::layout::Rect::new(0, 0, 40, 8));
    lp.state.side.render(
        ratatui::layout::Rect::new(0, 0, 40, 8),
        &mut buf,
        &lp.state.theme,
    );
    insta::assert_snapshot!(text_of(&buf));
}

#[tokio::test]
async fn a_backend_that_is_down_shows_on_the_status_line_before_typing() {
    let (screen, log) = run(|h| async move {
        h.until("backend check shown", |_, c| {
            c.iter().any(|x| x.starts_with("error:cannot reach"))
        })
        .await;
        h.ctrl_c();
        h.ctrl_c();
    })
    .await;
    assert!(log.lock().unwrap().turns.is_empty());
    let status = screen.lines().last().unwrap_or("");
    assert!(status.contains("⚠ server down"), "{screen}");
}

#[tokio::test]
async fn queued_messages_can_be_edited_and_removed() {
    let (screen, log) = run(|h| async move {
        h.typed("first");
        h.enter();
        h.until("running", |s, _| s != "idle").await;
        h.typed("second");
        h.enter();
        h.typed("third");
        h.enter();
        // ↑ on the empty composer takes the last queued message back.
        h.key(KeyCode::Up, KeyModifiers::NONE);
        h.typed(" edited");
        h.enter();
        // ↑ again, then Ctrl-C clears it: removed from the queue.
        h.key(KeyCode::Up, KeyModifiers::NONE);
        h.ctrl_c();
        h.end_turn(0);
        h.until("second turn", |_, c| c.iter().any(|x| x == "user:second"))
            .await;
        h.end_turn(1);
        h.until("idle", |s, _| s == "idle").await;
        h.typed("/quit");
        h.enter();
    })
    .await;
    assert_eq!(log.lock().unwrap().turns, vec!["first", "second"]);
    assert!(!screen.contains("third"), "{screen}");
}

#[tokio::test]
async fn steer_is_shown_where_it_went_in_and_leftovers_are_not_lost() {
    let (screen, log) = run(|h| async move {
        h.typed("fix the build");
        h.enter();
        h.until("running", |s, _| s != "idle").await;
        h.send(0, json!({"type": "stream_start", "session_id": "s"})).await;
        h.send(0, json!({"type": "tool_started", "id": "c1", "tool": "terminal", "args": {"command": "make"}, "is_subagent": false})).await;
        h.typed("use cargo, not make");
        h.key(KeyCode::Char('s'), KeyModifiers::CONTROL);
        h.until_log("steer handed over", |l| !l.steers.is_empty()).await;
        {
            let l = h.log.lock().unwrap();
            assert_eq!(l.steers, vec!["use cargo, not make"]);
        }
        // The agent takes it in after the tool batch.
        h.send(0, json!({"type": "tool_call", "id": "c1", "tool": "terminal", "args": {"command": "make"}, "result": "exit code: 2", "success": false, "is_subagent": false})).await;
        h.log.lock().unwrap().steers.clear();
        h.send(0, json!({"type": "user_steer", "message": "use cargo, not make"})).await;
        h.send(0, json!({"type": "stream_delta", "delta": "Switching to cargo."})).await;
        h.until("steer in the transcript", |_, c| {
            c.iter().any(|x| x == "user:use cargo, not make")
        })
        .await;
        // A second steer the turn never reaches a safe point for…
        h.typed("and run the tests");
        h.key(KeyCode::Char('s'), KeyModifiers::CONTROL);
        h.until_log("second steer handed over", |l| !l.steers.is_empty()).await;
        h.end_turn(0);
        // …becomes the next turn instead of being lost.
        h.until("leftover steer sent", |_, c| {
            c.iter().any(|x| x == "user:and run the tests")
        })
        .await;
        h.end_turn(1);
        h.until("idle", |s, _| s == "idle").await;
        h.typed("/quit");
        h.enter();
    })
    .await;
    let l = log.lock().unwrap();
    assert_eq!(l.turns, vec!["fix the build", "and run the tests"]);
    let cells = &l.frames.last().unwrap().1;
    let pos = |p: &str| cells.iter().position(|c| c.starts_with(p)).unwrap();
    assert!(pos("tool:terminal") < pos("user:use cargo"), "{cells:?}");
    assert!(
        pos("user:use cargo") < pos("assistant:Switching"),
        "{cells:?}"
    );
    assert!(
        screen.contains("steer: taken in after the tool batch"),
        "{screen}"
    );
}

#[tokio::test]
async fn a_steer_the_user_stopped_goes_back_to_the_composer() {
    let (screen, log) = run(|h| async move {
        h.typed("long job");
        h.enter();
        h.until("running", |s, _| s != "idle").await;
        h.typed("actually, stop and summarise");
        h.key(KeyCode::Char('s'), KeyModifiers::CONTROL);
        h.until_log("steer handed over", |l| !l.steers.is_empty())
            .await;
        h.key(KeyCode::Esc, KeyModifiers::NONE);
        h.until("stopping", |s, _| s == "stopping…").await;
        h.end_turn(0);
        h.until("idle", |s, c| {
            s == "idle" && c.iter().any(|x| x.contains("back in the composer"))
        })
        .await;
        h.ctrl_c(); // clears the composer
        h.ctrl_c();
        h.ctrl_c();
    })
    .await;
    assert_eq!(log.lock().unwrap().turns, vec!["long job"]);
    assert!(screen.contains("before your steer went in"), "{screen}");
}

#[tokio::test]
async fn session_delete_asks_for_confirmation() {
    let (_screen, log) = run(|h| async move {
        h.typed("/session delete");
        h.enter();
        h.until("the question", |_, c| {
            c.iter()
                .any(|x| x.contains("y deletes, any other key keeps it"))
        })
        .await;
        h.typed("n");
        h.until("kept", |_, c| c.iter().any(|x| x.contains("not deleted")))
            .await;
        h.typed("/session delete 2");
        h.enter();
        h.until("asked again", |_, c| {
            c.iter()
                .any(|x| x.contains("delete session 2 and all its messages?"))
        })
        .await;
        h.typed("y");
        h.until_log("deleted", |l| !l.commands.is_empty()).await;
        h.typed("/quit");
        h.enter();
    })
    .await;
    let l = log.lock().unwrap();
    assert_eq!(
        l.commands,
        vec![
            SlashCommand::SessionDelete(Some("2".into())),
            SlashCommand::Quit
        ]
    );
}

/// `[ui].theme = "auto"`: the OSC 11 probe runs once, after the first frame
/// is drawn; a light answer switches to the light theme; keys read during
/// the probe are handled as typed, an unknown escape sequence is reported.
#[tokio::test]
async fn background_probe_runs_after_the_first_frame_and_keeps_typed_keys() {
    let host_log = Arc::new(Mutex::new(Log::default()));
    let mut host = FakeHost(host_log.clone(), None);
    let (ktx, krx) = mpsc::unbounded_channel::<Event>();
    let mut input = Box::pin(futures_util::stream::unfold(krx, |mut rx| async move {
        rx.recv().await.map(|e| (Ok(e), rx))
    }))
    .fuse();
    let mut terminal = Terminal::new(TestBackend::new(100, 24)).unwrap();
    let st = state_with("dark", false);
    assert_eq!(st.theme.name, "dark");
    let mut lp = EventLoop::new(&mut host, st);
    let frames = Arc::new(Mutex::new(0usize));
    let (seen, probed) = (frames.clone(), Arc::new(Mutex::new(None::<usize>)));
    let at = probed.clone();
    lp.probe_background = Some(Box::new(move || {
        *at.lock().unwrap() = Some(*seen.lock().unwrap());
        navi::ui::tui::background::split_reply(b"ab\x1b]11;rgb:ffff/ffff/f0f0\x07\x1b[99z\x1b[?62c")
    }));
    let opts = LoopOptions {
        max_fps: 120,
        check_backend: false,
    };
    let h = Harness {
        log: host_log.clone(),
        keys: ktx,
    };
    let script = async move {
        h.until("probe applied", |_, c| {
            c.iter().any(|x| x.contains("background detection"))
        })
        .await;
        h.typed("c");
        h.enter();
        h.until_log("turn started", |l| !l.turns.is_empty()).await;
        h.ctrl_c();
        h.ctrl_c();
        h.ctrl_c();
        h.ctrl_c();
    };
    let (count, log) = (frames.clone(), host_log.clone());
    let looped = lp.run(
        &mut terminal,
        &mut input,
        &opts,
        |_| {},
        |st| {
            *count.lock().unwrap() += 1;
            log.lock()
                .unwrap()
                .frames
                .push((st.run.label(), summary(st)));
        },
    );
    let (res, ()) = tokio::time::timeout(Duration::from_secs(20), async {
        tokio::join!(looped, script)
    })
    .await
    .expect("the loop did not quit");
    res.unwrap();
    assert_eq!(lp.state.theme.name, "light");
    assert_eq!(host_log.lock().unwrap().turns, vec!["abc"]);
    assert!(
        probed.lock().unwrap().is_some_and(|n| n >= 1),
        "the probe ran before the first frame was drawn"
    );
}
