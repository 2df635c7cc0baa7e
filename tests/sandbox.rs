//! The kernel sandbox around `terminal` and `code_exec` on the real kernel
//! (Landlock + seccomp), with the allow-list off (`*`, the default): writes
//! outside the workspace and into `.git` fail, TCP to a listener on
//! 127.0.0.1 fails while Unix sockets work, `full-access` lifts it all, and
//! timeouts still end sandboxed process groups. Runs as root in CI: root
//! bypasses file permissions, not Landlock.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tools_support;

use navi::config::Config;
use navi::tools::builtin::code_exec::CodeExecTool;
use navi::tools::builtin::terminal::TerminalTool;
use navi::tools::{Tool, ToolResult};
use serde_json::json;
use std::path::Path;
use std::time::Duration;
use tools_support::*;

/// A harness whose `outside/` dir (next to the workspace) holds `x` and
/// `secret`, for commands that try to change it.
fn harness(configure: impl FnOnce(&mut Config, &Path)) -> Harness {
    let h = Harness::new(configure);
    let outside = h.root().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("x"), "x").unwrap();
    std::fs::write(outside.join("secret"), "s").unwrap();
    h
}

fn listing(dir: &Path) -> Vec<(String, String)> {
    let mut v: Vec<(String, String)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            let content = std::fs::read_to_string(e.path()).unwrap_or_default();
            (e.file_name().to_string_lossy().into_owned(), content)
        })
        .collect();
    v.sort();
    v
}

async fn sh(h: &Harness, command: &str) -> ToolResult {
    call(&TerminalTool, json!({ "command": command }), &h.ctx()).await
}

fn full_access(c: &mut Config, _: &Path) {
    c.sandbox.mode = "full-access".into();
}

#[tokio::test]
async fn writes_outside_the_workspace_fail_with_a_permission_error() {
    let h = harness(|_, _| {});
    let target = h.root().join("outside/new.txt");
    let r = sh(&h, &format!("echo hi > {}", target.display())).await;
    assert!(!r.success, "{}", r.output);
    // The sandbox's own view of the file system is read-only outside the
    // writable roots (Landlock would say "Permission denied").
    assert!(
        r.output.contains("Read-only file system") || r.output.contains("Permission denied"),
        "{}",
        r.output
    );
    assert!(
        r.output.contains("[sandbox]"),
        "the result says why: {}",
        r.output
    );
    assert!(r.output.contains("\"sandbox\": \"off\""), "{}", r.output);
    assert!(!target.exists());
    // Inside the workspace and in the private TMPDIR it works.
    let r = sh(
        &h,
        "echo hi > inside.txt && echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\"",
    )
    .await;
    assert!(ok_text(&r).contains("t\n"), "{}", r.output);
    assert_eq!(
        std::fs::read_to_string(h.work.join("inside.txt")).unwrap(),
        "hi\n"
    );
}

#[tokio::test]
async fn full_access_writes_where_workspace_write_cannot() {
    let h = harness(full_access);
    let target = h.root().join("outside/new.txt");
    let r = sh(&h, &format!("echo hi > {}", target.display())).await;
    ok_text(&r);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "hi\n");
}

