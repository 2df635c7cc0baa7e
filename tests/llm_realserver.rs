//! Real local servers first (issue 11): the base prompt's token budget per
//! shipped profile, the window known before sending, prefix-cache-friendly
//! requests, a retry on a fresh connection, generation guards, OLLAMA_HOST.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use navi::agent::budget::{DEFAULT_PROFILE_BUDGET, PROFILE_BUDGET};
use navi::app::{App, AppOptions};
use navi::config::{Config, Overrides, Paths};

fn paths(dir: &std::path::Path) -> Paths {
    Paths {
        config_file: None,
        config_dir: dir.join("config"),
        data_dir: dir.join("data"),
        db_path: dir.join("data/navi.db"),
        log_dir: dir.join("data/logs"),
    }
}

/// The app's database, opened beside it.
fn store(app: &App) -> navi::session::SessionStore {
    navi::session::SessionStore::open(&app.paths().db_path).unwrap()
}

fn app(dir: &std::path::Path, config: Config) -> App {
    App::build(
        config,
        paths(dir),
        Overrides::default(),
        AppOptions::default(),
    )
    .unwrap()
}

#[test]
fn every_shipped_profile_base_request_is_under_budget() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path(), Config::default());
    let ids = app.profile_ids();
    assert!(ids.len() >= 6, "{ids:?}");
    let mut report = Vec::new();
    for id in &ids {
        let cost = app.engine().base_cost(id).unwrap();
        report.push(navi::agent::budget::render(&cost).join("\n"));
        // Tools on demand: a few core schemas plus `load_tools`, or (the
        // discussion profile) a handful of small tools not worth deferring.
        let on_demand = cost.tools.iter().any(|t| t.name == "load_tools");
        assert!(
            (on_demand && cost.tools.len() <= 4) || cost.tools.len() <= 6,
            "{id}: {cost:?}"
        );
        let limit = if id == "developer" {
            DEFAULT_PROFILE_BUDGET
        } else {
            PROFILE_BUDGET
        };
        assert!(
            cost.total <= limit,
            "{id}: {} > {limit}\n{}",
            cost.total,
            report.join("\n")
        );
    }
    eprintln!("{}", report.join("\n"));
}

// ---- against the fake server, through the real agent ----

use navi::agent::{AgentError, TurnOutcome};
use navi::config::BackendKind;
use navi::protocol::{AgentEvent, EventSink};
use serde_json::{Value, json};
use support::{FakeLlm, Fault, Reply};
use tokio_util::sync::CancellationToken;

const KINDS: [BackendKind; 2] = [BackendKind::Ollama, BackendKind::Openai];

fn config_for(kind: BackendKind, fake: &FakeLlm) -> Config {
    let mut c = Config::default();
    c.llm.backend = kind;
    c.llm.ollama_host = fake.ollama_url();
    c.llm.openai_base_url = fake.openai_url();
    c
}

async fn turn(
    app: &App,
    session: &str,
    msg: &str,
) -> (Result<TurnOutcome, AgentError>, Vec<AgentEvent>) {
    let (sink, mut rx) = EventSink::channel(4096);
    let drain = tokio::spawn(async move {
        let mut out = Vec::new();
        while let Some(e) = rx.recv().await {
            out.push(e);
        }
        out
    });
    let open = app
        .engine()
        .open_session(session, std::env::temp_dir())
        .unwrap();
    let out = app
        .engine()
        .run_stream(&open, msg, &sink, &CancellationToken::new())
        .await;
    drop(sink);
    (out, drain.await.unwrap())
}

fn warnings(ev: &[AgentEvent]) -> Vec<String> {
    ev.iter()
        .filter_map(|e| match e {
            AgentEvent::Warning { message } => Some(message.clone()),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_window_smaller_than_the_base_prompt_is_a_clear_error_and_nothing_is_sent() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        fake.set_models(vec![("test-model".into(), Some(512))]);
        let dir = tempfile::tempdir().unwrap();
        let app = app(dir.path(), config_for(kind, &fake));
        let s = store(&app).create("developer").unwrap();
        let (out, ev) = turn(&app, &s.id, "please fix the failing test in src/main.rs").await;
        let err = out.unwrap_err();
        let msg = err.to_string();
        assert!(
            matches!(err, AgentError::PromptTooLarge { window: 512, .. }),
            "{msg}"
        );
        assert!(msg.contains("512-token window"), "{msg}");
        assert!(
            msg.contains("llama-server -c") && msg.contains("num_ctx"),
            "{msg}"
        );
        assert!(
            fake.chat_requests().is_empty(),
            "{kind:?}: nothing may be sent"
        );
        assert!(ev.iter().any(
            |e| matches!(e, AgentEvent::Error { message } if message.contains("nothing was sent"))
        ));
    }
}

#[tokio::test]
async fn a_server_context_rejection_becomes_the_same_clear_error() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::fault(Fault::Status(
        400,
        "request (5032 tokens) exceeds the available context size (4096 tokens), try increasing it"
            .into(),
    )));
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path(), config_for(BackendKind::Openai, &fake));
    let s = store(&app).create("developer").unwrap();
    let (out, _) = turn(&app, &s.id, "What is the capital of France?").await;
    let msg = out.unwrap_err().to_string();
    assert!(
        msg.contains("about 5032 tokens") && msg.contains("4096-token window"),
        "{msg}"
    );
    assert!(!msg.contains("HTTP 400"), "{msg}");
}

