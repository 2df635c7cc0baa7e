//! `/compact --preview` and `/compact apply`, pinned messages through
//! repeated compactions, and `navi compact` on the command line (issue 12
//! items 4 and 5), against the fake server and a real database file.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::{context_support, support};

use context_support::*;
use navi::agent::AgentError;
use navi::agent::compact_run::CompactMode;
use navi::config::BackendKind;
use navi::protocol::{AgentEvent, EventSink};
use navi::session::{MessageKind, pins};
use support::Reply;
use tokio_util::sync::CancellationToken;

async fn turns(ctx: &Ctx, from: usize, n: usize) {
    for i in from..from + n {
        ctx.fake.push(Reply::text(format!("answer {i}")));
        turn(ctx, &format!("question {i}")).await.0.unwrap();
    }
}

async fn compact(
    ctx: &Ctx,
    mode: CompactMode,
) -> (Result<(usize, usize), AgentError>, Vec<AgentEvent>) {
    let (sink, mut rx) = EventSink::channel(64);
    let out = ctx
        .app
        .engine()
        .compact_mode(&ctx.session(), mode, &sink, &CancellationToken::new())
        .await;
    drop(sink);
    let mut ev = Vec::new();
    while let Some(e) = rx.recv().await {
        ev.push(e);
    }
    (out, ev)
}

#[tokio::test]
async fn a_pinned_message_survives_three_compactions_verbatim() {
    let ctx = setup(BackendKind::Openai, |_| {}).await;
    let pinned_text = "PIN-ME: deploy with `make ship PORT=8443`, never on Fridays";
    ctx.fake.push(Reply::text("noted"));
    turn(&ctx, pinned_text).await.0.unwrap();
    let display = ctx.store.load(&ctx.sid).unwrap().unwrap().display;
    let (n, m) = pins::numbered(&display)
        .into_iter()
        .find(|(_, m)| m.msg.text() == pinned_text)
        .unwrap();
    assert_eq!(n, 1);
    assert!(pins::set(&ctx.store, &ctx.sid, m, true).unwrap());
    for round in 0..3 {
        turns(&ctx, round * 10, 4).await;
        ctx.fake
            .push(Reply::text(format!("- summary of round {round}")));
        let (out, _) = compact(&ctx, CompactMode::Now).await;
        let (before, after) = out.unwrap();
        assert!(after < before, "round {round}: {before} → {after}");
        let context = ctx.store.load(&ctx.sid).unwrap().unwrap().context;
        assert_eq!(context[0].kind, MessageKind::Summary);
        let kept: Vec<_> = context
            .iter()
            .filter(|m| m.msg.text() == pinned_text)
            .collect();
        assert_eq!(kept.len(), 1, "round {round}: {context:#?}");
        assert_eq!(kept[0].kind, MessageKind::Message);
        // The summariser never saw the pinned message: it is kept, not retold.
        let summary_req = ctx.fake.chat_requests().pop().unwrap();
        assert!(!summary_req.to_string().contains("PIN-ME"));
    }
    // The next request carries it verbatim.
    ctx.fake.push(Reply::text("ok"));
    turn(&ctx, "what was the deploy rule?").await.0.unwrap();
    let last = ctx.fake.chat_requests().pop().unwrap();
    assert!(last["messages"].as_array().unwrap().iter().any(|m| {
        m["content"]
            .as_str()
            .is_some_and(|c| c.split("\n\n").any(|p| p == pinned_text))
    }));
    // Unpinned, the next compaction may summarise it.
    let display = ctx.store.load(&ctx.sid).unwrap().unwrap().display;
    let m = display
        .iter()
        .find(|m| m.msg.text() == pinned_text)
        .unwrap();
    assert!(pins::set(&ctx.store, &ctx.sid, m, false).unwrap());
    turns(&ctx, 90, 3).await;
    ctx.fake.push(Reply::text("- everything so far"));
    compact(&ctx, CompactMode::Now).await.0.unwrap();
    let context = ctx.store.load(&ctx.sid).unwrap().unwrap().context;
    assert!(!context.iter().any(|m| m.msg.text() == pinned_text));
}

