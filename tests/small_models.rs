//! Issue 36: the small-model path end to end. The real `navi run` binary
//! against the fake LLM server: a tiny model (by name) gets the lean
//! preset and constrained tool calls (llama-server `grammar`, Ollama
//! `format`), a template without tool support gets tools as text, an
//! invalid call switches to constrained calls, and larger models keep free
//! tool calling.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::support;

use serde_json::{Value, json};
use std::path::PathBuf;
use std::process::Stdio;
use support::{FakeLlm, Reply};
use tokio::process::Command;

pub(crate) struct Env {
    pub(crate) dir: tempfile::TempDir,
}

impl Env {
    pub(crate) fn new(model: &str, config: &str) -> Env {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("cfg/profiles/tester");
        std::fs::create_dir_all(&p).unwrap();
        let cfg = json!({
            "id": "tester", "name": "Tester", "description": "test profile",
            "model": [model], "temperature": 0.2,
            "enabled_tools": ["todo", "terminal", "scratchpad"],
            "planning_phase1_enabled": false, "planning_phase3_enabled": false,
            "iteration_budget_enabled": false, "goal_anchoring_enabled": false
        });
        std::fs::write(p.join("config.json"), cfg.to_string()).unwrap();
        std::fs::write(p.join("system_prompt.txt"), "TESTER-PROMPT").unwrap();
        std::fs::write(dir.path().join("cfg/persona.txt"), "TEST-PERSONA").unwrap();
        // `auto` unless the test says otherwise (the default is `off`).
        let config = if config.contains("small_model") {
            config.to_string()
        } else {
            format!("[llm]\nsmall_model = \"auto\"\n{config}")
        };
        std::fs::write(dir.path().join("cfg/config.toml"), config).unwrap();
        std::fs::create_dir_all(dir.path().join("work")).unwrap();
        Env { dir }
    }

    pub(crate) fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    async fn run(&self, fake: &FakeLlm, backend: &str, ask: &str) -> (i32, String, String) {
        let run = ["run", "--profile", "tester", "--approve", "terminal", ask];
        self.navi(fake, backend, &run).await
    }

