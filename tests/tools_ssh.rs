//! `ssh_exec` against a real sshd on 127.0.0.1 (tests/support/sshd.rs):
//! named hosts, host-key policy, per-session ControlMaster reuse and
//! `close_session`, errors, timeout and cancel.
#![allow(clippy::unwrap_used, clippy::expect_used)]

// The shared support module also carries helpers this file does not use.
#[allow(unused_imports)]
use crate::support;
use crate::tools_support;

use navi::tools::Tool;
use navi::tools::builtin::ssh_exec::{SshExecTool, close_session};
use navi::tools::ssh_hosts;
use serde_json::json;
use std::time::Duration;
use support::sshd::Sshd;
use tokio_util::sync::CancellationToken;
use tools_support::*;

/// A harness whose hosts file names the test server "box" (and an
/// unreachable "dead"), with the client key copied under the config dir and
/// referenced relatively.
fn harness(sshd: &Sshd, checking: &str) -> Harness {
    let checking = checking.to_string();
    let h = Harness::new(move |c, _| {
        c.security.ssh_hosts_file = "hosts.json".into();
        c.security.ssh_host_key_checking = checking;
        c.tools.ssh_timeout_secs = 20;
    });
    std::fs::create_dir_all(h.config_dir.join("keys")).unwrap();
    std::fs::copy(&sshd.client_key, h.config_dir.join("keys/id")).unwrap();
    let hosts = json!({
        "box": {"host": "127.0.0.1", "port": sshd.port, "user": sshd.user, "key_file": "keys/id"},
        "dead": {"host": "127.0.0.1", "port": 1, "user": sshd.user, "key_file": "keys/id"}
    });
    std::fs::write(h.config_dir.join("hosts.json"), hosts.to_string()).unwrap();
    h
}

async fn ssh(h: &Harness, session: &str, args: serde_json::Value) -> navi::tools::ToolResult {
    call(
        &SshExecTool,
        args,
        &h.ctx_with(session, CancellationToken::new()),
    )
    .await
}

