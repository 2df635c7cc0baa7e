//! The SQLite store against a real file.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use navi::llm::{ChatMessage, ToolCall};
use navi::session::{Buffer, MessageKind, SessionStore, StoredMessage};
use serde_json::json;

fn msg(m: ChatMessage) -> StoredMessage {
    StoredMessage::new(m, MessageKind::Message)
}

#[test]
fn list_order_pin_rename_delete_and_resolve() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::open(&dir.path().join("a/b/navi.db")).unwrap();
    let a = store.create("developer").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(5));
    let b = store.create("discuss").unwrap();
    std::thread::sleep(std::time::Duration::from_millis(5));
    store
        .append_both(&a.id, &msg(ChatMessage::user("first line of a\nsecond")))
        .unwrap();
    let ids: Vec<String> = store.list().unwrap().into_iter().map(|m| m.id).collect();
    assert_eq!(
        ids,
        vec![a.id.clone(), b.id.clone()],
        "most recently active first"
    );
    store.set_pinned(&b.id, true).unwrap();
    assert_eq!(store.list().unwrap()[0].id, b.id, "pinned first");
    assert_eq!(store.meta(&a.id).unwrap().unwrap().title, "first line of a");
    store.rename(&a.id, "  Renamed ").unwrap();
    assert_eq!(store.meta(&a.id).unwrap().unwrap().title, "Renamed");
    assert_eq!(store.resolve(&a.id[..6]).unwrap().id, a.id);
    assert_eq!(store.resolve("2").unwrap().id, a.id, "list position");
    assert!(
        store
            .resolve("zzzz-nope")
            .unwrap_err()
            .to_string()
            .contains("no session")
    );
    assert!(store.delete(&b.id).unwrap());
    assert!(!store.delete(&b.id).unwrap());
    assert_eq!(store.list().unwrap().len(), 1);
    assert!(store.set_pinned("nope", true).is_err());
}

#[test]
fn messages_round_trip_and_survive_reopen() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("navi.db");
    let id = {
        let store = SessionStore::open(&path).unwrap();
        let s = store.create("p").unwrap();
        let mut a = ChatMessage::assistant("calling");
        a.set_thinking(Some("hmm".into()));
        a.set_tool_calls(vec![ToolCall {
            id: "c1".into(),
            name: "todo".into(),
            arguments: json!({"action": "read"}),
        }]);
        store
            .append_both(&s.id, &msg(ChatMessage::user("hi")))
            .unwrap();
        store.append_both(&s.id, &msg(a.clone())).unwrap();
        let mut r = msg(ChatMessage::tool_result(
            a.tool_calls().next().unwrap(),
            "empty",
        ));
        r.success = Some(true);
        store.append_both(&s.id, &r).unwrap();
        let mut img = ChatMessage::user("[image]");
        img.push_image(navi::llm::ImageData {
            mime: "image/png".into(),
            base64: "QUJD".into(),
        });
        store.append(&s.id, Buffer::Context, &msg(img)).unwrap();
        store
            .append(
                &s.id,
                Buffer::Display,
                &StoredMessage::new(ChatMessage::system("stopped"), MessageKind::Notice),
            )
            .unwrap();
        s.id
    };
    let store = SessionStore::open(&path).unwrap();
    let s = store.load(&id).unwrap().unwrap();
    assert_eq!(s.display.len(), 4);
    assert_eq!(s.context.len(), 4);
    assert_eq!(s.display[1].msg.thinking().as_deref(), Some("hmm"));
    assert_eq!(
        s.display[1].msg.tool_calls().next().unwrap().arguments,
        json!({"action": "read"})
    );
    assert_eq!(s.display[2].msg.tool_call_id(), Some("c1"));
    assert_eq!(s.display[2].success, Some(true));
    assert_eq!(s.display[3].kind, MessageKind::Notice);
    assert_eq!(s.context[3].msg.images().next().unwrap().base64, "QUJD");
    assert_eq!(s.meta.message_count, 4);
}

