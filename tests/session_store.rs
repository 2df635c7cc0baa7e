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
        a.thinking = Some("hmm".into());
        a.tool_calls = vec![ToolCall {
            id: "c1".into(),
            name: "todo".into(),
            arguments: json!({"action": "read"}),
        }];
        store
            .append_both(&s.id, &msg(ChatMessage::user("hi")))
            .unwrap();
        store.append_both(&s.id, &msg(a.clone())).unwrap();
        let mut r = msg(ChatMessage::tool_result(&a.tool_calls[0], "empty"));
        r.success = Some(true);
        store.append_both(&s.id, &r).unwrap();
        let mut img = ChatMessage::user("[image]");
        img.images = vec![navi::llm::ImageData {
            mime: "image/png".into(),
            base64: "QUJD".into(),
        }];
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
    assert_eq!(s.display[1].msg.thinking.as_deref(), Some("hmm"));
    assert_eq!(
        s.display[1].msg.tool_calls[0].arguments,
        json!({"action": "read"})
    );
    assert_eq!(s.display[2].msg.tool_call_id.as_deref(), Some("c1"));
    assert_eq!(s.display[2].success, Some(true));
    assert_eq!(s.display[3].kind, MessageKind::Notice);
    assert_eq!(s.context[3].msg.images[0].base64, "QUJD");
    assert_eq!(s.meta.message_count, 4);
}

#[test]
fn crash_mid_tool_is_repaired_once_by_the_lock_holder_only() {
    let dir = tempfile::tempdir().unwrap();
    let store = SessionStore::open(&dir.path().join("navi.db")).unwrap();
    let s = store.create("p").unwrap();
    let mut a = ChatMessage::assistant("");
    a.tool_calls = vec![
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
    ];
    store
        .append_both(&s.id, &msg(ChatMessage::user("go")))
        .unwrap();
    store.append_both(&s.id, &msg(a.clone())).unwrap();
    store
        .append_both(
            &s.id,
            &msg(ChatMessage::tool_result(&a.tool_calls[0], "ok")),
        )
        .unwrap();
    // "crash": y never got a result. While another store (another navi)
    // holds the session, y may still be running: nobody repairs it.
    let other = SessionStore::open(&dir.path().join("navi.db")).unwrap();
    other.lock(&s.id).unwrap();
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
    drop(other);
    // The holder is gone: the next writer repairs, once.
    store.lock(&s.id).unwrap();
    let loaded = store.load(&s.id).unwrap().unwrap();
    for buf in [&loaded.display, &loaded.context] {
        let results: Vec<_> = buf
            .iter()
            .filter_map(|m| m.msg.tool_call_id.clone())
            .collect();
        assert_eq!(results, vec!["x", "y"]);
        assert!(buf.last().unwrap().msg.content.contains("interrupted"));
    }
    let again = store.load(&s.id).unwrap().unwrap();
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
    // Forgotten: the same message never proposes it again; a new one may.
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
        Upserted::Added
    );
    assert_eq!(one.facts(None).unwrap()[0].status, FactStatus::Proposed);
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