fn sockets(h: &Harness) -> Vec<String> {
    let dir = ssh_hosts::control_dir(&h.env).unwrap();
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

#[tokio::test]
async fn runs_commands_and_reuses_the_session_connection() {
    let sshd = Sshd::start();
    let h = harness(&sshd, "accept-new");
    let r = ssh(
        &h,
        "sess-1",
        json!({"host": "box", "command": "echo hello from $(whoami); echo warn >&2; exit 3"}),
    )
    .await;
    assert_eq!(err_text(&r), "the remote command exited with code 3");
    assert!(
        r.output.contains(&format!("hello from {}", sshd.user)),
        "{}",
        r.output
    );
    assert!(r.output.contains("--- stderr ---\nwarn"), "{}", r.output);
    // The card's data: the host, the exit code and the streams, typed.
    match &r.display {
        Some(navi::protocol::ToolDisplay::Command(c)) => {
            assert_eq!(c.host.as_deref(), Some("box"));
            assert_eq!(c.exit_code, Some(3));
            assert_eq!(c.stdout, format!("hello from {}\n", sshd.user));
            assert_eq!(c.stderr, "warn\n");
        }
        other => panic!("{other:?}"),
    }
    let known = std::fs::read_to_string(h.data_dir.join("known_hosts")).unwrap();
    // (Debian's ssh_config hashes host names, so look for the key itself.)
    assert!(
        known.contains(&sshd.host_public_key),
        "accept-new recorded the key: {known}"
    );

    // One master socket for this session, named by its session prefix.
    let socks = sockets(&h);
    assert_eq!(socks.len(), 1, "{socks:?}");
    assert!(socks[0].starts_with(&ssh_hosts::session_prefix("sess-1")));
    let r = ssh(
        &h,
        "sess-1",
        json!({"host": "box", "command": "echo second"}),
    )
    .await;
    assert!(ok_text(&r).contains("second"));
    assert_eq!(sockets(&h), socks, "the second call reused the master");

    // Another session gets its own connection.
    let r = ssh(
        &h,
        "sess-2",
        json!({"host": "box", "command": "echo other"}),
    )
    .await;
    assert!(ok_text(&r).contains("other"));
    assert_eq!(sockets(&h).len(), 2);

    assert_eq!(close_session(&h.env, "sess-1").await, 1);
    let left = sockets(&h);
    assert_eq!(left.len(), 1);
    assert!(left[0].starts_with(&ssh_hosts::session_prefix("sess-2")));
    assert_eq!(
        close_session(&h.env, "sess-1").await,
        0,
        "nothing left to close"
    );
    assert_eq!(close_session(&h.env, "sess-2").await, 1);
    assert!(sockets(&h).is_empty());
}

#[tokio::test]
async fn strict_host_key_checking_refuses_unknown_keys() {
    let sshd = Sshd::start();
    let h = harness(&sshd, "yes");
    let r = ssh(&h, "s", json!({"host": "box", "command": "echo hi"})).await;
    let e = err_text(&r);
    assert!(e.contains("host key of 'box' is unknown or changed"), "{e}");
    assert!(
        r.output.contains("Host key verification failed"),
        "{}",
        r.output
    );
    assert!(!r.output.contains("\nhi\n"));

    std::fs::write(h.data_dir.join("known_hosts"), sshd.known_hosts_line()).unwrap();
    let r = ssh(&h, "s", json!({"host": "box", "command": "echo hi"})).await;
    assert!(ok_text(&r).contains("--- stdout ---\nhi\n"), "{}", r.output);
    close_session(&h.env, "s").await;

    // A changed key is refused even with accept-new.
    let h2 = harness(&sshd, "accept-new");
    std::fs::write(
        h2.data_dir.join("known_hosts"),
        format!("[127.0.0.1]:{} ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBadKeyBadKeyBadKeyBadKeyBadKeyBadKeyBadKey1\n", sshd.port),
    )
    .unwrap();
    let r = ssh(&h2, "s", json!({"host": "box", "command": "echo hi"})).await;
    assert!(
        err_text(&r).contains("unknown or changed"),
        "{:?} {}",
        r.error,
        r.output
    );
}

#[tokio::test]
async fn host_and_config_errors_are_clear() {
    let sshd = Sshd::start();
    let h = harness(&sshd, "accept-new");
    let r = ssh(&h, "s", json!({"host": "nosuch", "command": "ls"})).await;
    assert_eq!(
        err_text(&r),
        "unknown ssh host 'nosuch'; configured hosts: box, dead"
    );
    let r = ssh(&h, "s", json!({"host": "dead", "command": "ls"})).await;
    assert!(
        err_text(&r).contains("cannot reach 'dead'"),
        "{:?} {}",
        r.error,
        r.output
    );

    // A key the server does not accept.
    let other = tempfile::tempdir().unwrap();
    let key = other.path().join("k");
    assert!(
        std::process::Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-f"])
            .arg(&key)
            .status()
            .unwrap()
            .success()
    );
    std::fs::copy(&key, h.config_dir.join("keys/id")).unwrap();
    let r = ssh(&h, "s2", json!({"host": "box", "command": "ls"})).await;
    assert!(
        err_text(&r).contains("authentication to 'box' failed"),
        "{:?} {}",
        r.error,
        r.output
    );

    for (args, want) in [
        (json!({"command": "ls"}), "missing required argument 'host'"),
        (
            json!({"host": "box"}),
            "missing required argument 'command'",
        ),
        (json!({"host": "box", "command": " "}), "'command' is empty"),
    ] {
        let r = ssh(&h, "s", args.clone()).await;
        assert!(err_text(&r).contains(want), "{args}: {:?}", r.error);
    }

    std::fs::write(h.config_dir.join("hosts.json"), "{not json").unwrap();
    let r = ssh(&h, "s", json!({"host": "box", "command": "ls"})).await;
    assert!(
        err_text(&r).contains("invalid SSH hosts file"),
        "{:?}",
        r.error
    );
    std::fs::write(
        h.config_dir.join("hosts.json"),
        r#"{"x": {"host": "-oProxyCommand=sh"}}"#,
    )
    .unwrap();
    let r = ssh(&h, "s", json!({"host": "x", "command": "ls"})).await;
    assert!(
        err_text(&r).contains("invalid 'host' value"),
        "{:?}",
        r.error
    );
    std::fs::remove_file(h.config_dir.join("hosts.json")).unwrap();
    let r = ssh(&h, "s", json!({"host": "box", "command": "ls"})).await;
    let e = err_text(&r);
    assert!(
        e.contains("no SSH hosts are configured") && e.contains("hosts.json"),
        "{e}"
    );
}

#[tokio::test]
async fn timeout_and_cancel_kill_the_local_ssh() {
    let sshd = Sshd::start();
    let h = harness(&sshd, "accept-new");
    let r = ssh(
        &h,
        "t",
        json!({"host": "box", "command": "echo up; sleep 8", "timeout_secs": 2}),
    )
    .await;
    assert!(
        err_text(&r).contains("timed out after 2s"),
        "{:?} {}",
        r.error,
        r.output
    );
    assert!(r.output.contains("up"));
    let pid = r.metadata["pid"].as_u64().unwrap() as u32;
    assert!(eventually(|| process_gone(pid)).await);

    let cancel = CancellationToken::new();
    let ctx = h.ctx_with("t", cancel.clone());
    let task = tokio::spawn(async move {
        SshExecTool
            .execute(&json!({"host": "box", "command": "sleep 8"}), &ctx)
            .await
    });
    tokio::time::sleep(Duration::from_millis(700)).await;
    cancel.cancel();
    let r = tokio::time::timeout(Duration::from_secs(5), task)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(err_text(&r), "operation cancelled by user");
    let pid = r.metadata["pid"].as_u64().unwrap() as u32;
    assert!(eventually(|| process_gone(pid)).await);
    close_session(&h.env, "t").await;
}

#[test]
fn every_call_needs_approval() {
    let s = SshExecTool
        .approval_summary(&json!({"host": "prod", "command": "systemctl restart x"}))
        .unwrap();
    assert_eq!(s, "run `systemctl restart x` on ssh host 'prod'");
}
