//! Issue 37 items 2 and 4, issue 35 item 4 (descriptors), through the real
//! binary: a probe run by `terminal`, `code_exec`, a user tool and a stdio
//! MCP server, as root and as an ordinary user, finds no terminal to push
//! input into or write to, no descriptor above 2 (fd 77, opened on an
//! outside file by the shell that started navi, is gone), no capability,
//! cannot start a session, make a device node, or change the metadata of a
//! file outside the writable roots — while ordinary work inside still
//! works. With `full-access` the same children still have no terminal and
//! no inherited descriptor.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::sandbox_support::{FRONTS, Front, User, env_with, escapes, open_up_for, run_probes};
use serde_json::{Value, json};
use std::os::unix::fs::{MetadataExt, PermissionsExt};

/// Probes that must never work for a tool process.
const MUST_FAIL: &[&str] = &[
    "tiocsti_fd0",
    "tiocsti_fd1",
    "tiocsti_fd2",
    "open_dev_tty",
    "write_fd77",
    "setsid",
    "mknod_block",
    "mknod_char",
    "chmod_outside",
    "chown_outside",
    "utime_outside",
    "setxattr_outside",
    "chattr_outside",
    "write_outside",
];

const NO_CAPS: &str = "0000000000000000";

fn check_report(front: Front, user: User, r: &Value, raw: &str) -> Vec<String> {
    let mut bad = Vec::new();
    if r.is_null() {
        return vec![format!("{front:?}/{user:?}: no probe report in {raw:?}")];
    }
    for e in escapes(r, MUST_FAIL) {
        bad.push(format!("{front:?}/{user:?}: {e} worked ({r})"));
    }
    for k in ["tty_opened", "tty_injected", "tty_written", "fds_above_2"] {
        if r[k] != json!([]) {
            bad.push(format!("{front:?}/{user:?}: {k} = {}", r[k]));
        }
    }
    for k in ["CapEff", "CapPrm", "CapInh", "CapBnd", "CapAmb"] {
        if r[k] != NO_CAPS {
            bad.push(format!("{front:?}/{user:?}: {k} = {}", r[k]));
        }
    }
    if r["NoNewPrivs"] != "1" || r["stdin_tty"] != false {
        bad.push(format!("{front:?}/{user:?}: {r}"));
    }
    // The sandbox still lets ordinary work happen where it may write.
    for k in ["mkfifo_inside", "chmod_inside"] {
        if r[k] != "ok" {
            bad.push(format!("{front:?}/{user:?}: {k} = {}", r[k]));
        }
    }
    bad
}

