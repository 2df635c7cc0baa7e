//! The event loop in process: keys through a stream, the real app and
//! session handle underneath, a backend whose answers the test writes as
//! each model call runs, frames drawn to a `TestBackend`. Covers send →
//! stream → idle, Ctrl-C/Esc stop, queueing, approvals, slash commands, a
//! resumed session, steering and quitting.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::tui_loop_support;
use crate::tui_support;

use crossterm::event::{KeyCode, KeyModifiers};
use navi::app::SessionChoice;
use navi::llm::ChatMessage;
use navi::session::{MessageKind, SessionStore, StoredMessage};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tui_loop_support::*;
use tui_support::*;

fn store(app: &navi::app::App) -> SessionStore {
    SessionStore::open(&app.paths().db_path).unwrap()
}

#[tokio::test]
async fn send_stream_and_go_idle() {
    let (screen, log) = run(|h| async move {
        h.typed("hello");
        h.enter();
        h.until("turn started", |s, _| s == "waiting for the model")
            .await;
        h.until_call(0).await;
        for w in ["Hi ", "there, ", "friend."] {
            h.text(0, w);
        }
        h.end(0);
        h.until("idle", |s, c| {
            s == "idle" && c.last().is_some_and(|x| x == "assistant:Hi there, friend.")
        })
        .await;
        h.ctrl_c();
        h.ctrl_c();
    })
    .await;
    let l = log.lock().unwrap();
    assert_eq!(l.turns, vec!["hello"]);
    assert!(screen.contains("• Hi there, friend."), "{screen}");
    assert!(
        screen.contains("/1k"),
        "the window on the status line: {screen}"
    );
}

#[tokio::test]
async fn ctrl_c_ladder_stops_cooperatively_then_quits() {
    let (screen, log) = run(|h| async move {
        h.typed("long job");
        h.enter();
        h.until("running", |s, _| s != "idle").await;
        h.until_call(0).await;
        h.text(0, "partial ");
        h.until("partial answer", |_, c| {
            c.iter().any(|x| x.starts_with("assistant:partial"))
        })
        .await;
        // 1st: clears the composer.
        h.typed("draft");
        h.ctrl_c();
        // 2nd: stops the turn (cooperatively: the session's stop, not an abort).
        h.ctrl_c();
        h.until("stopped notice", |s, c| {
            s == "idle" && c.iter().any(|x| x == "notice:stopped by user")
        })
        .await;
        assert!(h.dropped(0), "the model call was let go");
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
        h.until_call(0).await;
        h.typed("second");
        h.enter();
        h.key(KeyCode::Esc, KeyModifiers::NONE);
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
        h.until_call(1).await;
        h.text(1, "done");
        h.end(1);
        h.until("idle", |s, _| s == "idle").await;
        h.typed("/quit");
        h.enter();
    })
    .await;
    let l = log.lock().unwrap();
    assert_eq!(l.turns, vec!["first", "second"]);
    assert!(l.senders[0].is_closed(), "the first call was stopped");
}

#[tokio::test]
async fn approvals_and_slash_commands() {
    let (_screen, log) = run(|h| async move {
        h.typed("/frobnicate");
        h.enter();
        h.until("hint", |_, c| {
            c.iter()
                .any(|x| x.starts_with("info:unknown command /frobnicate"))
        })
        .await;
        h.typed("/session list");
        h.enter();
        // The new session is pending: listed first, marked as not saved yet.
        h.until("list", |_, c| {
            c.iter()
                .any(|x| x.starts_with("info:") && x.contains("(new session)"))
        })
        .await;
        h.typed("rm it");
        h.enter();
        h.until_call(0).await;
        h.tool_call(0, "t9", "terminal", json!({"command": "rm -rf x"}));
        h.end(0);
        h.until("overlay", |s, _| s == "waiting for approval").await;
        h.key(KeyCode::Char('n'), KeyModifiers::NONE);
        // Denied: the call fails, and the model is asked again.
        h.until_call(1).await;
        h.text(1, "I left it alone.");
        h.end(1);
        h.until("idle", |s, c| {
            s == "idle" && c.iter().any(|x| x == "tool:terminal:Failed")
        })
        .await;
        h.ctrl_c();
        h.ctrl_c();
    })
    .await;
    let l = log.lock().unwrap();
    // The unknown command and the listing never reached the model.
    assert_eq!(l.turns, vec!["rm it", "rm it"]);
}

#[tokio::test]
async fn closed_input_stops_the_turn_and_quits() {
    let (_screen, log) = run(|h| async move {
        h.typed("work");
        h.enter();
        h.until("running", |s, _| s != "idle").await;
        h.until_call(0).await;
        // The terminal goes away: no more input. The loop stops the turn,
        // waits for it to be saved, and ends.
        drop(h);
    })
    .await;
    assert!(log.lock().unwrap().senders[0].is_closed());
}

