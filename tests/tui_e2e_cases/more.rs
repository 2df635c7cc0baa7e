//! End-to-end TUI cases in tmux, part two: the session lock and signals,
//! the external editor and input history, and `/attach`. Shares the tmux
//! harness of `tests/tui_e2e.rs`.
use super::*;

fn ppid_of(pid: u32) -> u32 {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let (_, rest) = stat.rsplit_once(')').unwrap();
    rest.split_whitespace().nth(1).unwrap().parse().unwrap()
}

fn alive(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit_once(')')
            .is_some_and(|(_, r)| r.trim_start().starts_with('Z'))
    })
}

/// While the TUI runs a tool, the session is busy for any other navi; SIGTERM
/// stops the turn, kills the tool's group, saves, and exits 143.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tui_holds_the_session_lock_and_sigterm_stops_the_tool_and_exits_143() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("cfg");
    write_profile_with(&cfg, &["terminal"]);
    let fake = FakeLlm::start().await;
    let pg = dir.path().join("pgid");
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": format!("echo $$ > {}; sleep 30", pg.display())}),
    ));
    let command = format!(
        // Run in the temp dir: the tool writes its pid file there (the
        // workspace the sandbox lets it write to).
        "cd {home} && env HOME={home} NAVI_DATA_DIR={home}/data NAVI_CONFIG_DIR={cfg} OLLAMA_HOST={url} \
         LLM_STREAM_FIRST_CHUNK_TIMEOUT=20 {bin} --profile tester; echo NAVI-EXIT:$?; sleep 60",
        home = dir.path().display(),
        cfg = cfg.display(),
        url = fake.ollama_url(),
        bin = env!("CARGO_BIN_EXE_navi"),
    );
    let t = Tmux::start(&command);
    t.wait_text("new session with profile tester").await;
    t.type_line("sleep for me");
    t.wait_text("Approval needed").await;
    t.keys(&["y"]);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    let pgid: u32 = loop {
        if let Some(n) = std::fs::read_to_string(&pg)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            break n;
        }
        assert!(tokio::time::Instant::now() < deadline, "tool never started");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let navi_pid = ppid_of(pgid);

    // Another navi on the same session is refused, naming the TUI's pid.
    let out = Command::new(env!("CARGO_BIN_EXE_navi"))
        .env("HOME", dir.path())
        .env("NAVI_DATA_DIR", dir.path().join("data"))
        .env("NAVI_CONFIG_DIR", &cfg)
        .env("OLLAMA_HOST", fake.ollama_url())
        .args(["run", "--continue", "me too"])
        // The TUI's project: `--continue` continues the project's session.
        .current_dir(dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(
        err.contains(&format!("busy in another navi (pid {navi_pid})")),
        "{err}"
    );

    Command::new("kill")
        .args(["-TERM", &navi_pid.to_string()])
        .status()
        .unwrap();
    t.wait_text("NAVI-EXIT:143").await;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while alive(pgid) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "tool outlived the TUI"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let db = rusqlite::Connection::open(dir.path().join("data/navi.db")).unwrap();
    let results: Vec<String> = db
        .prepare("SELECT content FROM messages WHERE role = 'tool' AND buffer = 0")
        .unwrap()
        .query_map([], |r| r.get(0))
        .unwrap()
        .map(|r| r.unwrap())
        .collect();
    assert_eq!(results.len(), 1, "{results:?}");
    assert!(results[0].contains("cancelled"), "{results:?}");
}