#[tokio::test]
async fn a_preview_changes_nothing_until_applied_and_a_stale_plan_is_refused() {
    let ctx = setup(BackendKind::Openai, |_| {}).await;
    turns(&ctx, 0, 5).await;
    let before = ctx.store.load(&ctx.sid).unwrap().unwrap();
    ctx.fake.push(Reply::text("- five questions were asked"));
    let (out, ev) = compact(&ctx, CompactMode::Preview).await;
    let (b, a) = out.unwrap();
    assert!(a < b);
    let planned = ev
        .iter()
        .find_map(|e| match e {
            AgentEvent::CompactionPlanned {
                summary,
                messages_replaced,
                turns_kept,
                ..
            } => Some((summary.clone(), *messages_replaced, *turns_kept)),
            _ => None,
        })
        .expect("compaction_planned");
    assert_eq!(planned.0, "- five questions were asked");
    assert_eq!(planned.1, 6, "three old turns of two messages");
    assert_eq!(planned.2, 2);
    assert!(
        !ev.iter()
            .any(|e| matches!(e, AgentEvent::ContextCompressed { .. }))
    );
    let same = ctx.store.load(&ctx.sid).unwrap().unwrap();
    assert_eq!(before.context, same.context);
    assert_eq!(
        before.meta.context_token_count,
        same.meta.context_token_count
    );

    // Declined: nothing to apply any more.
    assert!(ctx.session().discard_compaction());
    let (out, _) = compact(&ctx, CompactMode::Apply).await;
    assert!(matches!(out, Err(AgentError::NoPlan(_))), "{out:?}");

    // A turn after the preview makes the plan stale: refused, unchanged.
    ctx.fake.push(Reply::text("- again"));
    compact(&ctx, CompactMode::Preview).await.0.unwrap();
    turns(&ctx, 5, 1).await;
    let grown = ctx.store.load(&ctx.sid).unwrap().unwrap();
    let (out, _) = compact(&ctx, CompactMode::Apply).await;
    assert!(matches!(out, Err(AgentError::Stale(_))), "{out:?}");
    assert_eq!(
        grown.context,
        ctx.store.load(&ctx.sid).unwrap().unwrap().context
    );

    // Confirmed: the previewed summary is what lands.
    ctx.fake.push(Reply::text("- six questions were asked"));
    compact(&ctx, CompactMode::Preview).await.0.unwrap();
    let requests = ctx.fake.chat_requests().len();
    let (out, ev) = compact(&ctx, CompactMode::Apply).await;
    out.unwrap();
    assert_eq!(
        ctx.fake.chat_requests().len(),
        requests,
        "apply asks nothing"
    );
    assert!(
        ev.iter()
            .any(|e| matches!(e, AgentEvent::ContextCompressed { .. }))
    );
    let context = ctx.store.load(&ctx.sid).unwrap().unwrap().context;
    assert!(context[0].msg.text().contains("six questions were asked"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn navi_compact_on_the_command_line() {
    let ctx = setup(BackendKind::Openai, |_| {}).await;
    turns(&ctx, 0, 5).await;
    // This process wrote the turns, so it holds the session: let go.
    ctx.release();
    let dir = ctx._dir.path().to_path_buf();
    let fake = &ctx.fake;
    let before = ctx.store.load(&ctx.sid).unwrap().unwrap();

    // --preview without a terminal shows the summary and changes nothing.
    fake.push(Reply::text("- the preview summary"));
    let out = tokio::task::block_in_place(|| navi(&dir, fake, &["compact", "--preview"]));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("the preview summary") && stdout.contains("nothing changed"),
        "{stdout}"
    );
    assert_eq!(
        before.context,
        ctx.store.load(&ctx.sid).unwrap().unwrap().context
    );

    // The real thing, on the named session.
    fake.push(Reply::text("- the real summary"));
    let short = &ctx.sid[..8];
    let out = tokio::task::block_in_place(|| navi(&dir, fake, &["compact", "--session", short]));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains(&format!("compacted session {short}: 10 → 5")),
        "{stdout}"
    );
    let context = ctx.store.load(&ctx.sid).unwrap().unwrap().context;
    assert!(context[0].msg.text().contains("the real summary"));
    assert_eq!(
        ctx.store.load(&ctx.sid).unwrap().unwrap().display.len(),
        before.display.len()
    );

    // Again: only recent turns are left.
    let out = tokio::task::block_in_place(|| navi(&dir, fake, &["compact"]));
    assert_eq!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stdout).contains("nothing to compact"));

    // A pinned message is marked in `navi sessions show`.
    let display = ctx.store.load(&ctx.sid).unwrap().unwrap().display;
    pins::set(&ctx.store, &ctx.sid, &display[0], true).unwrap();
    let out = tokio::task::block_in_place(|| navi(&dir, fake, &["sessions", "show", short]));
    let shown = String::from_utf8_lossy(&out.stdout);
    assert!(shown.contains("[user] 📌 pinned\nquestion 0"), "{shown}");

    // Unknown session: usage error.
    let out = tokio::task::block_in_place(|| navi(&dir, fake, &["compact", "-s", "nope-nope"]));
    assert_eq!(out.status.code(), Some(2));

    // Busy in another navi (this test process holds the lock): exit 1, unchanged.
    turns(&ctx, 5, 3).await;
    let held = ctx.store.load(&ctx.sid).unwrap().unwrap().context;
    let out = tokio::task::block_in_place(|| navi(&dir, fake, &["compact"]));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(stderr.contains("busy"), "{stderr}");
    assert_eq!(held, ctx.store.load(&ctx.sid).unwrap().unwrap().context);
}

