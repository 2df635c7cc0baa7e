//! Line mode whose terminal goes away (issue 26, item 1), what plain mode
//! leaves behind when it ends (item 2) and destructive commands (item 3).
use crate::plain_support::{Home, Pty, piped};
use crate::support::{FakeLlm, Reply};
use serde_json::json;
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

fn hangup_script() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/plain_support/hangup.py")
}

pub fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit_once(')')
            .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
    })
}

/// Waits (bounded) until `pid` is gone; kills it and fails if it is not.
pub fn gone_within(pid: u32, limit: Duration, what: &str) {
    let start = Instant::now();
    while alive(pid) {
        if start.elapsed() > limit {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            panic!("{what}: pid {pid} still runs after {limit:?}");
        }
        std::thread::sleep(Duration::from_millis(50));
    }
}

fn read_pid(file: &Path) -> u32 {
    let start = Instant::now();
    loop {
        if let Some(p) = std::fs::read_to_string(file)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            return p;
        }
        assert!(start.elapsed() < Duration::from_secs(10), "no pid file");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs plain mode on a pty, types `text`, waits for `mark2`, then closes
/// the terminal. `sighup`: navi leads the pty's session (the kernel sends it
/// SIGHUP); otherwise it runs in a session of its own (no SIGHUP reaches it,
/// as when the signal went to a parent shell). Returns (navi's pid, what
/// hangup.py saw of the process it started).
fn drop_terminal(home: &Home, text: &str, mark2: &str, sighup: bool) -> (u32, String) {
    let pidfile = home.dir.path().join("navi.pid");
    let _ = std::fs::remove_file(&pidfile);
    let mut c = Command::new("python3");
    c.arg(hangup_script())
        .args(["navi[tester]", text, mark2, "--"]);
    if !sighup {
        c.args(["setsid", "-w"]);
    }
    c.args(["sh", "-c", "echo $$ > \"$1\"; shift; exec \"$@\"", "sh"])
        .arg(&pidfile)
        .arg(env!("CARGO_BIN_EXE_navi"))
        .args(["--plain", "--profile", "tester"]);
    let out = home
        .setup_for_test(c, "xterm-256color")
        .env("NO_COLOR", "1")
        .output()
        .unwrap();
    let said = String::from_utf8_lossy(&out.stdout).trim().to_string();
    assert!(
        out.status.success(),
        "hangup.py failed: {said} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (read_pid(&pidfile), said)
}

/// The session is free again: `navi run -c` continues it (exit 0).
fn continue_works(home: &Home, fake: &FakeLlm) {
    fake.push(Reply::text("continued fine"));
    let out = home.run_command(&["-c", "again"]).output().unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{all}");
    assert!(all.contains("continued fine"), "{all}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_that_goes_away_at_the_idle_prompt_ends_plain_mode() {
    for sighup in [true, false] {
        let fake = FakeLlm::start().await;
        fake.push(Reply::text("first answer"));
        let home = Home::new(&fake.ollama_url());
        let (pid, said) = drop_terminal(&home, "hello\r", "first answer", sighup);
        gone_within(pid, Duration::from_secs(8), "navi at the idle prompt");
        if sighup {
            assert_eq!(said, "exit 129", "navi's own exit status");
        }
        continue_works(&home, &fake);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_that_goes_away_at_an_approval_question_ends_plain_mode() {
    for sighup in [true, false] {
        let fake = FakeLlm::start().await;
        fake.push(Reply::tool_call(
            "terminal",
            json!({"command": "echo never-run > ran.txt"}),
        ));
        let home = Home::new(&fake.ollama_url());
        let (pid, said) = drop_terminal(&home, "run it\r", "[y]es/[s]ession/[N]o", sighup);
        gone_within(pid, Duration::from_secs(8), "navi at an approval question");
        if sighup {
            assert_eq!(said, "exit 129");
        }
        assert!(!home.dir.path().join("ran.txt").exists(), "nobody approved");
        continue_works(&home, &fake);
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_and_sighup_at_the_idle_prompt_end_plain_mode() {
    for (sig, code) in [("-TERM", 143), ("-HUP", 129)] {
        let fake = FakeLlm::start().await;
        let home = Home::new(&fake.ollama_url());
        let mut pty = Pty::spawn(home.command("xterm-256color", &[("NO_COLOR", "1")]));
        pty.wait_prompt();
        std::thread::sleep(Duration::from_millis(300));
        Command::new("kill")
            .args([sig, &pty.pid().to_string()])
            .status()
            .unwrap();
        assert_eq!(pty.exit_code(), code, "{sig}: {}", pty.text());
    }
}

/// `/session delete` asks first in plain mode: only `y` deletes; with
/// piped input nobody can answer and nothing is deleted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn session_delete_asks_first_in_plain_mode() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("kept answer"));
    fake.push(Reply::text("second answer"));
    let home = Home::new(&fake.ollama_url());
    let mut pty = Pty::spawn(home.command("xterm-256color", &[("NO_COLOR", "1")]));
    pty.wait_prompt();
    pty.send("hello\r");
    pty.wait_for("kept answer");
    pty.wait_prompt();
    let count = || {
        let db = rusqlite::Connection::open(home.data().join("navi.db")).unwrap();
        db.query_row("SELECT COUNT(*) FROM sessions", [], |r| r.get::<_, i64>(0))
            .unwrap()
    };
    assert_eq!(count(), 1);
    pty.send("/session delete\r");
    pty.wait_for("and all its messages? [y/N]");
    pty.send("n\r");
    pty.wait_for("kept");
    pty.wait_prompt();
    assert_eq!(count(), 1, "n keeps the session");
    pty.send("/session delete\r");
    pty.wait_for("[y/N]");
    pty.send("y\r");
    pty.wait_for("started a new session");
    pty.wait_prompt();
    assert_eq!(count(), 0, "y deletes it");
    pty.send("\x04");
    assert_eq!(pty.exit_code(), 0);

    // Piped: a script's `/session delete` deletes nothing.
    let (code, _, _) = piped(home.command("dumb", &[]), "hello again\n");
    assert_eq!(code, 0);
    assert_eq!(count(), 1);
    let (code, out, err) = piped(
        home.setup_for_test(
            {
                let mut c = Command::new(env!("CARGO_BIN_EXE_navi"));
                c.args(["--plain", "--profile", "tester", "-c"]);
                c
            },
            "dumb",
        ),
        "/session delete\n",
    );
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        format!("{out}{err}").contains("not deleted: nobody can confirm"),
        "{out}{err}"
    );
    assert_eq!(count(), 1);
}

/// A failed `navi run` leaves no session behind: a missing or unreadable
/// `-f` file, a directory, a bad `--session`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_run_leaves_no_empty_session() {
    let fake = FakeLlm::start().await;
    let home = Home::new(&fake.ollama_url());
    let secret = home.dir.path().join("secret.txt");
    std::fs::write(&secret, "x").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&secret, std::fs::Permissions::from_mode(0o000)).unwrap();
    let unreadable = std::fs::File::open(&secret).is_err();
    let dir = home.dir.path().display().to_string();
    let secret = secret.display().to_string();
    let mut cases: Vec<Vec<&str>> = vec![
        vec!["-f", "missing.txt", "summarize"],
        vec!["-f", &dir, "summarize"],
        vec!["--session", "nope-no-such", "hi"],
    ];
    if unreadable {
        // (root reads every file: then this case proves nothing.)
        cases.push(vec!["-f", &secret, "summarize"]);
    }
    for args in cases {
        let out = home.run_command(&args).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_ne!(out.status.code(), Some(0), "{args:?}: {err}");
        let db = home.data().join("navi.db");
        if db.exists() {
            let db = rusqlite::Connection::open(db).unwrap();
            let n: i64 = db
                .query_row("SELECT COUNT(*) FROM sessions", [], |r| r.get(0))
                .unwrap();
            assert_eq!(n, 0, "{args:?} left a session: {err}");
        }
    }
    assert!(fake.chat_requests().is_empty());
}

/// Plain mode ends the shared SSH connections of its sessions when it
/// quits (a real sshd; `ssh_exec` approved at the prompt).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plain_mode_closes_ssh_connections_when_it_ends() {
    let sshd = crate::support::sshd::Sshd::start();
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "ssh_exec",
        json!({"host": "box", "command": "echo over-ssh"}),
    ));
    fake.push(Reply::text("ssh done"));
    let home = Home::new(&fake.ollama_url());
    let cfg = home.dir.path().join("cfg");
    let p = cfg.join("profiles/tester/config.json");
    let mut prof: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    prof["enabled_tools"] = json!(["ssh_exec"]);
    std::fs::write(&p, prof.to_string()).unwrap();
    std::fs::copy(&sshd.client_key, cfg.join("id")).unwrap();
    let hosts = json!({"box": {"host": "127.0.0.1", "port": sshd.port, "user": sshd.user, "key_file": "id"}});
    std::fs::write(cfg.join("hosts.json"), hosts.to_string()).unwrap();
    std::fs::write(
        cfg.join("config.toml"),
        "[security]\nssh_hosts_file = \"hosts.json\"\nssh_host_key_checking = \"accept-new\"\n",
    )
    .unwrap();
    let sockets = || -> Vec<String> {
        std::fs::read_dir(home.data().join("ssh"))
            .map(|d| {
                d.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut pty = Pty::spawn(home.command("xterm-256color", &[("NO_COLOR", "1")]));
    pty.wait_prompt();
    pty.send("use ssh\r");
    pty.wait_for("[y]es/[s]ession/[N]o");
    pty.send("y\r");
    pty.wait_for("ssh done");
    pty.wait_prompt();
    assert_eq!(sockets().len(), 1, "one shared connection while it runs");
    pty.send("/quit\r");
    assert_eq!(pty.exit_code(), 0);
    assert!(sockets().is_empty(), "left open: {:?}", sockets());
}
