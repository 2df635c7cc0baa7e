//! Issue 34 items 1, 5, 6 and 8 through the binary: `/init` in plain mode,
//! `/show N`, a sandbox denial shown to the user, the approval's sandbox
//! sentence and a command card's meaningful line on a pty; command output
//! on stdout and errors on stderr with pipes; `model: using …` once per
//! choice; `/model NAME --default` editing the config; the first-run screen
//! and `navi config check --online`.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::plain_support::{Home, Pty, contents, piped};
use crate::support::{FakeLlm, Reply};
use serde_json::json;

const UNITTEST: &str = "printf 'test_a (t.T) ... ok\\n\\n----------------------------------------------------------------------\\nRan 3 tests in 0.001s\\n\\nOK\\n' >&2";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn show_denials_sandbox_sentence_and_meaningful_summaries_in_plain_mode() {
    let fake = FakeLlm::start().await;
    let home = Home::new(&fake.ollama_url());
    crate::project_modes::with_filesystem(&home);
    let work = home.dir.path().join("ws");
    let outside = home.dir.path().join("outside");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    let target = outside.join("denied.txt");
    fake.push(Reply::tool_call("terminal", json!({"command": UNITTEST})));
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": format!("echo hi > {}", target.display())}),
    ));
    fake.push(Reply::text("TURN-DONE"));
    let mut cmd = home.command("dumb", &[("NO_COLOR", "1")]);
    cmd.current_dir(&work);
    let mut pty = Pty::spawn(cmd);
    pty.wait_prompt();
    pty.send("run the tests\r");
    // The approval says what the sandbox lets the command do.
    pty.wait_for("sandbox: workspace-write · may write only in the workspace");
    pty.wait_for("no network");
    pty.wait_for("[y]es/[s]ession/[N]o");
    pty.send("y\r");
    // The summary is the meaningful line, not the row of dashes.
    pty.wait_for("✓ terminal: exit 0 · Ran 3 tests in 0.001s · OK");
    pty.wait_for("[y]es/[s]ession/[N]o");
    pty.send("y\r");
    // The denial and navi's note reach the user.
    pty.wait_for("denied: ");
    pty.wait_for("[sandbox] this command may have been stopped by navi's sandbox");
    pty.wait_for("TURN-DONE");
    pty.wait_prompt();
    pty.send("/show 2\r");
    pty.wait_for("result 2 of 2 counting back from the last:");
    pty.wait_for("test_a (t.T) ... ok");
    pty.wait_prompt();
    pty.send("/show\r");
    pty.wait_for("result 1 of 2");
    pty.wait_prompt();
    pty.send("/show 7\r");
    pty.wait_for("this session has 2 tool result(s)");
    pty.wait_prompt();
    pty.send("/quit\r");
    assert_eq!(pty.exit_code(), 0, "{}", pty.text());
    assert!(!target.exists());
    let text = pty.text();
    let card = text
        .lines()
        .find_map(|l| l.split_once("✓ terminal: exit 0").map(|(_, c)| c))
        .unwrap();
    assert!(!card.contains("-----"), "{card}");
    // The full result holds the lines the summary left out.
    assert!(
        text.contains("----------------------------------------------------------------------")
    );
    // The note is for the user: the instructions to the model are left out.
    let note = text
        .lines()
        .find(|l| l.contains("[sandbox] this command may"))
        .unwrap();
    assert!(note.contains("It may write only under:"), "{note}");
    assert!(!note.contains("call the tool again"), "{note}");
    // The denial line names the error the command got.
    let denied = text.lines().find(|l| l.contains("denied: ")).unwrap();
    assert!(
        denied.contains("Permission denied") || denied.contains("Read-only file system"),
        "{denied}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn command_output_to_stdout_errors_to_stderr_and_the_model_line_once() {
    let fake = FakeLlm::start().await;
    let home = Home::new(&fake.ollama_url());
    fake.push(Reply::text("first answer"));
    let c = home.setup_for_test(
        {
            let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_navi"));
            c.args(["--plain", "--profile", "tester", "--no-plan"]);
            c
        },
        "dumb",
    );
    let (code, out, err) = tokio::task::spawn_blocking(move || {
        piped(c, "hello\n/compact --preview\n/nonsense\n/show\n/help\n")
    })
    .await
    .unwrap();
    assert_eq!(code, 0, "{out}{err}");
    // The compaction preview (here: nothing to compact) is output.
    assert!(
        out.contains("nothing to compact"),
        "stdout: {out}\nstderr: {err}"
    );
    assert!(!err.contains("nothing to compact"), "{err}");
    // A command's error is a diagnostic.
    assert!(err.contains("unknown command /nonsense"), "{err}");
    assert!(!out.contains("unknown command"), "{out}");
    assert!(err.contains("no tool results in this session yet"), "{err}");
    // /help lists the new commands, on stdout.
    assert!(out.contains("/show [n]") && out.contains("/init"), "{out}");
    // The model line the first time this project uses the model…
    assert_eq!(err.matches("model: using test-model").count(), 1, "{err}");
    // …and not again while the choice stays the same.
    fake.push(Reply::text("second answer"));
    let mut run = home.run_command(&["-c", "again"]);
    let o = tokio::task::spawn_blocking(move || run.output().unwrap())
        .await
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{err}");
    assert!(!err.contains("model: "), "{err}");
    // Another model is a change: announced.
    fake.push(Reply::text("third answer"));
    let mut run = home.run_command(&["-m", "other-model", "hi"]);
    let o = tokio::task::spawn_blocking(move || run.output().unwrap())
        .await
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("model: using other-model"), "{err}");
    // `--model` stays with that session: `-c` without it keeps it.
    fake.push(Reply::text("fourth answer"));
    let mut run = home.run_command(&["-c", "more"]);
    let o = tokio::task::spawn_blocking(move || run.output().unwrap())
        .await
        .unwrap();
    assert!(o.status.success());
    let last = fake.chat_requests().last().cloned().unwrap();
    assert_eq!(last["model"], "other-model");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn init_asks_for_agents_md_at_the_root_and_to_improve_an_existing_one() {
    let fake = FakeLlm::start().await;
    let home = Home::new(&fake.ollama_url());
    let repo = home.dir.path().join("repo");
    let sub = repo.join("src/deep");
    std::fs::create_dir_all(&sub).unwrap();
    std::fs::create_dir_all(repo.join(".git")).unwrap();
    let plain = |input: &'static str| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_navi"));
        c.args(["--plain", "--profile", "tester", "--no-plan", "--new"]);
        let mut c = home.setup_for_test(c, "dumb");
        c.current_dir(&sub);
        tokio::task::spawn_blocking(move || piped(c, input))
    };
    fake.push(Reply::text("WROTE-IT"));
    let (code, out, err) = plain("/init\n").await.unwrap();
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.contains("WROTE-IT"), "{out}");
    let file = repo.join("AGENTS.md");
    let first = contents(&fake.chat_requests()[0]).join("\n");
    assert!(first.contains("Write an AGENTS.md"), "{first}");
    assert!(first.contains(&file.display().to_string()), "{first}");
    std::fs::write(&file, "# Rules\nuse tabs\n").unwrap();
    fake.push(Reply::text("IMPROVED-IT"));
    let (code, out, err) = plain("/init keep it short\n").await.unwrap();
    assert_eq!(code, 0, "{out}{err}");
    let reqs = fake.chat_requests();
    let second = contents(reqs.last().unwrap()).join("\n");
    assert!(second.contains("already has an AGENTS.md"), "{second}");
    assert!(
        second.contains("Do not rewrite it from scratch"),
        "{second}"
    );
    assert!(second.contains("The user adds: keep it short"), "{second}");
    // The existing file is in the system prompt too, so the model sees it.
    assert!(second.contains("use tabs"), "{second}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn model_default_is_saved_in_the_config_keeping_its_comments() {
    let fake = FakeLlm::start().await;
    let home = Home::new(&fake.ollama_url());
    let config = home.dir.path().join("cfg/config.toml");
    std::fs::write(
        &config,
        "# my settings\n[llm]\n# the server\nbackend = \"ollama\"\n\n[ui]\ntheme = \"light\" # light terminal\n",
    )
    .unwrap();
    let c = home.setup_for_test(
        {
            let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_navi"));
            c.args(["--plain", "--profile", "tester"]);
            c
        },
        "dumb",
    );
    let (code, out, err) =
        tokio::task::spawn_blocking(move || piped(c, "/model other-model --default\n"))
            .await
            .unwrap();
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains("model set to other-model for this session"),
        "{out}"
    );
    assert!(out.contains("saved as the default model"), "{out}");
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        "# my settings\n[llm]\ndefault_model = \"other-model\"\n# the server\nbackend = \"ollama\"\n\n[ui]\ntheme = \"light\" # light terminal\n"
    );
    // A file the line edit cannot change safely is left alone.
    std::fs::write(&config, "llm = { backend = \"ollama\" }\n").unwrap();
    let c = home.setup_for_test(
        {
            let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_navi"));
            c.args(["--plain", "--profile", "tester"]);
            c
        },
        "dumb",
    );
    let (_, _, err) = tokio::task::spawn_blocking(move || piped(c, "/model m2 --default\n"))
        .await
        .unwrap();
    assert!(err.contains("default_model = \"m2\""), "{err}");
    assert_eq!(
        std::fs::read_to_string(&config).unwrap(),
        "llm = { backend = \"ollama\" }\n"
    );
}

