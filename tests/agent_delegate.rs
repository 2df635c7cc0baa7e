//! spawn_agent and switch_profile against the scripted backend.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::common;

use common::*;
use navi::llm::Role;
use navi::protocol::AgentEvent;
use serde_json::json;

const TOOLS: &[&str] = &["todo", "echo", "spawn_agent", "switch_profile"];

#[tokio::test]
async fn spawn_agent_runs_a_subagent_and_returns_its_report() {
    let p = profile_json("p", json!({"enabled_tools": TOOLS}));
    let h = harness_with(&[("p", p)], navi::llm::scripted::ScriptedBackend::new());
    navi::agent::delegate::register(&h.agent);
    h.backend
        .push_tool_calls(&[("spawn_agent", json!({"task": "SUBTASK: count the files"}))]);
    h.backend
        .push_tool_calls(&[("echo", json!({"text": "from helper"}))]);
    h.backend.push_text("helper report: 3 files");
    h.backend.push_text("The helper found 3 files.");
    let s = h.store.create("p").unwrap();
    let (out, ev) = turn(&h, &s.id, "how many files?").await;
    assert_eq!(out.unwrap().text, "The helper found 3 files.");
    let spawn_result = ev.iter().find_map(|e| match e {
        AgentEvent::ToolCall {
            tool,
            result,
            success,
            is_subagent: false,
            ..
        } if tool == "spawn_agent" => Some((result.clone(), *success)),
        _ => None,
    });
    assert_eq!(
        spawn_result,
        Some(("helper report: 3 files".to_string(), true))
    );
    let sub_tool = ev.iter().find_map(|e| match e {
        AgentEvent::ToolCall {
            tool,
            is_subagent: true,
            agent,
            ..
        } if tool == "echo" => agent.clone(),
        _ => None,
    });
    let origin = sub_tool.expect("the helper's tool call is forwarded, marked as subagent");
    assert_eq!(origin.depth, 1);
    assert!(origin.id.starts_with("subagent_"));
    assert_eq!(
        kinds(&ev).iter().filter(|k| **k == "stream_end").count(),
        1,
        "the helper emits no stream_end of its own"
    );
    // The helper saw only its task, not the conversation.
    let reqs = h.backend.requests();
    let helper_req = &reqs[1];
    assert_eq!(
        helper_req
            .messages
            .iter()
            .filter(|m| m.role == Role::User)
            .count(),
        1
    );
    assert!(helper_req.messages[1].text().starts_with("SUBTASK"));
    // Only the parent's messages are stored.
    let stored = h.store.load(&s.id).unwrap().unwrap();
    assert_eq!(stored.display.len(), 4);
    assert!(
        stored
            .display
            .iter()
            .all(|m| !m.msg.text().contains("from helper"))
    );
}

#[tokio::test]
async fn switch_profile_takes_effect_on_the_next_call() {
    let p = profile_json("p", json!({"enabled_tools": TOOLS}));
    let q = profile_json("q", json!({"enabled_tools": ["todo"], "name": "Queue"}));
    let h = harness_with(
        &[("p", p), ("q", q)],
        navi::llm::scripted::ScriptedBackend::new(),
    );
    navi::agent::delegate::register(&h.agent);
    h.backend
        .push_tool_calls(&[("switch_profile", json!({"profile_id": "nope"}))]);
    h.backend
        .push_tool_calls(&[("switch_profile", json!({"profile_id": "q"}))]);
    h.backend.push_text("now in q");
    let s = h.store.create("p").unwrap();
    let (out, ev) = turn(&h, &s.id, "switch please").await;
    assert_eq!(out.unwrap().text, "now in q");
    assert!(ev.iter().any(|e| matches!(e, AgentEvent::ToolCall { result, success: false, .. } if result.contains("unknown profile 'nope'"))));
    assert!(ev.iter().any(|e| matches!(e, AgentEvent::ProfileSwitched { profile_id, profile_name } if profile_id == "q" && profile_name == "Queue")));
    let reqs = h.backend.requests();
    assert!(reqs[1].messages[0].text().ends_with("PROMPT-p"));
    assert!(reqs[2].messages[0].text().ends_with("PROMPT-q"));
    let names: Vec<&str> = reqs[2].tools.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, vec!["todo"]);
    assert_eq!(h.store.meta(&s.id).unwrap().unwrap().profile_id, "q");
}