#[test]
fn crash_mid_tool_is_repaired_once_by_the_lock_holder_only() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::open(&dir.path().join("navi.db")).unwrap();
    let s = store.create("p").unwrap();
    let mut a = ChatMessage::assistant("");
    a.set_tool_calls(vec![
        ToolCall {
            id: "x".into(),
            name: "terminal".into(),
            arguments: json!({}),
        },
        ToolCall {
            id: "y".into(),
            name: "terminal".into(),
            arguments: json!({}),
        },
    ]);
    store
        .append_both(&s.id, &msg(ChatMessage::user("go")))
        .unwrap();
    store.append_both(&s.id, &msg(a.clone())).unwrap();
    store
        .append_both(
            &s.id,
            &msg(ChatMessage::tool_result(
                a.tool_calls().next().unwrap(),
                "ok",
            )),
        )
        .unwrap();
    // "crash": y never got a result. While another store (another navi)
    // holds the session, y may still be running: nobody repairs it.
    let other = SessionStore::open(&dir.path().join("navi.db")).unwrap();
    let held_elsewhere = other.lock(&s.id).unwrap();
    let err = store.lock(&s.id).unwrap_err().to_string();
    assert!(
        err.contains(&format!(
            "busy in another navi (pid {})",
            std::process::id()
        )),
        "{err}"
    );
    let seen = store.load(&s.id).unwrap().unwrap();
    assert_eq!(seen.display.len(), 3, "read as it is, not repaired");
    drop(held_elsewhere);
    drop(other);
    // The holder is gone: the next writer repairs, once.
    let held = store.lock(&s.id).unwrap();
    let loaded = store.load_held(&held).unwrap().unwrap();
    for buf in [&loaded.display, &loaded.context] {
        let results: Vec<_> = buf
            .iter()
            .filter_map(|m| m.msg.tool_call_id().map(String::from))
            .collect();
        assert_eq!(results, vec!["x", "y"]);
        assert!(buf.last().unwrap().msg.text().contains("interrupted"));
    }
    let again = store.load_held(&held).unwrap().unwrap();
    assert_eq!(
        again.display.len(),
        loaded.display.len(),
        "repair is written once"
    );
}

#[test]
fn a_newer_schema_is_refused_clearly() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("navi.db");
    drop(SessionStore::open(&path).unwrap());
    let conn = rusqlite::Connection::open(&path).unwrap();
    conn.execute("INSERT INTO schema_version (version) VALUES (99)", [])
        .unwrap();
    drop(conn);
    let err = SessionStore::open(&path).err().unwrap().to_string();
    assert!(err.contains("99") && err.contains("upgrade navi"), "{err}");
}