/// `navi compact` stopped by SIGTERM, SIGINT or SIGHUP while the summary
/// is asked for: the session is left as it was and unlocked, navi says so
/// and exits 143 / 130 / 129, like the other commands.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn navi_compact_stops_on_a_signal_and_leaves_the_session_as_it_was() {
    let ctx = setup(BackendKind::Openai, |_| {}).await;
    turns(&ctx, 0, 5).await;
    ctx.release();
    let dir = ctx._dir.path().to_path_buf();
    let before = ctx.store.load(&ctx.sid).unwrap().unwrap();
    let short: String = ctx.sid.chars().take(8).collect();
    for (signal, code) in [("TERM", 143), ("INT", 130), ("HUP", 129)] {
        let asked = ctx.fake.chat_requests().len();
        // The summary takes long to start: the signal comes first.
        ctx.fake
            .push(Reply::text("- a summary never seen").with_prefill(20_000));
        let child = navi_command(&dir, &ctx.fake, &["compact"])
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
        while ctx.fake.chat_requests().len() == asked {
            assert!(
                std::time::Instant::now() < deadline,
                "the summary was never asked for"
            );
            tokio::time::sleep(std::time::Duration::from_millis(20)).await;
        }
        let killed = std::process::Command::new("kill")
            .args([format!("-{signal}"), child.id().to_string()])
            .status()
            .unwrap();
        assert!(killed.success());
        let out = tokio::task::spawn_blocking(move || child.wait_with_output().unwrap())
            .await
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(code), "SIG{signal}: {stderr}");
        assert!(
            stderr.contains(&format!("compaction stopped; session {short} is unchanged")),
            "SIG{signal}: {stderr}"
        );
        // Unchanged, and free: this process can open it as its writer.
        let now = ctx.store.load(&ctx.sid).unwrap().unwrap();
        assert_eq!(before.context, now.context, "SIG{signal}");
        let held = ctx.store.lock(&ctx.sid);
        assert!(held.is_ok(), "SIG{signal}: the session is still locked");
    }
}

#[test]
fn slash_commands_parse() {
    use navi::ui::commands::{SlashCommand, parse};
    assert_eq!(
        parse("/compact").unwrap(),
        SlashCommand::Compact(CompactMode::Now)
    );
    assert_eq!(
        parse("/compact --preview").unwrap(),
        SlashCommand::Compact(CompactMode::Preview)
    );
    assert_eq!(
        parse("/compact apply").unwrap(),
        SlashCommand::Compact(CompactMode::Apply)
    );
    assert!(parse("/compact sideways").is_err());
    assert_eq!(parse("/pin").unwrap(), SlashCommand::Pin(None, true));
    assert_eq!(
        parse("/pin 3").unwrap(),
        SlashCommand::Pin(Some("3".into()), true)
    );
    assert_eq!(
        parse("/unpin last").unwrap(),
        SlashCommand::Pin(Some("last".into()), false)
    );
}
