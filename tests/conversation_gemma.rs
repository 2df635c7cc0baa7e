//! The real strict template (issue 31): a session against llama-server
//! serving Gemma 3 270M with Gemma 3's own chat template, which raises on
//! any role order but user/assistant alternating and has no tool role.
//!
//! Runs only when `NAVI_GEMMA_URL` names such a server's OpenAI base
//! (e.g. `http://127.0.0.1:18094/v1`); otherwise it says so and passes
//! without checking anything. The small model will not call tools, so the
//! tool turn (and the steer at its approval question) is scripted on the
//! fake server, reached over the Ollama protocol by a second profile; the
//! other turns — a planned first turn, /compact, a pinned message, a stopped
//! answer, /rewind and a follow-up — are Gemma's.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::support::{FakeLlm, Reply};
use navi::app::{App, AppOptions, OpenOptions, SessionChoice};
use navi::config::{BackendKind, Config, Overrides, Paths};
use navi::protocol::{AgentEvent, CompactMode, Decision, Op, SessionEvent, TurnEnd};
use serde_json::json;
use std::time::Duration;

const GEMMA_MODEL: &str = "/opt/gemma/gemma-3-270m-q4_k_m.gguf";

fn profile(dir: &std::path::Path, id: &str, backend: &str, model: &str, plan: bool) {
    let d = dir.join(format!("cfg/profiles/{id}"));
    std::fs::create_dir_all(&d).unwrap();
    let p = json!({
        "id": id, "name": id, "description": "gemma check",
        "model": [model], "enabled_tools": ["todo", "http_request"], "llm_backend": backend,
        "planning_enabled": plan, "planning_phase1_enabled": plan,
        "planning_phase3_enabled": plan, "planning_mandatory": plan,
        "iteration_budget_enabled": false, "goal_anchoring_enabled": false,
        "anti_stall_enabled": false, "think_enabled": false, "temperature": 0.2
    });
    std::fs::write(d.join("config.json"), p.to_string()).unwrap();
    std::fs::write(d.join("system_prompt.txt"), "You are a terse helper.").unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_gemma_session_sees_no_template_error() {
    let Ok(url) = std::env::var("NAVI_GEMMA_URL") else {
        eprintln!("NAVI_GEMMA_URL is not set: the real Gemma check is skipped");
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start().await;
    profile(dir.path(), "gemma", "openai", GEMMA_MODEL, true);
    profile(dir.path(), "scripted", "ollama", "test-model", false);
    let mut c = Config::default();
    c.llm.openai_base_url = url;
    c.llm.ollama_host = fake.ollama_url();
    c.llm.backend = BackendKind::Openai;
    c.llm.num_ctx = 4096;
    let d = dir.path();
    let paths = Paths {
        config_file: None,
        config_dir: d.join("cfg"),
        data_dir: d.join("data"),
        db_path: d.join("data/navi.db"),
        log_dir: d.join("data/logs"),
    };
    let opts = AppOptions {
        interactive: true,
        ..AppOptions::default()
    };
    let app = App::build(c, paths, Overrides::default(), opts).unwrap();
    let mut h = app
        .open_handle(
            &SessionChoice::New,
            OpenOptions {
                profile: Some("gemma".into()),
                ..OpenOptions::default()
            },
        )
        .unwrap();
    let mut rx = h.take_events().unwrap();
    let mut errors: Vec<String> = Vec::new();
    let mut log: Vec<String> = Vec::new();
    macro_rules! turn {
        ($label:expr, $act:expr) => {{
            let mut approval = None;
            let end = loop {
                let ev = tokio::time::timeout(Duration::from_secs(300), rx.recv())
                    .await
                    .expect("the turn ends")
                    .expect("open stream");
                match ev {
                    SessionEvent::Agent {
                        event: AgentEvent::Error { message },
                    } => errors.push(format!("{}: {message}", $label)),
                    SessionEvent::Agent {
                        event: AgentEvent::ApprovalRequest { id, .. },
                    } => approval = Some(id),
                    SessionEvent::Agent {
                        event: AgentEvent::StreamDelta { .. },
                    } if $act == "stop" => {
                        let _ = h.submit(Op::Stop);
                    }
                    SessionEvent::TurnEnded { end, .. } => break end,
                    _ => {}
                }
                if let Some(id) = approval.take() {
                    h.submit(Op::Steer {
                        text: "also keep it short".into(),
                    })
                    .unwrap();
                    fake.push(Reply::text("Fetched nothing, as you asked."));
                    h.submit(Op::Approval {
                        id,
                        decision: Decision::Deny,
                    })
                    .unwrap();
                }
            };
            log.push(format!("{}: {end:?}", $label));
            end
        }};
    }
    let send = |h: &navi::app::SessionHandle, t: &str| {
        h.submit(Op::UserMessage {
            text: t.into(),
            attachments: vec![],
        })
        .unwrap()
    };
    // 1. A planned first turn on Gemma.
    send(&h, "Write a two-step plan to rename a file, then say done.");
    turn!("planned", "");
    // 2. A tool turn with a steer at the approval question (scripted).
    h.submit(Op::SwitchProfile {
        profile: "scripted".into(),
    })
    .unwrap();
    fake.push(Reply::tool_call(
        "todo",
        json!({"action": "add", "items": ["rename"]}),
    ));
    let url = format!("{}/nothing", fake.base_url);
    fake.push(Reply::tool_call("http_request", json!({"url": url})));
    send(&h, "Add the step to the list and fetch the page.");
    turn!("tool turn", "");
    h.submit(Op::SwitchProfile {
        profile: "gemma".into(),
    })
    .unwrap();
    // 3. Pin the first message, compact (Gemma summarises), go on.
    h.submit(Op::Pin {
        index: 1,
        pinned: true,
    })
    .unwrap();
    h.submit(Op::Compact {
        mode: CompactMode::Now,
    })
    .unwrap();
    turn!("compact", "");
    send(&h, "What was the first thing I asked?");
    turn!("after compact", "");
    // 4. A stopped answer, then a message of its own.
    send(&h, "Count slowly from one to fifty in words.");
    turn!("stopped", "stop");
    send(&h, "hello there");
    let last = turn!("after stop", "");
    // 5. /rewind to the stopped message (user messages: the planned one,
    // the tool turn's, the steer, the question after /compact, the stopped
    // one, "hello there") and a follow-up.
    let r = h.submit(Op::Rewind {
        message: 5,
        files: false,
        force: false,
    });
    log.push(format!("rewind: {}", r.is_ok()));
    send(&h, "Say one short sentence about files.");
    turn!("follow-up", "");
    eprintln!("gemma session: {log:#?}");
    let template: Vec<&String> = errors
        .iter()
        .filter(|e| e.contains("template") || e.contains("alternate"))
        .collect();
    assert!(
        template.is_empty(),
        "template errors: {template:#?}\n{log:#?}"
    );
    assert!(errors.is_empty(), "errors: {errors:#?}\n{log:#?}");
    assert!(matches!(last, TurnEnd::Done { .. }), "{log:#?}");
    assert!(r.is_ok(), "{r:?}");
}
