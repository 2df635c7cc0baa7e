//! `terminal` running real commands: streams and exit codes, working
//! directory, output cap, and that timeout, cancel and command end kill the
//! whole process group (checked through /proc).
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tools_support;

use navi::tools::Tool;
use navi::tools::builtin::terminal::TerminalTool;
use serde_json::json;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tools_support::*;

fn harness() -> Harness {
    Harness::new(|c, _| {
        c.tools.output_limit_bytes = 3000;
        c.tools.terminal_timeout_secs = 20;
    })
}

#[tokio::test]
async fn returns_exit_code_stdout_and_stderr() {
    let h = harness();
    let r = call(
        &TerminalTool,
        json!({"command": "echo hello; echo oops >&2"}),
        &h.ctx(),
    )
    .await;
    let out = ok_text(&r);
    assert!(
        out.starts_with("exit code: 0\n--- stdout ---\nhello\n--- stderr ---\noops"),
        "{out}"
    );
    assert_eq!(r.metadata["exit_code"], 0);

    let r = call(
        &TerminalTool,
        json!({"command": "echo partial; echo bad >&2; exit 3"}),
        &h.ctx(),
    )
    .await;
    assert_eq!(err_text(&r), "the command exited with code 3");
    assert!(r.output.contains("exit code: 3"));
    assert!(
        r.output.contains("partial") && r.output.contains("bad"),
        "{}",
        r.output
    );
    assert_eq!(r.metadata["exit_code"], 3);

    let r = call(&TerminalTool, json!({"command": "true"}), &h.ctx()).await;
    assert!(ok_text(&r).contains("--- stdout ---\n(empty)\n--- stderr ---\n(empty)"));

    // stdin is /dev/null: `cat` ends at once instead of hanging.
    let r = call(
        &TerminalTool,
        json!({"command": "cat; echo after"}),
        &h.ctx(),
    )
    .await;
    assert!(ok_text(&r).contains("after"));
}

#[tokio::test]
async fn runs_in_work_dir_or_cwd() {
    let h = harness();
    let r = call(&TerminalTool, json!({"command": "pwd"}), &h.ctx()).await;
    assert!(ok_text(&r).contains(&format!("{}\n", h.work.display())));
    std::fs::create_dir(h.work.join("sub")).unwrap();
    let r = call(
        &TerminalTool,
        json!({"command": "pwd", "cwd": "sub"}),
        &h.ctx(),
    )
    .await;
    assert!(ok_text(&r).contains(&format!("{}/sub\n", h.work.display())));
    let r = call(
        &TerminalTool,
        json!({"command": "pwd", "cwd": "nope"}),
        &h.ctx(),
    )
    .await;
    assert!(err_text(&r).contains("does not exist"));
}

#[tokio::test]
async fn huge_output_is_capped_head_and_tail() {
    let h = harness();
    let r = call(
        &TerminalTool,
        json!({"command": "echo FIRST; seq 1 200000; echo LAST"}),
        &h.ctx(),
    )
    .await;
    let out = ok_text(&r);
    assert!(out.len() < 4000, "{} bytes", out.len());
    assert!(out.contains("FIRST") && out.contains("LAST"), "{out}");
    assert!(out.contains("output truncated"), "{out}");
    assert!(out.contains("bytes dropped from the middle"));
}

#[tokio::test]
async fn bad_arguments() {
    let h = harness();
    for (args, want) in [
        (json!({}), "missing required argument 'command'"),
        (json!({"command": 5}), "'command' must be a string"),
        (json!({"command": "  "}), "'command' is empty"),
        (
            json!({"command": "ls", "timeout_secs": "soon"}),
            "'timeout_secs' must be a non-negative integer",
        ),
        (json!({"command": "ls", "cwd": 1}), "'cwd' must be a string"),
    ] {
        let r = call(&TerminalTool, args.clone(), &h.ctx()).await;
        assert!(err_text(&r).contains(want), "{args}: {:?}", r.error);
    }
}