#[tokio::test]
async fn git_config_and_hooks_stay_read_only_inside_the_workspace() {
    let h = harness(|_, _| {});
    std::fs::create_dir_all(h.work.join(".git/hooks")).unwrap();
    std::fs::write(h.work.join(".git/config"), "[core]\n").unwrap();
    std::fs::create_dir_all(h.work.join("src")).unwrap();
    std::fs::write(h.work.join("src/lib.rs"), "old").unwrap();
    for cmd in [
        "echo evil >> .git/config",
        "echo evil > .git/hooks/pre-commit",
        "mkdir .git/newdir",
        "rm .git/config",
        "mv .git .git-old",
        "cd .git && touch index",
    ] {
        let r = sh(&h, cmd).await;
        assert!(!r.success, "{cmd}: {}", r.output);
    }
    assert_eq!(
        std::fs::read_to_string(h.work.join(".git/config")).unwrap(),
        "[core]\n"
    );
    assert!(!h.work.join(".git/hooks/pre-commit").exists());
    assert!(!h.work.join(".git/newdir").exists());
    // A tool started inside .git cannot write through its working dir.
    let r = call(
        &TerminalTool,
        json!({"command": "echo evil > config", "cwd": ".git"}),
        &h.ctx(),
    )
    .await;
    assert!(!r.success, "{}", r.output);
    // The rest of the workspace stays writable, its top included.
    let r = sh(
        &h,
        "echo new > src/lib.rs && mkdir -p src/deep/er && touch src/deep/er/f && touch top.txt && mkdir newdir",
    )
    .await;
    ok_text(&r);
    assert!(h.work.join("top.txt").exists() && h.work.join("newdir").is_dir());
    assert_eq!(
        std::fs::read_to_string(h.work.join("src/lib.rs")).unwrap(),
        "new\n"
    );
}

#[tokio::test]
async fn a_gitdir_file_protects_the_directory_it_points_to() {
    let h = harness(|_, _| {});
    // A worktree-style `.git` file pointing inside the workspace.
    std::fs::create_dir_all(h.work.join("store/repo.git/hooks")).unwrap();
    std::fs::write(h.work.join(".git"), "gitdir: store/repo.git\n").unwrap();
    let r = sh(&h, "echo evil > store/repo.git/hooks/post-checkout").await;
    assert!(!r.success, "{}", r.output);
    assert!(!h.work.join("store/repo.git/hooks/post-checkout").exists());
    let r = sh(&h, "echo 'gitdir: /tmp' > .git").await;
    assert!(
        !r.success,
        "the .git file itself is read-only: {}",
        r.output
    );
}

#[tokio::test]
async fn navi_config_and_data_dirs_are_read_only_inside_the_workspace() {
    // A workspace that holds navi's own dirs (navi started in $HOME).
    let h = harness(|c, root| {
        c.sandbox.workspace = root.display().to_string();
    });
    let r = sh(
        &h,
        &format!("echo x > {}/config.toml", h.config_dir.display()),
    )
    .await;
    assert!(!r.success, "{}", r.output);
    let r = sh(&h, &format!("echo x > {}/navi.db", h.data_dir.display())).await;
    assert!(!r.success, "{}", r.output);
    // The session's own temporary dir, under the data dir, stays writable.
    let r = sh(&h, "echo ok > \"$TMPDIR/f\" && cat \"$TMPDIR/f\"").await;
    assert!(ok_text(&r).contains("ok"), "{}", r.output);
}

#[tokio::test]
async fn read_only_mode_writes_only_to_the_private_tmp() {
    let h = harness(|c, _| c.sandbox.mode = "read-only".into());
    let r = sh(&h, "echo hi > inside.txt").await;
    assert!(!r.success, "{}", r.output);
    assert!(!h.work.join("inside.txt").exists());
    let r = sh(&h, "echo t > \"$TMPDIR/t\" && cat \"$TMPDIR/t\" && ls").await;
    ok_text(&r);
}

fn tcp_probe(port: u16) -> String {
    format!(
        "python3 -c \"import socket; s=socket.create_connection(('127.0.0.1', {port}), timeout=5); s.sendall(b'hi'); print('connected')\""
    )
}

