//! Tools on demand and requests every chat template accepts, through the
//! real binary and the shipped default profile against the fake server.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::cli_support;
use crate::mcp_support::env::offered_tools as tool_names;
use crate::support;

use serde_json::{Value, json};
use support::{FakeLlm, Reply};

/// The command-line test home (`cli_support`), with `config` as its
/// config.toml; runs use the shipped default profile.
struct Env(cli_support::Env);

impl Env {
    fn new(config: &str) -> Env {
        let env = cli_support::Env::new();
        std::fs::write(env.path("cfg/config.toml"), config).unwrap();
        Env(env)
    }

    async fn run(&self, fake: &FakeLlm, args: &[&str]) -> (i32, String, String) {
        let mut all = vec!["--model", "test-model"];
        all.extend_from_slice(args);
        let o = self.0.run(fake, "openai", &all).await;
        (o.code, o.stdout, o.stderr)
    }
}

fn tool_result(req: &Value) -> String {
    let msgs = req["messages"].as_array().unwrap();
    msgs.iter()
        .rev()
        .find(|m| m["role"] == "tool")
        .map(|m| m["content"].as_str().unwrap().to_string())
        .unwrap_or_default()
}

/// The role order strict chat templates (Gemma's, Mistral's) demand: one
/// leading system message, then no two user or two assistant messages in a
/// row, tool results only after an assistant tool call (or another result).
pub(crate) fn assert_alternates(req: &Value) {
    let msgs = req["messages"].as_array().unwrap();
    let mut prev: Option<&Value> = None;
    for (i, m) in msgs.iter().enumerate() {
        let role = m["role"].as_str().unwrap();
        let ok = match (role, prev.map(|p| p["role"].as_str().unwrap())) {
            ("system", _) => i == 0,
            ("user", Some(p)) => p != "user",
            ("assistant", Some(p)) => p != "assistant",
            ("tool", Some("tool")) => true,
            ("tool", Some("assistant")) => prev.unwrap()["tool_calls"].is_array(),
            ("tool", _) => false,
            (_, None) => true,
            (other, _) => panic!("unknown role {other}"),
        };
        assert!(ok, "message {i} ({role}) breaks the role order: {msgs:#?}");
        prev = Some(m);
    }
}

#[tokio::test]
async fn the_default_profile_sends_its_core_and_loads_the_rest_on_demand() {
    let env = Env::new("");
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "load_tools",
        json!({"names": ["web_search", "todo"]}),
    ));
    fake.push(Reply::tool_call(
        "todo",
        json!({"action": "set", "items": ["look around"]}),
    ));
    fake.push(Reply::text("Set up."));
    let (code, out, err) = env
        .run(&fake, &["run", "--no-plan", "set up a todo list"])
        .await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Set up."), "{out}");
    let reqs = fake.chat_requests();
    assert_eq!(reqs.len(), 3);
    assert_eq!(
        tool_names(&reqs[0]),
        ["filesystem", "terminal", "load_tools"]
    );
    let listing = reqs[0]["tools"][2]["function"]["description"]
        .as_str()
        .unwrap();
    for line in [
        "web_search: Search the web",
        "todo: Task checklist",
        "spawn_agent: ",
        "code_exec: ",
    ] {
        assert!(listing.contains(line), "{line} missing in {listing}");
    }
    assert!(!listing.contains("filesystem:"), "{listing}");
    assert!(tool_result(&reqs[1]).starts_with("Loaded: web_search, todo."));
    let loaded = ["filesystem", "terminal", "load_tools", "web_search", "todo"];
    assert_eq!(tool_names(&reqs[1]), loaded);
    // The tools only grow at the end: the earlier part stays byte-identical.
    assert_eq!(
        reqs[1]["tools"].as_array().unwrap()[..3],
        reqs[0]["tools"].as_array().unwrap()[..3]
    );
    assert_eq!(tool_names(&reqs[2]), loaded);

    // A later run of the same session keeps what was loaded.
    fake.push(Reply::text("Still here."));
    let (code, _, err) = env
        .run(&fake, &["run", "-c", "--no-plan", "and now?"])
        .await;
    assert_eq!(code, 0, "{err}");
    let reqs = fake.chat_requests();
    assert_eq!(tool_names(&reqs[3]), loaded);
    assert_eq!(reqs[3]["tools"], reqs[2]["tools"]);
    for r in &reqs {
        assert_alternates(r);
    }
}

