//! `navi acp` driven by the official TypeScript ACP client SDK
//! (tests/acp/client.mjs) against the fake LLM server: permissions,
//! streaming, cancel, load in a fresh process, two sessions with two modes.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::acp_support::{Home, client_or_skip};
use crate::support::{FakeLlm, Reply};
use serde_json::{Value, json};

fn system_prompt(req: &Value) -> String {
    req["messages"][0]["content"]
        .as_str()
        .unwrap_or("")
        .to_string()
}

fn all_text(req: &Value) -> String {
    req["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["content"].as_str().unwrap_or("").to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_permission_allowed_then_streamed_answer() {
    let Some(client) = client_or_skip("acp_permission_allowed_then_streamed_answer") else {
        return;
    };
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "write", "path": "notes.txt", "content": "hello from acp\n"}),
    ));
    fake.push(Reply::thinking_text("check the file", "All done: notes written.").with_delay(5));
    let home = Home::new(&fake);
    let d = home
        .drive(
            &client,
            json!([
                {"op": "initialize"},
                {"op": "new", "as": "a"},
                {"op": "setMode", "session": "a", "mode": "tester"},
                {"op": "prompt", "session": "a", "text": "write the notes"},
                {"op": "end"}
            ]),
            "allow_once",
        )
        .await;
    let dump = d.dump();
    assert_eq!(d.exit_code(), 0, "{dump}");
    let init = &d.results("initialize")[0]["result"];
    assert_eq!(init["protocolVersion"], 1, "{dump}");
    let caps = &init["agentCapabilities"];
    assert_eq!(caps["loadSession"], true);
    assert_eq!(caps["promptCapabilities"]["image"], true);
    assert_eq!(caps["promptCapabilities"]["embeddedContext"], true);
    assert_eq!(caps["mcpCapabilities"]["http"], true);
    let new = &d.results("new")[0]["result"];
    let modes: Vec<&str> = new["modes"]["availableModes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_str().unwrap())
        .collect();
    assert!(
        modes.contains(&"tester") && modes.contains(&"second"),
        "{modes:?}"
    );
    assert_eq!(new["configOptions"][0]["id"], "model", "{dump}");
    let id = d.id("a");

    // The question: the call, three options.
    let perms = d.permissions();
    assert_eq!(perms.len(), 1, "{dump}");
    let req = &perms[0]["request"];
    assert_eq!(req["sessionId"], id.as_str());
    let options: Vec<(&str, &str)> = req["options"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| (o["optionId"].as_str().unwrap(), o["kind"].as_str().unwrap()))
        .collect();
    assert_eq!(
        options,
        [
            ("allow_once", "allow_once"),
            ("allow_session", "allow_always"),
            ("reject", "reject_once")
        ]
    );
    let call_id = req["toolCall"]["toolCallId"].as_str().unwrap();

    // The updates: the call announced, its result with a diff, the answer.
    let ups = d.updates(&id);
    let started = ups
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call")
        .unwrap_or_else(|| panic!("{dump}"));
    assert_eq!(started["toolCallId"], call_id);
    assert_eq!(started["kind"], "edit");
    // Absolute, pending while the user is asked, schema-clean (no `name`).
    let abs = home.work().join("notes.txt").to_string_lossy().into_owned();
    assert_eq!(started["locations"][0]["path"], abs.as_str());
    // `pending` is the schema's default status (omitted on the wire).
    assert!(
        started.get("status").is_none_or(|v| v == "pending"),
        "{dump}"
    );
    assert!(started.get("name").is_none(), "{started}");
    assert!(
        req["toolCall"].get("status").is_none_or(|v| v == "pending"),
        "{dump}"
    );
    assert!(
        ups.iter()
            .any(|u| u["toolCallId"] == call_id && u["status"] == "in_progress"),
        "the call runs after the answer: {dump}"
    );
    let done = ups
        .iter()
        .find(|u| u["sessionUpdate"] == "tool_call_update" && u["status"] == "completed")
        .unwrap_or_else(|| panic!("{dump}"));
    assert_eq!(done["toolCallId"], call_id);
    assert_eq!(done["content"][0]["type"], "diff");
    assert_eq!(done["content"][0]["newText"], "hello from acp\n");
    assert_eq!(done["content"][0]["path"], abs.as_str());
    // A new file: no old text.
    assert!(
        done["content"][0].get("oldText").is_none_or(Value::is_null),
        "{done}"
    );
    assert!(done["rawOutput"].is_object(), "{done}");
    assert_eq!(
        d.text(&id, "agent_message_chunk"),
        "All done: notes written."
    );
    assert_eq!(d.text(&id, "agent_thought_chunk"), "check the file");
    let prompt = &d.results("prompt")[0];
    assert_eq!(prompt["result"]["stopReason"], "end_turn", "{dump}");

    // What happened: the file, the requests, the stored rows.
    assert_eq!(
        std::fs::read_to_string(home.work().join("notes.txt")).unwrap(),
        "hello from acp\n"
    );
    let reqs = fake.chat_requests();
    assert_eq!(reqs.len(), 2, "{reqs:?}");
    assert!(system_prompt(&reqs[0]).contains("TESTER-PROMPT"));
    assert!(all_text(&reqs[0]).contains("write the notes"));
    let last = reqs[1]["messages"]
        .as_array()
        .unwrap()
        .last()
        .unwrap()
        .clone();
    assert_eq!(last["role"], "tool", "{last}");
    let rows = home.rows(&id);
    let roles: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(
        roles,
        ["user", "assistant", "tool", "assistant"],
        "{rows:?}"
    );
    assert_eq!(rows[0].1, "write the notes");
    assert_eq!(rows[2].2.as_deref(), Some("filesystem"));
    assert_eq!(rows[3].1, "All done: notes written.");

    // Saved, unlocked and listed like any session.
    let list = home.navi(&["sessions", "list", "--json"]).output().unwrap();
    assert!(String::from_utf8_lossy(&list.stdout).contains(&id));
    let profile: String = home
        .db()
        .query_row(
            "SELECT profile_id FROM sessions WHERE id = ?1",
            [&id],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(profile, "tester");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_rejected_permission_is_a_failed_call() {
    let Some(client) = client_or_skip("acp_rejected_permission_is_a_failed_call") else {
        return;
    };
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": "echo REJECTED-RUN"}),
    ));
    fake.push(Reply::text("understood, not running it"));
    let home = Home::new(&fake);
    let d = home
        .drive(
            &client,
            json!([
                {"op": "initialize"},
                {"op": "new", "as": "a"},
                {"op": "setMode", "session": "a", "mode": "tester"},
                {"op": "prompt", "session": "a", "text": "run it"},
            ]),
            "reject",
        )
        .await;
    let dump = d.dump();
    let id = d.id("a");
    let failed = d
        .updates(&id)
        .into_iter()
        .find(|u| u["sessionUpdate"] == "tool_call_update")
        .unwrap_or_else(|| panic!("{dump}"))
        .clone();
    assert_eq!(failed["status"], "failed", "{dump}");
    assert_eq!(d.results("prompt")[0]["result"]["stopReason"], "end_turn");
    let reqs = fake.chat_requests();
    let result = all_text(&reqs[1]);
    assert!(
        !result.contains("REJECTED-RUN\n"),
        "the command ran: {result}"
    );
    assert_eq!(d.exit_code(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_cancel_mid_stream_stores_a_complete_session() {
    let Some(client) = client_or_skip("acp_cancel_mid_stream_stores_a_complete_session") else {
        return;
    };
    let fake = FakeLlm::start().await;
    let words: String = (0..400).map(|i| format!("word{i} ")).collect();
    fake.push(Reply::text(words).with_delay(25));
    fake.push(Reply::text("after the stop"));
    let home = Home::new(&fake);
    let d = home
        .drive(
            &client,
            json!([
                {"op": "initialize"},
                {"op": "new", "as": "a"},
                {"op": "setMode", "session": "a", "mode": "tester"},
                {"op": "prompt", "session": "a", "text": "talk a lot", "wait": false, "as": "p"},
                {"op": "waitUpdate", "session": "a", "kind": "agent_message_chunk"},
                {"op": "cancel", "session": "a"},
                {"op": "await", "name": "p"},
                {"op": "prompt", "session": "a", "text": "and now?"},
            ]),
            "allow_once",
        )
        .await;
    let dump = d.dump();
    let id = d.id("a");
    let prompts = d.results("prompt");
    assert_eq!(prompts[0]["result"]["stopReason"], "cancelled", "{dump}");
    assert_eq!(prompts[1]["result"]["stopReason"], "end_turn", "{dump}");
    let streamed = d.text(&id, "agent_message_chunk");
    assert!(streamed.starts_with("word0 "), "{streamed}");
    assert!(!streamed.contains("word399"), "not stopped: {streamed}");
    assert_eq!(d.exit_code(), 0, "{dump}");
    // Stored complete: the partial answer, then the next turn.
    let rows = home.rows(&id);
    let roles: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(roles[..2], ["user", "assistant"], "{rows:?}");
    assert!(rows[1].1.starts_with("word0 "), "{rows:?}");
    assert_eq!(rows.last().unwrap().1, "after the stop", "{rows:?}");
    let reqs = fake.chat_requests();
    assert!(
        all_text(&reqs[1]).contains("word0"),
        "the stopped answer is in context"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_unanswered_permission_is_bounded_by_cancel() {
    let Some(client) = client_or_skip("acp_unanswered_permission_is_bounded_by_cancel") else {
        return;
    };
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": "echo NEVER-ANSWERED"}),
    ));
    fake.push(Reply::text("unused"));
    let home = Home::new(&fake);
    let d = home
        .drive(
            &client,
            json!([
                {"op": "initialize"},
                {"op": "new", "as": "a"},
                {"op": "setMode", "session": "a", "mode": "tester"},
                {"op": "prompt", "session": "a", "text": "run it", "wait": false, "as": "p"},
                {"op": "waitPermission"},
                {"op": "cancel", "session": "a"},
                {"op": "await", "name": "p"},
            ]),
            "never",
        )
        .await;
    let dump = d.dump();
    let id = d.id("a");
    assert_eq!(
        d.results("prompt")[0]["result"]["stopReason"],
        "cancelled",
        "{dump}"
    );
    assert!(
        d.log().iter().any(|e| e["t"] == "permission_withdrawn"),
        "the question was not withdrawn: {dump}"
    );
    assert_eq!(d.exit_code(), 0, "{dump}");
    assert_eq!(fake.chat_requests().len(), 1);
    // The call is stored with a result (padded), so the session goes on.
    let rows = home.rows(&id);
    let roles: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(roles[..3], ["user", "assistant", "tool"], "{rows:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_load_in_a_fresh_process_replays_the_history() {
    let Some(client) = client_or_skip("acp_load_in_a_fresh_process_replays_the_history") else {
        return;
    };
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "todo",
        json!({"action": "set", "items": ["first step", "second step"]}),
    ));
    fake.push(Reply::thinking_text(
        "thinking it over",
        "The first answer.",
    ));
    fake.push(Reply::text("The second answer."));
    let home = Home::new(&fake);
    let first = home
        .drive(
            &client,
            json!([
                {"op": "initialize"},
                {"op": "new", "as": "a"},
                {"op": "setMode", "session": "a", "mode": "tester"},
                {"op": "prompt", "session": "a", "text": "plan it"},
            ]),
            "allow_once",
        )
        .await;
    let id = first.id("a");
    assert_eq!(first.exit_code(), 0, "{}", first.dump());
    let live_answer = first.text(&id, "agent_message_chunk");
    assert_eq!(live_answer, "The first answer.");
    // The todo list went out as a plan.
    let plan = first
        .updates(&id)
        .into_iter()
        .find(|u| u["sessionUpdate"] == "plan")
        .unwrap_or_else(|| panic!("{}", first.dump()))
        .clone();
    let entries: Vec<(&str, &str)> = plan["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| {
            (
                e["content"].as_str().unwrap(),
                e["status"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        entries,
        [("first step", "pending"), ("second step", "pending")]
    );

    let second = home
        .drive(
            &client,
            json!([
                {"op": "initialize"},
                {"op": "load", "session": id, "as": "a"},
                {"op": "prompt", "session": "a", "text": "and then?"},
            ]),
            "allow_once",
        )
        .await;
    let dump = second.dump();
    let log = second.log();
    let load_at = log
        .iter()
        .position(|e| e["t"] == "result" && e["op"] == "load")
        .unwrap();
    assert!(log[load_at].get("error").is_none(), "{dump}");
    assert_eq!(
        log[load_at]["result"]["modes"]["currentModeId"], "tester",
        "{dump}"
    );
    // Replayed before the answer: the user message, the call and its
    // result, the thinking and the answer, in order.
    let replayed: Vec<&Value> = log[..load_at]
        .iter()
        .filter(|e| e["t"] == "update")
        .map(|e| &e["update"])
        .collect();
    let kinds: Vec<&str> = replayed
        .iter()
        .map(|u| u["sessionUpdate"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "user_message_chunk",
            "tool_call",
            "tool_call_update",
            "agent_thought_chunk",
            "agent_message_chunk"
        ],
        "{dump}"
    );
    assert_eq!(replayed[0]["content"]["text"], "plan it");
    assert_eq!(replayed[1]["kind"], "think");
    assert_eq!(replayed[2]["status"], "completed");
    assert_eq!(replayed[4]["content"]["text"], live_answer.as_str());
    // The loaded session goes on, with its history in context.
    assert_eq!(
        second.results("prompt")[0]["result"]["stopReason"],
        "end_turn",
        "{dump}"
    );
    let reqs = fake.chat_requests();
    let last = all_text(reqs.last().unwrap());
    assert!(
        last.contains("The first answer.") && last.contains("and then?"),
        "{last}"
    );
    assert_eq!(second.exit_code(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_two_sessions_at_once_with_their_own_modes() {
    let Some(client) = client_or_skip("acp_two_sessions_at_once_with_their_own_modes") else {
        return;
    };
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("answer one").with_prefill(300));
    fake.push(Reply::text("answer two").with_prefill(300));
    let home = Home::new(&fake);
    let d = home
        .drive(
            &client,
            json!([
                {"op": "initialize"},
                {"op": "new", "as": "a"},
                {"op": "new", "as": "b"},
                {"op": "setMode", "session": "a", "mode": "tester"},
                {"op": "setMode", "session": "b", "mode": "second"},
                {"op": "prompt", "session": "a", "text": "from a", "wait": false, "as": "pa"},
                {"op": "prompt", "session": "b", "text": "from b", "wait": false, "as": "pb"},
                {"op": "await", "name": "pa"},
                {"op": "await", "name": "pb"},
                {"op": "list"},
            ]),
            "allow_once",
        )
        .await;
    let dump = d.dump();
    let (a, b) = (d.id("a"), d.id("b"));
    assert_ne!(a, b);
    for p in d.results("prompt") {
        assert_eq!(p["result"]["stopReason"], "end_turn", "{dump}");
    }
    let (ta, tb) = (
        d.text(&a, "agent_message_chunk"),
        d.text(&b, "agent_message_chunk"),
    );
    let mut got = [ta.clone(), tb.clone()];
    got.sort();
    assert_eq!(got, ["answer one", "answer two"], "{dump}");
    // Each request went out with its session's profile.
    let reqs = fake.chat_requests();
    assert_eq!(reqs.len(), 2);
    for r in &reqs {
        let text = all_text(r);
        let sp = system_prompt(r);
        if text.contains("from a") {
            assert!(
                sp.contains("TESTER-PROMPT") && !sp.contains("SECOND-PROMPT"),
                "{sp}"
            );
        } else {
            assert!(text.contains("from b"), "{text}");
            assert!(sp.contains("SECOND-PROMPT"), "{sp}");
        }
    }
    let listed = &d.results("list")[0]["result"]["sessions"];
    let ids: Vec<&str> = listed
        .as_array()
        .unwrap_or_else(|| panic!("{dump}"))
        .iter()
        .map(|s| s["sessionId"].as_str().unwrap())
        .collect();
    assert!(
        ids.contains(&a.as_str()) && ids.contains(&b.as_str()),
        "{ids:?}"
    );
    // Each with when it was last active, as RFC 3339 UTC.
    for s in listed.as_array().unwrap() {
        let at = s["updatedAt"].as_str().unwrap_or_else(|| panic!("{s}"));
        assert!(
            at.len() == 20 && at.ends_with('Z') && at.as_bytes()[10] == b'T',
            "{at}"
        );
    }
    assert_eq!(d.exit_code(), 0);
    let db = home.db();
    for (id, profile) in [(&a, "tester"), (&b, "second")] {
        let p: String = db
            .query_row("SELECT profile_id FROM sessions WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(p, profile);
    }
    // Unlocked: the TUI's resume path (`--session`) opens them afterwards.
    fake.push(Reply::text("third"));
    let out = home
        .navi(&["run", "--session", &a, "again"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_model_option_chooses_the_sessions_model() {
    let Some(client) = client_or_skip("acp_model_option_chooses_the_sessions_model") else {
        return;
    };
    let fake = FakeLlm::start().await;
    fake.set_models(vec![
        ("test-model".into(), None),
        ("other-model".into(), None),
    ]);
    fake.push(Reply::text("from the other model"));
    fake.push(Reply::text("from the profile's model"));
    let home = Home::new(&fake);
    let d = home
        .drive(
            &client,
            json!([
                {"op": "initialize"},
                {"op": "new", "as": "a"},
                {"op": "setMode", "session": "a", "mode": "tester"},
                {"op": "setOption", "session": "a", "id": "model", "value": "other-model"},
                {"op": "prompt", "session": "a", "text": "one"},
                {"op": "setOption", "session": "a", "id": "model", "value": "default"},
                {"op": "prompt", "session": "a", "text": "two"},
            ]),
            "allow_once",
        )
        .await;
    let dump = d.dump();
    let set = d.results("setOption");
    assert_eq!(
        set[0]["result"]["configOptions"][0]["currentValue"], "other-model",
        "{dump}"
    );
    assert_eq!(
        set[1]["result"]["configOptions"][0]["currentValue"], "default",
        "{dump}"
    );
    let models: Vec<String> = fake
        .chat_requests()
        .iter()
        .map(|r| r["model"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(models, ["other-model", "test-model"], "{dump}");
    assert_eq!(d.exit_code(), 0);
}