#[tokio::test]
async fn tcp_to_localhost_fails_sandboxed_and_works_with_full_access() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let h = harness(|_, _| {});
    let r = sh(&h, &tcp_probe(port)).await;
    assert!(!r.success, "{}", r.output);
    assert!(r.output.contains("Operation not permitted"), "{}", r.output);
    assert!(
        r.output.contains("\"sandbox\": \"network\""),
        "{}",
        r.output
    );
    assert!(listener.accept().is_err(), "nothing reached the listener");
    // code_exec is under the same filter.
    let code = format!("import socket\nsocket.create_connection(('127.0.0.1', {port}), timeout=5)");
    let r = call(&CodeExecTool, json!({ "code": code }), &h.ctx()).await;
    assert!(!r.success, "{}", r.output);
    assert!(listener.accept().is_err(), "nothing reached the listener");
    // Full access, [sandbox].network and an approved "network" call connect.
    for (h, args) in [
        (harness(full_access), json!({})),
        (harness(|c, _| c.sandbox.network = true), json!({})),
        (harness(|_, _| {}), json!({"sandbox": "network"})),
    ] {
        let mut a = args.clone();
        a["command"] = json!(tcp_probe(port));
        let r = call(&TerminalTool, a, &h.ctx()).await;
        assert!(ok_text(&r).contains("connected"), "{args}: {}", r.output);
        listener.set_nonblocking(false).unwrap();
        let (_conn, _) = listener.accept().unwrap();
        listener.set_nonblocking(true).unwrap();
    }
}

#[tokio::test]
async fn unix_sockets_keep_working_in_the_sandbox() {
    let h = harness(|_, _| {});
    let code = "import socket, os\na, b = socket.socketpair()\na.sendall(b'ping')\nprint(b.recv(4).decode())\np = os.path.join(os.environ['TMPDIR'], 's.sock')\nsrv = socket.socket(socket.AF_UNIX)\nsrv.bind(p); srv.listen(1)\nc = socket.socket(socket.AF_UNIX); c.connect(p)\nprint('unix ok')";
    let r = call(&CodeExecTool, json!({ "code": code }), &h.ctx()).await;
    let out = ok_text(&r);
    assert!(out.contains("ping") && out.contains("unix ok"), "{out}");
}

#[tokio::test]
async fn code_exec_cannot_write_outside_its_session_dirs() {
    let h = harness(|_, _| {});
    let target = h.root().join("outside/py.txt");
    let code = format!("open({:?}, 'w').write('x')", target.display().to_string());
    let r = call(&CodeExecTool, json!({ "code": code }), &h.ctx()).await;
    assert!(!r.success, "{}", r.output);
    assert!(
        r.output.contains("Read-only file system") || r.output.contains("PermissionError"),
        "{}",
        r.output
    );
    assert!(!target.exists());
    let r = call(
        &CodeExecTool,
        json!({"code": "open('here.txt', 'w').write('x'); print('ok')"}),
        &h.ctx(),
    )
    .await;
    assert!(ok_text(&r).contains("ok"));
}

#[tokio::test]
async fn an_approved_escalation_runs_outside_the_sandbox() {
    let h = harness(|_, _| {});
    let target = h.root().join("outside/esc.txt");
    let args = json!({"command": format!("echo hi > {}", target.display()), "sandbox": "off"});
    let question = TerminalTool.approval_summary(&args).unwrap();
    assert!(question.starts_with("OUTSIDE THE SANDBOX"), "{question}");
    let r = call(&TerminalTool, args, &h.ctx()).await;
    ok_text(&r);
    assert!(target.exists());
    let r = call(
        &TerminalTool,
        json!({"command": "true", "sandbox": "sideways"}),
        &h.ctx(),
    )
    .await;
    assert!(err_text(&r).contains("\"network\" or \"off\""));
}

#[tokio::test]
async fn a_timeout_still_kills_the_whole_sandboxed_group() {
    let h = harness(|c, _| c.tools.terminal_timeout_secs = 1);
    let pid_file = h.work.join("bg.pid");
    let cmd = format!("sleep 60 & echo $! > {}; sleep 60", pid_file.display());
    let r = sh(&h, &cmd).await;
    assert!(err_text(&r).contains("timed out"), "{}", r.output);
    let pid = wait_for_pid_file(&pid_file).await;
    assert!(
        eventually(|| process_gone(pid)).await,
        "background child {pid} survived"
    );
}