    pub(crate) async fn navi(
        &self,
        fake: &FakeLlm,
        backend: &str,
        args: &[&str],
    ) -> (i32, String, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_navi"))
            .env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("NAVI_DATA_DIR", self.data())
            .env("NAVI_CONFIG_DIR", self.dir.path().join("cfg"))
            .env("OLLAMA_HOST", fake.ollama_url())
            .env("OPENAI_BASE_URL", fake.openai_url())
            .env("LLM_STREAM_FIRST_CHUNK_TIMEOUT", "20")
            .env("LLM_STREAM_CHUNK_TIMEOUT", "20")
            .current_dir(self.dir.path().join("work"))
            .args(["--backend", backend])
            .args(args)
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output()
            .await
            .unwrap();
        (
            out.status.code().unwrap_or(-1),
            String::from_utf8_lossy(&out.stdout).into_owned(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    }
}

pub(crate) fn llama_props(supports_tools: bool) -> Value {
    json!({"default_generation_settings": {"n_ctx": 4096}, "total_slots": 1,
           "chat_template_caps": {"supports_tools": supports_tools}})
}

fn system_of(req: &Value) -> String {
    req["messages"][0]["content"].as_str().unwrap().to_string()
}

/// The lean preset's one silent request: the command under the grammar
/// of the nearest template, the examples as a note at the end, the same
/// system prompt as a plain answer, no `tools`.
fn check_command_request(req: &Value, grammar_key: &str) -> String {
    assert!(
        req.get("tools").is_none(),
        "tools never go on the wire: {req}"
    );
    let msgs = req["messages"].as_array().unwrap();
    let last = msgs.last().unwrap();
    assert_eq!(last["role"], "user");
    let text = last["content"].as_str().unwrap();
    assert!(
        text.starts_with("how many lines are in notes.txt\n\n[navi] Examples:\n"),
        "{text}"
    );
    assert!(
        text.contains("-> {\"tool\":\"terminal\",\"arguments\":{\"command\":\"wc -l a.py\"}}"),
        "{text}"
    );
    // The lean preset: short persona, the terminal only, no profile prompt.
    let system = system_of(req);
    assert!(system.starts_with("You are navi"), "{system}");
    assert!(!system.contains("TEST-PERSONA") && !system.contains("TESTER-PROMPT"));
    assert!(system.contains("Tool terminal:") && !system.contains("Tool todo"));
    assert!(
        !system.contains("->"),
        "no examples in the system prompt: {system}"
    );
    req[grammar_key].clone().to_string()
}

fn notes_fixture(env: &Env) {
    std::fs::write(env.dir.path().join("work/notes.txt"), "a\nb\nc\nd\n").unwrap();
    std::fs::write(env.dir.path().join("work/other.md"), "x\n").unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tiny_model_on_llama_server_writes_the_command_under_a_template_grammar() {
    let env = Env::new("SmolLM2-135M-Instruct", "");
    notes_fixture(&env);
    let fake = FakeLlm::start().await;
    fake.set_models(vec![("SmolLM2-135M-Instruct".into(), Some(8192))]);
    fake.set_props(Some(llama_props(true)));
    fake.push(Reply::text(
        json!({"tool": "terminal", "arguments": {"command": "wc -l notes.txt"}}).to_string(),
    ));
    let (code, out, err) = env
        .run(&fake, "openai", "how many lines are in notes.txt")
        .await;
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("lean preset for a tiny model"), "{err}");
    // The answer quotes what the command printed; the model is asked once.
    assert_eq!(
        out.trim(),
        "`wc -l notes.txt` printed:\n\n```\n4 notes.txt\n```"
    );
    let chats = fake.chat_requests();
    assert_eq!(chats.len(), 1, "{chats:#?}");
    let grammar = chats[0]["grammar"].as_str().unwrap().to_string();
    check_command_request(&chats[0], "grammar");
    assert!(grammar.contains("cmd ::= \"wc -l \" PATH\n"), "{grammar}");
    assert!(
        grammar.contains("PATH ::= \"notes.txt\"\n"),
        "the named file only: {grammar}"
    );
    assert_eq!(chats[0]["temperature"], json!(0.0));
    assert!(chats[0]["max_tokens"].as_u64().unwrap() <= 160);
    assert!(chats[0].get("response_format").is_none() && chats[0].get("json_schema").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tiny_model_on_ollama_gets_the_call_schema_as_format() {
    let env = Env::new("smollm2:135m", "");
    notes_fixture(&env);
    let fake = FakeLlm::start().await;
    fake.set_models(vec![("smollm2:135m".into(), Some(8192))]);
    fake.push(Reply::text(
        json!({"tool": "terminal", "arguments": {"command": "wc -l notes.txt"}}).to_string(),
    ));
    let (code, out, err) = env
        .run(&fake, "ollama", "how many lines are in notes.txt")
        .await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("```\n4 notes.txt\n```"), "{out}");
    let chats = fake.chat_requests();
    assert_eq!(chats.len(), 1, "{chats:#?}");
    check_command_request(&chats[0], "format");
    let args = &chats[0]["format"];
    assert_eq!(args["properties"]["tool"], json!({"const": "terminal"}));
    assert_eq!(args["required"], json!(["tool", "arguments"]));
    let inner = &args["properties"]["arguments"];
    assert_eq!(inner["required"], json!(["command"]));
    assert_eq!(
        inner["properties"]
            .as_object()
            .unwrap()
            .keys()
            .collect::<Vec<_>>(),
        vec!["command"],
        "optional arguments are left out"
    );
    assert_eq!(chats[0]["options"]["temperature"], json!(0.0));
    assert!(chats[0].get("grammar").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_plain_question_on_a_tiny_model_is_answered_without_a_tool() {
    let env = Env::new("SmolLM2-135M-Instruct", "");
    notes_fixture(&env);
    let fake = FakeLlm::start().await;
    fake.set_models(vec![("SmolLM2-135M-Instruct".into(), Some(8192))]);
    fake.set_props(Some(llama_props(true)));
    fake.push(Reply::text("Madrid."));
    let (code, out, err) = env
        .run(&fake, "openai", "what is the capital of Spain")
        .await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "Madrid.");
    let chats = fake.chat_requests();
    assert_eq!(chats.len(), 1, "no silent step: {chats:#?}");
    assert!(chats[0].get("grammar").is_none() && chats[0].get("tools").is_none());
    let last = chats[0]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["content"], "what is the capital of Spain");
    assert!(chats[0]["max_tokens"].as_u64().unwrap() <= 256);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn larger_models_keep_free_tool_calling_and_the_switch_overrides() {
    // An 8B model whose template renders tools: unchanged.
    let env = Env::new("llama3.1:8b", "");
    let fake = FakeLlm::start().await;
    fake.set_props(Some(llama_props(true)));
    fake.push(Reply::text("plain"));
    let (code, _, err) = env.run(&fake, "openai", "hi").await;
    assert_eq!(code, 0, "{err}");
    let chats = fake.chat_requests();
    assert_eq!(chats.len(), 1);
    assert!(chats[0]["tools"].as_array().is_some_and(|t| t.len() == 3));
    assert!(chats[0].get("grammar").is_none());
    assert!(system_of(&chats[0]).starts_with("TEST-PERSONA"));
    assert!(!err.contains("lean preset"), "{err}");

    // `small_model = "off"` keeps a tiny model on free tool calling.
    let env = Env::new("SmolLM2-135M-Instruct", "[llm]\nsmall_model = \"off\"\n");
    let fake = FakeLlm::start().await;
    fake.set_models(vec![("SmolLM2-135M-Instruct".into(), Some(8192))]);
    fake.set_props(Some(llama_props(true)));
    fake.push(Reply::text("plain"));
    let (code, _, err) = env.run(&fake, "openai", "hi").await;
    assert_eq!(code, 0, "{err}");
    let chats = fake.chat_requests();
    assert!(chats[0]["tools"].is_array() && chats[0].get("grammar").is_none());

    // `small_model = "on"` takes the lean path for any model.
    let env = Env::new("llama3.1:8b", "[llm]\nsmall_model = \"on\"\n");
    notes_fixture(&env);
    let fake = FakeLlm::start().await;
    fake.push(Reply::text(
        json!({"tool": "terminal", "arguments": {"command": "wc -l notes.txt"}}).to_string(),
    ));
    let (code, out, err) = env
        .run(&fake, "ollama", "how many lines are in notes.txt")
        .await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("4 notes.txt"), "{out}");
    assert!(fake.chat_requests()[0].get("format").is_some());

    // A value the switch does not know is a config error naming it.
    let env = Env::new("llama3.1:8b", "[llm]\nsmall_model = \"tiny\"\n");
    let fake = FakeLlm::start().await;
    let (code, _, err) = env.run(&fake, "ollama", "hi").await;
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("small_model"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_template_without_tools_gets_them_as_text_and_is_told_once() {
    let env = Env::new("llama3.1:8b", "");
    let fake = FakeLlm::start().await;
    fake.set_props(Some(llama_props(false)));
    fake.push(Reply::text("{\"tool\":\"terminal\"}"));
    fake.push(Reply::text(
        json!({"tool": "terminal", "arguments": {"command": "echo hello-from-the-tool"}})
            .to_string(),
    ));
    fake.push(Reply::text("{\"tool\":\"answer\"}"));
    fake.push(Reply::text("Done."));
    let (code, out, err) = env.run(&fake, "openai", "greet").await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "Done.");
    assert_eq!(
        err.matches("cannot render tools").count(),
        1,
        "told once: {err}"
    );
    let chats = fake.chat_requests();
    assert_eq!(
        chats.len(),
        4,
        "a larger model may choose again: {chats:#?}"
    );
    let system = system_of(&chats[0]);
    assert!(system.starts_with("TEST-PERSONA"), "{system}");
    assert!(
        system.contains("- terminal: Run a shell command")
            && system.contains("Arguments: {\"command\": string}"),
        "{system}"
    );
    assert!(chats.iter().all(|c| c.get("tools").is_none()));
    // A larger model chooses again after the tool ran ("answer" here).
    assert!(chats[2].get("grammar").is_some());
    assert!(chats[3].get("grammar").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_invalid_call_switches_to_constrained_calls() {
    let env = Env::new("llama3.1:8b", "");
    let fake = FakeLlm::start().await;
    fake.set_props(Some(llama_props(true)));
    // The first bad call gets its error result and a free retry; the
    // second in a row switches the run to constrained calls.
    fake.push(Reply::tool_call("no_such_tool", json!({"x": 1})));
    fake.push(Reply::tool_call("terminal", json!("not an object")));
    fake.push(Reply::text("{\"tool\":\"answer\"}"));
    fake.push(Reply::text("Sorry."));
    let (code, out, err) = env.run(&fake, "openai", "do it").await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.trim(), "Sorry.");
    let chats = fake.chat_requests();
    assert_eq!(chats.len(), 4);
    for c in &chats[..2] {
        assert!(c["tools"].is_array() && c.get("grammar").is_none());
    }
    assert!(chats[2].get("grammar").is_some() && chats[2].get("tools").is_none());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn navi_context_names_the_lean_preset_and_its_cost() {
    let env = Env::new("SmolLM2-135M-Instruct", "");
    let fake = FakeLlm::start().await;
    fake.set_models(vec![("SmolLM2-135M-Instruct".into(), Some(8192))]);
    fake.set_props(Some(llama_props(true)));
    let (code, out, err) = env
        .navi(&fake, "openai", &["context", "--profile", "tester"])
        .await;
    assert_eq!(code, 0, "{err}");
    let line = out
        .lines()
        .find(|l| l.contains("lean preset for a tiny model"))
        .unwrap_or_else(|| panic!("no lean line: {out}"));
    assert!(
        line.contains("(SmolLM2-135M-Instruct): requests carry a short persona and terminal as text instead — base request"),
        "{line}"
    );
    let (code, out, err) = env
        .navi(
            &fake,
            "openai",
            &["context", "--profile", "tester", "--json"],
        )
        .await;
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    let lean = &v[0]["lean"];
    assert_eq!(lean["model"], "SmolLM2-135M-Instruct");
    assert_eq!(lean["tools"], json!(["terminal"]));
    let tokens = lean["tokens"].as_u64().unwrap();
    assert!(tokens > 20 && tokens < 400, "{lean}");
    assert!(tokens < v[0]["total"].as_u64().unwrap(), "{v}");

    // Off: no lean preset to name.
    let env = Env::new("SmolLM2-135M-Instruct", "[llm]\nsmall_model = \"off\"\n");
    let (code, out, err) = env
        .navi(
            &fake,
            "openai",
            &["context", "--profile", "tester", "--json"],
        )
        .await;
    assert_eq!(code, 0, "{err}");
    let v: Value = serde_json::from_str(&out).unwrap();
    assert!(v[0].get("lean").is_none(), "{v}");
}
