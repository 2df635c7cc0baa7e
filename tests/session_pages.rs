//! Reading a long session a page at a time gives what reading it whole
//! gave: `navi sessions show/export` (streamed), `navi last`, the tail a
//! resumed front end shows, and `/rewind`'s numbers. Sessions are made with
//! SQL in the real database file, as a long history would have left them.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::cli_support::Env;
use crate::support::FakeLlm;
use navi::session::SessionStore;
use navi::session::replay::{Pages, earlier_count, events, tail_events};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::path::Path;

const SID: &str = "0123abcd-long-session";

/// A session of `turns` turns (a tool call and its result every third one,
/// a turn of 700 rows in the middle, the last answer streamed in deltas)
/// and a context buffer of the user's messages.
fn make(db: &Path, turns: usize) -> usize {
    drop(SessionStore::open(db).unwrap());
    let c = rusqlite::Connection::open(db).unwrap();
    c.execute(
        "INSERT INTO sessions (id, profile_id, title, created_at, last_active) VALUES (?1, 'tester', 'long', 1, 2)",
        [SID],
    )
    .unwrap();
    let insert = |buffer: i64,
                  role: &str,
                  content: &str,
                  calls: Option<String>,
                  call: Option<String>| {
        c.execute(
            "INSERT INTO messages (session_id, buffer, role, content, tool_calls, tool_call_id, tool_name, success, created_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, CASE WHEN ?6 IS NULL THEN NULL ELSE 'terminal' END, 1, ?7)",
            rusqlite::params![SID, buffer, role, content, calls, call, 1000],
        )
        .unwrap();
        c.last_insert_rowid()
    };
    let mut rows = 0;
    let mut last = 0;
    for i in 0..turns {
        insert(0, "user", &format!("question {i}"), None, None);
        insert(1, "user", &format!("question {i}"), None, None);
        rows += 1;
        let calls = if i == turns / 2 {
            350
        } else if i % 3 == 0 {
            1
        } else {
            0
        };
        for k in 0..calls {
            let call = json!([{"id": format!("c{i}-{k}"), "name": "terminal", "arguments": {"command": format!("ls {k}")}}]);
            insert(0, "assistant", "", Some(call.to_string()), None);
            insert(
                0,
                "tool",
                &format!("out {i}-{k}"),
                None,
                Some(format!("c{i}-{k}")),
            );
            rows += 2;
        }
        last = insert(0, "assistant", &format!("answer {i}"), None, None);
        rows += 1;
    }
    // The last answer is still streaming: its text is in deltas.
    c.execute(
        "INSERT INTO message_deltas (message_id, content) VALUES (?1, ' and more')",
        [last],
    )
    .unwrap();
    rows
}

#[test]
fn pages_and_the_tail_replay_what_the_whole_history_replays() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("navi.db");
    let rows = make(&db, 600);
    let store = SessionStore::open(&db).unwrap();
    let whole = store.load(SID).unwrap().unwrap();
    assert_eq!(whole.display.len(), rows);
    assert_eq!(
        store.meta(SID).unwrap().unwrap().message_count as usize,
        rows
    );
    let all = events(&whole.display, &BTreeSet::new());

    let mut pages = Pages::new(&store, SID, BTreeSet::new());
    let (mut paged_rows, mut paged) = (Vec::new(), Vec::new());
    let mut count = 0;
    while let Some((r, e)) = pages.next_page().unwrap() {
        // A page runs on to the next user message: at most a page and
        // the longest turn (702 rows).
        assert!(r.len() <= 500 + 702, "a page is bounded: {}", r.len());
        paged_rows.extend(r);
        paged.extend(e);
        count += 1;
    }
    assert!(count > 3, "{count} pages");
    assert_eq!(paged_rows, whole.display);
    assert_eq!(paged, all);

    let tail = tail_events(&store, SID, 300).unwrap().unwrap();
    let (earlier, yours) = earlier_count(&tail[0]).unwrap();
    let shown = &tail[1..];
    assert_eq!(
        shown,
        &all[all.len() - shown.len()..],
        "the tail is a suffix"
    );
    let users_shown = shown
        .iter()
        .filter(|e| matches!(e, navi::protocol::AgentEvent::UserMessage { .. }))
        .count() as u64;
    assert_eq!(yours + users_shown, 600);
    assert!(earlier > 0 && (earlier as usize) < rows);
    assert!(matches!(
        &shown[0],
        navi::protocol::AgentEvent::UserMessage { .. }
    ));
}

#[tokio::test]
async fn show_export_and_last_stream_the_same_output() {
    let env = Env::new();
    let db = env.path("data/navi.db");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    let rows = make(&db, 400);
    let fake = FakeLlm::start().await;
    let store = SessionStore::open(&db).unwrap();
    let whole = store.load(SID).unwrap().unwrap();
    let rows_json = serde_json::to_value(&whole.display).unwrap();

    let o = env.run(&fake, "ollama", &["last", SID]).await;
    assert_eq!(
        (o.code, o.stdout.trim()),
        (0, "answer 399 and more"),
        "{}",
        o.stderr
    );

    let o = env
        .run(
            &fake,
            "ollama",
            &["sessions", "export", SID, "--format", "json"],
        )
        .await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    let meta = store.meta(SID).unwrap().unwrap();
    let expected = json!({"session": meta, "messages": rows_json});
    assert_eq!(
        o.stdout,
        format!("{}\n", serde_json::to_string_pretty(&expected).unwrap())
    );

    let o = env
        .run(&fake, "ollama", &["sessions", "show", SID, "--json"])
        .await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(v["messages"].as_array().unwrap().len(), rows);
    assert_eq!(v["messages"], rows_json);
    assert_eq!(v["session"]["id"], SID);
    let keys: Vec<&String> = v.as_object().unwrap().keys().collect();
    assert_eq!(keys, ["session", "context", "messages"]);

    let o = env.run(&fake, "ollama", &["sessions", "show", SID]).await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.stdout.matches("\n[user]\n").count(), 400);
    assert_eq!(
        o.stdout.matches("[tool terminal]").count(),
        (rows - 800) / 2
    );
    assert!(
        !o.stdout.contains("interrupted"),
        "no call split from its result"
    );
    let o = env
        .run(
            &fake,
            "ollama",
            &["sessions", "export", SID, "--format", "md"],
        )
        .await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    assert_eq!(o.stdout.matches("\n## User\n").count(), 400);
    assert!(
        o.stdout.ends_with("answer 399 and more\n"),
        "{}",
        &o.stdout[o.stdout.len() - 100..]
    );
}

#[tokio::test]
async fn rewind_lists_the_latest_and_takes_any_number() {
    let env = Env::new();
    let db = env.path("data/navi.db");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    make(&db, 120);
    let fake = FakeLlm::start().await;
    let o = env
        .run_stdin(
            &fake,
            &["--plain", "--session", SID],
            b"/rewind\n/rewind 3\n",
        )
        .await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    let all = format!("{}{}", o.stdout, o.stderr);
    assert!(all.contains("… 70 earlier message(s), 1 to 70"), "{all}");
    assert!(all.contains("  71  question 70"), "{all}");
    assert!(all.contains(" 120  question 119"), "{all}");
    assert!(all.contains("rewound to before message 3"), "{all}");
    let c = rusqlite::Connection::open(&db).unwrap();
    let first_rewound: String = c
        .query_row(
            "SELECT content FROM messages WHERE session_id = ?1 AND buffer = 0 AND rewound = 1 ORDER BY id LIMIT 1",
            [SID],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(first_rewound, "question 2");
}