/// Two stores on one file stand for two navi processes.
#[test]
fn memory_claim_is_exclusive_and_tombstones_block_re_extraction() {
    use navi::memory::store::Upserted;
    use navi::memory::{FactStatus, MemoryStore, NewFact};
    use std::sync::Arc;
    use std::time::Duration;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("navi.db");
    let one = MemoryStore::new(Arc::new(SessionStore::open(&path).unwrap()));
    let db2 = Arc::new(SessionStore::open(&path).unwrap());
    let two = MemoryStore::new(db2.clone());
    let s = db2.create("developer").unwrap();
    let row = db2
        .append_both(&s.id, &msg(ChatMessage::user("I live in Lyon")))
        .unwrap()
        .0;
    assert_eq!(one.stale_sessions(0, &[]).unwrap(), vec![s.id.clone()]);
    assert_eq!(
        one.stale_sessions(0, &[&s.id]).unwrap(),
        Vec::<String>::new()
    );
    let lease = Duration::from_secs(60);
    assert!(one.claim(&s.id, "proc-a", lease).unwrap());
    assert!(
        !two.claim(&s.id, "proc-b", lease).unwrap(),
        "second claim must fail"
    );
    assert!(
        two.stale_sessions(0, &[]).unwrap().is_empty(),
        "claimed: not offered"
    );
    // A failed extraction gives the claim back; a finished one marks the session.
    one.release(&s.id, "proc-a").unwrap();
    assert!(two.claim(&s.id, "proc-b", lease).unwrap());
    two.finish(&s.id, "proc-b", row).unwrap();
    assert!(
        !one.claim(&s.id, "proc-a", lease).unwrap(),
        "already extracted"
    );
    assert!(
        one.window(&s.id, 100).unwrap().is_empty(),
        "nothing new since"
    );
    // An expired lease (a crashed process) can be taken over.
    std::thread::sleep(Duration::from_millis(5));
    db2.append_both(&s.id, &msg(ChatMessage::user("and I use fish")))
        .unwrap();
    assert!(one.claim(&s.id, "proc-a", Duration::ZERO).unwrap());
    std::thread::sleep(Duration::from_millis(5));
    assert!(two.claim(&s.id, "proc-b", lease).unwrap());

    let fact = NewFact {
        category: "home".into(),
        key: "city".into(),
        value: "Lyon".into(),
        source_message: Some(row),
    };
    assert_eq!(
        one.upsert(&fact, Some(&s.id), false).unwrap(),
        Upserted::Added
    );
    assert_eq!(
        one.upsert(&fact, Some(&s.id), false).unwrap(),
        Upserted::Unchanged
    );
    let id = one.facts(None).unwrap()[0].id;
    assert_eq!(
        one.accept(id, None).unwrap().unwrap().status,
        FactStatus::Active
    );
    assert_eq!(
        one.summary().unwrap().as_deref(),
        Some("- home: city = Lyon")
    );
    assert_eq!(one.search("where LYON", 10, None).unwrap().len(), 1);
    assert_eq!(one.forget("CITY", None).unwrap().len(), 1);
    assert_eq!(one.summary().unwrap(), None);
    // Forgotten: the same message never proposes it again, nor does any
    // other (the user's decision wins; see tests/ssh_line_mode_cases/memory.rs
    // for a new value said after the decision).
    assert_eq!(
        one.upsert(&fact, Some(&s.id), false).unwrap(),
        Upserted::Tombstoned
    );
    let again = NewFact {
        source_message: Some(row + 2),
        ..fact
    };
    assert_eq!(
        one.upsert(&again, Some(&s.id), false).unwrap(),
        Upserted::Tombstoned
    );
    assert!(one.facts(None).unwrap().is_empty());
}

/// A 10,000-message session: extraction reads a bounded window of the newest.
#[test]
fn memory_window_of_a_huge_session_is_bounded() {
    use navi::memory::MemoryStore;
    use navi::memory::extract::render_window;
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let db = Arc::new(SessionStore::open(&dir.path().join("navi.db")).unwrap());
    let s = db.create("developer").unwrap();
    let mut last = 0;
    for i in 0..10_000 {
        let m = if i % 2 == 0 {
            ChatMessage::user(format!("message {i} {}", "x".repeat(300)))
        } else {
            ChatMessage::assistant(format!("answer {i}"))
        };
        last = db.append(&s.id, Buffer::Display, &msg(m)).unwrap();
    }
    let memory = MemoryStore::new(db);
    let window = memory.window(&s.id, 200).unwrap();
    assert_eq!(window.len(), 200);
    assert_eq!(
        window.last().unwrap().0,
        last,
        "the newest message is included"
    );
    let text = render_window(&window);
    assert!(text.len() <= 26_000, "{}", text.len());
    assert!(text.contains("answer 9999"));
    assert!(!text.contains("message 0 "));
}

fn raw_count(path: &std::path::Path, sql: &str) -> i64 {
    let c = rusqlite::Connection::open(path).unwrap();
    c.query_row(sql, [], |r| r.get(0)).unwrap()
}

