//! `navi --plain` in a pty while a turn runs: typing (held lines, `/stop`),
//! resizing, and `/context`.
use super::xterm;
use crate::plain_support::{Home, Pty, contents};
use crate::support::{FakeLlm, Reply};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn text_typed_during_a_turn_is_held_for_the_next_prompt() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("one two three four five six seven eight END").with_delay(150));
    fake.push(Reply::text("got it"));
    let home = Home::new(&fake.ollama_url());
    let mut pty = xterm(&home);
    pty.echo_on();
    pty.wait_prompt();
    pty.send("first\r");
    pty.wait_for("one two");
    pty.send("typed ahead");
    pty.wait_for("END");
    let before_prompt = pty.text();
    pty.wait_prompt();
    let answer_part = &before_prompt[before_prompt.find("one two").unwrap()..];
    assert!(
        !answer_part.contains("typed ahead"),
        "typing was echoed into the answer: {answer_part:?}"
    );
    // The held text is in the next prompt: Enter sends it.
    pty.wait_for("typed ahead");
    pty.send("\r");
    pty.wait_for("got it");
    pty.wait_prompt();
    pty.send("\x04");
    assert_eq!(pty.exit_code(), 0);
    let reqs = fake.chat_requests();
    assert_eq!(
        contents(&reqs[1]).last().map(String::as_str),
        Some("typed ahead")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_stop_ends_the_turn_at_once_and_other_lines_wait() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("slow ".repeat(400)).with_delay(40));
    fake.push(Reply::text("the held answer"));
    let home = Home::new(&fake.ollama_url());
    let mut pty = xterm(&home);
    pty.echo_on();
    pty.wait_prompt();
    pty.send("the first message\r");
    pty.wait_for("slow slow slow");
    // A finished line typed mid-answer is held; `/stop` acts at once.
    pty.send("the held question\r");
    pty.send("/stop\r");
    pty.wait_for("stopped");
    pty.wait_for("── context ");
    // The held line is sent from the next prompt.
    pty.wait_for("the held question");
    pty.wait_for("the held answer");
    pty.wait_prompt();
    pty.send("/quit\r");
    assert_eq!(pty.exit_code(), 0);

    let out = pty.text();
    let answer = &out[out.find("slow slow").unwrap()..out.find("stopped").unwrap()];
    assert!(
        !answer.contains("/stop") && !answer.contains("held question"),
        "typed text got into the answer: {answer:?}"
    );
    assert!(
        !out.contains("nothing is running"),
        "/stop ran late as a command: {out}"
    );
    let reqs = fake.chat_requests();
    assert_eq!(reqs.len(), 2, "{reqs:?}");
    let second = contents(&reqs[1]);
    assert!(
        second.iter().any(|c| c == "the first message"),
        "{second:?}"
    );
    let partial = second
        .iter()
        .find(|c| c.starts_with("slow slow"))
        .expect("the partial answer is in the session");
    assert!(
        partial.len() < "slow ".repeat(400).len(),
        "the stream was not stopped: {} bytes",
        partial.len()
    );
    assert!(!second.iter().any(|c| c.contains("/stop")), "{second:?}");
    assert_eq!(second.last().map(String::as_str), Some("the held question"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resizing_mid_answer_and_at_the_prompt_keeps_lines_whole() {
    let fake = FakeLlm::start().await;
    let words: String = (0..40).map(|i| format!("word{i} ")).collect();
    fake.push(Reply::text(format!("{words}END")).with_delay(30));
    fake.push(Reply::text("the second answer"));
    let home = Home::new(&fake.ollama_url());
    let mut pty = xterm(&home);
    pty.wait_prompt();
    pty.send("the first message\r");
    pty.wait_for("word3 ");
    pty.resize(40, 15);
    pty.wait_for("word20 ");
    pty.resize(120, 30);
    pty.wait_for("END");
    pty.wait_for("── context ");
    pty.wait_prompt();
    pty.resize(50, 20);
    pty.send("the second message\r");
    pty.wait_for("the second answer");
    pty.wait_prompt();
    pty.send("/quit\r");
    assert_eq!(pty.exit_code(), 0);

    let out = pty.text();
    let start = out.find("word0 ").unwrap();
    let end = start + out[start..].find("── context").unwrap();
    // Nothing was painted into the streamed answer: it is the model's text,
    // then the line break before the status line.
    assert_eq!(&out[start..end], format!("{words}END\r\n"));
    let reqs = fake.chat_requests();
    assert_eq!(reqs.len(), 2, "{reqs:?}");
    assert_eq!(
        contents(&reqs[1]).last().map(String::as_str),
        Some("the second message")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rule_fits_a_narrow_terminal() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("above\n\n---\n\nbelow"));
    let home = Home::new(&fake.ollama_url());
    let mut pty = Pty::spawn(home.command("xterm-256color", &[]));
    pty.wait_prompt();
    pty.resize(24, 20);
    pty.send("draw a rule\r");
    pty.wait_for("below");
    pty.wait_prompt();
    pty.send("/quit\r");
    assert_eq!(pty.exit_code(), 0);
    let out = pty.text();
    let rule = format!("{}\x1b", "─".repeat(24));
    assert!(
        out.contains(&rule) && !out.contains(&"─".repeat(25)),
        "the rule is not 24 columns: {out:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn typed_stop_works_on_a_dumb_terminal_too() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("slow ".repeat(400)).with_delay(40));
    fake.push(Reply::text("the held answer"));
    let home = Home::new(&fake.ollama_url());
    let mut pty = Pty::spawn(home.command("dumb", &[]));
    pty.wait_prompt();
    pty.send("the first message\r");
    pty.wait_for("slow slow slow");
    pty.send("the held question\r/stop\r");
    pty.wait_for("stopped");
    pty.wait_for("the held answer");
    pty.wait_prompt();
    pty.send("/quit\r");
    assert_eq!(pty.exit_code(), 0);
    assert!(!pty.text().contains("nothing is running"), "{}", pty.text());
    let reqs = fake.chat_requests();
    assert_eq!(reqs.len(), 2, "{reqs:?}");
    let second = contents(&reqs[1]);
    let partial = second.iter().find(|c| c.starts_with("slow slow")).unwrap();
    assert!(partial.len() < "slow ".repeat(400).len());
    assert_eq!(second.last().map(String::as_str), Some("the held question"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn context_command_shows_the_same_account_as_navi_context() {
    let fake = FakeLlm::start().await;
    let home = Home::new(&fake.ollama_url());
    let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_navi"));
    c.args(["context", "--profile", "tester"]);
    let out = home.setup_for_test(c, "dumb").output().unwrap();
    assert!(out.status.success());
    let cli = String::from_utf8(out.stdout).unwrap();
    let cli_lines: Vec<&str> = cli.lines().filter(|l| !l.is_empty()).collect();
    assert!(cli_lines.len() > 3, "{cli}");

    let mut pty = xterm(&home);
    pty.wait_prompt();
    pty.send("/context\r");
    pty.wait_for(cli_lines.last().unwrap());
    pty.wait_prompt();
    pty.send("/quit\r");
    assert_eq!(pty.exit_code(), 0);
    let shown = pty.text().replace("\r\n", "\n");
    for l in &cli_lines {
        assert!(
            shown.contains(&format!("{l}\n")),
            "/context lacks {l:?}:\n{shown}"
        );
    }
    assert!(fake.chat_requests().is_empty());
}
