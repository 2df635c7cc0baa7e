//! Issue 34 item 1 in ACP: `/init` is announced with the commands and, sent
//! as a prompt, becomes the request to write the project's AGENTS.md.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::acp_support::{Home, client_or_skip};
use crate::plain_support::contents;
use crate::support::{FakeLlm, Reply};
use serde_json::json;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_init_is_a_command_that_asks_for_agents_md() {
    let Some(client) = client_or_skip("acp_init_is_a_command_that_asks_for_agents_md") else {
        return;
    };
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("WROTE-AGENTS"));
    let home = Home::new(&fake);
    std::fs::write(home.work().join("AGENTS.md"), "# old rules\n").unwrap();
    let d = home
        .drive(
            &client,
            json!([
                {"op": "initialize"},
                {"op": "new", "as": "a"},
                {"op": "setMode", "session": "a", "mode": "tester"},
                {"op": "prompt", "session": "a", "blocks": [{"type": "text", "text": "/init mention the CI"}]},
            ]),
            "allow_once",
        )
        .await;
    let dump = d.dump();
    let id = d.id("a");
    let announced: Vec<String> = d
        .updates(&id)
        .iter()
        .filter(|u| u["sessionUpdate"] == "available_commands_update")
        .flat_map(|u| {
            u["availableCommands"]
                .as_array()
                .cloned()
                .unwrap_or_default()
        })
        .map(|c| c["name"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(announced.contains(&"init".to_string()), "{dump}");
    assert!(
        d.text(&id, "agent_message_chunk").contains("WROTE-AGENTS"),
        "{dump}"
    );
    let req = contents(&fake.chat_requests()[0]).join("\n");
    let file = home.work().join("AGENTS.md");
    assert!(req.contains("already has an AGENTS.md"), "{req}");
    assert!(req.contains(&file.display().to_string()), "{req}");
    assert!(req.contains("The user adds: mention the CI"), "{req}");
}
