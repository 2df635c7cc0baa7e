//! Completion and the man page: bash completion completes option values from local
//! files (profiles, models, session ids), never file names; `navi man`
//! names no page that does not exist and documents what a user needs.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::{plain_support, support};

use plain_support::Home;
use support::{FakeLlm, Reply};

/// What bash completes for `words` (the last one is being typed).
fn bash_complete(home: &Home, words: &[&str]) -> Vec<String> {
    let bin = env!("CARGO_BIN_EXE_navi");
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let n = words.len();
    let script = format!(
        "source <(\"$0\" completions bash) || exit 9\n\
         COMP_WORDS=(\"$0\" {words})\n\
         COMP_CWORD={n}\n\
         _navi \"$0\" '{cur}' '{prev}'\n\
         printf '%s\\n' \"${{COMPREPLY[@]}}\"",
        words = quoted.join(" "),
        cur = words[n - 1],
        prev = if n >= 2 { words[n - 2] } else { "" },
    );
    let mut c = std::process::Command::new("bash");
    c.args(["-c", &script, bin]);
    let out = home.setup_for_test(c, "dumb").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(String::from)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_completes_profiles_models_and_session_ids() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("hello"));
    let home = Home::new(&fake.ollama_url());
    // Files in the working directory must not be offered.
    std::fs::write(home.dir.path().join("te-not-a-profile.txt"), "x").unwrap();
    for words in [
        &["--profile", "te"][..],
        &["-p", "te"],
        &["run", "--profile", "te"],
        &["run", "-p", "te"],
    ] {
        let got = bash_complete(&home, words);
        assert_eq!(got, vec!["tester".to_string()], "{words:?}");
    }
    let got = bash_complete(&home, &["run", "--model", ""]);
    assert!(got.contains(&"test-model".to_string()), "{got:?}");
    assert!(!got.iter().any(|g| g.contains("not-a-profile")), "{got:?}");
    let got = bash_complete(&home, &["run", "-m", "test-"]);
    assert_eq!(got, vec!["test-model".to_string()]);
    // Sessions: none yet, then the one a run wrote.
    assert!(bash_complete(&home, &["run", "-s", ""]).is_empty());
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_navi"));
    c.args(["run", "--profile", "tester", "hi"]);
    let o = home.setup_for_test(c, "dumb").output().unwrap();
    assert_eq!(o.status.code(), Some(0));
    let id: String = rusqlite::Connection::open(home.data().join("navi.db"))
        .unwrap()
        .query_row("SELECT id FROM sessions", [], |r| r.get(0))
        .unwrap();
    for words in [
        &["run", "-s", ""][..],
        &["run", "--session", ""],
        &["--session", ""],
        &["compact", "--session", ""],
    ] {
        let got = bash_complete(&home, words);
        assert_eq!(got, vec![id[..8].to_string()], "{words:?}");
    }
}

#[test]
fn the_man_page_stands_alone_and_says_what_users_need() {
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_navi"))
        .arg("man")
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0));
    let page = String::from_utf8_lossy(&o.stdout);
    // No pointer to a page that is not installed (navi-run(1), …).
    assert!(!page.contains("(1)"), "{page}");
    for section in [
        ".SH COMMANDS",
        ".SH SLASH COMMANDS",
        ".SH ENVIRONMENT",
        ".SH FILES",
        ".SH EXIT STATUS",
    ] {
        assert!(page.contains(section), "no {section}");
    }
    // Run flags, nested subcommands, slash commands and variables are in it.
    for needle in [
        "navi run",
        "\\-\\-approve",
        "\\-\\-continue",
        "navi sessions export",
        "navi mcp check",
        "/session resume",
        "/approvals",
        "OLLAMA_HOST",
        "NAVI_DATA_DIR",
        "NO_COLOR",
        "130",
    ] {
        assert!(page.contains(needle), "{needle} missing from the man page");
    }
    // It renders, when man is there.
    if std::process::Command::new("man")
        .arg("--version")
        .output()
        .is_ok()
    {
        let mut child = std::process::Command::new("man")
            .args(["-l", "-"])
            .env("MANWIDTH", "80")
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        child.stdin.take().unwrap().write_all(&o.stdout).unwrap();
        let r = child.wait_with_output().unwrap();
        let text = String::from_utf8_lossy(&r.stdout);
        assert!(text.contains("EXIT STATUS"), "{text}");
    }
}
