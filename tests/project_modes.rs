//! Issue 34 items 4, 5 and 7 (and 35.4/35.6) through plain mode on a pty:
//! `--full-auto` writes inside the workspace without asking but asks for a
//! write outside it, the modes are in the banner, the waiting line counts
//! seconds, and the notification escape comes only after a long turn.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::plain_support::{Home, Pty, contents};
use crate::support::{FakeLlm, Reply};
use serde_json::json;

/// The tester profile with the filesystem tool, without the planner.
pub(crate) fn with_filesystem(home: &Home) {
    let p = home.dir.path().join("cfg/profiles/tester/config.json");
    let mut cfg: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
    cfg["enabled_tools"] = json!(["todo", "terminal", "filesystem"]);
    cfg["planning_enabled"] = json!(false);
    std::fs::write(&p, cfg.to_string()).unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn full_auto_writes_inside_the_workspace_and_asks_outside() {
    let fake = FakeLlm::start().await;
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("escaped.txt");
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "write", "path": "inside.txt", "content": "IN"}),
    ));
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "write", "path": target.to_str().unwrap(), "content": "OUT"}),
    ));
    // A relative path that climbs out is outside too.
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "write", "path": "../climbed.txt", "content": "UP"}),
    ));
    fake.push(Reply::text("all done"));
    let home = Home::new(&fake.ollama_url());
    with_filesystem(&home);
    let work = home.dir.path().join("ws");
    std::fs::create_dir_all(&work).unwrap();
    let mut cmd = home.command("dumb", &[("NO_COLOR", "1")]);
    cmd.arg("--full-auto").current_dir(&work);
    let mut pty = Pty::spawn(cmd);
    pty.wait_for("approval full-auto");
    pty.wait_prompt();
    pty.send("write the files\r");
    // The first write needs no answer; the second asks.
    pty.wait_for(&format!("write 3 bytes to {}", target.display()));
    pty.wait_for("[y]es/[s]ession/[N]o");
    pty.send("n\r");
    pty.wait_for("write 2 bytes to ../climbed.txt");
    pty.wait_for("[y]es/[s]ession/[N]o");
    pty.send("n\r");
    pty.wait_for("all done");
    pty.wait_prompt();
    pty.send("/approvals\r");
    pty.wait_for("full-auto (--full-auto)");
    pty.send("/quit\r");
    assert_eq!(pty.exit_code(), 0, "{}", pty.text());
    assert_eq!(
        std::fs::read_to_string(work.join("inside.txt")).unwrap(),
        "IN"
    );
    assert!(!target.exists());
    assert!(!home.dir.path().join("climbed.txt").exists());
    let text = pty.text();
    assert_eq!(text.matches("[y]es/[s]ession/[N]o").count(), 2, "{text}");
    // Each write approval shows its diff first (a new file: its lines added).
    assert!(
        text.contains("new file, 1 line(s)") && text.contains("+OUT"),
        "{text}"
    );
    assert!(text.contains("+UP"), "{text}");
    let reqs = fake.chat_requests();
    let last = contents(&reqs[3]).join("\n");
    assert!(last.contains("the user denied"), "{last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn approval_auto_is_in_the_banner_and_after_each_turn() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("hi there"));
    let home = Home::new(&fake.ollama_url());
    let mut pty = Pty::spawn(home.command("dumb", &[("NO_COLOR", "1"), ("NAVI_APPROVAL", "auto")]));
    pty.wait_for("approval auto · sandbox");
    pty.wait_prompt();
    pty.send("hello\r");
    pty.wait_for("hi there");
    pty.wait_for("[approval auto · sandbox");
    pty.send("/quit\r");
    assert_eq!(pty.exit_code(), 0, "{}", pty.text());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_turn_ends_with_the_notification_and_a_short_one_without() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("quick answer"));
    fake.push(Reply {
        prefill_ms: 3500,
        ..Reply::text("slow answer")
    });
    let home = Home::new(&fake.ollama_url());
    std::fs::write(
        home.dir.path().join("cfg/config.toml"),
        "[ui]\nnotify = \"osc9\"\nnotify_after_secs = 3\n",
    )
    .unwrap();
    let mut pty = Pty::spawn(home.command("dumb", &[("NO_COLOR", "1")]));
    pty.wait_prompt();
    pty.send("first\r");
    pty.wait_for("quick answer");
    pty.wait_prompt();
    assert!(!pty.text().contains("\x1b]9;"), "{:?}", pty.text());
    pty.send("second\r");
    // The wait before the first token is counted on the terminal.
    pty.wait_for("waiting for the model · 2s");
    pty.wait_for("slow answer");
    pty.wait_for("\x1b]9;navi: the turn ended (");
    pty.wait_prompt();
    pty.send("/quit\r");
    assert_eq!(pty.exit_code(), 0, "{}", pty.text());
    assert_eq!(pty.text().matches("\x1b]9;").count(), 1);
}