/// An address nothing listens on.
fn closed_url() -> String {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    drop(l);
    format!("http://127.0.0.1:{port}")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn first_run_says_what_to_do_and_config_check_online_asks_the_server() {
    let home = Home::new(&closed_url());
    // `navi run` with nothing configured and nothing answering.
    let mut run = home.run_command(&["hi"]);
    let o = tokio::task::spawn_blocking(move || run.output().unwrap())
        .await
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("ollama pull "), "{err}");
    assert!(err.contains("export OPENAI_BASE_URL="), "{err}");
    assert!(err.contains("ANTHROPIC_API_KEY"), "{err}");
    assert!(err.contains("navi keys set"), "{err}");
    // Plain mode: the same screen after the failed turn.
    let c = home.setup_for_test(
        {
            let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_navi"));
            c.args(["--plain", "--profile", "tester", "--no-plan"]);
            c
        },
        "dumb",
    );
    let (code, out, err) = tokio::task::spawn_blocking(move || piped(c, "hello\n"))
        .await
        .unwrap();
    assert_eq!(code, 1, "{out}{err}");
    assert!(err.contains("ollama pull "), "{err}");
    // config check --online: exit 1, the provider and why.
    let check = |home: &Home| {
        let mut c = std::process::Command::new(env!("CARGO_BIN_EXE_navi"));
        c.args(["config", "check", "--online"]);
        let mut c = home.setup_for_test(c, "dumb");
        tokio::task::spawn_blocking(move || c.output().unwrap())
    };
    let o = check(&home).await.unwrap();
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(o.status.code(), Some(1), "{out}");
    assert!(out.contains("backend: error: ollama at"), "{out}");
    assert!(out.contains("cannot reach"), "{out}");
    // With a config file, a failure is just the error (no newcomer screen).
    std::fs::write(home.dir.path().join("cfg/config.toml"), "[ui]\n").unwrap();
    let mut run = home.run_command(&["hi"]);
    let o = tokio::task::spawn_blocking(move || run.output().unwrap())
        .await
        .unwrap();
    let err = String::from_utf8_lossy(&o.stderr).to_string();
    assert!(err.contains("cannot reach"), "{err}");
    assert!(!err.contains("ollama pull "), "{err}");
    // A server that answers: its models, exit 0.
    let fake = FakeLlm::start().await;
    let up = Home::new(&fake.ollama_url());
    let o = check(&up).await.unwrap();
    let out = String::from_utf8_lossy(&o.stdout).to_string();
    assert_eq!(o.status.code(), Some(0), "{out}");
    assert!(out.contains("backend: ok: ollama at"), "{out}");
    assert!(out.contains("test-model"), "{out}");
}