#[tokio::test]
async fn a_tool_called_without_loading_runs_and_joins_the_next_request() {
    let env = Env::new("");
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "scratchpad",
        json!({"action": "write", "section": "notes", "content": "ON-DEMAND"}),
    ));
    fake.push(Reply::tool_call("nonexistent_tool", json!({})));
    fake.push(Reply::tool_call("load_tools", json!({"names": ["nope"]})));
    fake.push(Reply::text("Noted."));
    let (code, _, err) = env.run(&fake, &["run", "--no-plan", "note this"]).await;
    assert_eq!(code, 0, "{err}");
    let reqs = fake.chat_requests();
    assert_eq!(reqs.len(), 4);
    assert!(!tool_names(&reqs[0]).contains(&"scratchpad".to_string()));
    let first = tool_result(&reqs[1]);
    assert!(!first.contains("unknown tool"), "{first}");
    assert_eq!(
        tool_names(&reqs[1]),
        ["filesystem", "terminal", "load_tools", "scratchpad"]
    );
    // A tool the profile does not have is still refused, with the list.
    let second = tool_result(&reqs[2]);
    assert!(
        second.contains("unknown tool 'nonexistent_tool'"),
        "{second}"
    );
    assert!(second.contains("web_search"), "{second}");
    // Loading an unknown name says what can be loaded.
    let third = tool_result(&reqs[3]);
    assert!(third.contains("no tool named nope"), "{third}");
    assert!(
        third.contains("you can load:") && third.contains("web_view"),
        "{third}"
    );
    assert_eq!(tool_names(&reqs[3]), tool_names(&reqs[1]));
}

#[tokio::test]
async fn on_demand_off_sends_every_enabled_tool() {
    let env = Env::new("[tools]\non_demand = false\n");
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("Hi."));
    let (code, _, err) = env.run(&fake, &["run", "--no-plan", "hello"]).await;
    assert_eq!(code, 0, "{err}");
    let names = tool_names(&fake.chat_requests()[0]);
    assert!(!names.contains(&"load_tools".to_string()), "{names:?}");
    for n in [
        "todo",
        "web_search",
        "spawn_agent",
        "filesystem",
        "memory_search",
    ] {
        assert!(names.contains(&n.to_string()), "{n}: {names:?}");
    }
}

#[tokio::test]
async fn every_request_of_a_compacted_session_with_tools_alternates() {
    let env = Env::new("");
    let fake = FakeLlm::start().await;
    for i in 0..3 {
        fake.push(Reply::tool_call(
            "filesystem",
            json!({"action": "list", "path": "."}),
        ));
        fake.push(Reply::text(format!("Answer {i}.")));
        let msg = format!("list the files, round {i}");
        let c = if i == 0 { "run" } else { "-c" };
        let args: Vec<&str> = if i == 0 {
            vec!["run", "--no-plan", &msg]
        } else {
            vec!["run", c, "--no-plan", &msg]
        };
        let (code, _, err) = env.run(&fake, &args).await;
        assert_eq!(code, 0, "{err}");
    }
    fake.push(Reply::text("SUMMARY: the user listed files three times."));
    let (code, _, err) = env.run(&fake, &["compact"]).await;
    assert_eq!(code, 0, "{err}");
    fake.push(Reply::text("After compaction."));
    let (code, _, err) = env
        .run(&fake, &["run", "-c", "--no-plan", "and now?"])
        .await;
    assert_eq!(code, 0, "{err}");
    let reqs = fake.chat_requests();
    let last = reqs.last().unwrap();
    assert!(
        last.to_string().contains("SUMMARY: the user listed"),
        "{last}"
    );
    for r in &reqs {
        assert_alternates(r);
    }
}

#[tokio::test]
async fn a_chat_template_error_names_the_roles_sent_and_the_session_goes_on() {
    use support::Fault;
    let env = Env::new("[llm]\nconnect_retries = 0\n");
    let fake = FakeLlm::start().await;
    fake.push(Reply::fault(Fault::Status(
        500,
        "Jinja Exception: Conversation roles must alternate user/assistant/user/assistant/..."
            .into(),
    )));
    let (code, _, err) = env.run(&fake, &["run", "--no-plan", "hello"]).await;
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("chat template"), "{err}");
    assert!(err.contains("roles must alternate"), "{err}");
    assert!(err.contains("navi sent the roles system, user"), "{err}");
    assert!(err.contains("--jinja"), "{err}");
    fake.push(Reply::text("Fine now."));
    let (code, out, err) = env.run(&fake, &["run", "-c", "--no-plan", "again"]).await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Fine now."));
    let last = fake.chat_requests().pop().unwrap();
    assert_alternates(&last);
}

#[tokio::test]
async fn a_model_that_keeps_loading_the_same_tool_is_told_and_the_user_warned() {
    let env = Env::new("");
    let fake = FakeLlm::start().await;
    for _ in 0..4 {
        fake.push(Reply::tool_call(
            "load_tools",
            json!({"names": ["web_search"]}),
        ));
    }
    fake.push(Reply::text("Gave up loading."));
    let (code, out, err) = env
        .run(&fake, &["run", "--no-plan", "search something"])
        .await;
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("Gave up loading."), "{out}");
    let reqs = fake.chat_requests();
    assert_eq!(reqs.len(), 5);
    assert!(!tool_result(&reqs[1]).contains("Already in your tool list"));
    for r in &reqs[2..] {
        let t = tool_result(r);
        assert!(
            t.contains("[navi] Already in your tool list: web_search."),
            "{t}"
        );
    }
    assert_eq!(
        err.matches("keeps loading tools it already has").count(),
        1,
        "{err}"
    );
    // The notes stay in the history: each request extends the previous one.
    for w in reqs.windows(2) {
        let (a, b) = (
            w[0]["messages"].as_array().unwrap(),
            w[1]["messages"].as_array().unwrap(),
        );
        assert_eq!(&b[..a.len()], &a[..]);
    }
}