/// Ctrl-G runs `$EDITOR` on the draft and loads the text back (a failing
/// editor keeps the draft); what is sent lands in the history file plain
/// mode uses, and a new run finds it with Up.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn external_editor_and_history_across_restarts() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("cfg");
    write_profile(&cfg);
    let editor = dir.path().join("ed.sh");
    // Fails on a draft containing FAIL; otherwise writes two lines after it.
    std::fs::write(
        &editor,
        "#!/bin/sh\ngrep -q FAIL \"$1\" && exit 3\nd=$(cat \"$1\")\nprintf '%s EDITED\\nsecond line\\n' \"$d\" > \"$1\"\n",
    )
    .unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&editor, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("Got it."));
    let command = format!(
        "env HOME={home} NAVI_DATA_DIR={home}/data NAVI_CONFIG_DIR={cfg} OLLAMA_HOST={url} \
         VISUAL= EDITOR={ed} {bin} --profile tester; echo NAVI-EXIT:$?; sleep 60",
        home = dir.path().display(),
        cfg = cfg.display(),
        url = fake.ollama_url(),
        ed = editor.display(),
        bin = env!("CARGO_BIN_EXE_navi"),
    );
    let t = Tmux::start(&command);
    t.wait_text("new session with profile tester").await;
    let typed = |s: &str| {
        assert!(
            t.cmd(&["send-keys", "-t", SESSION, "-l", s])
                .status()
                .unwrap()
                .success()
        )
    };
    // A failing editor: the draft stays, the reason is shown.
    typed("FAIL draft");
    t.keys(&["C-x", "C-e"]);
    let s = t.wait_text("failed").await;
    assert!(s.contains("› FAIL draft"), "{s}");
    t.keys(&["C-u"]);
    // Ctrl-G: the edited text comes back into the composer, newlines kept.
    typed("my draft");
    t.keys(&["C-g"]);
    let s = t.wait_text("my draft EDITED").await;
    assert!(s.contains("second line"), "{s}");
    t.keys(&["Enter"]);
    t.wait_text("Got it.").await;
    t.wait_idle().await;
    let chats = fake.chat_requests();
    let msgs = chats[0]["messages"].as_array().unwrap();
    assert_eq!(
        msgs[msgs.len() - 1]["content"],
        "my draft EDITED\nsecond line"
    );
    let hist = dir.path().join("data/history.txt");
    let mut on_disk = String::new();
    for _ in 0..100 {
        on_disk = std::fs::read_to_string(&hist).unwrap_or_default();
        if on_disk.contains("EDITED") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        on_disk.contains("my draft EDITED<\\n>second line"),
        "plain mode's format: {on_disk:?}"
    );
    t.keys(&["C-c"]);
    t.keys(&["C-c"]);
    t.wait_text("NAVI-EXIT:0").await;
    drop(t);

    // A new run: Up brings back the line sent in the previous one.
    let t = Tmux::start(&command);
    t.wait_text("Ask Navi anything").await;
    t.wait("the history read", |_| true).await;
    for _ in 0..100 {
        t.keys(&["Up"]);
        if t.capture().contains("my draft EDITED") {
            break;
        }
        t.keys(&["C-u", "C-u"]);
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    t.wait_text("my draft EDITED").await;
}

/// `/attach` of a text file in the real binary: the queued file shows above
/// the composer, and the next message carries its content to the server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn attach_a_text_file_reaches_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("cfg");
    write_profile(&cfg);
    let fake = FakeLlm::start().await;
    fake.set_models(vec![("test-model".into(), Some(32768))]);
    // Other requests (the session title) may take a reply first.
    for _ in 0..3 {
        fake.push(Reply::text("Read your notes."));
    }
    let notes = dir.path().join("notes.txt");
    std::fs::write(&notes, "ATTACHED-ALPHA\nATTACHED-BETA\n").unwrap();
    let command = format!(
        "env HOME={home} NAVI_DATA_DIR={home}/data NAVI_CONFIG_DIR={cfg} OLLAMA_HOST={url} \
         {bin} --profile tester; echo NAVI-EXIT:$?; sleep 60",
        home = dir.path().display(),
        cfg = cfg.display(),
        url = fake.ollama_url(),
        bin = env!("CARGO_BIN_EXE_navi"),
    );
    let t = Tmux::start(&command);
    t.wait_text("new session with profile tester").await;
    t.type_line(&format!("/attach {}", notes.display()));
    t.wait_text("notes.txt").await;
    t.type_line("summarise the attached notes");
    t.wait_text("Read your notes.").await;
    let user = fake
        .chat_requests()
        .into_iter()
        .filter_map(|b| {
            b["messages"]
                .as_array()?
                .iter()
                .rev()
                .find(|m| m["role"] == "user")
                .cloned()
        })
        .find(|m| m.to_string().contains("summarise the attached notes"))
        .unwrap_or_else(|| panic!("no request carried the message: {:?}", fake.chat_requests()));
    let text = user.to_string();
    assert!(
        text.contains("notes.txt") && text.contains("ATTACHED-ALPHA\\nATTACHED-BETA"),
        "{user}"
    );
    t.wait("idle after the answer", |s| {
        status_line(s).ends_with("idle")
    })
    .await;
    t.keys(&["C-c"]);
    t.wait_text("press Ctrl-C again to quit").await;
    t.keys(&["C-c"]);
    t.wait_text("NAVI-EXIT:0").await;
}

/// `navi sessions list --json` from another process, on the test's data dir.
fn session_rows(home: &Path, cfg: &Path) -> Vec<serde_json::Value> {
    let out = Command::new(env!("CARGO_BIN_EXE_navi"))
        .args(["sessions", "list", "--json"])
        .env("HOME", home)
        .env("NAVI_DATA_DIR", home.join("data"))
        .env("NAVI_CONFIG_DIR", cfg)
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(out.status.success(), "{text}");
    serde_json::from_str::<serde_json::Value>(&text)
        .unwrap()
        .as_array()
        .cloned()
        .unwrap_or_else(|| panic!("not a JSON array: {text}"))
}

/// Lock files left under the data dir (there must be none for a session
/// nothing was sent in).
fn lock_files(dir: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                todo.push(p);
            } else if p.extension().is_some_and(|x| x == "lock") {
                out.push(p);
            }
        }
    }
    out
}