async fn probe_as(user: User) {
    let env = env_with("");
    let work = env.path("work");
    std::fs::create_dir_all(&work).unwrap();
    let outside = env.path("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let x = outside.join("x");
    std::fs::write(&x, "keep").unwrap();
    std::fs::set_permissions(&x, std::fs::Permissions::from_mode(0o640)).unwrap();
    let fd77 = outside.join("fd77.txt");
    std::fs::write(&fd77, "").unwrap();
    if user == User::Nobody {
        open_up_for(&env, &[&x]);
        std::fs::set_permissions(&x, std::fs::Permissions::from_mode(0o640)).unwrap();
    }
    let before = std::fs::metadata(&x).unwrap();
    let args = json!({"outside": x, "inside": "$TMPDIR", "targets": []});
    let p = run_probes(&env, user, &work, &[], &FRONTS, &args, &fd77).await;
    assert_eq!(p.code, 0, "{}", p.stderr);
    assert_eq!(p.reports.len(), FRONTS.len(), "{:?}", p.raw);
    let mut bad = Vec::new();
    for ((front, r), raw) in FRONTS.iter().zip(&p.reports).zip(&p.raw) {
        bad.extend(check_report(*front, user, r, raw));
    }
    let after = std::fs::metadata(&x).unwrap();
    assert_eq!(std::fs::read_to_string(&x).unwrap(), "keep");
    assert_eq!(
        (after.mode(), after.uid(), after.mtime()),
        (before.mode(), before.uid(), before.mtime())
    );
    assert!(xattr_names(&x).is_empty(), "an xattr was set on {x:?}");
    assert_eq!(
        std::fs::read_to_string(&fd77).unwrap(),
        "",
        "written through fd 77"
    );
    assert!(bad.is_empty(), "{}", bad.join("\n"));
}

fn xattr_names(p: &std::path::Path) -> String {
    let out = std::process::Command::new("python3")
        .args(["-c", "import os,sys; print(os.listxattr(sys.argv[1]))"])
        .arg(p)
        .output()
        .unwrap();
    let s = String::from_utf8_lossy(&out.stdout).trim().to_string();
    if s == "[]" { String::new() } else { s }
}

#[tokio::test]
async fn tool_processes_have_no_terminal_fds_or_root_powers_as_root() {
    probe_as(User::Root).await;
}

#[tokio::test]
async fn tool_processes_have_no_terminal_fds_or_root_powers_as_an_ordinary_user() {
    probe_as(User::Nobody).await;
}

/// Outside the sandbox (`full-access`) a tool still starts without a
/// terminal and without navi's descriptors.
#[tokio::test]
async fn full_access_children_still_have_no_terminal_or_inherited_fds() {
    let env = env_with("[sandbox]\nmode = \"full-access\"\n");
    let work = env.path("work");
    std::fs::create_dir_all(&work).unwrap();
    let fd77 = env.path("fd77.txt");
    std::fs::write(&fd77, "").unwrap();
    let args = json!({"outside": env.path("none"), "inside": work, "targets": []});
    let fronts = [Front::Terminal, Front::UserTool, Front::Mcp];
    let p = run_probes(&env, User::Root, &work, &[], &fronts, &args, &fd77).await;
    assert_eq!(p.code, 0, "{}", p.stderr);
    for (r, raw) in p.reports.iter().zip(&p.raw) {
        assert!(!r.is_null(), "{raw}");
        let bad = escapes(
            r,
            &[
                "tiocsti_fd0",
                "tiocsti_fd1",
                "tiocsti_fd2",
                "open_dev_tty",
                "write_fd77",
            ],
        );
        assert!(bad.is_empty(), "{bad:?}: {r}");
        assert_eq!(r["fds_above_2"], json!([]), "{r}");
        assert_eq!(r["tty_injected"], json!([]), "{r}");
        assert_eq!(r["stdin_tty"], false, "{r}");
    }
    assert_eq!(std::fs::read_to_string(&fd77).unwrap(), "");
}

/// Where mount namespaces are unavailable (simulated with
/// `NAVI_SANDBOX_NO_MOUNTS=1`), Landlock keeps writes in, seccomp refuses
/// every metadata change (inside the workspace too, as documented), and
/// the rest of the guarantees hold.
#[tokio::test]
async fn without_mount_namespaces_metadata_changes_are_refused_everywhere() {
    let env = env_with("");
    let work = env.path("work");
    std::fs::create_dir_all(&work).unwrap();
    let x = env.path("x");
    std::fs::write(&x, "keep").unwrap();
    let fd77 = env.path("fd77.txt");
    std::fs::write(&fd77, "").unwrap();
    let args = json!({"outside": x, "inside": "$TMPDIR", "targets": []});
    let vars = [("NAVI_SANDBOX_NO_MOUNTS", String::from("1"))];
    let fronts = [Front::Terminal, Front::CodeExec];
    let p = run_probes(&env, User::Root, &work, &vars, &fronts, &args, &fd77).await;
    assert_eq!(p.code, 0, "{}", p.stderr);
    for (r, raw) in p.reports.iter().zip(&p.raw) {
        assert!(!r.is_null(), "{raw}");
        let bad = escapes(r, MUST_FAIL);
        assert!(bad.is_empty(), "{bad:?}: {r}");
        assert_eq!(r["chmod_inside"], "EPERM", "{r}");
        assert_eq!(r["mkfifo_inside"], "ok", "{r}");
        assert_eq!(r["tty_injected"], json!([]), "{r}");
        assert_eq!(r["CapEff"], NO_CAPS, "{r}");
    }
    assert_eq!(std::fs::read_to_string(&x).unwrap(), "keep");
}