/// Streamed text: the first piece is a row in each buffer, later pieces are
/// appended deltas; the end of the call leaves one final row per buffer and
/// no delta rows.
#[test]
fn streamed_deltas_fold_into_one_final_row_at_the_end() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("navi.db");
    let store = SessionStore::open(&path).unwrap();
    let s = store.create("p").unwrap();
    store
        .append_both(&s.id, &msg(ChatMessage::user("story?")))
        .unwrap();
    let mut first = ChatMessage::assistant("Once");
    first.set_thinking(Some("let me".into()));
    let (d, x) = store.append_both(&s.id, &msg(first)).unwrap();
    let pieces = [(" upon", " think"), (" a", ""), (" tíme", "…")];
    for (c, t) in pieces {
        store.append_delta(d, Some(x), c, t).unwrap();
    }
    assert_eq!(store.pending_deltas(&s.id).unwrap(), 3);
    // Readers see the text so far, in both buffers, without writing.
    let mid = store.load(&s.id).unwrap().unwrap();
    for buf in [&mid.display, &mid.context] {
        assert_eq!(buf.len(), 2);
        assert_eq!(buf[1].msg.text(), "Once upon a tíme");
        assert_eq!(buf[1].msg.thinking().as_deref(), Some("let me think…"));
    }
    let mut last = ChatMessage::assistant("Once upon a tíme, the end.");
    last.set_thinking(Some("let me think…".into()));
    last.set_tool_calls(vec![ToolCall {
        id: "c9".into(),
        name: "todo".into(),
        arguments: json!({"action": "read"}),
    }]);
    store.finish_stream(&[d, x], &last).unwrap();
    assert_eq!(store.pending_deltas(&s.id).unwrap(), 0);
    assert_eq!(
        raw_count(&path, "SELECT COUNT(*) FROM message_deltas"),
        0,
        "no delta rows left"
    );
    assert_eq!(
        raw_count(
            &path,
            "SELECT COUNT(*) FROM messages WHERE role = 'assistant' AND content = 'Once upon a tíme, the end.'"
        ),
        2,
        "one final row per buffer"
    );
    let done = store.load(&s.id).unwrap().unwrap();
    for buf in [&done.display, &done.context] {
        assert_eq!(buf.len(), 2);
        assert_eq!(buf[1].msg, last);
    }
}

/// A process that died mid-stream left deltas: a reader shows the text as
/// it was (and writes nothing); the next lock holder folds it in for good.
#[test]
fn leftover_deltas_are_shown_to_readers_and_folded_by_the_lock_holder() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("navi.db");
    let (id, rows) = {
        let dead = SessionStore::open(&path).unwrap();
        let s = dead.create("p").unwrap();
        let _held = dead.lock(&s.id).unwrap();
        dead.append_both(&s.id, &msg(ChatMessage::user("go")))
            .unwrap();
        let (d, x) = dead
            .append_both(&s.id, &msg(ChatMessage::assistant("w0 ")))
            .unwrap();
        for i in 1..40 {
            dead.append_delta(d, Some(x), &format!("w{i} "), "")
                .unwrap();
        }
        (s.id, (d, x))
    };
    let shown: String = (0..40).map(|i| format!("w{i} ")).collect();
    let reader = SessionStore::open(&path).unwrap();
    let seen = reader.load(&id).unwrap().unwrap();
    assert_eq!(seen.display[1].msg.text(), shown);
    assert_eq!(seen.context[1].msg.text(), shown);
    assert_eq!(seen.display[1].msg.thinking(), None);
    assert_eq!(raw_count(&path, "SELECT COUNT(*) FROM message_deltas"), 39);
    // Memory extraction reads the same text.
    let reader = std::sync::Arc::new(reader);
    let memory = navi::memory::MemoryStore::new(reader.clone());
    let window = memory.window(&id, 10).unwrap();
    assert_eq!(window[1].2, shown);
    let held = reader.lock(&id).unwrap();
    let owned = reader.load_held(&held).unwrap().unwrap();
    assert_eq!(owned.display[1].msg.text(), shown);
    assert_eq!(owned.context[1].msg.text(), shown);
    assert_eq!(raw_count(&path, "SELECT COUNT(*) FROM message_deltas"), 0);
    let c = rusqlite::Connection::open(&path).unwrap();
    for row in [rows.0, rows.1] {
        let content: String = c
            .query_row("SELECT content FROM messages WHERE id = ?1", [row], |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(content, shown, "row {row} holds the whole text");
    }
    // Deleting the session takes any deltas with it.
    let d = reader
        .append_both(&id, &msg(ChatMessage::assistant("a")))
        .unwrap();
    reader.append_delta(d.0, Some(d.1), "b", "").unwrap();
    assert!(reader.delete_held(held).unwrap());
    assert_eq!(raw_count(&path, "SELECT COUNT(*) FROM message_deltas"), 0);
}