#[tokio::test]
async fn history_loads_after_the_first_frame_and_queues_early_messages() {
    let seeded = Arc::new(Mutex::new(String::new()));
    let id = seeded.clone();
    let (_screen, log) = run_on(
        SessionChoice::Latest,
        move |app| {
            let store = store(app);
            let s = store.create("plain").unwrap();
            for m in [
                ChatMessage::user("old question"),
                ChatMessage::assistant("old answer"),
            ] {
                store
                    .append_both(&s.id, &StoredMessage::new(m, MessageKind::Message))
                    .unwrap();
            }
            *id.lock().unwrap() = s.id;
        },
        |h| async move {
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
            h.until("history, then the message", |_, c| {
                c.iter().any(|x| x == "user:new")
            })
            .await;
            h.until_call(0).await;
            h.end(0);
            h.until("idle", |s, _| s == "idle").await;
            h.ctrl_c();
            h.ctrl_c();
        },
    )
    .await;
    assert!(!seeded.lock().unwrap().is_empty());
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
    let saved = Arc::new(Mutex::new(String::new()));
    let id = saved.clone();
    let dir = tempfile::tempdir().unwrap();
    let log = Arc::new(Mutex::new(Log::default()));
    {
        // Another process saved the list.
        let app = app(dir.path(), &log);
        let store = Arc::new(store(&app));
        let s = store.create("plain").unwrap();
        let tools =
            navi::tools::SessionTools::new(&s.id, dir.path().to_path_buf(), Some(store.clone()));
        tools.set_todo_texts(vec![
            ("Reproduce the login bug".into(), None),
            ("Write a failing test".into(), None),
            ("Fix the session check".into(), Some("SELF".into())),
        ]);
        let mut items = tools.todos();
        items[0].status = navi::protocol::TodoStatus::Done;
        items[1].status = navi::protocol::TodoStatus::InProgress;
        tools.set_todos(items);
        *id.lock().unwrap() = s.id;
    }
    // A new process, on a new session: the pane is empty until the resume.
    let app = app(dir.path(), &log);
    let session = navi::ui::tui::open_session(&app, &SessionChoice::New, Some("plain"))
        .ok()
        .unwrap();
    let st = navi::ui::tui::initial_state(&app, &session).ok().unwrap();
    let key: String = saved.lock().unwrap()[..8].to_string();
    let script = |h: Harness| async move {
        let wait = |n: usize| {
            let log = h.log.clone();
            async move {
                for _ in 0..400 {
                    if log.lock().unwrap().todos.last() == Some(&n) {
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
        h.typed(&format!("/session resume {key}"));
        h.enter();
        wait(3).await;
        h.ctrl_c();
        h.ctrl_c();
    };
    let (_, st) = drive(&app, session, st, &log, None, script).await;
    let mut buf = ratatui::buffer::Buffer::empty(ratatui::layout::Rect::new(0, 0, 40, 8));
    st.side
        .render(ratatui::layout::Rect::new(0, 0, 40, 8), &mut buf, &st.theme);
    insta::assert_snapshot!(text_of(&buf));
}

#[tokio::test]
async fn a_backend_that_is_down_shows_on_the_status_line_before_typing() {
    let dir = tempfile::tempdir().unwrap();
    let log = Arc::new(Mutex::new(Log::default()));
    // An Ollama address nobody listens on, and no injected backend.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let paths = navi::config::Paths {
        config_file: None,
        config_dir: dir.path().join("cfg"),
        data_dir: dir.path().join("data"),
        db_path: dir.path().join("data/navi.db"),
        log_dir: dir.path().join("data/logs"),
    };
    let mut c = navi::config::Config::default();
    c.llm.ollama_host = format!("http://127.0.0.1:{port}");
    let app = navi::app::App::build(
        c,
        paths,
        navi::config::Overrides::default(),
        navi::app::AppOptions::default(),
    )
    .unwrap();
    let session = navi::ui::tui::open_session(&app, &SessionChoice::New, None)
        .ok()
        .unwrap();
    let st = navi::ui::tui::initial_state(&app, &session).ok().unwrap();
    let (screen, _) = drive(&app, session, st, &log, None, |h| async move {
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
        h.until_call(0).await;
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
        h.until("third edited is gone", |_, _| true).await;
        tokio::time::sleep(Duration::from_millis(100)).await;
        h.end(0);
        h.until("second turn", |_, c| c.iter().any(|x| x == "user:second"))
            .await;
        h.until_call(1).await;
        h.end(1);
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
        h.until_call(0).await;
        h.typed("use cargo, not make");
        h.key(KeyCode::Char('s'), KeyModifiers::CONTROL);
        h.until("steer shown as waiting", |_, c| {
            c.iter().any(|x| x == "steer:use cargo, not make")
        })
        .await;
        // The agent takes it in after the tool batch (the call is asked
        // about first, and denied).
        h.tool_call(0, "c1", "terminal", json!({"command": "make"}));
        h.end(0);
        h.until("asked", |s, _| s == "waiting for approval").await;
        h.key(KeyCode::Char('n'), KeyModifiers::NONE);
        h.until_call(1).await;
        h.until("steer in the transcript", |_, c| {
            c.iter().any(|x| x == "user:use cargo, not make")
        })
        .await;
        h.text(1, "Switching to cargo.");
        // A second steer the turn never reaches a safe point for…
        h.typed("and run the tests");
        h.key(KeyCode::Char('s'), KeyModifiers::CONTROL);
        h.until("second steer shown", |_, c| {
            c.iter().any(|x| x == "steer:and run the tests")
        })
        .await;
        h.end(1);
        // …becomes the next turn instead of being lost.
        h.until("leftover steer sent", |_, c| {
            c.iter().any(|x| x == "user:and run the tests")
        })
        .await;
        h.until_call(2).await;
        h.end(2);
        h.until("idle", |s, _| s == "idle").await;
        h.typed("/quit");
        h.enter();
    })
    .await;
    let l = log.lock().unwrap();
    assert_eq!(
        l.turns,
        vec!["fix the build", "use cargo, not make", "and run the tests"]
    );
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
        h.until_call(0).await;
        h.typed("actually, stop and summarise");
        h.key(KeyCode::Char('s'), KeyModifiers::CONTROL);
        h.until("steer shown", |_, c| {
            c.iter().any(|x| x.starts_with("steer:actually, stop"))
        })
        .await;
        h.key(KeyCode::Esc, KeyModifiers::NONE);
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
    let other = Arc::new(Mutex::new(String::new()));
    let id = other.clone();
    let dir_kept = Arc::new(Mutex::new(None::<std::path::PathBuf>));
    let db = dir_kept.clone();
    let (_screen, _log) = run_on(
        SessionChoice::New,
        move |app| {
            let s = store(app).create("plain").unwrap();
            *id.lock().unwrap() = s.id;
            *db.lock().unwrap() = Some(app.paths().db_path.clone());
        },
        |h| async move {
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
            h.typed("/session delete 1");
            h.enter();
            h.until("asked again", |_, c| {
                c.iter()
                    .any(|x| x.contains("delete session 1 and all its messages?"))
            })
            .await;
            h.typed("y");
            h.until("deleted", |_, c| {
                c.iter().any(|x| x.contains("deleted session"))
            })
            .await;
            h.typed("/quit");
            h.enter();
        },
    )
    .await;
    let db = dir_kept.lock().unwrap().clone().unwrap();
    let store = SessionStore::open(&db).unwrap();
    assert!(
        store.list().unwrap().is_empty(),
        "the stored session is gone"
    );
}

/// `[ui].theme = "auto"`: the OSC 11 probe runs once, after the first frame
/// is drawn; a light answer switches to the light theme; keys read during
/// the probe are handled as typed, an unknown escape sequence is reported.
#[tokio::test]
async fn background_probe_runs_after_the_first_frame_and_keeps_typed_keys() {
    let dir = tempfile::tempdir().unwrap();
    let log = Arc::new(Mutex::new(Log::default()));
    let app = app(dir.path(), &log);
    let session = navi::ui::tui::open_session(&app, &SessionChoice::New, Some("plain"))
        .ok()
        .unwrap();
    let st = navi::ui::tui::initial_state(&app, &session).ok().unwrap();
    assert_eq!(st.theme.name, "dark");
    let frames = log.clone();
    let probed = Arc::new(Mutex::new(None::<usize>));
    let at = probed.clone();
    let probe = Box::new(move || {
        *at.lock().unwrap() = Some(frames.lock().unwrap().frames.len());
        navi::ui::tui::background::split_reply(b"ab\x1b]11;rgb:ffff/ffff/f0f0\x07\x1b[99z\x1b[?62c")
    });
    let (_, st) = drive(&app, session, st, &log, Some(probe), |h| async move {
        h.until("probe applied", |_, c| {
            c.iter().any(|x| x.contains("background detection"))
        })
        .await;
        h.typed("c");
        h.enter();
        h.until_call(0).await;
        h.ctrl_c();
        h.ctrl_c();
        h.ctrl_c();
        h.ctrl_c();
    })
    .await;
    assert_eq!(st.theme.name, "light");
    assert_eq!(log.lock().unwrap().turns, vec!["abc"]);
    assert!(
        probed.lock().unwrap().is_some_and(|n| n >= 1),
        "the probe ran after the first frame was drawn"
    );
}

/// `/profile` while a turn runs is refused as `Op::SwitchProfile` is (the
/// same words); once the turn is over it switches.
#[tokio::test]
async fn a_profile_switch_during_a_turn_is_refused_like_the_op() {
    let (_screen, log) = run(|h| async move {
        h.typed("work");
        h.enter();
        h.until_call(0).await;
        h.typed("/profile developer");
        h.enter();
        h.until("refused", |_, c| {
            c.iter()
                .any(|x| x == "info:a turn is running; /stop it first")
        })
        .await;
        h.end(0);
        h.until("idle", |s, _| s == "idle").await;
        h.typed("/profile developer");
        h.enter();
        h.until("switched", |_, c| {
            c.iter()
                .any(|x| x.starts_with("info:profile switched to") && x.ends_with("(developer)"))
        })
        .await;
        h.ctrl_c();
        h.ctrl_c();
    })
    .await;
    assert_eq!(log.lock().unwrap().turns, vec!["work"]);
}
