//! Real token counts and small windows (issue 23 items 3 and 8, issue 26
//! item 15): against a fake llama-server that counts (`/tokenize`,
//! `/apply-template`, usage, the window refusal) with a tokenizer denser
//! than navi's estimate, every figure navi shows is the server's count
//! within 5 %, and a paste larger than a 4,096-token window is answered
//! from its head and tail, never refused.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::{context_support, support};

use context_support::{Ctx, navi, turn, warnings};
use navi::agent::AgentError;
use navi::app::{App, AppOptions};
use navi::config::{BackendKind, Config, Overrides, Paths};
use navi::protocol::{AgentEvent, EventSink};
use serde_json::{Value, json};
use support::{FakeLlm, Reply};
use tokio_util::sync::CancellationToken;

const W: u64 = 4096;

/// A profile with a fixed cost like the shipped developer profile's (its
/// tool schemas take most of it) and no planning.
fn write_profile(config_dir: &std::path::Path) {
    let p = config_dir.join("profiles/paster");
    std::fs::create_dir_all(&p).unwrap();
    let cfg = json!({
        "id": "paster", "name": "Paster", "description": "test profile",
        "model": ["test-model"], "temperature": 0.2,
        "enabled_tools": ["todo", "scratchpad", "switch_profile", "filesystem", "terminal",
                          "code_exec", "web_search", "web_view", "http_request", "image_view",
                          "memory_search", "memory_forget", "list_tools", "tool_manual"],
        "planning_phase1_enabled": false, "planning_phase3_enabled": false,
        "iteration_budget_enabled": false, "goal_anchoring_enabled": false
    });
    std::fs::write(p.join("config.json"), cfg.to_string()).unwrap();
    std::fs::write(
        p.join("system_prompt.txt"),
        "You help with code and text. Be brief and exact.",
    )
    .unwrap();
    std::fs::write(config_dir.join("persona.txt"), "TEST-PERSONA").unwrap();
}

/// A session on a counting fake llama-server with a `W`-token window.
async fn counting_setup(counting: bool, edit: impl FnOnce(&mut Config)) -> Ctx {
    let fake = FakeLlm::start().await;
    fake.set_models(vec![("test-model".into(), Some(W))]);
    fake.set_props(Some(
        json!({"default_generation_settings": {"n_ctx": W}, "total_slots": 1}),
    ));
    fake.set_counting(counting);
    let dir = tempfile::tempdir().unwrap();
    let paths = Paths {
        config_file: None,
        config_dir: dir.path().join("config"),
        data_dir: dir.path().join("data"),
        db_path: dir.path().join("data/navi.db"),
        log_dir: dir.path().join("data/logs"),
    };
    write_profile(&paths.config_dir);
    let mut c = Config::default();
    c.llm.backend = BackendKind::Openai;
    c.llm.openai_base_url = fake.openai_url();
    edit(&mut c);
    let opts = AppOptions {
        backend_forced: true,
        ..AppOptions::default()
    };
    let app = App::build(c, paths, Overrides::default(), opts).unwrap();
    Ctx::new(dir, app, fake, "paster")
}

/// About 3,000 words (18 KB) of prose, numbered so head and tail show.
fn paste() -> String {
    let mut s = String::from("Please summarise this report.\n\n");
    for i in 0..3000 {
        s.push_str(&format!("word{i} "));
        if i % 12 == 11 {
            s.push('\n');
        }
    }
    s
}

fn within_5_percent(shown: u64, server: u64) -> bool {
    shown as f64 >= server as f64 * 0.95 && shown as f64 <= server as f64 * 1.05
}

fn compactions(ev: &[AgentEvent]) -> Vec<(usize, usize)> {
    ev.iter()
        .filter_map(|e| match e {
            AgentEvent::ContextCompressed {
                messages_before,
                messages_after,
                ..
            } => Some((*messages_before, *messages_after)),
            _ => None,
        })
        .collect()
}

