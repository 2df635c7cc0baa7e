//! Attachments from the TUI, end to end in process: the real `App` (SQLite
//! in a temp dir) against the fake LLM server, keys through the event loop.
//! `/attach` queues an image, `@path` attaches a text file, and the server
//! receives both on the user message (Ollama `images`, OpenAI `image_url`).
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::support;

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use futures_util::StreamExt;
use navi::app::{App, AppOptions, SessionChoice};
use navi::config::{BackendKind, Config, Overrides, Paths};
use navi::ui::tui::event_loop::{EventLoop, LoopOptions};
use navi::ui::tui::host::AppHost;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::{FakeLlm, Reply};
use tokio::sync::mpsc;

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x06\0\0\0";

fn app(dir: &std::path::Path, kind: BackendKind, fake: &FakeLlm) -> App {
    let mut c = Config::default();
    c.llm.backend = kind;
    c.llm.ollama_host = fake.ollama_url();
    c.llm.openai_base_url = fake.openai_url();
    let paths = Paths {
        config_file: None,
        config_dir: dir.join("cfg"),
        data_dir: dir.join("data"),
        db_path: dir.join("data/navi.db"),
        log_dir: dir.join("data/logs"),
    };
    App::build(c, paths, Overrides::default(), AppOptions::default()).unwrap()
}

/// What the loop held after each frame: (attachments queued, last answer,
/// their descriptions and, when idle, the last transcript cell).
type Frames = Arc<Mutex<Vec<(usize, String, String)>>>;

async fn drive(app: &App, script: Vec<&str>, done: fn(&(usize, String, String)) -> bool) -> Frames {
    let st = navi::ui::tui::initial_state(app, &SessionChoice::New, None)
        .ok()
        .unwrap();
    let mut host = AppHost { app };
    let (ktx, krx) = mpsc::unbounded_channel::<Event>();
    let mut input = Box::pin(futures_util::stream::unfold(krx, |mut rx| async move {
        rx.recv().await.map(|e| (Ok(e), rx))
    }))
    .fuse();
    let mut terminal = Terminal::new(TestBackend::new(120, 24)).unwrap();
    let mut lp = EventLoop::new(&mut host, st);
    let opts = LoopOptions {
        max_fps: 120,
        check_backend: false,
    };
    let frames: Frames = Arc::default();
    let seen = frames.clone();
    let key = move |c: KeyCode, m: KeyModifiers| {
        ktx.send(Event::Key(KeyEvent::new(c, m))).unwrap();
    };
    let lines: Vec<String> = script.into_iter().map(String::from).collect();
    let script = async move {
        let wait = |what: &'static str, f: fn(&(usize, String, String)) -> bool| {
            let seen = seen.clone();
            async move {
                for _ in 0..800 {
                    if seen.lock().unwrap().last().is_some_and(f) {
                        return;
                    }
                    tokio::time::sleep(Duration::from_millis(25)).await;
                }
                panic!("never saw: {what}; last: {:?}", seen.lock().unwrap().last());
            }
        };
        for l in &lines {
            for c in l.chars() {
                key(KeyCode::Char(c), KeyModifiers::NONE);
            }
            key(KeyCode::Enter, KeyModifiers::NONE);
            if l.starts_with("/attach") {
                wait("the attachment queued", |f| f.0 > 0).await;
            }
        }
        wait("the end of the turn", done).await;
        key(KeyCode::Char('c'), KeyModifiers::CONTROL);
        key(KeyCode::Char('c'), KeyModifiers::CONTROL);
    };
    let record = frames.clone();
    let looped = lp.run(
        &mut terminal,
        &mut input,
        &opts,
        |_| {},
        |st| {
            let mut screen = st
                .attachments
                .iter()
                .map(|a| a.describe())
                .collect::<Vec<_>>()
                .join("\n");
            if !st.running
                && let Some(c) = st.transcript.cells.last()
            {
                screen.push_str(&format!("\nlast cell: {:?}", c.kind));
            }
            record
                .lock()
                .unwrap()
                .push((st.attachments.len(), st.last_answer.clone(), screen));
        },
    );
    let (res, ()) = tokio::time::timeout(Duration::from_secs(30), async {
        tokio::join!(looped, script)
    })
    .await
    .expect("the loop did not quit");
    res.unwrap();
    frames
}

