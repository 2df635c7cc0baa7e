//! Issue 37 item 2 on a real pty: a tool cannot answer navi's next approval
//! question (TIOCSTI into navi's terminal) nor write raw escape sequences
//! to it — in plain mode and in `navi run` on a tty, as root and as an
//! ordinary user. The probe looks for the terminal everywhere a process
//! could (its fds, `/dev/tty`, `/dev/pts/*`, its ancestors' fds) and
//! attacks only navi's own pty.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::plain_support::{Home, Pty};
use crate::sandbox_support::{NOBODY, User, path_for, support_file};
use crate::support::{FakeLlm, Reply};
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt;
use std::time::Duration;

fn open_up(home: &Home) {
    let mut stack = vec![home.dir.path().to_path_buf()];
    while let Some(p) = stack.pop() {
        let dir = p.is_dir();
        let _ = std::fs::set_permissions(
            &p,
            std::fs::Permissions::from_mode(if dir { 0o777 } else { 0o666 }),
        );
        if dir && let Ok(rd) = std::fs::read_dir(&p) {
            stack.extend(rd.flatten().map(|e| e.path()));
        }
    }
}

/// navi on the pty, started once a line is typed (so the test can learn
/// the pty's name and prime the fake server first).
fn command(home: &Home, user: User, args: &[&str]) -> std::process::Command {
    let navi = env!("CARGO_BIN_EXE_navi");
    let mut c = if user == User::Nobody {
        let mut c = std::process::Command::new("setpriv");
        c.args([
            &format!("--reuid={NOBODY}"),
            &format!("--regid={NOBODY}"),
            "--clear-groups",
            "sh",
        ]);
        c
    } else {
        std::process::Command::new("sh")
    };
    c.args(["-c", "read _ && exec \"$0\" \"$@\"", navi])
        .args(args);
    let mut c = home.setup_for_test(c, "xterm-256color");
    c.env("PATH", path_for(user)).env("NO_COLOR", "1");
    c
}

/// Runs the probe, then asks for `touch MARK` and waits: an injected `y`
/// would answer that question. Returns the probe report.
async fn attack(user: User, args: &[&str]) -> Value {
    let fake = FakeLlm::start().await;
    let home = Home::new(&fake.ollama_url());
    if user == User::Nobody {
        open_up(&home);
    }
    let plain = args.contains(&"--plain");
    let mut pty = Pty::spawn(command(&home, user, args));
    // navi's own terminal, the one to attack.
    let tty = std::fs::read_link(format!("/proc/{}/fd/0", pty.pid())).unwrap();
    let probe_args = json!({
        "outside": home.dir.path().join("none"), "inside": "$TMPDIR", "targets": [],
        "ptys": [tty],
    });
    let probe = support_file("probe.py").display().to_string();
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": format!("python3 {probe} '{probe_args}'")}),
    ));
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": "touch MARK"}),
    ));
    fake.push(Reply::text("all done"));
    pty.send("start\r");
    if plain {
        pty.wait_prompt();
        pty.send("go\r");
    }
    pty.wait_for("[y]es/[s]ession/[N]o");
    pty.send("y\r");
    pty.wait_for("touch MARK");
    pty.wait_for("[y]es/[s]ession/[N]o");
    tokio::time::sleep(Duration::from_millis(1500)).await;
    let mark = home.dir.path().join("MARK");
    assert!(
        !mark.exists(),
        "{user:?} {args:?}: the tool answered the question"
    );
    pty.send("n\r");
    pty.wait_for("all done");
    if plain {
        pty.wait_prompt();
        pty.send("/quit\r");
    }
    assert_eq!(pty.exit_code(), 0, "{}", pty.text());
    assert!(!mark.exists());
    let out = pty.text();
    assert!(
        !out.contains("\u{1b}]0;PWNED"),
        "a raw escape reached the terminal: {out:?}"
    );
    let results = crate::mcp_support::env::tool_results(&fake, 1);
    results[0]
        .lines()
        .find_map(|l| l.trim().strip_prefix("PROBE="))
        .and_then(|j| serde_json::from_str::<Value>(j).ok())
        .unwrap_or_else(|| panic!("no report: {results:?}"))
}

fn assert_no_terminal(r: &Value) {
    for k in ["tty_opened", "tty_injected", "tty_written", "fds_above_2"] {
        assert_eq!(r[k], json!([]), "{k}: {r}");
    }
    for k in ["tiocsti_fd0", "tiocsti_fd1", "tiocsti_fd2", "open_dev_tty"] {
        assert_ne!(r[k], "ok", "{k}: {r}");
    }
    assert_eq!(r["stdin_tty"], false, "{r}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_cannot_answer_an_approval_in_plain_mode_as_root() {
    assert_no_terminal(&attack(User::Root, &["--plain", "--profile", "tester"]).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_cannot_answer_an_approval_in_plain_mode_as_an_ordinary_user() {
    assert_no_terminal(&attack(User::Nobody, &["--plain", "--profile", "tester"]).await);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_cannot_answer_an_approval_of_navi_run_on_a_tty() {
    assert_no_terminal(&attack(User::Root, &["run", "--profile", "tester", "go"]).await);
}
