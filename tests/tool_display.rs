//! Issue 24 item 3: typed tool results. A command and a file write made by
//! the real binary against the fake LLM server carry display data on their
//! `tool_call` events (`navi run --json`), the same data is stored with the
//! display rows in SQLite (not the context rows), and a later process
//! replays it; a database written before the column existed still opens and
//! replays its tool rows as plain text.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::cli_support::Env;
use crate::support::{FakeLlm, Reply};
use navi::protocol::{AgentEvent, ToolDisplay};
use serde_json::{Value, json};

fn tool_profile(env: &Env) {
    let cfg = json!({
        "id": "tester", "name": "Tester", "description": "test profile",
        "model": ["test-model"], "temperature": 0.2,
        "enabled_tools": ["terminal", "filesystem"],
        "planning_phase1_enabled": false, "planning_phase3_enabled": false,
        "iteration_budget_enabled": false, "goal_anchoring_enabled": false
    });
    std::fs::write(env.path("cfg/profiles/tester/config.json"), cfg.to_string()).unwrap();
}

/// The `tool_call` events of a `--json` run, by tool name.
fn tool_calls(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "tool_call")
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_and_writes_carry_display_data_live_stored_and_replayed() {
    let env = Env::new();
    tool_profile(&env);
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": "echo hello; echo oops >&2; exit 3"}),
    ));
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "write", "path": "notes.txt", "content": "one\ntwo\n"}),
    ));
    fake.push(Reply::text("all done"));
    let o = env
        .run(
            &fake,
            "ollama",
            &[
                "run",
                "--json",
                "-p",
                "tester",
                "--approve",
                "terminal",
                "--approve",
                "filesystem",
                "go",
            ],
        )
        .await;
    assert_eq!(o.code, 0, "{}\n{}", o.stdout, o.stderr);
    let calls = tool_calls(&o.stdout);
    assert_eq!(calls.len(), 2, "{}", o.stdout);

    // Live: the command's exit code and streams, typed.
    let cmd = &calls[0]["display"];
    assert_eq!(cmd["kind"], "command", "{}", calls[0]);
    assert_eq!(cmd["command"], "echo hello; echo oops >&2; exit 3");
    assert_eq!(cmd["exit_code"], 3);
    assert_eq!(cmd["stdout"], "hello\n");
    assert_eq!(cmd["stderr"], "oops\n");
    assert!(cmd["duration_ms"].is_u64(), "{cmd}");
    assert!(cmd.get("stopped").is_none(), "{cmd}");
    assert_eq!(calls[0]["success"], false);
    // The model still gets its text (display data never goes to the model).
    let chats: Vec<Value> = fake
        .requests()
        .into_iter()
        .map(|r| r.body)
        .filter(|b| b["messages"].is_array())
        .collect();
    let second = &chats[1];
    let tool_msg = second["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap();
    assert!(
        tool_msg["content"]
            .as_str()
            .unwrap()
            .contains("exit code: 3"),
        "{tool_msg}"
    );
    assert!(!second.to_string().contains("\"display\""), "{second}");

    // Live: the write, as a diff of a new file.
    let write = &calls[1]["display"];
    assert_eq!(write["kind"], "file_write", "{}", calls[1]);
    assert_eq!(write["created"], true);
    assert_eq!(
        (write["added"].as_u64(), write["removed"].as_u64()),
        (Some(2), Some(0))
    );
    let diff = write["diff"].as_str().unwrap();
    assert!(diff.contains("+one\n+two\n"), "{diff}");
    assert!(write["path"].as_str().unwrap().ends_with("notes.txt"));
    assert_eq!(
        std::fs::read_to_string(env.path("notes.txt")).unwrap(),
        "one\ntwo\n"
    );

    // Stored: `sessions show --json` gives the display rows with it.
    let shown = env
        .run(&fake, "ollama", &["sessions", "show", "1", "--json"])
        .await;
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    let v: Value = serde_json::from_str(&shown.stdout).unwrap();
    let stored: Vec<&Value> = v["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .collect();
    assert_eq!(stored.len(), 2, "{v}");
    assert_eq!(&stored[0]["display"], cmd);
    assert_eq!(&stored[1]["display"], write);

    // In SQLite: on the display rows only; the context rows have none.
    let db = rusqlite::Connection::open(env.path("data/navi.db")).unwrap();
    let rows: Vec<(i64, Option<String>)> = db
        .prepare("SELECT buffer, display FROM messages WHERE role = 'tool' ORDER BY id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(rows.len(), 4, "{rows:?}");
    for (buffer, display) in &rows {
        assert_eq!(display.is_some(), *buffer == 0, "{rows:?}");
    }
    drop(db);

    // Replayed by a later process (what a resumed front end is given).
    let store = navi::session::SessionStore::open(&env.path("data/navi.db")).unwrap();
    let id = store.list().unwrap()[0].id.clone();
    let events = navi::session::replay::load_events(&store, &id)
        .unwrap()
        .unwrap();
    let replayed: Vec<&Option<ToolDisplay>> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCall { display, .. } => Some(display),
            _ => None,
        })
        .collect();
    assert_eq!(replayed.len(), 2);
    assert_eq!(serde_json::to_value(replayed[0]).unwrap(), *cmd);
    assert_eq!(serde_json::to_value(replayed[1]).unwrap(), *write);
    match replayed[0] {
        Some(ToolDisplay::Command(c)) => assert_eq!(c.exit_code, Some(3)),
        other => panic!("{other:?}"),
    }

    // A value this build cannot read (a newer navi's kind, or damage) is
    // left out: that row replays as text, the others as before.
    let db = rusqlite::Connection::open(env.path("data/navi.db")).unwrap();
    db.execute(
        "UPDATE messages SET display = '{\"kind\":\"hologram\"}' WHERE id = \
         (SELECT MIN(id) FROM messages WHERE role = 'tool' AND buffer = 0)",
        [],
    )
    .unwrap();
    db.execute(
        "UPDATE messages SET display = '{not json' WHERE id = \
         (SELECT MAX(id) FROM messages WHERE role = 'tool' AND buffer = 0)",
        [],
    )
    .unwrap();
    drop(db);
    let events = navi::session::replay::load_events(&store, &id)
        .unwrap()
        .unwrap();
    let after: Vec<(bool, bool)> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCall {
                display, result, ..
            } => Some((display.is_none(), !result.is_empty())),
            _ => None,
        })
        .collect();
    assert_eq!(after, [(true, true), (true, true)]);
    let shown = env.run(&fake, "ollama", &["sessions", "show", "1"]).await;
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    assert!(shown.stdout.contains("exit code: 3"), "{}", shown.stdout);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_database_from_before_display_data_opens_and_replays_as_text() {
    let env = Env::new();
    tool_profile(&env);
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call("terminal", json!({"command": "echo old"})));
    fake.push(Reply::text("ok"));
    let o = env
        .run(
            &fake,
            "ollama",
            &["run", "-p", "tester", "--approve", "terminal", "go"],
        )
        .await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    // Make it the database an older navi wrote: no `display` column (nor
    // what schema 8 added), schema 6.
    let path = env.path("data/navi.db");
    let db = rusqlite::Connection::open(&path).unwrap();
    db.execute_batch(
        "DROP INDEX sessions_by_project; ALTER TABLE sessions DROP COLUMN cwd;
         ALTER TABLE sessions DROP COLUMN project;
         DROP TRIGGER messages_counted; DROP TRIGGER messages_uncounted;
         DROP INDEX messages_user_turns; ALTER TABLE sessions DROP COLUMN message_count;
         ALTER TABLE messages DROP COLUMN display; ALTER TABLE messages DROP COLUMN blocks;
         DELETE FROM schema_version WHERE version >= 7;",
    )
    .unwrap();
    drop(db);
    // Still listed, shown, and resumable.
    let shown = env
        .run(&fake, "ollama", &["sessions", "show", "1", "--json"])
        .await;
    assert_eq!(shown.code, 0, "{}", shown.stderr);
    let v: Value = serde_json::from_str(&shown.stdout).unwrap();
    let tool = v["messages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["role"] == "tool")
        .unwrap()
        .clone();
    assert!(tool.get("display").is_none(), "{tool}");
    assert!(tool["content"].as_str().unwrap().contains("old"), "{tool}");
    let store = navi::session::SessionStore::open(&path).unwrap();
    let id = store.list().unwrap()[0].id.clone();
    let events = navi::session::replay::load_events(&store, &id)
        .unwrap()
        .unwrap();
    let call = events
        .iter()
        .find(|e| matches!(e, AgentEvent::ToolCall { .. }))
        .unwrap();
    match call {
        AgentEvent::ToolCall {
            display, result, ..
        } => {
            assert_eq!(display, &None);
            assert!(result.contains("old"), "{result}");
        }
        _ => unreachable!(),
    }
    // A new turn on it stores display data again.
    fake.push(Reply::tool_call("terminal", json!({"command": "echo new"})));
    fake.push(Reply::text("ok"));
    let o = env
        .run(
            &fake,
            "ollama",
            &[
                "-c",
                "run",
                "--json",
                "-p",
                "tester",
                "--approve",
                "terminal",
                "again",
            ],
        )
        .await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(tool_calls(&o.stdout)[0]["display"]["stdout"], "new\n");
    let events = navi::session::replay::load_events(&store, &id)
        .unwrap()
        .unwrap();
    let displays: Vec<bool> = events
        .iter()
        .filter_map(|e| match e {
            AgentEvent::ToolCall { display, .. } => Some(display.is_some()),
            _ => None,
        })
        .collect();
    assert_eq!(displays, [false, true]);
}