#[tokio::test]
async fn a_3000_word_paste_and_five_follow_ups_in_a_4096_window_are_all_answered() {
    let ctx = counting_setup(true, |_| {}).await;
    let text = paste();
    assert!(
        ctx.fake
            .prompt_tokens(&json!({"messages": [{"role": "user", "content": text}]}))
            > W
    );
    ctx.fake.push(Reply::text("The report counts words."));
    let (out, ev) = turn(&ctx, &text).await;
    let out = out.unwrap_or_else(|e| panic!("the paste was refused: {e}"));
    assert_eq!(out.text, "The report counts words.");
    assert!(
        !warnings(&ev).iter().any(|w| w.contains("nothing was sent")),
        "{:?}",
        warnings(&ev)
    );
    let mut all_compactions = compactions(&ev);
    for i in 0..5 {
        // Long answers: the window fills and the paste turn is compacted.
        ctx.fake.push(Reply::text(context_support::long_answer(i)));
        let (out, ev) = turn(&ctx, &format!("follow-up {i}: and what else?")).await;
        out.unwrap_or_else(|e| panic!("follow-up {i}: {e}"));
        all_compactions.extend(compactions(&ev));
    }
    let requests = ctx.fake.chat_requests();
    for (n, body) in requests.iter().enumerate() {
        let count = ctx.fake.prompt_tokens(body);
        assert!(
            count < W,
            "request {n} is {count} tokens, over the {W}-token window"
        );
    }
    // The paste went out as head + tail + the stored file's path.
    let first = requests[0]["messages"].as_array().unwrap();
    let sent = first.last().unwrap()["content"].as_str().unwrap();
    assert!(
        sent.contains("word0 ") && sent.contains("word2999"),
        "{sent}"
    );
    assert!(!sent.contains("word1500 "), "the middle is cut");
    assert!(sent.contains("The full text is in"), "{sent}");
    let s = ctx.store.load(&ctx.sid).unwrap().unwrap();
    assert!(
        s.display.iter().any(|m| m.msg.text() == text),
        "the transcript keeps the paste whole"
    );
    // The paste turn was compacted away at some point.
    assert!(
        all_compactions.iter().any(|(b, a)| a < b),
        "{all_compactions:?}"
    );
    // Summary calls are the session's own request (same system message,
    // tools and messages, byte for byte) plus an instruction at the end, so
    // the server's cache of that prefix is reused.
    let mut reused = 0;
    for (i, r) in requests.iter().enumerate() {
        if !context_support::is_prefix_summary_request(r) {
            continue;
        }
        let msgs = r["messages"].as_array().unwrap();
        let prev = requests[..i]
            .iter()
            .rev()
            .find(|p| !context_support::is_summary_request(p))
            .unwrap();
        let prev_msgs = prev["messages"].as_array().unwrap();
        assert_eq!(r["tools"], prev["tools"]);
        assert_eq!(msgs[0], prev_msgs[0]);
        let n = msgs.len() - 1;
        assert!(n >= 2 && n <= prev_msgs.len() + 1, "{n}");
        assert_eq!(
            msgs[1..n.min(prev_msgs.len())],
            prev_msgs[1..n.min(prev_msgs.len())]
        );
        reused += 1;
    }
    assert!(reused > 0, "no summary call reused the session's prefix");
    // Every follow-up got the server's answer or the fake's default.
    assert_eq!(
        requests
            .iter()
            .filter(|r| !context_support::is_summary_request(r))
            .count(),
        6
    );
}

#[tokio::test]
async fn a_paste_piped_as_an_attachment_sized_message_fits_a_session_with_history() {
    // History first: several short turns, then the paste lands on top.
    let ctx = counting_setup(true, |_| {}).await;
    for i in 0..4 {
        ctx.fake.push(Reply::text(context_support::long_answer(i)));
        turn(&ctx, &format!("question {i}")).await.0.unwrap();
    }
    let (out, _) = turn(&ctx, &paste()).await;
    out.unwrap_or_else(|e| panic!("the paste was refused: {e}"));
    for (n, body) in ctx.fake.chat_requests().iter().enumerate() {
        let count = ctx.fake.prompt_tokens(body);
        assert!(count < W, "request {n} is {count} tokens");
    }
}

