//! Images a model cannot take, through the real binary: `navi run` on both
//! wire protocols (refused before sending, exit 1, no empty session; a
//! server's refusal leaves a session the next `navi run -c` continues) and
//! `navi --plain` with piped lines (the refused message is kept).
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::cli_support::{Env, last_user};
use crate::plain_support::{Home, piped};
use crate::support::{FakeLlm, Fault, Reply};
use navi::session::SessionStore;
use serde_json::{Value, json};
use std::path::Path;

const PNG: &[u8] = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR\0\0\0\x01\0\0\0\x01\x08\x02\0\0\0";

fn sessions(data: &Path) -> usize {
    let db = data.join("navi.db");
    if !db.exists() {
        return 0;
    }
    SessionStore::open(&db).unwrap().list().unwrap().len()
}

fn has_image(body: &Value) -> bool {
    let s = body.to_string();
    s.contains("\"type\":\"image_url\"") || s.contains("\"images\":[")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn navi_run_refuses_an_image_for_a_text_only_model_before_sending() {
    for backend in ["ollama", "openai"] {
        let env = Env::new();
        std::fs::write(env.path("shot.png"), PNG).unwrap();
        let fake = FakeLlm::start().await;
        // Ollama lists completion, tools, thinking (no vision); the
        // OpenAI-compatible side says input_modalities: text.
        fake.set_model_fields(json!({"input_modalities": ["text"]}));
        fake.push(Reply::text("never"));
        let o = env
            .run(
                &fake,
                backend,
                &["run", "-p", "tester", "-f", "shot.png", "what is this?"],
            )
            .await;
        assert_eq!(o.code, 1, "{backend}: {}", o.stderr);
        assert!(
            o.stderr.contains("test-model on ")
                && o.stderr.contains("accepts only text")
                && o.stderr.contains("nothing was sent"),
            "{backend}: {}",
            o.stderr
        );
        assert!(fake.chat_requests().is_empty(), "{backend}: nothing sent");
        assert_eq!(
            sessions(&env.path("data")),
            0,
            "{backend}: no empty session"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn navi_run_continues_a_session_whose_image_the_server_refused() {
    for (backend, refusal) in [
        ("openai", "image input is not supported"),
        ("ollama", "model does not support image input"),
        (
            "openai",
            "{\"error\":{\"code\":400,\"message\":\"Invalid content type. image_url is only supported by certain models.\"}}",
        ),
    ] {
        let env = Env::new();
        std::fs::write(env.path("shot.png"), PNG).unwrap();
        let fake = FakeLlm::start().await;
        fake.set_capabilities(&["completion", "tools", "vision"]);
        let status = if refusal.contains("400") { 400 } else { 500 };
        fake.push(Reply::text("").with_fault(Fault::Status(status, refusal.into())));
        let o = env
            .run(
                &fake,
                backend,
                &["run", "-p", "tester", "-f", "shot.png", "what is this?"],
            )
            .await;
        assert_eq!(o.code, 1, "{backend}: {}", o.stderr);
        assert!(
            o.stderr.contains("refused the image") && o.stderr.contains("goes on"),
            "{backend}: {}",
            o.stderr
        );
        // Refused once, not retried with backoff.
        assert_eq!(fake.chat_requests().len(), 1, "{backend}");
        fake.push(Reply::text("answered in words"));
        let o = env
            .run(&fake, backend, &["run", "-c", "and now, in words?"])
            .await;
        assert_eq!(o.code, 0, "{backend}: {}", o.stderr);
        assert!(
            o.stdout.contains("answered in words"),
            "{backend}: {}",
            o.stdout
        );
        let reqs = fake.chat_requests();
        let next = reqs.last().unwrap();
        assert!(!has_image(next), "{backend}: {next}");
        let text = next.to_string();
        assert!(
            text.contains("what is this?") && text.contains("[image not sent: model is text-only]"),
            "{backend}: {text}"
        );
        assert!(
            last_user(next).to_string().contains("and now, in words?"),
            "{backend}: {next}"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_mode_keeps_a_refused_message_for_the_next_line() {
    let fake = FakeLlm::start().await;
    // The Ollama fake lists no "vision": refused before sending.
    fake.push(Reply::text("never"));
    let home = Home::new(&fake.ollama_url());
    std::fs::write(home.dir.path().join("shot.png"), PNG).unwrap();
    let cmd = home.command("dumb", &[]);
    let input = "/attach shot.png\nwhat is this?\n/attach\n";
    let (code, out, err) = tokio::task::spawn_blocking(move || piped(cmd, input))
        .await
        .unwrap();
    let all = format!("{out}\n{err}");
    assert_eq!(code, 1, "a refused turn is a failure: {all}");
    assert!(all.contains("accepts only text"), "{all}");
    assert!(all.contains("your message is kept: what is this?"), "{all}");
    assert!(all.contains("1 attachment(s) stay queued"), "{all}");
    // `/attach` lists the image, still queued for the next line.
    assert!(
        all.contains("attached to your next message:") && all.contains("1. shot.png"),
        "{all}"
    );
    assert!(fake.chat_requests().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_from_a_tool_that_the_server_refuses_leaves_a_usable_session() {
    let env = Env::new();
    std::fs::write(env.path("shot.png"), PNG).unwrap();
    let cfg = json!({
        "id": "tester", "name": "Tester", "description": "test profile",
        "model": ["test-model"], "temperature": 0.2,
        "enabled_tools": ["image_view"],
        "planning_phase1_enabled": false, "planning_phase3_enabled": false,
        "iteration_budget_enabled": false, "goal_anchoring_enabled": false
    });
    std::fs::write(env.path("cfg/profiles/tester/config.json"), cfg.to_string()).unwrap();
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call("image_view", json!({"path": "shot.png"})));
    fake.push(Reply::text("").with_fault(Fault::Status(
        500,
        "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj".into(),
    )));
    let o = env
        .run(
            &fake,
            "openai",
            &["run", "--json", "-p", "tester", "look at shot.png"],
        )
        .await;
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(o.stderr.contains("refused the image"), "{}", o.stderr);
    assert!(
        has_image(&fake.chat_requests()[1]),
        "the tool's image was sent once"
    );
    // The user's message had no image: it is not handed back.
    assert!(o.stdout.contains("\"type\":\"error\""), "{}", o.stdout);
    assert!(!o.stdout.contains("input_returned"), "{}", o.stdout);
    fake.push(Reply::text("answered in words"));
    let o = env.run(&fake, "openai", &["run", "-c", "go on"]).await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    let next = fake.chat_requests().last().unwrap().clone();
    assert!(!has_image(&next), "{next}");
    assert!(
        next.to_string()
            .contains("[image not sent: model is text-only]"),
        "{next}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn navi_run_json_hands_a_refused_message_back() {
    let env = Env::new();
    std::fs::write(env.path("shot.png"), PNG).unwrap();
    let fake = FakeLlm::start().await;
    fake.set_props(Some(
        json!({"n_ctx": 4096, "modalities": {"vision": false}}),
    ));
    let o = env
        .run(
            &fake,
            "openai",
            &[
                "run",
                "--json",
                "-p",
                "tester",
                "-f",
                "shot.png",
                "what is this?",
            ],
        )
        .await;
    assert_eq!(o.code, 1, "{}", o.stderr);
    let kinds: Vec<String> = o
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .map(|v| v["type"].as_str().unwrap_or("").to_string())
        .collect();
    let at = kinds.iter().position(|k| k == "input_returned");
    assert!(
        at.is_some() && kinds.get(at.unwrap() + 1).map(String::as_str) == Some("error"),
        "{kinds:?}"
    );
    assert!(
        o.stderr.contains("modalities.vision: false"),
        "{}",
        o.stderr
    );
    assert!(fake.chat_requests().is_empty());
    assert_eq!(sessions(&env.path("data")), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_mode_on_a_terminal_puts_a_refused_message_back_in_the_prompt() {
    let fake = FakeLlm::start().await;
    let home = Home::new(&fake.ollama_url());
    std::fs::write(home.dir.path().join("shot.png"), PNG).unwrap();
    let mut pty =
        crate::plain_support::Pty::spawn(home.command("xterm-256color", &[("NO_COLOR", "1")]));
    pty.wait_for("navi[tester]> ");
    pty.send("/attach shot.png\r");
    pty.wait_for("goes with your next message");
    pty.send("what is this?\r");
    pty.wait_for("accepts only text");
    pty.wait_for("your message is kept: it is in the prompt below");
    pty.wait_for("what is this?");
    // Enter sends the kept text again, with the kept image: refused again.
    pty.send("\r");
    pty.wait_for("accepts only text");
    pty.wait_for("your message is kept");
    // The line editor shows the kept text again: it reads keys now.
    pty.wait_for("what is this?");
    // Ctrl-C clears the kept text; Ctrl-D on the empty line then quits (a
    // person's keys, not two bytes in one read).
    pty.send("\x03");
    std::thread::sleep(std::time::Duration::from_millis(500));
    pty.send("\x04");
    assert_eq!(pty.exit_code(), 0);
    assert!(fake.chat_requests().is_empty());
}
