//! The small commands and their contract with scripts (issue 17): a closed
//! pipe on every printing subcommand, completions, man page, `config
//! path|check`, `last`, `sessions export`, and errors from a server that is
//! not an LLM API. The real binary against the fake LLM server.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::cli_support;
use crate::support;

use cli_support::{Env, Out};
use serde_json::Value;
use std::process::Stdio;
use support::{FakeLlm, Reply};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// Runs `args` with stdout on a pipe whose reader is already gone.
fn closed_stdout(env: &Env, url: &str, args: &[&str]) -> (i32, String) {
    let (reader, write_end) = std::io::pipe().unwrap();
    drop(reader);
    let out = env
        .std_cmd(url, "ollama")
        .args(args)
        .stdout(Stdio::from(write_end))
        .stderr(Stdio::piped())
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_closed_pipe_is_a_quiet_exit_zero_on_every_printing_subcommand() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("first answer"));
    let o = env
        .run(&fake, "ollama", &["run", "-p", "tester", "hi"])
        .await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    fake.push(Reply::text("a streamed answer that nobody reads"));
    let url = fake.ollama_url();
    let cases: &[&[&str]] = &[
        &["sessions", "list"],
        &["sessions", "list", "--json"],
        &["sessions", "show", "1"],
        &["sessions", "show", "1", "--json"],
        &["sessions", "export", "1"],
        &["sessions", "export", "1", "--format", "json"],
        &["profiles", "list"],
        &["profiles", "list", "--json"],
        &["models"],
        &["models", "--json"],
        &["config", "path"],
        &["config", "path", "--json"],
        &["config", "check"],
        &["last"],
        &["completions", "bash"],
        &["man"],
        &["--help"],
        &["run", "-p", "tester", "--no-save", "again"],
        &["run", "-p", "tester", "--no-save", "--json", "again"],
    ];
    for args in cases {
        if args[0] == "run" {
            fake.push(Reply::text("more words nobody reads"));
        }
        let (env2, url2, args2) = (&env, url.clone(), args.to_vec());
        let (code, stderr) = tokio::task::block_in_place(|| closed_stdout(env2, &url2, &args2));
        assert_eq!(code, 0, "{args:?}: {stderr}");
        assert!(!stderr.contains("panicked"), "{args:?}: {stderr}");
        assert!(!stderr.contains("Broken pipe"), "{args:?}: {stderr}");
    }
}

#[tokio::test]
async fn completions_load_in_bash_and_the_man_page_renders() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    let bin = env!("CARGO_BIN_EXE_navi");
    let out = std::process::Command::new("bash")
        .args([
            "-c",
            "source <(\"$0\" completions bash) && complete -p navi",
            bin,
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("-F _navi navi"));
    for shell in ["zsh", "fish", "elvish", "powershell"] {
        let o = env.run(&fake, "ollama", &["completions", shell]).await;
        assert_eq!(o.code, 0, "{shell}: {}", o.stderr);
        assert!(
            o.stdout.contains("completions") && o.stdout.contains("navi"),
            "{shell}"
        );
    }
    let o = env.run(&fake, "ollama", &["completions", "tcsh"]).await;
    assert_eq!(o.code, 2);
    let o = env.run(&fake, "ollama", &["man"]).await;
    assert_eq!(o.code, 0);
    assert!(o.stdout.contains(".TH navi 1"), "{}", o.stdout);
    assert!(o.stdout.contains("completions"), "subcommands are listed");
}

#[tokio::test]
async fn last_and_export_print_the_session() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    let o = env.run(&fake, "ollama", &["last"]).await;
    assert_eq!(o.code, 1, "no session yet");
    fake.push(Reply::text("## Heading\n\nthe *first* answer"));
    env.run(&fake, "ollama", &["run", "-p", "tester", "q1"])
        .await;
    fake.push(Reply::text("second answer"));
    env.run(&fake, "ollama", &["run", "-p", "tester", "q2"])
        .await;
    let o = env.run(&fake, "ollama", &["last"]).await;
    assert_eq!((o.code, o.stdout.as_str()), (0, "second answer\n"));
    let o = env.run(&fake, "ollama", &["last", "2"]).await;
    assert_eq!(o.stdout, "## Heading\n\nthe *first* answer\n");
    let o = env.run(&fake, "ollama", &["sessions", "export", "2"]).await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("## User\n\nq1\n"), "{}", o.stdout);
    assert!(
        o.stdout
            .contains("## Assistant\n\n## Heading\n\nthe *first* answer\n"),
        "{}",
        o.stdout
    );
    let o = env
        .run(
            &fake,
            "ollama",
            &["sessions", "export", "1", "--format", "json"],
        )
        .await;
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(v["messages"][0]["content"], "q2");
    let o = env
        .run(&fake, "ollama", &["sessions", "export", "zzz"])
        .await;
    assert_eq!(o.code, 2);
}