/// The messages of a request without the last one, as JSON text.
fn prefix_of(body: &Value) -> String {
    let msgs = body["messages"].as_array().unwrap();
    serde_json::to_string(&msgs[..msgs.len() - 1]).unwrap()
}

#[tokio::test]
async fn planner_and_main_requests_share_a_byte_identical_prefix() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        fake.push(Reply::text("Task: fix it\nREFLECT: no"));
        fake.push(Reply::text(
            "1. Read the test — TOOL: filesystem\n2. Report — SELF",
        ));
        fake.push(Reply::text("Fixed."));
        fake.push(Reply::text("Done again."));
        let dir = tempfile::tempdir().unwrap();
        let app = app(dir.path(), config_for(kind, &fake));
        let s = store(&app).create("developer").unwrap();
        let (out, _) = turn(
            &app,
            &s.id,
            "please fix the failing test in src/main.rs, then run the tests",
        )
        .await;
        assert_eq!(out.unwrap().text, "Fixed.");
        let reqs = fake.chat_requests();
        assert_eq!(reqs.len(), 3, "{kind:?}: analysis, plan, answer");
        let (analysis, plan, main) = (&reqs[0], &reqs[1], &reqs[2]);
        assert!(main["tools"].as_array().is_some_and(|t| !t.is_empty()));
        for planner in [analysis, plan] {
            assert_eq!(planner["tools"], main["tools"], "{kind:?}: same tools");
            assert_eq!(
                planner["messages"][0], main["messages"][0],
                "{kind:?}: same system prompt"
            );
            // The planner asks at the end of the user's message; the main
            // request carries that message with the plan after it.
            let user = "please fix the failing test in src/main.rs, then run the tests";
            let main_user = main["messages"][1]["content"].as_str().unwrap();
            let asked = planner["messages"][1]["content"].as_str().unwrap();
            assert!(
                asked.starts_with(user) && asked.len() > user.len(),
                "{kind:?}"
            );
            assert!(main_user.starts_with(&format!("{user}\n\n[navi] Plan")));
            assert_eq!(
                prefix_of(planner),
                serde_json::to_string(&main["messages"].as_array().unwrap()[..1]).unwrap()
            );
        }
        // Turn 2: the system prompt is byte-identical, and turn 1 is a prefix.
        let (out, _) = turn(&app, &s.id, "What is the capital of France?").await;
        assert_eq!(out.unwrap().text, "Done again.");
        let reqs = fake.chat_requests();
        assert_eq!(
            reqs.len(),
            4,
            "{kind:?}: a short plain question skips the planner"
        );
        let second = &reqs[3];
        assert_eq!(second["messages"][0], main["messages"][0]);
        assert_eq!(second["tools"], main["tools"]);
        assert_eq!(second["messages"][1], main["messages"][1]);
    }
}

#[tokio::test]
async fn ollama_gets_num_ctx_and_num_predict() {
    let fake = FakeLlm::start().await;
    fake.set_models(vec![("test-model".into(), Some(8192))]);
    fake.push(Reply::text("Paris."));
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path(), config_for(BackendKind::Ollama, &fake));
    let s = store(&app).create("developer").unwrap();
    let (out, _) = turn(&app, &s.id, "What is the capital of France?").await;
    assert_eq!(out.unwrap().text, "Paris.");
    let body = &fake.chat_requests()[0];
    // The model's length (8192) capped by [llm].num_ctx (65536): sent explicitly.
    assert_eq!(body["options"]["num_ctx"], json!(8192));
    assert_eq!(body["options"]["num_predict"], json!(4096));
}

