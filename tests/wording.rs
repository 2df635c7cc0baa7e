//! Wording that agrees. A compaction that saved nothing
//! is not announced as one, `/model` is named as the reason for a model it
//! chose, and `/export` writes what `navi sessions export` prints.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::{context_support, plain_support, support};

use context_support::*;
use navi::agent::AgentError;
use navi::agent::compact_run::CompactMode;
use navi::config::BackendKind;
use navi::protocol::EventSink;
use plain_support::{Home, piped};
use support::{FakeLlm, Reply};
use tokio_util::sync::CancellationToken;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_compaction_that_saves_nothing_changes_nothing_and_says_so() {
    let ctx = setup(BackendKind::Openai, |_| {}).await;
    for i in 0..4 {
        ctx.fake.push(Reply::text(format!("answer {i}")));
        turn(&ctx, &format!("question {i}")).await.0.unwrap();
    }
    let before = ctx.store.load(&ctx.sid).unwrap().unwrap().context;
    // The "summary" is longer than the four short messages it replaces.
    let long = "- a summary that retells everything at length ".repeat(60);
    ctx.fake.push(Reply::text(long.clone()));
    let (sink, _rx) = EventSink::channel(64);
    let r = ctx
        .app
        .engine()
        .compact_mode(
            &ctx.session(),
            CompactMode::Now,
            &sink,
            &CancellationToken::new(),
        )
        .await;
    let e = r.unwrap_err();
    assert!(matches!(e, AgentError::NothingSaved { .. }), "{e}");
    let msg = e.to_string();
    assert!(msg.starts_with("nothing compacted"), "{msg}");
    assert!(msg.contains("unchanged"), "{msg}");
    assert_eq!(before, ctx.store.load(&ctx.sid).unwrap().unwrap().context);

    // `navi compact`: the same words, exit 0, nothing written.
    ctx.release();
    ctx.fake.push(Reply::text(long));
    let dir = ctx._dir.path().to_path_buf();
    let fake = &ctx.fake;
    let out = tokio::task::block_in_place(|| navi(&dir, fake, &["compact"]));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    assert!(stdout.contains("nothing compacted"), "{stdout}");
    assert!(!stdout.contains("compacted session"), "{stdout}");
    assert_eq!(before, ctx.store.load(&ctx.sid).unwrap().unwrap().context);
}

#[test]
fn saving_under_two_percent_is_nothing() {
    use navi::agent::compact_run::saves_nothing;
    assert!(saves_nothing(3700, 3700));
    assert!(saves_nothing(3700, 3690));
    assert!(saves_nothing(3700, 4000));
    assert!(!saves_nothing(3700, 1900));
    assert!(!saves_nothing(0, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_model_reason_names_model_and_export_matches_sessions_export() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("first answer"));
    fake.push(Reply::text("second answer"));
    let home = Home::new(&fake.ollama_url());
    let file = home.dir.path().join("out.md");
    let input = format!(
        "hello\n/model other-model\nagain\n/export {}\n",
        file.display()
    );
    let cmd = home.command("dumb", &[]);
    let (code, out, err) = tokio::task::spawn_blocking(move || piped(cmd, &input))
        .await
        .unwrap();
    assert_eq!(code, 0, "{out}{err}");
    let all = format!("{out}{err}");
    assert!(all.contains("chosen with /model"), "{all}");
    assert!(!all.contains("set with --model"), "{all}");
    assert_eq!(fake.chat_requests()[1]["model"], "other-model");

    let exported = std::fs::read_to_string(&file).unwrap();
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_navi"));
    c.args(["sessions", "export", "1"]);
    let o = home.setup_for_test(c, "dumb").output().unwrap();
    let printed = String::from_utf8_lossy(&o.stdout);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(exported.trim_end(), printed.trim_end());
    assert!(exported.contains("## User\n\nhello\n"), "{exported}");
    assert!(
        exported.contains("## Assistant\n\nsecond answer\n"),
        "{exported}"
    );
}