/// Many tasks on a multi-thread runtime write at once, through the sync and
/// the async API: every write lands, and each task's writes keep its order.
#[test]
fn concurrent_writes_from_many_tasks_keep_their_order() {
    use std::sync::Arc;
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("navi.db");
    let store = Arc::new(SessionStore::open(&path).unwrap());
    let s = store.create("p").unwrap();
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    const TASKS: usize = 8;
    const EACH: usize = 40;
    rt.block_on(async {
        let mut handles = Vec::new();
        for t in 0..TASKS {
            let (store, id) = (store.clone(), s.id.clone());
            handles.push(tokio::spawn(async move {
                let mut rows = Vec::new();
                for i in 0..EACH {
                    let m = msg(ChatMessage::user(format!("t{t}-{i}")));
                    let r = if (t + i) % 2 == 0 {
                        store.append_both(&id, &m).unwrap()
                    } else {
                        store.append_both_async(&id, &m).await.unwrap()
                    };
                    rows.push(r);
                }
                // One streamed answer per task, piece by piece.
                let (d, x) = store
                    .append_both_async(&id, &msg(ChatMessage::assistant(format!("a{t}:"))))
                    .await
                    .unwrap();
                for i in 0..EACH {
                    store
                        .append_delta_async(d, Some(x), &format!("{i},"), "")
                        .await
                        .unwrap();
                    tokio::task::yield_now().await;
                }
                rows
            }));
        }
        for h in handles {
            let rows = h.await.unwrap();
            assert!(rows.windows(2).all(|w| w[0].0 < w[1].0 && w[0].1 < w[1].1));
        }
    });
    let loaded = store.load(&s.id).unwrap().unwrap();
    assert_eq!(loaded.display.len(), TASKS * (EACH + 1));
    for t in 0..TASKS {
        let mine: Vec<String> = loaded
            .display
            .iter()
            .map(|m| m.msg.text().into_owned())
            .filter(|c| c.starts_with(&format!("t{t}-")))
            .collect();
        let want: Vec<String> = (0..EACH).map(|i| format!("t{t}-{i}")).collect();
        assert_eq!(mine, want, "task {t}'s writes in its order");
        let answer: String = std::iter::once(format!("a{t}:"))
            .chain((0..EACH).map(|i| format!("{i},")))
            .collect();
        for buf in [&loaded.display, &loaded.context] {
            assert!(
                buf.iter().any(|m| m.msg.text() == answer),
                "task {t}'s streamed answer in order"
            );
        }
    }
}

/// A write the database refuses (here: a trigger standing for a full disk)
/// comes back to the caller as an error naming the cause, sync or async;
/// the writer goes on serving the next write.
#[test]
fn a_failing_write_is_an_error_for_the_caller_not_a_panic_or_hang() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("navi.db");
    let store = SessionStore::open(&path).unwrap();
    let s = store.create("p").unwrap();
    let (d, x) = store
        .append_both(&s.id, &msg(ChatMessage::assistant("first")))
        .unwrap();
    let other = rusqlite::Connection::open(&path).unwrap();
    other
        .execute_batch(
            "CREATE TRIGGER full BEFORE INSERT ON message_deltas
             BEGIN SELECT RAISE(FAIL, 'database or disk is full (simulated)'); END;",
        )
        .unwrap();
    let err = store.append_delta(d, Some(x), " more", "").unwrap_err();
    assert!(
        err.to_string().contains("session database error")
            && err.to_string().contains("disk is full (simulated)"),
        "{err}"
    );
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let err = rt
        .block_on(store.append_delta_async(d, Some(x), " more", ""))
        .unwrap_err();
    assert!(err.to_string().contains("disk is full"), "{err}");
    // Nothing half-written; the next write works.
    assert_eq!(store.pending_deltas(&s.id).unwrap(), 0);
    other.execute_batch("DROP TRIGGER full;").unwrap();
    store.append_delta(d, Some(x), " more", "").unwrap();
    let loaded = store.load(&s.id).unwrap().unwrap();
    assert_eq!(loaded.display[0].msg.text(), "first more");
}
