//! `navi acp` and the editor's terminals (`terminal/create`, `output`,
//! `wait_for_exit`, `kill`, `release`), driven by the TypeScript ACP client
//! SDK playing an editor that runs the commands for real
//! (tests/acp/client.mjs): where a command runs (the editor's terminal when
//! offered, unless the config says no), what the editor is
//! shown (the terminal in the call, kept in its result), and what the model
//! reads, also of a terminal the editor kills and one navi kills at its
//! time limit.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::acp_support::{Drive, Home, client_or_skip};
use crate::support::{FakeLlm, Reply};
use serde_json::{Value, json};

fn caps() -> Value {
    json!({"fs": {"readTextFile": false, "writeTextFile": false}, "terminal": true})
}

async fn run(home: &Home, client: &std::path::Path, editor: Value) -> (Drive, String) {
    let d = home
        .drive(
            client,
            json!([
                {"op": "initialize", "caps": caps(), "editor": editor},
                {"op": "new", "as": "a"},
                {"op": "prompt", "session": "a", "text": "go"},
                {"op": "end"}
            ]),
            "allow_once",
        )
        .await;
    let id = d.id("a");
    (d, id)
}

/// The terminal requests the editor got, as (op, terminal id).
fn terminal_ops(d: &Drive) -> Vec<(String, String)> {
    d.log()
        .iter()
        .filter(|e| e["t"] == "terminal")
        .map(|e| {
            (
                e["op"].as_str().unwrap().to_string(),
                e["id"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

fn sent(fake: &FakeLlm) -> String {
    fake.chat_requests()
        .iter()
        .map(|r| r.to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

fn config(home: &Home, text: &str) {
    std::fs::write(home.path("cfg/config.toml"), text).unwrap();
}

/// When the editor offers terminals, a command runs in the editor's terminal: the
/// call shows it (`{"type": "terminal"}`) while it runs and in its result,
/// the model reads its output and exit code, and the terminal is released.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_command_runs_in_the_editors_terminal() {
    let Some(client) = client_or_skip("acp_command_runs_in_the_editors_terminal") else {
        return;
    };
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": "echo out-$((6*7)); echo problem >&2; exit 3"}),
    ));
    fake.push(Reply::text("ran"));
    let home = Home::new(&fake);
    // Full access: the editor runs `sh` itself (sandboxed calls:
    // tests/acp_client_sandbox.rs).
    config(&home, "[sandbox]\nmode = \"full-access\"\n");
    let (d, id) = run(&home, &client, json!({})).await;
    let dump = d.dump();
    let created: Vec<&Value> = d
        .log()
        .iter()
        .filter(|e| e["t"] == "terminal" && e["op"] == "create")
        .collect();
    assert_eq!(created.len(), 1, "{dump}");
    let p = &created[0]["params"];
    assert_eq!(p["command"], "sh", "{dump}");
    assert_eq!(p["args"][1], "echo out-$((6*7)); echo problem >&2; exit 3");
    assert_eq!(p["cwd"], home.work().to_string_lossy().as_ref());
    assert!(p["outputByteLimit"].as_u64().unwrap() > 0, "{dump}");
    let tid = created[0]["id"].as_str().unwrap();
    let ops = terminal_ops(&d);
    assert!(
        ops.contains(&("wait_for_exit".into(), tid.into())),
        "{ops:?}"
    );
    assert_eq!(
        ops.last().unwrap(),
        &("release".to_string(), tid.to_string())
    );
    // Shown in the call while it runs and kept in its result.
    let ups = d.updates(&id);
    let embeds: Vec<&&Value> = ups
        .iter()
        .filter(|u| u["content"][0]["type"] == "terminal")
        .collect();
    assert!(embeds.len() >= 2, "{dump}");
    assert!(embeds.iter().all(|u| u["content"][0]["terminalId"] == tid));
    let last = ups
        .iter()
        .rfind(|u| u["sessionUpdate"] == "tool_call_update" && u["status"].is_string())
        .unwrap();
    assert_eq!(last["status"], "failed", "{dump}");
    assert_eq!(last["content"][0]["terminalId"], tid, "{dump}");
    let text = sent(&fake);
    assert!(text.contains("out-42"), "{text}");
    assert!(text.contains("problem"), "{text}");
    assert!(text.contains("exit code: 3"), "{text}");
}

/// `client_terminals = false` keeps every command local, sandboxed or not:
/// the editor gets no terminal request and the model the usual report.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_client_terminals_false_keeps_commands_local() {
    let Some(client) = client_or_skip("acp_client_terminals_false_keeps_commands_local") else {
        return;
    };
    for mode in ["workspace-write", "full-access"] {
        let fake = FakeLlm::start().await;
        fake.push(Reply::tool_call(
            "terminal",
            json!({"command": "echo local-run"}),
        ));
        fake.push(Reply::text("ran"));
        let home = Home::new(&fake);
        config(
            &home,
            &format!("[sandbox]\nmode = \"{mode}\"\nclient_terminals = false\n"),
        );
        let (d, _) = run(&home, &client, json!({})).await;
        assert!(terminal_ops(&d).is_empty(), "{mode}: {}", d.dump());
        let text = sent(&fake);
        assert!(text.contains("local-run"), "{text}");
        assert!(text.contains("--- stderr ---"), "{text}");
    }
}

/// A terminal the editor kills ends the call with the output there was and
/// the signal; one that outlives its time limit is killed by navi
/// (`terminal/kill`), reported as timed out, and released; the turn goes
/// on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_killed_terminal_reports_its_output_and_signal() {
    let Some(client) = client_or_skip("acp_killed_terminal_reports_its_output_and_signal") else {
        return;
    };
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": "echo started; sleep 20; echo never"}),
    ));
    fake.push(Reply::text("noted"));
    let home = Home::new(&fake);
    let (d, id) = run(&home, &client, json!({"killAfterMs": 500})).await;
    let dump = d.dump();
    let text = sent(&fake);
    assert!(text.contains("started"), "{text}");
    assert!(!text.contains("never\\n"), "{text}");
    assert!(text.contains("killed by signal 9"), "{text}");
    assert_eq!(
        d.results("prompt")[0]["result"]["stopReason"],
        "end_turn",
        "{dump}"
    );
    assert!(d.text(&id, "agent_message_chunk").contains("noted"));

    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": "echo waiting; sleep 20", "timeout_secs": 1}),
    ));
    fake.push(Reply::text("gave up"));
    let home = Home::new(&fake);
    let (d, _) = run(&home, &client, json!({})).await;
    let ops = terminal_ops(&d);
    let kinds: Vec<&str> = ops.iter().map(|(op, _)| op.as_str()).collect();
    assert!(kinds.contains(&"kill"), "{ops:?}");
    assert_eq!(kinds.last(), Some(&"release"), "{ops:?}");
    let text = sent(&fake);
    assert!(text.contains("timed out after 1s"), "{text}");
    assert!(text.contains("waiting"), "{text}");
}

