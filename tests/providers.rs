//! Providers through the real binary and the fake server speaking each wire
//! protocol: `-m provider/model` for Anthropic Messages, OpenAI Responses
//! and OpenAI-compatible presets; tool loops whose thinking (signatures,
//! encrypted reasoning) must come back unchanged, also after `-c`; keys
//! from the environment and from `navi keys`; a bare `OPENAI_BASE_URL` or
//! `ANTHROPIC_API_KEY`; and the bad input of each.
use crate::cli_support::{Env, Out};
use crate::support::anthropic::signature;
use crate::support::responses::encrypted;
use crate::support::{FakeLlm, Fault, Part, Reply};
use serde_json::{Value, json};
use std::process::Stdio;
use tokio::io::AsyncWriteExt;

/// `navi` with no `--backend`: only what `vars` and the config say.
fn navi(env: &Env, vars: &[(&str, &str)], args: &[&str]) -> tokio::process::Command {
    let mut c = tokio::process::Command::new(env!("CARGO_BIN_EXE_navi"));
    c.env_clear()
        .env("PATH", std::env::var("PATH").unwrap_or_default())
        .env("HOME", env.dir.path())
        .env("NAVI_DATA_DIR", env.path("data"))
        .env("NAVI_CONFIG_DIR", env.path("cfg"))
        .env("OLLAMA_HOST", "http://127.0.0.1:9")
        .env("LLM_STREAM_FIRST_CHUNK_TIMEOUT", "20")
        .envs(vars.iter().copied())
        .args(args)
        .current_dir(env.dir.path())
        .stdin(Stdio::null())
        .kill_on_drop(true);
    c
}

async fn run(env: &Env, vars: &[(&str, &str)], args: &[&str]) -> Out {
    Out::from(navi(env, vars, args).output().await.unwrap())
}

fn config(env: &Env, toml: &str) {
    std::fs::write(env.path("cfg/config.toml"), toml).unwrap();
}

