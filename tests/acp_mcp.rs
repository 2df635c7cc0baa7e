//! `navi acp` with MCP servers the client brings (`mcpServers` of
//! `session/new`): their tools join navi's own, ask for approval, and the
//! servers end with the connection.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::acp_support::{Home, client_or_skip, processes_with};
use crate::mcp_support::test_server;
use crate::support::{FakeLlm, Reply};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_client_stdio_mcp_server_joins_and_ends_with_the_connection() {
    let Some(client) =
        client_or_skip("acp_client_stdio_mcp_server_joins_and_ends_with_the_connection")
    else {
        return;
    };
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "acp-helper__echo",
        json!({"text": "ECHO-FROM-THE-EDITOR"}),
    ));
    fake.push(Reply::text("the helper answered"));
    let home = Home::new(&fake);
    // The profile names the client's server, so its tools are offered at
    // once (a profile that names no MCP tool offers them on demand).
    let cfg = home.path("cfg/profiles/tester/config.json");
    let mut profile: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&cfg).unwrap()).unwrap();
    profile["enabled_tools"] = json!(["todo", "acp-helper__*"]);
    std::fs::write(&cfg, profile.to_string()).unwrap();
    // An extra argument the server ignores marks its process.
    let marker = format!("acp-mcp-marker-{}", std::process::id());
    let server = json!({
        "name": "helper",
        "command": "python3",
        "args": [test_server(), "normal", marker],
        "env": [{"name": "MCP_TEST_MODE_NOTE", "value": "from the editor"}]
    });
    let d = home
        .drive(
            &client,
            json!([
                {"op": "initialize"},
                {"op": "new", "as": "a", "mcpServers": [server]},
                {"op": "setMode", "session": "a", "mode": "tester"},
                {"op": "prompt", "session": "a", "text": "ask the helper"},
            ]),
            "allow_once",
        )
        .await;
    let dump = d.dump();
    assert_eq!(
        d.results("prompt")[0]["result"]["stopReason"],
        "end_turn",
        "{dump}"
    );
    assert_eq!(d.permissions().len(), 1, "MCP tools ask first: {dump}");
    let reqs = fake.chat_requests();
    assert!(
        reqs[0]["tools"].to_string().contains("acp-helper"),
        "{}",
        reqs[0]["tools"]
    );
    let result = reqs[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert!(
        result["content"]
            .to_string()
            .contains("ECHO-FROM-THE-EDITOR"),
        "{result}"
    );
    assert_eq!(d.exit_code(), 0, "{dump}");
    // The server process ended with navi.
    let left = processes_with(&marker);
    assert!(left.is_empty(), "MCP server left running: {left:?}");
}