#[tokio::test]
async fn cancel_still_kills_the_whole_sandboxed_group() {
    let h = harness(|_, _| {});
    let pid_file = h.work.join("bg.pid");
    let cancel = tokio_util::sync::CancellationToken::new();
    let ctx = h.ctx_with("s-cancel", cancel.clone());
    let cmd = format!("sleep 60 & echo $! > {}; sleep 60", pid_file.display());
    let run =
        tokio::spawn(async move { call(&TerminalTool, json!({ "command": cmd }), &ctx).await });
    let pid = wait_for_pid_file(&pid_file).await;
    cancel.cancel();
    let r = tokio::time::timeout(Duration::from_secs(10), run)
        .await
        .unwrap()
        .unwrap();
    assert!(!r.success);
    assert!(
        eventually(|| process_gone(pid)).await,
        "background child {pid} survived"
    );
}

/// The attack lines that proved the allow-list, run again with the list off
/// and the sandbox on, in a directory outside the workspace (through `sh`
/// and through `bash`): nothing outside the workspace changes and nothing
/// reaches a listener on 127.0.0.1.
#[tokio::test]
async fn the_allow_list_attack_lines_change_nothing_outside_the_workspace() {
    use crate::tools_terminal_allowlist::{REFUSED, allowlist_cases::REFUSED_V2};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let h = harness(|_, _| {});
    let outside = h.root().join("outside");
    ok_text(&sh(&h, "true").await);
    let before_root = listing_names(&h.root());
    let before = listing(&outside);
    let net = [
        format!("echo hi > /dev/tcp/127.0.0.1/{port}"),
        tcp_probe(port),
        format!("exec 3<>/dev/tcp/127.0.0.1/{port}; echo x >&3"),
    ];
    let mut lines: Vec<String> = REFUSED
        .iter()
        .chain(REFUSED_V2.iter())
        .map(|(c, _)| c.to_string())
        .chain(net)
        .collect();
    lines.retain(|l| !l.contains('\0'));
    for chunk in lines.chunks(8) {
        let runs = chunk.iter().flat_map(|line| {
            let bash = format!("bash -c {}", shell_quote(line));
            [line.clone(), bash].map(|c| {
                let ctx = h.ctx();
                let args =
                    json!({"command": c, "cwd": outside.display().to_string(), "timeout_secs": 3});
                async move { call(&TerminalTool, args, &ctx).await }
            })
        });
        futures_util::future::join_all(runs).await;
    }
    assert_eq!(
        listing(&outside),
        before,
        "the directory outside the workspace changed"
    );
    assert_eq!(listing_names(&h.root()), before_root);
    assert!(
        listener.accept().is_err(),
        "an attack line reached the network"
    );
}

fn listing_names(dir: &Path) -> Vec<String> {
    listing(dir).into_iter().map(|(n, _)| n).collect()
}

fn shell_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// `/approvals` names the approval mode and never claims that risky calls
/// ask when they do not (`NAVI_APPROVAL=auto`, `--approve-all`).
#[test]
fn approvals_say_when_risky_calls_run_without_asking() {
    use navi::config::{ApprovalMode, SecurityConfig};
    use navi::tools::{ApprovalGate, SessionTools};
    let s = SessionTools::new("s", std::path::PathBuf::from("."), None);
    let sec = SecurityConfig {
        approval: ApprovalMode::Auto,
        ..Default::default()
    };
    let g = ApprovalGate::new(&sec, true);
    let out = g.report(&s).join("\n");
    assert!(
        out.contains("approval: auto") && out.contains("WITHOUT asking"),
        "{out}"
    );
    assert!(!out.contains("ask each time"), "{out}");
    assert_eq!(g.mode_label(), "auto");
    let g = ApprovalGate::new(&SecurityConfig::default(), true).with_preapproved([], true);
    let out = g.report(&s).join("\n");
    assert!(
        out.contains("approve-all") && !out.contains("ask each time"),
        "{out}"
    );
    let g = ApprovalGate::new(&SecurityConfig::default(), true);
    let out = g.report(&s).join("\n");
    assert!(
        out.contains("approval: ask") && out.contains("ask each time"),
        "{out}"
    );
    assert_eq!(g.mode_label(), "ask");
}
