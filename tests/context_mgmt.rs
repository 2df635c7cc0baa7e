//! Context management (issue 12): one token account, compaction that makes
//! the next request fit (before and after a turn), bad summaries, summary
//! requests that overflow, a stop mid-compaction, a window of 0. The agent
//! runs in-process against the fake server with a small window; every
//! request the server received is checked.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::{context_support, support};

use context_support::*;
use navi::config::BackendKind;
use navi::protocol::{AgentEvent, EventSink};
use navi::session::MessageKind;
use serde_json::{Value, json};
use support::{Fault, Reply};
use tokio_util::sync::CancellationToken;

#[tokio::test]
async fn repeated_turns_never_send_a_request_over_the_window_and_the_account_agrees() {
    for kind in [BackendKind::Openai, BackendKind::Ollama] {
        let ctx = setup(kind, |_| {}).await;
        let threshold = ctx.app.config().context.compression_threshold;
        let mut compactions = 0;
        for i in 0..14 {
            // One reply a turn: a compaction around it may take it as its
            // summary (it reads as one); calls after that get the fake's
            // short default answer.
            ctx.fake.push(Reply::text(long_answer(i)));
            let (out, ev) = turn(&ctx, &format!("question {i}: tell me more")).await;
            out.unwrap_or_else(|e| panic!("{kind:?} turn {i}: {e}"));
            compactions += ev
                .iter()
                .filter(|e| matches!(e, AgentEvent::ContextCompressed { .. }))
                .count();
            // One number: the stream_end event, the stored account and /context.
            let end = ev
                .iter()
                .find_map(|e| match e {
                    AgentEvent::StreamEnd {
                        context_tokens,
                        max_context_tokens,
                        ..
                    } => Some((*context_tokens, *max_context_tokens)),
                    _ => None,
                })
                .expect("stream_end");
            let account = ctx.app.engine().context_account(&ctx.sid).unwrap();
            let breakdown = ctx.app.engine().context_breakdown(&ctx.sid).unwrap();
            assert_eq!(end, (account.used, account.window), "{kind:?} turn {i}");
            assert_eq!(breakdown.account, account.used);
            assert_eq!(account.window, WINDOW);
            // Post-turn compaction: every turn ends under the threshold.
            assert!(
                (account.used as f64) < WINDOW as f64 * threshold,
                "{kind:?} turn {i}: {} of {WINDOW} after the turn",
                account.used
            );
        }
        let requests = ctx.fake.chat_requests();
        assert!(compactions >= 2, "{kind:?}: {compactions} compactions");
        assert!(requests.iter().any(is_summary_request));
        for (n, body) in requests.iter().enumerate() {
            let est = estimated(body);
            assert!(
                est < WINDOW,
                "{kind:?}: request {n} is ~{est} tokens, over the {WINDOW}-token window"
            );
        }
        let s = ctx.store.load(&ctx.sid).unwrap().unwrap();
        assert_eq!(s.context[0].kind, MessageKind::Summary);
        // The display buffer keeps every turn.
        let users = s
            .display
            .iter()
            .filter(|m| m.msg.text().starts_with("question "))
            .count();
        assert_eq!(users, 14);
    }
}

#[tokio::test]
async fn an_empty_or_letterless_summary_leaves_the_context_as_it_was_with_a_warning() {
    for bad in ["   \n ", "```\n```\n---"] {
        let ctx = setup(BackendKind::Openai, |c| {
            c.context.compression_threshold = 0.01;
            c.context.keep_recent = 1;
        })
        .await;
        ctx.fake.push(Reply::text("first answer"));
        turn(&ctx, "first question").await.0.unwrap();
        let before = ctx.store.load(&ctx.sid).unwrap().unwrap().context;
        // Turn 2: pre-turn compaction (bad summary), the answer, post-turn
        // compaction (bad summary again).
        ctx.fake.push(Reply::text(bad));
        ctx.fake.push(Reply::text("second answer"));
        ctx.fake.push(Reply::text(bad));
        let (out, ev) = turn(&ctx, "second question").await;
        assert_eq!(out.unwrap().text, "second answer");
        let w = warnings(&ev);
        assert!(
            w.iter()
                .any(|m| m.contains("compaction failed") && m.contains("left as it was")),
            "{w:?}"
        );
        let after = ctx.store.load(&ctx.sid).unwrap().unwrap().context;
        assert!(after.iter().all(|m| m.kind != MessageKind::Summary));
        assert_eq!(&after[..before.len()], &before[..]);
        assert_eq!(after.len(), before.len() + 2);
    }
}