#[tokio::test]
async fn compact_does_what_automatic_compaction_does() {
    // The same paste turn in two sessions: one compacts by itself after
    // the answer, the other (automatic compaction off) with /compact.
    // Every tool schema on every request (as before tools on demand): the
    // sizes below are planned with that base.
    let auto = counting_setup(true, |c| c.tools.on_demand = false).await;
    let manual = counting_setup(true, |c| {
        c.context.compression_threshold = 1.0;
        c.tools.on_demand = false;
    })
    .await;
    let text = paste();
    let mut shapes = Vec::new();
    // A long answer: the paste turn alone is over the compaction threshold.
    let answer = (0..3).map(context_support::long_answer).collect::<String>();
    for ctx in [&auto, &manual] {
        ctx.fake.push(Reply::text(answer.clone()));
        let (out, ev) = turn(ctx, &text).await;
        out.unwrap();
        let events = if std::ptr::eq(ctx, &manual) {
            assert!(compactions(&ev).is_empty(), "automatic compaction is off");
            let (sink, mut rx) = EventSink::channel(64);
            let counts = ctx
                .app
                .engine()
                .compact(&ctx.session(), &sink, &CancellationToken::new())
                .await
                .unwrap();
            assert!(
                counts.1 < counts.0,
                "/compact found nothing to compact: {counts:?}"
            );
            drop(sink);
            let mut out = Vec::new();
            while let Ok(e) = rx.try_recv() {
                out.push(e);
            }
            out
        } else {
            ev
        };
        let done = compactions(&events);
        assert_eq!(done.len(), 1, "{done:?} {:?}", warnings(&events));
        // The question and its answer, summarised together.
        assert_eq!(done[0], (2, 1));
        let s = ctx.store.load(&ctx.sid).unwrap().unwrap();
        shapes.push(
            s.context
                .iter()
                .map(|m| (m.msg.role, m.kind))
                .collect::<Vec<_>>(),
        );
        // The account after it is under the compaction threshold.
        let acc = ctx.app.engine().context_account(&ctx.sid).unwrap();
        assert!((acc.used as f64) < W as f64 * 0.8, "{acc:?}");
    }
    assert_eq!(shapes[0], shapes[1]);
    // And the next message is answered in both.
    for ctx in [&auto, &manual] {
        ctx.fake.push(Reply::text("more"));
        assert_eq!(turn(ctx, "and then?").await.0.unwrap().text, "more");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn navi_context_the_refusal_and_the_server_agree_on_the_base_request() {
    let ctx = counting_setup(true, |_| {}).await;
    // The server's count of the base request (system message and tools),
    // as navi sends it: taken from a real first request.
    ctx.fake.push(Reply::text("hi"));
    turn(&ctx, "hello").await.0.unwrap();
    let first = ctx.fake.chat_requests()[0].clone();
    let mut base_body = first.clone();
    base_body["messages"] = json!([first["messages"][0].clone()]);
    let server_base = ctx.fake.prompt_tokens(&base_body);
    // navi context.
    let out = navi(
        ctx._dir.path(),
        &ctx.fake,
        &["context", "--profile", "paster", "--json"],
    );
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let costs: Value = serde_json::from_slice(&out.stdout).unwrap();
    let counted = costs[0]["counted"].as_u64().unwrap_or_else(|| {
        let paths: Vec<String> = ctx
            .fake
            .requests()
            .iter()
            .map(|r| format!("{} {}", r.method, r.path))
            .collect();
        panic!(
            "not counted: {paths:?} {}",
            String::from_utf8_lossy(&out.stderr)
        )
    });
    assert!(
        within_5_percent(counted, server_base),
        "navi context {counted}, server {server_base}"
    );
    let text = String::from_utf8_lossy(
        &navi(
            ctx._dir.path(),
            &ctx.fake,
            &["context", "--profile", "paster"],
        )
        .stdout,
    )
    .to_string();
    assert!(
        text.contains(&format!("base request {counted} tokens")),
        "{text}"
    );
    // /context shows the same base and an account within 5 % of the
    // server's count of the last request plus its answer.
    let b = ctx.app.engine().context_breakdown(&ctx.sid).unwrap();
    let shown = serde_json::to_value(&b).unwrap()["system_and_tools"]
        .as_u64()
        .unwrap();
    assert!(
        within_5_percent(shown, server_base),
        "/context {shown}, server {server_base}"
    );
    let last = ctx.fake.chat_requests().last().cloned().unwrap();
    let server_last = ctx.fake.prompt_tokens(&last) + 1;
    assert!(
        within_5_percent(b.account, server_last),
        "/context {}, server {server_last}",
        b.account
    );
    // A refusal: a window too small for the base names the same figure.
    let small = counting_setup(true, |_| {}).await;
    small.fake.set_props(Some(
        json!({"default_generation_settings": {"n_ctx": 600}, "total_slots": 1}),
    ));
    small
        .fake
        .set_models(vec![("test-model".into(), Some(600))]);
    let (out, ev) = turn(&small, "hello").await;
    let Err(AgentError::PromptTooLarge {
        base,
        needed,
        window,
        ..
    }) = out
    else {
        panic!("{out:?}");
    };
    assert_eq!(window, 600);
    assert!(
        within_5_percent(base, server_base),
        "refusal base {base}, server {server_base}"
    );
    assert!(
        within_5_percent(base, counted),
        "refusal base {base}, navi context {counted}"
    );
    assert!(needed >= base);
    // The status bar gets the refused figure (one account).
    let shown = ev.iter().rev().find_map(|e| match e {
        AgentEvent::TokenUsage { context_tokens, .. } => Some(*context_tokens),
        _ => None,
    });
    assert_eq!(shown, Some(needed));
    assert!(small.fake.chat_requests().is_empty(), "nothing was sent");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_paste_piped_into_navi_run_is_answered_not_refused() {
    use std::io::Write;
    let ctx = counting_setup(true, |_| {}).await;
    ctx.fake.push(Reply::text("piped and answered"));
    let dir = ctx._dir.path();
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_navi"))
        .env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", dir)
        .env("NAVI_DATA_DIR", dir.join("data"))
        .env("NAVI_CONFIG_DIR", dir.join("config"))
        .env("OPENAI_BASE_URL", ctx.fake.openai_url())
        .args([
            "--backend",
            "openai",
            "--profile",
            "paster",
            "run",
            "summarise this",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(paste().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("piped and answered"));
    // The answer, then (the turn alone is over the threshold) its summary.
    let chats = ctx.fake.chat_requests();
    assert!(!context_support::is_summary_request(&chats[0]), "{stderr}");
    for c in &chats {
        assert!(ctx.fake.prompt_tokens(c) < W);
    }
    let sent = chats[0]["messages"].as_array().unwrap().last().unwrap()["content"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        sent.contains("word0 ") && sent.contains("word2999"),
        "{sent}"
    );
}

#[tokio::test]
async fn a_paste_whose_turn_grows_with_tool_calls_is_squeezed_not_refused() {
    // The paste fits when it arrives; then the model writes its notes to
    // the scratchpad and reads them back, and the turn alone would pass the
    // window: its biggest items are cut further instead of a refusal.
    let ctx = counting_setup(true, |_| {}).await;
    let notes: String = (0..60)
        .map(|i| format!("note {i}: the report repeats its words\n"))
        .collect();
    ctx.fake.push(Reply::tool_call(
        "scratchpad",
        json!({"action": "write", "section": "notes", "content": notes}),
    ));
    ctx.fake.push(Reply::tool_call(
        "scratchpad",
        json!({"action": "read", "section": "notes"}),
    ));
    ctx.fake.push(Reply::text("Done reading."));
    let (out, ev) = turn(&ctx, &paste()).await;
    let out = out.unwrap_or_else(|e| panic!("refused: {e}\n{:?}", warnings(&ev)));
    assert_eq!(out.text, "Done reading.");
    let chats = ctx.fake.chat_requests();
    for (n, c) in chats.iter().enumerate() {
        let count = ctx.fake.prompt_tokens(c);
        assert!(count < W, "request {n}: {count} tokens");
    }
    // The last call still has the paste's head and tail and the read notes.
    let last = chats
        .iter()
        .rfind(|c| !context_support::is_summary_request(c))
        .unwrap()
        .to_string();
    assert!(last.contains("word0 ") && last.contains("word2999"));
    assert!(last.contains("note 0:"));
    // Five follow-ups on top, all answered within the window.
    for i in 0..5 {
        let (out, _) = turn(&ctx, &format!("follow-up {i}")).await;
        out.unwrap_or_else(|e| panic!("follow-up {i}: {e}"));
    }
    for c in ctx.fake.chat_requests() {
        assert!(ctx.fake.prompt_tokens(&c) < W);
    }
}

#[tokio::test]
async fn a_model_that_calls_a_tool_instead_of_summarising_gets_the_fresh_prompt() {
    let ctx = counting_setup(true, |c| {
        c.context.compression_threshold = 0.01;
        c.context.keep_recent = 1;
        c.tools.on_demand = false;
    })
    .await;
    // The base alone is over the target, so the answered turn is
    // summarised right after it: the prefix summary call gets a tool call,
    // the fresh prompt a summary.
    ctx.fake.push(Reply::text("first answer"));
    ctx.fake
        .push(Reply::tool_call("todo", json!({"action": "list"})));
    ctx.fake
        .push(Reply::text("- the user asked a first question"));
    // Long enough that summarising the turn saves something (a compaction
    // that saves under 2 % is not made).
    let question = format!(
        "first question: {}",
        "tell me more about rivers ".repeat(60)
    );
    let (out, ev) = turn(&ctx, &question).await;
    assert_eq!(out.unwrap().text, "first answer", "{:?}", warnings(&ev));
    let chats = ctx.fake.chat_requests();
    let kinds: Vec<(bool, bool)> = chats
        .iter()
        .map(|r| {
            (
                context_support::is_prefix_summary_request(r),
                context_support::is_summary_request(r),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        vec![(false, false), (true, true), (false, true)],
        "{:?}",
        ev
    );
    let s = ctx.store.load(&ctx.sid).unwrap().unwrap();
    assert!(
        s.context[0]
            .msg
            .text()
            .contains("the user asked a first question")
    );
    // No tool ran for the summary call.
    assert!(
        !s.display
            .iter()
            .any(|m| m.msg.role == navi::llm::Role::Tool)
    );
}