/// Stopping the turn while a command runs in the editor's terminal kills
/// it there (`terminal/kill`), releases it, and the prompt ends
/// `cancelled`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_cancel_kills_the_editors_terminal() {
    let Some(client) = client_or_skip("acp_cancel_kills_the_editors_terminal") else {
        return;
    };
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": "echo busy; sleep 30"}),
    ));
    fake.push(Reply::text("after"));
    let home = Home::new(&fake);
    let d = home
        .drive(
            &client,
            json!([
                {"op": "initialize", "caps": caps()},
                {"op": "new", "as": "a"},
                {"op": "prompt", "session": "a", "text": "go", "as": "p1", "wait": false},
                {"op": "sleep", "ms": 1500},
                {"op": "cancel", "session": "a"},
                {"op": "await", "name": "p1"},
                {"op": "end"}
            ]),
            "allow_once",
        )
        .await;
    let dump = d.dump();
    let ops = terminal_ops(&d);
    let kinds: Vec<&str> = ops.iter().map(|(op, _)| op.as_str()).collect();
    assert!(kinds.contains(&"create"), "{dump}");
    assert!(kinds.contains(&"kill"), "{ops:?}");
    assert_eq!(kinds.last(), Some(&"release"), "{ops:?}");
    assert_eq!(
        d.results("prompt")[0]["result"]["stopReason"],
        "cancelled",
        "{dump}"
    );
}