#[tokio::test]
async fn timeout_kills_the_whole_group() {
    let h = harness();
    let cmd = "sleep 30 & echo $! > bg.pid; echo $$ > sh.pid; echo started; sleep 30";
    let r = call(
        &TerminalTool,
        json!({"command": cmd, "timeout_secs": 2}),
        &h.ctx(),
    )
    .await;
    let e = err_text(&r);
    assert!(e.contains("timed out after 2s"), "{e}");
    assert!(
        r.output.contains("started"),
        "output before the kill is kept: {}",
        r.output
    );
    let bg = wait_for_pid_file(&h.work.join("bg.pid")).await;
    let sh = wait_for_pid_file(&h.work.join("sh.pid")).await;
    assert_eq!(r.metadata["pid"], sh);
    assert!(
        eventually(|| process_gone(bg) && process_gone(sh)).await,
        "bg {bg} / sh {sh} survived"
    );
}

#[tokio::test]
async fn cancel_kills_the_whole_group() {
    let h = harness();
    let cancel = CancellationToken::new();
    let ctx = h.ctx_with("s1", cancel.clone());
    let cmd = "sleep 60 & echo $! > bg.pid; (sleep 61; echo never) & echo $! > sub.pid; sleep 62";
    let task =
        tokio::spawn(async move { TerminalTool.execute(&json!({"command": cmd}), &ctx).await });
    let bg = wait_for_pid_file(&h.work.join("bg.pid")).await;
    let sub = wait_for_pid_file(&h.work.join("sub.pid")).await;
    assert!(!process_gone(bg) && !process_gone(sub));
    cancel.cancel();
    let r = tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(err_text(&r), "operation cancelled by user");
    assert!(
        r.output
            .contains("cancelled by user (process group killed)")
    );
    let sh = r.metadata["pid"].as_u64().unwrap() as u32;
    assert!(eventually(|| process_gone(bg) && process_gone(sub) && process_gone(sh)).await);
}

#[tokio::test]
async fn dropping_the_call_kills_the_group_too() {
    let h = harness();
    let ctx = h.ctx();
    let cmd = "sleep 50 & echo $! > bg.pid; sleep 51";
    let task =
        tokio::spawn(async move { TerminalTool.execute(&json!({"command": cmd}), &ctx).await });
    let bg = wait_for_pid_file(&h.work.join("bg.pid")).await;
    task.abort();
    assert!(task.await.unwrap_err().is_cancelled());
    assert!(
        eventually(|| process_gone(bg)).await,
        "background sleep {bg} survived the drop"
    );
}

#[tokio::test]
async fn background_jobs_do_not_outlive_the_command() {
    let h = harness();
    let r = call(
        &TerminalTool,
        json!({"command": "sleep 45 > /dev/null 2>&1 & echo $! > bg.pid; echo done"}),
        &h.ctx(),
    )
    .await;
    assert!(ok_text(&r).contains("done"));
    let bg = wait_for_pid_file(&h.work.join("bg.pid")).await;
    assert!(
        eventually(|| process_gone(bg)).await,
        "background sleep {bg} survived"
    );

    // A background job that keeps stdout open does not hang the call.
    let started = std::time::Instant::now();
    let r = call(
        &TerminalTool,
        json!({"command": "sleep 45 & echo quick"}),
        &h.ctx(),
    )
    .await;
    assert!(ok_text(&r).contains("quick"));
    assert!(
        r.output
            .contains("background processes kept the output open"),
        "{}",
        r.output
    );
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[tokio::test]
async fn allow_list_applies_and_refusal_names_the_command() {
    let h = Harness::new(|c, _| {
        c.security.terminal_allowed_commands = vec!["ls".into(), "echo".into()];
    });
    let r = call(
        &TerminalTool,
        json!({"command": "ls && rm -rf ."}),
        &h.ctx(),
    )
    .await;
    let e = err_text(&r);
    assert!(e.contains("`rm` is not on the allow-list"), "{e}");
    assert!(e.contains("echo, ls"), "{e}");
    assert!(r.output.is_empty(), "nothing ran");
    let r = call(
        &TerminalTool,
        json!({"command": "echo fine | ls"}),
        &h.ctx(),
    )
    .await;
    ok_text(&r);
}

#[test]
fn every_call_needs_approval_with_the_full_command() {
    let s = TerminalTool
        .approval_summary(&json!({"command": "rm -rf build", "cwd": "/srv"}))
        .unwrap();
    assert_eq!(s, "run `rm -rf build` in /srv");
    assert!(
        TerminalTool
            .approval_summary(&json!({"command": "ls"}))
            .is_some()
    );
}
