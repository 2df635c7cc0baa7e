//! `navi acp`'s per-project history, driven by the TypeScript ACP client
//! SDK: a session exists from `session/new` (stored, listed, loadable by
//! another navi), `session/list` answers for one directory with dates and
//! titles, and titles reach the client as `session_info_update`s.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::acp_support::{Home, client_or_skip};
use crate::support::{FakeLlm, Reply};
use serde_json::{Value, json};

fn listed(d: &crate::acp_support::Drive, n: usize) -> Vec<Value> {
    d.results("list")[n]["result"]["sessions"]
        .as_array()
        .unwrap_or_else(|| panic!("{}", d.dump()))
        .clone()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_sessions_exist_from_new_and_list_by_directory_with_titles() {
    let Some(client) = client_or_skip("acp_sessions_exist_from_new") else {
        return;
    };
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("looked at it"));
    let home = Home::new(&fake);
    let other = home.path("other");
    std::fs::create_dir_all(&other).unwrap();
    let other = std::fs::canonicalize(other).unwrap();
    let work = home.work();
    // Two sessions, never prompted, in two directories.
    let first = home
        .drive(
            &client,
            json!([
                {"op": "initialize"},
                {"op": "new", "as": "a", "cwd": work},
                {"op": "new", "as": "b", "cwd": other},
                {"op": "close", "session": "b"},
            ]),
            "allow_once",
        )
        .await;
    assert_eq!(first.exit_code(), 0, "{}", first.dump());
    let (a, b) = (first.id("a"), first.id("b"));
    // Stored at once, each with its directory.
    let db = home.db();
    for (id, dir) in [(&a, &work), (&b, &other)] {
        let cwd: String = db
            .query_row("SELECT cwd FROM sessions WHERE id = ?1", [id], |r| r.get(0))
            .unwrap_or_else(|e| panic!("session {id} not stored: {e}"));
        assert_eq!(cwd, dir.to_string_lossy());
    }

    // Another navi lists each directory's own and loads one never prompted.
    let second = home
        .drive(
            &client,
            json!([
                {"op": "initialize"},
                {"op": "list", "cwd": work},
                {"op": "list", "cwd": other},
                {"op": "load", "session": a, "as": "a"},
                {"op": "setMode", "session": "a", "mode": "tester"},
                {"op": "prompt", "session": "a", "text": "Fix the parser\nwith details"},
                {"op": "prompt", "session": "a", "text": "/rename Parser work"},
                {"op": "list", "cwd": work},
            ]),
            "allow_once",
        )
        .await;
    let dump = second.dump();
    assert_eq!(second.exit_code(), 0, "{dump}");
    let here = listed(&second, 0);
    assert_eq!(here.len(), 1, "{dump}");
    assert_eq!(here[0]["sessionId"], a.as_str());
    assert_eq!(here[0]["cwd"], work.to_string_lossy().as_ref());
    let date = here[0]["updatedAt"]
        .as_str()
        .unwrap_or_else(|| panic!("{dump}"));
    assert!(date.ends_with('Z') && date.contains('T'), "{date}");
    let there = listed(&second, 1);
    assert_eq!(there.len(), 1, "{dump}");
    assert_eq!(there[0]["sessionId"], b.as_str());
    assert!(second.results("load")[0].get("error").is_none(), "{dump}");
    // The first prompt named the session; the rename renamed it; both
    // were told, with a date.
    let infos: Vec<&Value> = second
        .updates(&a)
        .into_iter()
        .filter(|u| u["sessionUpdate"] == "session_info_update")
        .collect();
    let titles: Vec<&str> = infos.iter().filter_map(|u| u["title"].as_str()).collect();
    assert_eq!(titles, ["Fix the parser", "Parser work"], "{dump}");
    assert!(infos.iter().all(|u| u["updatedAt"].is_string()), "{dump}");
    let now = listed(&second, 2);
    assert_eq!(now[0]["title"], "Parser work", "{dump}");
    let title: String = db
        .query_row("SELECT title FROM sessions WHERE id = ?1", [&a], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(title, "Parser work");
    // The rename was a command: one chat request in all (the first prompt).
    assert_eq!(fake.chat_requests().len(), 1, "{dump}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_commands_usage_and_the_plan_of_a_loaded_session() {
    let Some(client) = client_or_skip("acp_commands_usage_and_the_plan") else {
        return;
    };
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "todo",
        json!({"action": "set", "items": ["read the code", "write the fix"]}),
    ));
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "write", "path": "./notes.txt", "content": "one\nTWO\n"}),
    ));
    fake.push(Reply::text("done").with_usage(900, 12));
    let home = Home::new(&fake);
    std::fs::write(home.work().join("notes.txt"), "one\ntwo\n").unwrap();
    let cmds = home.work().join(".navi/commands");
    std::fs::create_dir_all(&cmds).unwrap();
    std::fs::write(
        cmds.join("review.md"),
        "---\ndescription: review a file\n---\nReview $ARGUMENTS",
    )
    .unwrap();
    let d = home
        .drive(
            &client,
            json!([
                {"op": "initialize"},
                {"op": "new", "as": "a"},
                {"op": "waitUpdate", "session": "a", "kind": "available_commands_update"},
                {"op": "setMode", "session": "a", "mode": "tester"},
                {"op": "prompt", "session": "a", "text": "fix notes"},
                {"op": "prompt", "session": "a", "text": "/diff"},
                {"op": "prompt", "session": "a", "text": "/model no-such-model"},
                {"op": "prompt", "session": "a", "text": "/undo"},
                {"op": "prompt", "session": "a", "text": "/context"},
            ]),
            "allow_once",
        )
        .await;
    let dump = d.dump();
    assert_eq!(d.exit_code(), 0, "{dump}");
    let id = d.id("a");
    let ups = d.updates(&id);
    // navi's commands and the user's own, announced once the session is named.
    let cmd = ups
        .iter()
        .find(|u| u["sessionUpdate"] == "available_commands_update")
        .unwrap_or_else(|| panic!("{dump}"));
    let names: Vec<&str> = cmd["availableCommands"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["name"].as_str().unwrap())
        .collect();
    for n in [
        "compact", "undo", "diff", "rewind", "context", "model", "review",
    ] {
        assert!(names.contains(&n), "{n} in {names:?}");
    }
    let new_at = d
        .log()
        .iter()
        .position(|e| e["t"] == "result" && e["op"] == "new")
        .unwrap();
    let first_cmds = d
        .log()
        .iter()
        .position(|e| {
            e["t"] == "update" && e["update"]["sessionUpdate"] == "available_commands_update"
        })
        .unwrap();
    assert!(
        first_cmds > new_at,
        "after the answer naming the session: {dump}"
    );
    // The context meter after the model calls.
    let usage: Vec<&&Value> = ups
        .iter()
        .filter(|u| u["sessionUpdate"] == "usage_update")
        .collect();
    assert!(!usage.is_empty(), "{dump}");
    assert!(
        usage.iter().all(|u| u["size"].as_u64().unwrap() > 0),
        "{dump}"
    );
    assert!(
        usage.iter().any(|u| u["used"].as_u64().unwrap() > 0),
        "{dump}"
    );

    // Each command answered its prompt without asking the model.
    let prompts = d.results("prompt");
    assert_eq!(prompts.len(), 5, "{dump}");
    for p in &prompts {
        assert_eq!(p["result"]["stopReason"], "end_turn", "{dump}");
    }
    assert_eq!(fake.chat_requests().len(), 3, "{dump}");
    let said = d.text(&id, "agent_message_chunk");
    assert!(said.contains("```diff") && said.contains("+TWO"), "{said}");
    assert!(
        said.contains("no-such-model") && said.contains("test-model"),
        "{said}"
    );
    assert!(!said.contains("--model"), "{said}");
    assert_eq!(
        std::fs::read_to_string(home.work().join("notes.txt")).unwrap(),
        "one\ntwo\n",
        "/undo restored the file: {said}"
    );
    let model: Option<String> = home
        .db()
        .query_row(
            "SELECT value FROM session_state WHERE session_id = ?1 AND key = 'model'",
            [&id],
            |r| r.get(0),
        )
        .ok();
    assert_eq!(model, None, "a refused /model changes nothing");

    // Loaded in another navi: the plan and the meter come back after the
    // answer.
    let again = home
        .drive(
            &client,
            json!([
                {"op": "initialize"},
                {"op": "load", "session": id, "as": "a"},
                {"op": "waitUpdate", "session": "a", "kind": "plan"},
            ]),
            "allow_once",
        )
        .await;
    let dump = again.dump();
    let log = again.log();
    let load_at = log
        .iter()
        .position(|e| e["t"] == "result" && e["op"] == "load")
        .unwrap();
    let after: Vec<&Value> = log[load_at..]
        .iter()
        .filter(|e| e["t"] == "update")
        .map(|e| &e["update"])
        .collect();
    let plan = after
        .iter()
        .find(|u| u["sessionUpdate"] == "plan")
        .unwrap_or_else(|| panic!("{dump}"));
    let entries: Vec<&str> = plan["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["content"].as_str().unwrap())
        .collect();
    assert_eq!(entries, ["read the code", "write the fix"], "{dump}");
    assert!(
        after.iter().any(|u| u["sessionUpdate"] == "usage_update"),
        "{dump}"
    );
    assert!(
        after
            .iter()
            .any(|u| u["sessionUpdate"] == "session_info_update" && u["title"] == "fix notes"),
        "{dump}"
    );
}