/// A new session is pending until the first message: another process sees
/// no row while the TUI is open and idle (also after `/session new` twice
/// and a profile switch), `/session list` shows it as "(new session)", and
/// the row appears with the first message.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_session_row_until_the_first_message() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("cfg");
    write_profile(&cfg);
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("First answer."));
    let command = format!(
        "env HOME={home} NAVI_DATA_DIR={home}/data NAVI_CONFIG_DIR={cfg} OLLAMA_HOST={url} \
         {bin} --profile tester; echo NAVI-EXIT:$?; sleep 60",
        home = dir.path().display(),
        cfg = cfg.display(),
        url = fake.ollama_url(),
        bin = env!("CARGO_BIN_EXE_navi"),
    );
    let t = Tmux::start(&command);
    t.wait_text("new session with profile tester").await;
    assert!(session_rows(dir.path(), &cfg).is_empty());
    assert!(
        lock_files(dir.path()).is_empty(),
        "{:?}",
        lock_files(dir.path())
    );

    t.type_line("/session new");
    t.type_line("/session new");
    t.type_line("/session list");
    t.wait_text("(new session)").await;
    assert!(session_rows(dir.path(), &cfg).is_empty());

    t.type_line("hello there");
    t.wait_text("First answer.").await;
    t.wait_idle().await;
    let rows = session_rows(dir.path(), &cfg);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["profile_id"], "tester", "{rows:?}");
    let chats = fake.chat_requests();
    assert_eq!(chats.len(), 1);
    assert!(chats[0].to_string().contains("hello there"), "{chats:?}");

    // `/session new` then quitting keeps only the session with messages.
    t.type_line("/session new");
    t.wait("the new session's empty transcript", |s| {
        !s.contains("First answer.") && s.contains("new session")
    })
    .await;
    t.keys(&["C-c"]);
    t.wait_text("press Ctrl-C again to quit").await;
    t.keys(&["C-c"]);
    t.wait_text("NAVI-EXIT:0").await;
    assert_eq!(session_rows(dir.path(), &cfg).len(), 1);
}

/// kill -9 before the first message leaves no row and no lock file.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kill_9_before_the_first_message_leaves_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("cfg");
    write_profile(&cfg);
    let fake = FakeLlm::start().await;
    let pidfile = dir.path().join("navi.pid");
    let command = format!(
        "sh -c 'echo $$ > {pid}; exec env HOME={home} NAVI_DATA_DIR={home}/data \
         NAVI_CONFIG_DIR={cfg} OLLAMA_HOST={url} {bin} --profile tester'; echo NAVI-EXIT:$?; sleep 60",
        pid = pidfile.display(),
        home = dir.path().display(),
        cfg = cfg.display(),
        url = fake.ollama_url(),
        bin = env!("CARGO_BIN_EXE_navi"),
    );
    let t = Tmux::start(&command);
    t.wait_text("new session with profile tester").await;
    t.type_line("/session new");
    t.wait_text("new session").await;
    let pid = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .to_string();
    assert!(
        Command::new("kill")
            .args(["-KILL", &pid])
            .status()
            .unwrap()
            .success()
    );
    t.wait_text("NAVI-EXIT:137").await;
    assert!(session_rows(dir.path(), &cfg).is_empty());
    assert!(
        lock_files(dir.path()).is_empty(),
        "{:?}",
        lock_files(dir.path())
    );
}

/// A terminal that goes away without a SIGHUP reaching navi (navi in its own
/// session, the tmux server killed) ends navi instead of leaving it spinning
/// on the dead descriptor.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_that_goes_away_without_sighup_ends_navi() {
    let dir = tempfile::tempdir().unwrap();
    let cfg = dir.path().join("cfg");
    write_profile(&cfg);
    let fake = FakeLlm::start().await;
    let pidfile = dir.path().join("navi.pid");
    let script = dir.path().join("navi.sh");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho $$ > {pid}\nexec env HOME={home} NAVI_DATA_DIR={home}/data \
             NAVI_CONFIG_DIR={cfg} OLLAMA_HOST={url} {bin} --profile tester\n",
            pid = pidfile.display(),
            home = dir.path().display(),
            cfg = cfg.display(),
            url = fake.ollama_url(),
            bin = env!("CARGO_BIN_EXE_navi"),
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let t = Tmux::start(&format!("setsid -w {}", script.display()));
    t.wait_text("new session with profile tester").await;
    let pid: u32 = std::fs::read_to_string(&pidfile)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    assert!(alive(pid));
    // Past the start-up work (backend check, background query).
    tokio::time::sleep(Duration::from_secs(3)).await;
    drop(t); // kill-server: the pty is gone, and navi is not its session's leader.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while alive(pid) {
        if tokio::time::Instant::now() > deadline {
            let _ = Command::new("kill")
                .args(["-KILL", &pid.to_string()])
                .status();
            panic!("navi outlived its terminal by 20 s");
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}