fn write_profile(env: &Env, id: &str, cfg: &str) {
    let p = env.path(&format!("cfg/profiles/{id}"));
    std::fs::create_dir_all(&p).unwrap();
    std::fs::write(p.join("config.json"), cfg).unwrap();
}

#[tokio::test]
async fn config_path_and_check() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    let o = env
        .run(&fake, "ollama", &["config", "path", "--json"])
        .await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(
        v["database"],
        env.path("data/navi.db").display().to_string()
    );
    assert_eq!(
        v["profiles_dir"],
        env.path("cfg/profiles").display().to_string()
    );
    let o = env.run(&fake, "ollama", &["config", "check"]).await;
    assert_eq!(o.code, 0, "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("profiles: ok"), "{}", o.stdout);

    write_profile(&env, "broken", "{ not json");
    std::fs::create_dir_all(env.path("cfg/tools")).unwrap();
    std::fs::write(env.path("cfg/tools/bad.json"), "{\"name\": 5}").unwrap();
    std::fs::write(
        env.path("cfg/config.toml"),
        "[security.approval_tools]\nterminl = \"auto\"\n",
    )
    .unwrap();
    let o = env.run(&fake, "ollama", &["config", "check"]).await;
    assert_eq!(o.code, 2, "{}", o.stdout);
    assert!(
        o.stdout.contains("profiles: error: profile"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("broken"), "{}", o.stdout);
    assert!(
        o.stdout.contains("user tools: error:") && o.stdout.contains("bad"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.contains("'terminl'; did you mean 'terminal'?"),
        "{}",
        o.stdout
    );

    std::fs::write(env.path("cfg/config.toml"), "[llm]\nnum_ctx = \"big\"\n").unwrap();
    let o = env.run(&fake, "ollama", &["config", "check"]).await;
    assert_eq!(o.code, 2);
    assert!(
        o.stdout.contains("config: error:") && o.stdout.contains("num_ctx"),
        "{}",
        o.stdout
    );
}

#[tokio::test]
async fn config_check_looks_at_mcp_servers_without_starting_them() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    let ok_prog = std::env::current_exe().unwrap();
    std::fs::write(
        env.path("cfg/config.toml"),
        format!(
            "[mcp_servers.good]\ncommand = \"{}\"\n\n[mcp_servers.gone]\ncommand = \"no-such-mcp-server-xyz\"\n\n[mcp_servers.off]\ncommand = \"also-missing\"\nenabled = false\n",
            ok_prog.display()
        ),
    )
    .unwrap();
    write_profile(
        &env,
        "mcpuser",
        r#"{"id": "mcpuser", "name": "M", "description": "m", "model": ["test-model"], "enabled_tools": ["good__read", "nowhere__x"]}"#,
    );
    std::fs::write(env.path("cfg/profiles/mcpuser/system_prompt.txt"), "M").unwrap();
    let o = env.run(&fake, "ollama", &["config", "check"]).await;
    assert_eq!(o.code, 2, "{}{}", o.stdout, o.stderr);
    assert!(o.stdout.contains("mcp servers: ok: good:"), "{}", o.stdout);
    assert!(
        o.stdout.contains("mcp servers: error: gone: [mcp_servers.gone].command 'no-such-mcp-server-xyz' is not found"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.contains("mcp servers: ok: off: disabled"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout
            .contains("tool 'nowhere__x' names MCP server 'nowhere'"),
        "{}",
        o.stdout
    );
    assert!(!o.stdout.contains("'good__read'"), "{}", o.stdout);
    // The memory tools exist when memory is on: no false warnings.
    assert!(!o.stdout.contains("'memory_search'"), "{}", o.stdout);
    // Offline: no server was started, no request went out.
    assert!(fake.requests().is_empty());
}

/// A web server that answers every request with an HTML error page.
async fn html_server() -> (String, std::sync::Arc<std::sync::atomic::AtomicUsize>) {
    let l = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = l.local_addr().unwrap();
    let hits = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let h = hits.clone();
    tokio::spawn(async move {
        while let Ok((mut s, _)) = l.accept().await {
            h.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            let mut buf = [0u8; 4096];
            let _ = s.read(&mut buf).await;
            let body = "<!DOCTYPE html><html><body><h1>501 Not Implemented</h1></body></html>";
            let resp = format!(
                "HTTP/1.1 501 Not Implemented\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
            let _ = s.write_all(resp.as_bytes()).await;
        }
    });
    (format!("http://{addr}"), hits)
}

#[tokio::test]
async fn a_web_page_instead_of_an_api_is_named_and_not_retried() {
    let env = Env::new();
    let (url, hits) = html_server().await;
    let o = tokio::task::spawn_blocking({
        let mut c = env.std_cmd(&url, "ollama");
        c.args(["run", "-p", "tester", "hi"]);
        move || c.output().unwrap()
    })
    .await
    .unwrap();
    let o = Out::from(o);
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(
        o.stderr.contains(&format!(
            "got HTTP 501 text/html from {url} — is this an Ollama server?"
        )),
        "{}",
        o.stderr
    );
    assert!(
        !o.stderr.contains("<html") && !o.stderr.contains("DOCTYPE"),
        "{}",
        o.stderr
    );
    assert_eq!(
        hits.load(std::sync::atomic::Ordering::SeqCst),
        1,
        "no retries"
    );
}

#[tokio::test]
async fn no_model_available_says_how_to_pick_one() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    fake.set_models(vec![("a".into(), None), ("b".into(), None)]);
    let o = env
        .run(&fake, "ollama", &["run", "-p", "tester", "hi"])
        .await;
    assert_eq!(o.code, 1, "{}", o.stderr);
    assert!(o.stderr.contains("--model"), "{}", o.stderr);
    assert!(o.stderr.contains("/model"), "{}", o.stderr);
    assert!(o.stderr.contains("default_model"), "{}", o.stderr);
}

/// `--backend` takes the backend names and their aliases (the same
/// spellings `NAVI_BACKEND` and a profile's `llm_backend` take) and picks
/// the protocol by them; any other value is a usage error (exit 2) that
/// lists the choices and reaches no server.
#[tokio::test]
async fn backend_flag_spellings_pick_the_protocol() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    fake.set_models(vec![("alpha:7b".into(), Some(8192))]);
    for (spelling, path) in [
        ("ollama", "/api/tags"),
        ("openai", "/v1/models"),
        ("openai-compatible", "/v1/models"),
        ("openai_compatible", "/v1/models"),
    ] {
        let before = fake.requests().len();
        let Out {
            code,
            stdout,
            stderr,
        } = env.run(&fake, spelling, &["models"]).await;
        assert_eq!(code, 0, "{spelling}: {stderr}");
        assert!(stdout.contains("alpha:7b"), "{spelling}: {stdout}");
        let reqs = fake.requests();
        assert!(
            reqs[before..].iter().any(|r| r.path == path),
            "{spelling}: {:?}",
            reqs[before..].iter().map(|r| &r.path).collect::<Vec<_>>()
        );
    }
    let before = fake.requests().len();
    for bad in ["bogus", "llama", "Ollama2"] {
        let Out { code, stderr, .. } = env.run(&fake, bad, &["models"]).await;
        assert_eq!(code, 2, "{bad:?}: {stderr}");
        assert!(
            stderr.contains(&format!("invalid value '{bad}' for '--backend <BACKEND>'")),
            "{stderr}"
        );
        assert!(
            stderr.contains("[possible values: ollama, openai, anthropic, responses]"),
            "{stderr}"
        );
    }
    assert_eq!(
        fake.requests().len(),
        before,
        "a bad flag reaches no server"
    );
}

#[tokio::test]
async fn session_and_profile_flags_before_a_subcommand_apply_to_it_or_are_refused() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    // `-p` before `run` picks the profile: an unknown one is refused at once.
    let o = env.run(&fake, "ollama", &["-p", "nope", "run", "hi"]).await;
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("unknown profile 'nope'"), "{}", o.stderr);
    assert!(fake.chat_requests().is_empty());
    fake.push(Reply::text("first"));
    let o = env
        .run(&fake, "ollama", &["--profile", "tester", "run", "q1"])
        .await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    let sent = fake.chat_requests();
    assert!(
        sent[0].to_string().contains("TESTER-PROMPT"),
        "the tester profile's prompt: {}",
        sent[0]
    );
    // `-c` before `run` continues the latest session.
    fake.push(Reply::text("second"));
    let o = env.run(&fake, "ollama", &["-c", "run", "q2"]).await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    let last = fake.chat_requests().pop().unwrap().to_string();
    assert!(last.contains("q1") && last.contains("first"), "{last}");
    let o = env
        .run(&fake, "ollama", &["sessions", "list", "--json"])
        .await;
    let list: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1, "{list}");
    // A flag the subcommand has no use for is refused, not ignored.
    let o = env
        .run(&fake, "ollama", &["--plain", "sessions", "list"])
        .await;
    assert_eq!(o.code, 2);
    assert!(
        o.stderr
            .contains("--plain does not apply to `navi sessions`"),
        "{}",
        o.stderr
    );
    let o = env.run(&fake, "ollama", &["-s", "1", "models"]).await;
    assert_eq!(o.code, 2, "{}", o.stderr);
}