#[tokio::test]
async fn a_summary_request_the_server_refuses_as_too_long_is_retried_smaller() {
    let ctx = setup(BackendKind::Openai, |c| {
        c.context.compression_threshold = 0.01;
        c.context.keep_recent = 1;
    })
    .await;
    ctx.fake.push(Reply::tool_call(
        "todo",
        json!({"action": "add", "items": ["RESULT-MARKER task"]}),
    ));
    ctx.fake.push(Reply::text("first answer"));
    turn(&ctx, "first question").await.0.unwrap();
    // The first summary call is the session's own prefix plus an
    // instruction (cache reuse); refused too, it falls back to the fresh
    // summariser prompt, which is refused and then retried smaller.
    for _ in 0..2 {
        ctx.fake.push(Reply::fault(Fault::Status(
            400,
            "the request exceeds the available context size, try increasing it".into(),
        )));
    }
    ctx.fake.push(Reply::text("- the user added a task"));
    ctx.fake.push(Reply::text("second answer"));
    let (out, ev) = turn(&ctx, "second question").await;
    assert_eq!(out.unwrap().text, "second answer", "{:?}", warnings(&ev));
    let all = ctx.fake.chat_requests();
    assert!(all.iter().any(is_prefix_summary_request));
    let summaries: Vec<Value> = all
        .into_iter()
        .filter(|r| is_summary_request(r) && !is_prefix_summary_request(r))
        .collect();
    assert_eq!(summaries.len(), 2, "one refused, one retried");
    let first = summaries[0]["messages"][1]["content"].as_str().unwrap();
    let second = summaries[1]["messages"][1]["content"].as_str().unwrap();
    assert!(first.contains("result of todo"), "{first}");
    assert!(!second.contains("result of"), "{second}");
    assert!(second.contains("first question"), "{second}");
    let ctx_rows = ctx.store.load(&ctx.sid).unwrap().unwrap().context;
    assert_eq!(ctx_rows[0].kind, MessageKind::Summary);
    assert!(ctx_rows[0].msg.text().contains("the user added a task"));
}

#[tokio::test]
async fn a_stop_during_compaction_changes_nothing() {
    let ctx = setup(BackendKind::Openai, |_| {}).await;
    for i in 0..4 {
        ctx.fake.push(Reply::text(format!("answer {i}")));
        turn(&ctx, &format!("question {i}")).await.0.unwrap();
    }
    let before = ctx.store.load(&ctx.sid).unwrap().unwrap();
    ctx.fake
        .push(Reply::text("- a summary that comes too late").with_prefill(3000));
    let cancel = CancellationToken::new();
    let c2 = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(std::time::Duration::from_millis(300)).await;
        c2.cancel();
    });
    let (sink, _rx) = EventSink::channel(64);
    let out = ctx
        .app
        .engine()
        .compact(&ctx.session(), &sink, &cancel)
        .await;
    assert!(out.is_err(), "{out:?}");
    let after = ctx.store.load(&ctx.sid).unwrap().unwrap();
    assert_eq!(before.context, after.context);
    assert_eq!(
        before.meta.context_token_count,
        after.meta.context_token_count
    );
}