/// The chat request whose last user message carries `needle`.
fn user_message(fake: &FakeLlm, needle: &str) -> Value {
    fake.chat_requests()
        .into_iter()
        .filter_map(|b| {
            b["messages"]
                .as_array()?
                .iter()
                .rev()
                .find(|m| m["role"] == "user")
                .cloned()
        })
        .find(|m| m.to_string().contains(needle))
        .unwrap_or_else(|| panic!("no request carried {needle}: {:?}", fake.chat_requests()))
}

#[tokio::test]
async fn attach_and_at_path_reach_the_server_on_both_backends() {
    for kind in [BackendKind::Ollama, BackendKind::Openai] {
        let fake = FakeLlm::start().await;
        fake.set_models(vec![("test-model".into(), Some(32768))]);
        fake.set_capabilities(&["completion", "tools", "vision"]);
        // Other requests (the session title) may take a reply first.
        for _ in 0..3 {
            fake.push(Reply::text("I looked at both."));
        }
        let dir = tempfile::tempdir().unwrap();
        let files = dir.path().join("files");
        std::fs::create_dir_all(&files).unwrap();
        std::fs::write(files.join("notes.txt"), "alpha line\nbeta line\n").unwrap();
        std::fs::write(files.join("shot.png"), PNG).unwrap();
        let app = app(dir.path(), kind, &fake);
        let attach = format!("/attach {}", files.join("shot.png").display());
        let msg = format!(
            "compare the screenshot with @{}",
            files.join("notes.txt").display()
        );
        let frames = drive(&app, vec![&attach, &msg], |f| {
            f.1.contains("looked at both")
        })
        .await;
        // The image was queued before the message went.
        let shown = frames
            .lock()
            .unwrap()
            .iter()
            .any(|f| f.2.starts_with("shot.png (image)"));
        assert!(shown, "{kind:?}: the queued attachment was never shown");
        let user = user_message(&fake, "compare the screenshot");
        let text = user.to_string();
        assert!(
            text.contains("notes.txt") && text.contains("alpha line\\nbeta line"),
            "{kind:?}: {user}"
        );
        let b64 = {
            use base64::Engine;
            base64::engine::general_purpose::STANDARD.encode(PNG)
        };
        match kind {
            BackendKind::Ollama => assert_eq!(user["images"][0], b64.as_str(), "{user}"),
            _ => {
                let url = format!("data:image/png;base64,{b64}");
                assert!(
                    user["content"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .any(|p| p["image_url"]["url"] == url.as_str()),
                    "{user}"
                );
            }
        }
        // Sent once: nothing stays queued afterwards.
        assert_eq!(frames.lock().unwrap().last().unwrap().0, 0);
    }
}

#[tokio::test]
async fn an_image_for_a_model_without_vision_is_refused_and_nothing_is_sent() {
    let fake = FakeLlm::start().await;
    // The default fake model lists completion, tools, thinking: no vision.
    fake.push(Reply::text("never"));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("shot.png"), PNG).unwrap();
    let app = app(dir.path(), BackendKind::Ollama, &fake);
    let attach = format!("/attach {}", dir.path().join("shot.png").display());
    let frames = drive(&app, vec![&attach, "what is in this picture?"], |f| {
        f.2.contains("cannot take images")
    })
    .await;
    let last = frames.lock().unwrap().last().unwrap().2.clone();
    assert!(
        last.contains("test-model cannot take images") && last.contains("/model"),
        "{last}"
    );
    assert!(fake.chat_requests().is_empty(), "nothing may be sent");
    // Nothing was saved either: the session has no user message.
    let sessions = app.store.list().unwrap();
    for s in sessions {
        let loaded = app.store.load(&s.id).unwrap().unwrap();
        assert!(
            loaded
                .display
                .iter()
                .all(|m| m.msg.role != navi::llm::Role::User)
        );
    }
}
