//! ACP's model option with providers: after `navi models` has listed every
//! provider, an editor's model list holds their `provider/model` names, and
//! choosing one sends the session's next prompt to that provider's wire
//! protocol, with the choice kept by the session.
use crate::acp_support::{Home, client_or_skip};
use crate::support::{FakeLlm, Reply};
use serde_json::json;
use std::io::Write;
use std::process::Stdio;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_model_list_has_every_providers_models_and_routes_the_choice() {
    let Some(client) = client_or_skip("acp_model_list_has_every_providers_models") else {
        return;
    };
    let fake = FakeLlm::start().await;
    fake.set_models(vec![
        ("test-model".into(), None),
        ("claude-fake".into(), None),
    ]);
    fake.require_key("sk-ant-acp");
    let home = Home::new(&fake);
    std::fs::write(
        home.path("cfg/config.toml"),
        format!("[providers.anthropic]\nbase_url = \"{}\"\n", fake.base_url),
    )
    .unwrap();
    // The key through `navi keys set` (standard input, not a terminal).
    let mut set = home
        .navi(&["keys", "set", "anthropic"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    set.stdin
        .take()
        .unwrap()
        .write_all(b"sk-ant-acp\n")
        .unwrap();
    let out = set.wait_with_output().unwrap();
    assert!(out.status.success(), "{:?}", out);
    let listed = home.navi(&["models"]).output().unwrap();
    let table = String::from_utf8_lossy(&listed.stdout).to_string();
    assert!(table.contains("anthropic/claude-fake"), "{table}");

    fake.push(Reply::text("from claude"));
    let d = home
        .drive(
            &client,
            json!([
                {"op": "initialize"},
                {"op": "new", "as": "a"},
                {"op": "setMode", "session": "a", "mode": "tester"},
                {"op": "setOption", "session": "a", "id": "model", "value": "anthropic/claude-fake"},
                {"op": "prompt", "session": "a", "text": "hello"},
            ]),
            "allow_once",
        )
        .await;
    let dump = d.dump();
    assert_eq!(d.exit_code(), 0, "{dump}");
    let options = d.results("new")[0]["result"]["configOptions"].to_string();
    assert!(options.contains("anthropic/claude-fake"), "{options}");
    assert!(options.contains("anthropic/test-model"), "{options}");
    let set = d.results("setOption");
    assert_eq!(
        set[0]["result"]["configOptions"][0]["currentValue"], "anthropic/claude-fake",
        "{dump}"
    );
    let chats: Vec<_> = fake
        .requests()
        .into_iter()
        .filter(|r| r.is_chat())
        .collect();
    assert_eq!(chats.len(), 1, "{dump}");
    assert_eq!(chats[0].path, "/v1/messages");
    assert_eq!(chats[0].body["model"], "claude-fake");
    assert_eq!(chats[0].header("x-api-key"), Some("sk-ant-acp"));
    // The session keeps the choice; the key is nowhere in its database.
    let db = home.db();
    let id = d.id("a");
    let model: String = db
        .query_row(
            "SELECT value FROM session_state WHERE session_id = ?1 AND key = 'model'",
            [&id],
            |r| r.get(0),
        )
        .unwrap();
    assert!(model.contains("anthropic/claude-fake"), "{model}");
    for f in ["data/navi.db", "data/navi.db-wal"] {
        let bytes = std::fs::read(home.path(f)).unwrap_or_default();
        assert!(
            !String::from_utf8_lossy(&bytes).contains("sk-ant-acp"),
            "{f}"
        );
    }
}