fn tool_loop() -> [Reply; 2] {
    [
        Reply::parts(vec![
            Part::Thinking("I will note it in the todo list.".into()),
            Part::Redacted("OPAQUE".into()),
            Part::ToolCall {
                name: "todo".into(),
                args: json!({"action": "set", "items": ["write it down"]}),
            },
        ])
        .with_usage(1200, 30)
        .with_cache(1000, 150),
        Reply::thinking_text("Done, it is listed.", "It is on your todo list.")
            .with_usage(1300, 12),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_tool_loop_round_trips_signatures_and_marks_the_cache() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    fake.require_key("sk-ant-test");
    tool_loop().into_iter().for_each(|r| fake.push(r));
    let vars = [
        ("ANTHROPIC_API_KEY", "sk-ant-test"),
        ("ANTHROPIC_BASE_URL", fake.base_url.as_str()),
    ];
    let args = [
        "run",
        "-p",
        "tester",
        "-m",
        "anthropic/test-model",
        "note it",
    ];
    let o = run(&env, &vars, &args).await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("It is on your todo list."),
        "{}",
        o.stdout
    );
    let reqs: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.is_chat())
        .collect();
    assert_eq!(
        reqs.len(),
        2,
        "the fake refuses a bad signature: {}",
        o.stderr
    );
    for r in &reqs {
        assert_eq!(r.path, "/v1/messages");
        assert_eq!(r.header("x-api-key"), Some("sk-ant-test"));
        assert_eq!(r.header("anthropic-version"), Some("2023-06-01"));
        assert!(r.header("authorization").is_none());
        assert_eq!(r.body["model"], "test-model");
        assert_eq!(r.body["system"][0]["cache_control"]["type"], "ephemeral");
        let tools = r.body["tools"].as_array().unwrap();
        assert_eq!(tools.last().unwrap()["cache_control"]["type"], "ephemeral");
        let last = r.body["messages"]
            .as_array()
            .unwrap()
            .last()
            .unwrap()
            .clone();
        let last_block = last["content"].as_array().unwrap().last().unwrap().clone();
        assert_eq!(last_block["cache_control"]["type"], "ephemeral", "{last}");
    }
    let asst = &reqs[1].body["messages"][1];
    assert_eq!(
        asst["content"][0],
        json!({"type": "thinking", "thinking": "I will note it in the todo list.",
               "signature": signature("I will note it in the todo list.")})
    );
    assert_eq!(
        asst["content"][1],
        json!({"type": "redacted_thinking", "data": "OPAQUE"})
    );
    assert_eq!(asst["content"][2]["type"], "tool_use");
    let result = &reqs[1].body["messages"][2]["content"][0];
    assert_eq!(result["type"], "tool_result");
    assert_eq!(result["tool_use_id"], asst["content"][2]["id"]);
    // The next turn reads the signatures back from the session database.
    fake.push(
        Reply::text("Still listed.")
            .with_usage(2000, 5)
            .with_cache(1800, 0),
    );
    let o = run(
        &env,
        &vars,
        &[
            "run",
            "--json",
            "-c",
            "-m",
            "anthropic/test-model",
            "still there?",
        ],
    )
    .await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    // The prompt's size counts what was read from the cache too.
    let usage: Vec<Value> = o
        .stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["type"] == "token_usage")
        .collect();
    assert_eq!(usage.last().unwrap()["prompt_tokens"], 2000, "{}", o.stdout);
    let last = fake.chat_requests().pop().unwrap();
    assert_eq!(last["messages"][1], reqs[1].body["messages"][1]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_responses_tool_loop_sends_reasoning_back_statelessly() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    fake.require_key("sk-openai");
    tool_loop().into_iter().for_each(|r| fake.push(r));
    config(
        &env,
        &format!("[providers.openai]\nbase_url = \"{}\"\n", fake.openai_url()),
    );
    let vars = [("OPENAI_API_KEY", "sk-openai")];
    let args = ["run", "-p", "tester", "-m", "openai/test-model", "note it"];
    let o = run(&env, &vars, &args).await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(
        o.stdout.contains("It is on your todo list."),
        "{}",
        o.stdout
    );
    let reqs: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.is_chat())
        .collect();
    assert_eq!(reqs.len(), 2, "{}", o.stderr);
    for r in &reqs {
        assert_eq!(r.path, "/v1/responses");
        assert_eq!(r.header("authorization"), Some("Bearer sk-openai"));
        assert_eq!(r.body["store"], json!(false));
        assert_eq!(r.body["include"], json!(["reasoning.encrypted_content"]));
    }
    let input = reqs[1].body["input"].as_array().unwrap();
    let reasoning: Vec<&Value> = input.iter().filter(|i| i["type"] == "reasoning").collect();
    assert_eq!(reasoning.len(), 2, "{input:?}");
    assert_eq!(
        reasoning[0]["encrypted_content"],
        json!(encrypted("I will note it in the todo list."))
    );
    assert_eq!(reasoning[1]["encrypted_content"], "redacted:OPAQUE");
    let call = input.iter().find(|i| i["type"] == "function_call").unwrap();
    let output = input
        .iter()
        .find(|i| i["type"] == "function_call_output")
        .unwrap();
    assert_eq!(call["call_id"], output["call_id"]);
    fake.push(Reply::text("Still listed."));
    let o = run(
        &env,
        &vars,
        &["run", "-c", "-m", "openai/test-model", "still?"],
    )
    .await;
    assert_eq!(o.code, 0, "{}", o.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_openai_compatible_preset_gets_its_key_and_the_model_after_the_slash() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    fake.set_models(vec![("meta/llama-3".into(), Some(8192))]);
    fake.require_key("sk-or");
    fake.push(Reply::text("Hello from the router."));
    config(
        &env,
        &format!(
            "[providers.openrouter]\nbase_url = \"{}\"\n",
            fake.openai_url()
        ),
    );
    let vars = [("OPENROUTER_API_KEY", "sk-or")];
    let o = run(&env, &vars, &["run", "-m", "openrouter/meta/llama-3", "hi"]).await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("Hello from the router."));
    let r = fake.requests().into_iter().find(|r| r.is_chat()).unwrap();
    assert_eq!(r.path, "/v1/chat/completions");
    assert_eq!(r.body["model"], "meta/llama-3");
    assert_eq!(r.header("authorization"), Some("Bearer sk-or"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bare_openai_base_url_or_anthropic_key_picks_its_backend() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("via chat completions"));
    let url = fake.openai_url();
    let o = run(&env, &[("OPENAI_BASE_URL", url.as_str())], &["run", "hi"]).await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("via chat completions"));
    fake.push(Reply::text("via messages"));
    let vars = [
        ("ANTHROPIC_API_KEY", "k"),
        ("ANTHROPIC_BASE_URL", fake.base_url.as_str()),
    ];
    let o = run(&env, &vars, &["run", "hi"]).await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("via messages"), "{}", o.stdout);
    let paths: Vec<String> = fake
        .requests()
        .into_iter()
        .filter(|r| r.is_chat())
        .map(|r| r.path)
        .collect();
    assert_eq!(paths, ["/v1/chat/completions", "/v1/messages"]);
    // Nothing set: the error names every way to choose.
    let o = run(&env, &[], &["run", "hi"]).await;
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("cannot reach Ollama")
            && o.stderr.contains("OPENAI_BASE_URL")
            && o.stderr.contains("ANTHROPIC_API_KEY")
            && o.stderr.contains("--provider"),
        "{}",
        o.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_are_stored_owner_only_listed_without_the_key_and_used() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    fake.require_key("sk-stored-123");
    let mut set = navi(&env, &[], &["keys", "set", "anthropic"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = set.stdin.take().unwrap();
    stdin.write_all(b"sk-stored-123\n").await.unwrap();
    drop(stdin);
    let o = Out::from(set.wait_with_output().await.unwrap());
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(!o.stderr.contains("sk-stored") && !o.stdout.contains("sk-stored"));
    let file = env.path("data/keys.json");
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(&file).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o600);
    let o = run(&env, &[], &["keys", "list"]).await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    let line = o
        .stdout
        .lines()
        .find(|l| l.starts_with("anthropic"))
        .unwrap();
    assert!(line.contains("stored"), "{line}");
    assert!(!o.stdout.contains("sk-stored"), "{}", o.stdout);
    fake.push(Reply::text("with the stored key"));
    let vars = [("ANTHROPIC_BASE_URL", fake.base_url.as_str())];
    let o = run(&env, &vars, &["run", "-m", "anthropic/test-model", "hi"]).await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert!(o.stdout.contains("with the stored key"));
    // Never in the session database or the log.
    let db = std::fs::read(env.path("data/navi.db")).unwrap_or_default();
    assert!(!String::from_utf8_lossy(&db).contains("sk-stored"));
    for entry in std::fs::read_dir(env.path("data/logs"))
        .into_iter()
        .flatten()
    {
        let text = std::fs::read_to_string(entry.unwrap().path()).unwrap_or_default();
        assert!(!text.contains("sk-stored"));
    }
    let o = run(&env, &[], &["keys", "remove", "anthropic"]).await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = run(&env, &vars, &["run", "-m", "anthropic/test-model", "hi"]).await;
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("ANTHROPIC_API_KEY") && o.stderr.contains("navi keys set anthropic"),
        "{}",
        o.stderr
    );
    let o = run(&env, &[], &["keys", "set", "antropic"]).await;
    assert_eq!(o.code, 2);
    assert!(
        o.stderr.contains("did you mean 'anthropic'"),
        "{}",
        o.stderr
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_provider_input_is_named() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    let base = fake.base_url.clone();
    // No key: nothing is sent.
    let o = run(
        &env,
        &[("ANTHROPIC_BASE_URL", &base)],
        &["run", "-m", "anthropic/test-model", "hi"],
    )
    .await;
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("no API key for anthropic")
            && o.stderr.contains("ANTHROPIC_API_KEY")
            && o.stderr.contains("navi keys set anthropic"),
        "{}",
        o.stderr
    );
    assert!(fake.chat_requests().is_empty());
    // A wrong key: 401, named as such, with the variable to fix.
    fake.require_key("right");
    let vars = [
        ("ANTHROPIC_BASE_URL", base.as_str()),
        ("ANTHROPIC_API_KEY", "wrong-key-42"),
    ];
    let o = run(&env, &vars, &["run", "-m", "anthropic/test-model", "hi"]).await;
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("refused the credentials (HTTP 401)")
            && o.stderr.contains("ANTHROPIC_API_KEY"),
        "{}",
        o.stderr
    );
    assert!(
        !o.stderr.contains("wrong-key-42"),
        "the key is never shown, even when the server quotes it: {}",
        o.stderr
    );
    // A provider nobody defined.
    let o = run(&env, &[], &["run", "-m", "nosuch/model-x", "hi"]).await;
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("unknown provider 'nosuch'") && o.stderr.contains("anthropic"),
        "{}",
        o.stderr
    );
    // A model the provider lacks.
    let vars = [
        ("ANTHROPIC_BASE_URL", base.as_str()),
        ("ANTHROPIC_API_KEY", "right"),
    ];
    let o = run(&env, &vars, &["run", "-m", "anthropic/claude-nope", "hi"]).await;
    assert_eq!(o.code, 1);
    assert!(
        o.stderr.contains("claude-nope") && o.stderr.contains("not found"),
        "{}",
        o.stderr
    );
    // A server that does not speak the protocol.
    fake.push(Reply::fault(Fault::Status(
        404,
        "404 page not found".into(),
    )));
    let o = run(&env, &vars, &["run", "-m", "anthropic/test-model", "hi"]).await;
    assert_eq!(o.code, 1);
    assert!(
        o.stderr
            .contains("does not answer like the Anthropic Messages API"),
        "{}",
        o.stderr
    );
    // An unknown --provider and a bad [providers] table: usage errors.
    let o = run(&env, &[], &["--provider", "nosuch", "models"]).await;
    assert_eq!(o.code, 2, "{}", o.stderr);
    assert!(o.stderr.contains("llm.provider") && o.stderr.contains("nosuch"));
    config(&env, "[providers.mine]\nbase_url = \"http://h/v1\"\n");
    let o = run(&env, &[], &["models"]).await;
    assert_eq!(o.code, 2);
    assert!(o.stderr.contains("providers.mine.protocol"), "{}", o.stderr);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overload_and_rate_limits_are_retried_and_cut_streams_reported() {
    for model in ["anthropic/test-model", "openai/test-model"] {
        let env = Env::new();
        let fake = FakeLlm::start().await;
        let mut vars = vec![("ANTHROPIC_API_KEY", "k"), ("OPENAI_API_KEY", "k")];
        if model.starts_with("anthropic") {
            vars.push(("ANTHROPIC_BASE_URL", fake.base_url.as_str()));
        } else {
            config(
                &env,
                &format!("[providers.openai]\nbase_url = \"{}\"\n", fake.openai_url()),
            );
        }
        fake.push(Reply::fault(Fault::Status(529, "Overloaded".into())));
        fake.push(Reply::fault(Fault::Status(429, "slow down".into())));
        fake.push(Reply::text("third time lucky"));
        let o = run(&env, &vars, &["run", "-m", model, "hi"]).await;
        assert_eq!(o.code, 0, "{model}: {}", o.stderr);
        assert!(o.stdout.contains("third time lucky"));
        assert_eq!(fake.chat_requests().len(), 3, "{model}");
        fake.push(Reply::fault(Fault::DisconnectMidStream));
        let o = run(&env, &vars, &["run", "-c", "-m", model, "again"]).await;
        assert_eq!(o.code, 1, "{model}");
        assert!(
            o.stderr
                .contains("closed the connection before the answer was complete"),
            "{model}: {}",
            o.stderr
        );
        assert_eq!(
            fake.chat_requests().len(),
            4,
            "a half answer is never replayed"
        );
        fake.push(Reply::fault(Fault::ErrorLine("Overloaded".into())));
        let o = run(&env, &vars, &["run", "-c", "-m", model, "and again"]).await;
        assert_eq!(o.code, 1, "{model}");
        assert_eq!(fake.chat_requests().len(), 5, "{model}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn models_lists_every_provider_that_answers() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    fake.set_models(vec![
        ("alpha:7b".into(), Some(8192)),
        ("claude-x".into(), None),
    ]);
    let vars = [
        ("NAVI_BACKEND", "ollama"),
        ("OLLAMA_HOST", fake.base_url.as_str()),
        ("ANTHROPIC_API_KEY", "k"),
        ("ANTHROPIC_BASE_URL", fake.base_url.as_str()),
        ("GROQ_API_KEY", "g"),
    ];
    config(
        &env,
        "[providers.groq]\nbase_url = \"http://127.0.0.1:9/v1\"\n",
    );
    let o = run(&env, &vars, &["models"]).await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    for name in ["alpha:7b", "anthropic/alpha:7b", "anthropic/claude-x"] {
        assert!(
            o.stdout
                .lines()
                .any(|l| l.split_whitespace().next() == Some(name)),
            "{name}: {}",
            o.stdout
        );
    }
    assert!(o.stdout.contains("8192"), "{}", o.stdout);
    assert!(
        o.stderr.contains("groq:"),
        "a provider that does not answer: {}",
        o.stderr
    );
    // Completion offers them from the kept list, without asking again.
    let before = fake.requests().len();
    let o = run(&env, &vars, &["__complete", "models"]).await;
    assert!(
        o.stdout.lines().any(|l| l == "anthropic/claude-x"),
        "{}",
        o.stdout
    );
    assert_eq!(fake.requests().len(), before);
}
