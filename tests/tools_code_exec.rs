//! `code_exec` with the real python3: output, errors, the per-session
//! directory, rlimits, and that timeout and cancel kill the process.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tools_support;

use navi::tools::Tool;
use navi::tools::builtin::code_exec::CodeExecTool;
use serde_json::json;
use std::time::Duration;
use tokio_util::sync::CancellationToken;
use tools_support::*;

fn harness() -> Harness {
    Harness::new(|c, _| {
        c.tools.code_exec_timeout_secs = 20;
        c.tools.output_limit_bytes = 4000;
    })
}

fn python_available() {
    let ok = std::process::Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    assert!(
        ok,
        "python3 is required for these tests: apt-get install python3"
    );
}

#[tokio::test]
async fn runs_code_and_reports_streams() {
    python_available();
    let h = harness();
    let code = "import sys\nprint('sum =', sum(range(10)))\nprint('warn', file=sys.stderr)";
    let r = call(&CodeExecTool, json!({"code": code}), &h.ctx()).await;
    let out = ok_text(&r);
    assert!(out.contains("exit code: 0"), "{out}");
    assert!(out.contains("--- stdout ---\nsum = 45\n"), "{out}");
    assert!(out.contains("--- stderr ---\nwarn"), "{out}");
}

#[tokio::test]
async fn exceptions_and_exit_codes_fail_with_the_traceback() {
    python_available();
    let h = harness();
    let r = call(
        &CodeExecTool,
        json!({"code": "print('before')\n1/0"}),
        &h.ctx(),
    )
    .await;
    assert_eq!(err_text(&r), "the Python process exited with code 1");
    assert!(r.output.contains("before"));
    assert!(r.output.contains("ZeroDivisionError"), "{}", r.output);
    let r = call(
        &CodeExecTool,
        json!({"code": "import sys; sys.exit(7)"}),
        &h.ctx(),
    )
    .await;
    assert_eq!(err_text(&r), "the Python process exited with code 7");
    match &r.display {
        Some(navi::protocol::ToolDisplay::Command(c)) => {
            assert_eq!(c.exit_code, Some(7));
            assert!(c.command.contains("python"), "{c:?}");
        }
        other => panic!("{other:?}"),
    }
    let r = call(&CodeExecTool, json!({"code": "def f(:\n  pass"}), &h.ctx()).await;
    assert!(r.output.contains("SyntaxError"), "{}", r.output);
}

#[tokio::test]
async fn files_persist_per_session_and_temp_scripts_are_removed() {
    python_available();
    let h = harness();
    let ctx_a = h.ctx_with("session-a", CancellationToken::new());
    let ctx_b = h.ctx_with("session-b", CancellationToken::new());
    let r = call(
        &CodeExecTool,
        json!({"code": "open('state.txt','w').write('42')\nimport os; print(os.getcwd())"}),
        &ctx_a,
    )
    .await;
    let dir = h.data_dir.join("sessions/session-a/code");
    assert!(
        ok_text(&r).contains(&dir.display().to_string()),
        "{}",
        r.output
    );
    let r = call(
        &CodeExecTool,
        json!({"code": "print(open('state.txt').read())"}),
        &ctx_a,
    )
    .await;
    assert!(ok_text(&r).contains("42"));
    let r = call(
        &CodeExecTool,
        json!({"code": "print(open('state.txt').read())"}),
        &ctx_b,
    )
    .await;
    assert!(err_text(&r).contains("exited with code 1"));
    assert!(r.output.contains("FileNotFoundError"));
    let left: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(left, vec!["state.txt"], "the temp script is gone");
}

#[tokio::test]
async fn memory_and_file_size_are_limited() {
    python_available();
    let h = Harness::new(|c, _| {
        c.tools.code_exec_memory_mb = 256;
        c.tools.code_exec_file_size_mb = 1;
    });
    let r = call(
        &CodeExecTool,
        json!({"code": "try:\n  b = bytearray(600*1024*1024)\n  print('allocated')\nexcept MemoryError:\n  print('MemoryError caught')"}),
        &h.ctx(),
    )
    .await;
    assert!(ok_text(&r).contains("MemoryError caught"), "{}", r.output);
    let r = call(
        &CodeExecTool,
        json!({"code": "import signal\nsignal.signal(signal.SIGXFSZ, signal.SIG_IGN)\ntry:\n  open('big','wb').write(b'x'*(2*1024*1024))\nexcept OSError as e:\n  print('refused:', e.errno)"}),
        &h.ctx(),
    )
    .await;
    assert!(
        ok_text(&r).contains("refused: 27"),
        "EFBIG expected: {}",
        r.output
    );
}

#[tokio::test]
async fn timeout_kills_python() {
    python_available();
    let h = harness();
    let pid_file = h.work.join("py.pid");
    let code = format!(
        "import os, time\nopen({:?},'w').write(str(os.getpid()))\nprint('sleeping', flush=True)\ntime.sleep(60)",
        pid_file.display().to_string()
    );
    let r = call(
        &CodeExecTool,
        json!({"code": code, "timeout_secs": 3}),
        &h.ctx(),
    )
    .await;
    assert!(err_text(&r).contains("timed out after 3s"), "{:?}", r.error);
    assert!(r.output.contains("sleeping"));
    let pid = wait_for_pid_file(&pid_file).await;
    assert!(
        eventually(|| process_gone(pid)).await,
        "python {pid} survived the timeout"
    );
}

#[tokio::test]
async fn cancel_kills_python_and_its_children() {
    python_available();
    let h = harness();
    let cancel = CancellationToken::new();
    let ctx = h.ctx_with("s", cancel.clone());
    let pid_file = h.work.join("py.pid");
    let child_file = h.work.join("child.pid");
    let code = format!(
        "import os, subprocess, time\nopen({:?},'w').write(str(os.getpid()))\np = subprocess.Popen(['sleep','60'])\nopen({:?},'w').write(str(p.pid))\ntime.sleep(60)",
        pid_file.display().to_string(),
        child_file.display().to_string()
    );
    let task =
        tokio::spawn(async move { CodeExecTool.execute(&json!({"code": code}), &ctx).await });
    let pid = wait_for_pid_file(&pid_file).await;
    let child = wait_for_pid_file(&child_file).await;
    assert!(!process_gone(pid) && !process_gone(child));
    cancel.cancel();
    let r = tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(err_text(&r), "operation cancelled by user");
    assert!(eventually(|| process_gone(pid) && process_gone(child)).await);
}

#[tokio::test]
async fn missing_python_is_a_clear_error() {
    let h = Harness::new(|c, _| c.tools.python = "/nonexistent/python9".into());
    let r = call(&CodeExecTool, json!({"code": "print(1)"}), &h.ctx()).await;
    let e = err_text(&r);
    assert!(e.contains("'/nonexistent/python9' not found"), "{e}");
    assert!(e.contains("[tools].python"), "{e}");
}

#[tokio::test]
async fn bad_arguments_and_approval() {
    let h = harness();
    let r = call(&CodeExecTool, json!({}), &h.ctx()).await;
    assert_eq!(
        err_text(&r),
        "code_exec: missing required argument 'code' (a string)"
    );
    let r = call(&CodeExecTool, json!({"code": ""}), &h.ctx()).await;
    assert_eq!(err_text(&r), "code_exec: argument 'code' is empty");
    let s = CodeExecTool
        .approval_summary(&json!({"code": "import os\nos.remove('x')"}))
        .unwrap();
    assert!(s.contains("os.remove('x')"), "{s}");
}