#[tokio::test]
async fn a_window_of_zero_never_triggers_compaction_or_refuses() {
    let ctx = setup(BackendKind::Ollama, |c| {
        c.llm.num_ctx = 0;
        c.context.compression_threshold = 0.01;
        c.context.keep_recent = 1;
    })
    .await;
    for i in 0..3 {
        ctx.fake.push(Reply::text(long_answer(i)));
        let (out, ev) = turn(&ctx, &format!("question {i}")).await;
        out.unwrap();
        assert!(
            !ev.iter()
                .any(|e| matches!(e, AgentEvent::ContextCompressed { .. })),
            "no compaction without a window"
        );
        assert!(warnings(&ev).is_empty(), "{:?}", warnings(&ev));
    }
    assert!(!ctx.fake.chat_requests().iter().any(is_summary_request));
    let account = ctx.app.engine().context_account(&ctx.sid).unwrap();
    assert_eq!(account.window, 0);
    assert!(account.describe().contains("window unknown"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_already_over_the_window_is_continued_and_compacted_first() {
    let ctx = setup(BackendKind::Openai, |_| {}).await;
    // What an older build could leave behind: 30 turns, ~15k tokens, in a
    // 2k window, with the old meter.
    for i in 0..30 {
        let u = navi::session::StoredMessage::new(
            navi::llm::ChatMessage::user(format!("old question {i}")),
            MessageKind::Message,
        );
        ctx.store.append_both(&ctx.sid, &u).unwrap();
        let a = navi::session::StoredMessage::new(
            navi::llm::ChatMessage::assistant(format!("{}{}", long_answer(i), long_answer(i))),
            MessageKind::Message,
        );
        ctx.store.append_both(&ctx.sid, &a).unwrap();
    }
    ctx.store.set_context_tokens(&ctx.sid, 15_000).unwrap();
    let dir = ctx._dir.path().to_path_buf();
    ctx.fake
        .push(Reply::text("- the user asked thirty old questions"));
    ctx.fake.push(Reply::text("RECOVERED ANSWER"));
    let fake = &ctx.fake;
    let out = tokio::task::block_in_place(|| {
        navi(&dir, fake, &["run", "--continue", "and the next one?"])
    });
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert!(stdout.contains("RECOVERED ANSWER"), "{stdout}");
    let requests = fake.chat_requests();
    assert!(is_summary_request(&requests[0]), "compaction comes first");
    for (n, body) in requests.iter().enumerate() {
        assert!(estimated(body) < WINDOW, "request {n} over the window");
    }
    let last = requests.last().unwrap();
    let text = last.to_string();
    assert!(text.contains("thirty old questions") && text.contains("and the next one?"));
    // The account the CLI shows is the one stored, against the same window.
    let show = navi(&dir, fake, &["sessions", "show", &ctx.sid, "--json"]);
    let v: Value = serde_json::from_slice(&show.stdout).unwrap();
    let stored = ctx.store.meta(&ctx.sid).unwrap().unwrap();
    assert_eq!(v["context"]["tokens"], json!(stored.context_token_count));
    assert_eq!(v["context"]["window"], json!(WINDOW));
    assert!(stored.context_token_count < WINDOW);
    // The display buffer still has every old turn.
    let s = ctx.store.load(&ctx.sid).unwrap().unwrap();
    assert!(s.display.len() >= 62);
}

#[tokio::test]
async fn a_server_refusal_for_length_teaches_the_window_and_the_turn_is_retried_after_compacting() {
    let ctx = setup(BackendKind::Openai, |_| {}).await;
    for i in 0..4 {
        ctx.fake.push(Reply::text(long_answer(i)));
        turn(&ctx, &format!("question {i}")).await.0.unwrap();
    }
    let before = ctx.fake.chat_requests().len();
    ctx.fake.push(Reply::fault(Fault::Status(
        400,
        "request (1800 tokens) exceeds the available context size (1500 tokens), try increasing it"
            .into(),
    )));
    ctx.fake
        .push(Reply::text("- four questions about the build"));
    ctx.fake.push(Reply::text("ANSWER AFTER RETRY"));
    let (out, ev) = turn(&ctx, "question 4").await;
    assert_eq!(
        out.unwrap_or_else(|e| panic!("{e}")).text,
        "ANSWER AFTER RETRY",
        "{:?}",
        warnings(&ev)
    );
    let requests = &ctx.fake.chat_requests()[before..];
    assert_eq!(requests.len(), 3);
    assert!(!is_summary_request(&requests[0]));
    assert!(is_summary_request(&requests[1]));
    assert!(
        requests[2]
            .to_string()
            .contains("four questions about the build")
    );
    let account = ctx.app.engine().context_account(&ctx.sid).unwrap();
    assert_eq!(account.window, 1500, "the server's window is kept");
    assert!(account.used < 1500);
}

#[tokio::test]
async fn a_refusal_with_nothing_to_compact_is_the_clear_error_and_not_retried() {
    let ctx = setup(BackendKind::Openai, |_| {}).await;
    ctx.fake.push(Reply::fault(Fault::Status(
        400,
        "request (5032 tokens) exceeds the available context size (1500 tokens)".into(),
    )));
    let (out, _) = turn(&ctx, "hello").await;
    let msg = out.unwrap_err().to_string();
    assert!(msg.contains("1500-token window"), "{msg}");
    assert_eq!(ctx.fake.chat_requests().len(), 1);
}