#[tokio::test]
async fn llama_server_props_give_the_window_and_cache_prompt_and_the_server_picks_the_slot() {
    let fake = FakeLlm::start().await;
    fake.set_models(vec![("test-model".into(), Some(131072))]);
    fake.set_props(Some(json!({
        "default_generation_settings": {"n_ctx": 4096}, "total_slots": 4
    })));
    for _ in 0..3 {
        fake.push(Reply::text("ok"));
    }
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path(), config_for(BackendKind::Openai, &fake));
    let s = store(&app).create("developer").unwrap();
    let (out, ev) = turn(&app, &s.id, "What is the capital of France?").await;
    out.unwrap();
    let (_, _) = turn(&app, &s.id, "And of Spain?").await;
    let reqs = fake.chat_requests();
    assert_eq!(reqs.len(), 2);
    for r in &reqs {
        assert_eq!(r["cache_prompt"], json!(true));
        assert_eq!(r["max_tokens"], json!(4096));
    }
    // No slot pinning: the server picks the slot whose cache shares the
    // longest prefix (a pinned new session landed on an empty slot).
    assert!(reqs.iter().all(|r| r.get("id_slot").is_none()));
    // The follow-up repeats the first request's messages byte for byte.
    let first = reqs[0]["messages"].as_array().unwrap();
    let second = reqs[1]["messages"].as_array().unwrap();
    assert_eq!(&second[..first.len()], &first[..]);
    // The window is the server's n_ctx, not n_ctx_train from /v1/models.
    let window = ev.iter().find_map(|e| match e {
        AgentEvent::StreamEnd {
            max_context_tokens, ..
        } => Some(*max_context_tokens),
        _ => None,
    });
    assert_eq!(window, Some(4096));
    let props_calls = fake
        .requests()
        .iter()
        .filter(|r| r.path == "/props")
        .count();
    assert_eq!(props_calls, 1, "read once per process");
}

#[tokio::test]
async fn close_before_headers_is_retried_once_and_the_turn_succeeds() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        fake.push(Reply::fault(Fault::CloseBeforeHeaders));
        fake.push(Reply::text("Madrid."));
        let dir = tempfile::tempdir().unwrap();
        let app = app(dir.path(), config_for(kind, &fake));
        let s = store(&app).create("developer").unwrap();
        let (out, _) = turn(&app, &s.id, "And of Spain?").await;
        assert_eq!(out.unwrap().text, "Madrid.", "{kind:?}");
        assert_eq!(fake.chat_requests().len(), 2, "{kind:?}: exactly one retry");
    }
}

#[tokio::test]
async fn an_answer_cut_at_the_cap_comes_with_a_warning() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        fake.push(
            Reply::text("The answer starts here and")
                .with_finish_reason("length")
                .with_usage(900, 37),
        );
        let dir = tempfile::tempdir().unwrap();
        let app = app(dir.path(), config_for(kind, &fake));
        let s = store(&app).create("developer").unwrap();
        let (out, ev) = turn(&app, &s.id, "What is the capital of France?").await;
        assert_eq!(out.unwrap().text, "The answer starts here and");
        let w = warnings(&ev);
        assert!(
            w.iter()
                .any(|m| m.contains("the answer was cut at 37 tokens")),
            "{kind:?}: {w:?}"
        );
    }
}

#[tokio::test]
async fn a_runaway_repetition_is_stopped_with_a_warning() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        let looped = format!(
            "Sure. {}",
            "Paris is the capital of France and its largest city. ".repeat(400)
        );
        fake.push(Reply::text(looped.clone()));
        fake.push(Reply::text("A table:\n| a | b |\n|---|---|\n| 1 | 2 |"));
        let dir = tempfile::tempdir().unwrap();
        let app = app(dir.path(), config_for(kind, &fake));
        let s = store(&app).create("developer").unwrap();
        let (out, ev) = turn(&app, &s.id, "What is the capital of France?").await;
        let text = out.unwrap().text;
        assert!(text.starts_with("Sure. Paris is the capital"), "{kind:?}");
        assert!(
            text.len() < looped.len() / 2,
            "{kind:?}: stopped early ({} bytes)",
            text.len()
        );
        let w = warnings(&ev);
        assert!(
            w.iter().any(|m| m.contains("kept repeating")),
            "{kind:?}: {w:?}"
        );
        // The stored answer is what was shown.
        let stored = store(&app).load(&s.id).unwrap().unwrap();
        assert_eq!(stored.display.last().unwrap().msg.text(), text);
        // An ordinary answer raises no warning.
        let (out, ev) = turn(&app, &s.id, "And a table?").await;
        out.unwrap();
        assert!(warnings(&ev).is_empty(), "{kind:?}");
    }
}
