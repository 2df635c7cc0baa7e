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
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use serde_json::Value;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use support::{FakeLlm, Fault, Reply};
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
/// their descriptions, the composer's text and, when idle, the last
/// transcript cell).
type Frame = (usize, String, String);
type Frames = Arc<Mutex<Vec<Frame>>>;

/// One step of a scripted session.
enum Step {
    /// Typed and sent with Enter (after `/attach`, waits until it queued).
    Line(String),
    Key(KeyCode, KeyModifiers),
    /// Waits until a frame passes the check.
    Wait(&'static str, fn(&Frame) -> bool),
}

fn line(s: &str) -> Step {
    Step::Line(s.to_string())
}

async fn drive(app: &App, script: Vec<&str>, done: fn(&Frame) -> bool) -> Frames {
    let mut steps: Vec<Step> = script.into_iter().map(line).collect();
    steps.push(Step::Wait("the end of the turn", done));
    drive_steps(app, steps).await
}

async fn drive_steps(app: &App, steps: Vec<Step>) -> Frames {
    let session = navi::ui::tui::open_session(app, &SessionChoice::New, None)
        .ok()
        .unwrap();
    let st = navi::ui::tui::initial_state(app, &session).ok().unwrap();
    let (ktx, krx) = mpsc::unbounded_channel::<Event>();
    let mut input = Box::pin(futures_util::stream::unfold(krx, |mut rx| async move {
        rx.recv().await.map(|e| (Ok(e), rx))
    }))
    .fuse();
    let mut terminal = Terminal::new(TestBackend::new(120, 24)).unwrap();
    let mut lp = EventLoop::new(app, session, st);
    let opts = LoopOptions {
        max_fps: 120,
        check_backend: false,
    };
    let frames: Frames = Arc::default();
    let seen = frames.clone();
    let key = move |c: KeyCode, m: KeyModifiers| {
        ktx.send(Event::Key(KeyEvent::new(c, m))).unwrap();
    };
    let script = async move {
        let wait = |what: &'static str, f: fn(&Frame) -> bool| {
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
        for step in steps {
            match step {
                Step::Line(l) => {
                    for c in l.chars() {
                        key(KeyCode::Char(c), KeyModifiers::NONE);
                    }
                    key(KeyCode::Enter, KeyModifiers::NONE);
                    if l.starts_with("/attach ") && !l.ends_with(" clear") {
                        wait("the attachment queued", |f| f.0 > 0).await;
                    }
                }
                Step::Key(c, m) => key(c, m),
                Step::Wait(what, f) => wait(what, f).await,
            }
        }
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
            screen.push_str(&format!("\ncomposer: {}", st.composer.text));
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
    let (res, ()) = tokio::time::timeout(Duration::from_secs(60), async {
        tokio::join!(looped, script)
    })
    .await
    .expect("the loop did not quit");
    res.unwrap();
    lp.session().close().await;
    frames
}

/// The app's database, opened beside it to look at what was stored.
fn store(app: &App) -> navi::session::SessionStore {
    navi::session::SessionStore::open(&app.paths().db_path).unwrap()
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
    let last = frames.lock().unwrap().last().unwrap().clone();
    assert!(
        last.2.contains("test-model on ")
            && last.2.contains("accepts only text")
            && last
                .2
                .contains("it lists the capabilities: completion, tools, thinking")
            && last.2.contains("/model"),
        "{last:?}"
    );
    assert_refused_and_given_back(&fake, &app, &last);
}

const QUESTION: &str = "what is in this picture?";

/// Nothing went to the server, nothing was stored, and the text and the
/// image are back in the composer.
fn assert_refused_and_given_back(fake: &FakeLlm, app: &App, last: &Frame) {
    assert!(fake.chat_requests().is_empty(), "nothing may be sent");
    assert!(
        last.2.contains(&format!("composer: {QUESTION}")),
        "the text is back in the composer: {last:?}"
    );
    assert_eq!(last.0, 1, "the image is queued again: {last:?}");
    assert!(last.2.starts_with("shot.png (image)"), "{last:?}");
    // Nothing was saved: the new session never got a row.
    assert!(app.sessions().unwrap().is_empty());
}

/// An OpenAI-compatible server that says the model takes only text:
/// refused before sending, the message comes back.
async fn refused_on_openai(fake: FakeLlm, evidence: &'static str) {
    fake.push(Reply::text("never"));
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("shot.png"), PNG).unwrap();
    let app = app(dir.path(), BackendKind::Openai, &fake);
    let attach = format!("/attach {}", dir.path().join("shot.png").display());
    let frames = drive(&app, vec![&attach, QUESTION], |f| {
        f.2.contains("accepts only text")
    })
    .await;
    let last = frames.lock().unwrap().last().unwrap().clone();
    assert!(
        last.2
            .contains(&format!("test-model on {}", fake.openai_url())),
        "{last:?}"
    );
    assert!(last.2.contains(evidence), "{evidence}: {last:?}");
    assert_refused_and_given_back(&fake, &app, &last);
}

#[tokio::test]
async fn a_text_only_model_in_v1_models_is_refused_before_sending() {
    let fake = FakeLlm::start().await;
    fake.set_model_fields(serde_json::json!({"input_modalities": ["text"]}));
    refused_on_openai(fake, "input_modalities: text").await;
}

#[tokio::test]
async fn llama_servers_props_without_vision_is_refused_before_sending() {
    let fake = FakeLlm::start().await;
    fake.set_props(Some(serde_json::json!({
        "default_generation_settings": {"n_ctx": 8192},
        "total_slots": 1,
        "modalities": {"vision": false, "audio": false}
    })));
    refused_on_openai(fake, "modalities.vision: false").await;
}

#[tokio::test]
async fn llama_servers_capability_list_and_lm_studio_types_are_read() {
    for (fields, evidence) in [
        (
            serde_json::json!({"capabilities": ["completion"]}),
            "capabilities: completion",
        ),
        (
            serde_json::json!({"type": "llm"}),
            "LM Studio lists it as type",
        ),
    ] {
        let fake = FakeLlm::start().await;
        fake.set_model_fields(fields);
        refused_on_openai(fake, evidence).await;
    }
}

/// No image in any chat request after the first.
fn images_in(body: &Value) -> bool {
    let s = body.to_string();
    s.contains("image_url") || s.contains("\"images\"")
}

#[tokio::test]
async fn a_server_that_refuses_an_image_does_not_poison_the_session() {
    for (kind, refusal) in [
        (
            BackendKind::Openai,
            "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj",
        ),
        (
            BackendKind::Ollama,
            "this model is missing data required for image input",
        ),
    ] {
        let fake = FakeLlm::start().await;
        // The server says nothing against images (Ollama even lists
        // "vision"), then refuses the image anyway.
        fake.set_capabilities(&["completion", "tools", "vision"]);
        fake.push(Reply::text("").with_fault(Fault::Status(500, refusal.into())));
        for _ in 0..3 {
            fake.push(Reply::text("fine answer without the picture"));
        }
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("shot.png"), PNG).unwrap();
        let app = app(dir.path(), kind, &fake);
        let attach = format!("/attach {}", dir.path().join("shot.png").display());
        let frames = drive_steps(
            &app,
            vec![
                line(&attach),
                line(QUESTION),
                Step::Wait("the refusal, the message back", |f| {
                    f.2.contains("refused the image") && f.2.contains("composer: what is in")
                }),
                // Sent again as it is: now refused before sending.
                Step::Key(KeyCode::Enter, KeyModifiers::NONE),
                Step::Wait("the refusal before sending", |f| {
                    f.2.contains("refused an image for it earlier")
                        && f.2.contains("composer: what is in")
                }),
                Step::Key(KeyCode::Char('u'), KeyModifiers::CONTROL),
                line("/attach clear"),
                line("and now, in words?"),
                Step::Wait("the next answer", |f| f.1.contains("fine answer")),
            ],
        )
        .await;
        let shown = frames
            .lock()
            .unwrap()
            .iter()
            .any(|f| f.2.contains("HTTP 500") && f.2.contains(refusal));
        assert!(shown, "{kind:?}: the server's words are shown");
        let reqs = fake.chat_requests();
        assert!(
            images_in(&reqs[0]),
            "{kind:?}: the first request had the image"
        );
        let after = &reqs[1..];
        assert!(!after.is_empty(), "{kind:?}: the next message was sent");
        for r in after {
            assert!(!images_in(r), "{kind:?}: an image was sent again: {r}");
        }
        let last = after.last().unwrap().to_string();
        assert!(
            last.contains("[image not sent: model is text-only]")
                && last.contains("and now, in words?"),
            "{kind:?}: {last}"
        );
        // The transcript (display copy) still has the image.
        let s = &app.sessions().unwrap()[0];
        let loaded = store(&app).load(&s.id).unwrap().unwrap();
        assert!(
            loaded.display.iter().any(|m| m.msg.has_images()),
            "{kind:?}: the transcript keeps the image"
        );
        assert!(
            loaded
                .context
                .iter()
                .all(|m| m.msg.images().next().is_none()),
            "{kind:?}: the model's copy has none"
        );
    }
}
