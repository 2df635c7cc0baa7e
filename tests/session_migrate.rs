//! Schema migrations when many navi processes start together: each one is
//! applied once, whoever gets there first, on a new data directory and on
//! one an older navi left.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::cli_support::Env;
use crate::support::{FakeLlm, Reply};
use navi::session::SessionStore;
use std::path::Path;
use std::sync::{Arc, Barrier};

/// Turns a current database back into the schema navi had at version 4
/// (before `user_set`, `memory_decisions`, `rewound`, `display`, `blocks`
/// and the stored message count), the way an older navi left it: the same tables,
/// columns and version rows.
fn make_version_4(path: &Path) {
    drop(SessionStore::open(path).unwrap());
    let c = rusqlite::Connection::open(path).unwrap();
    c.execute_batch(
        "DROP INDEX sessions_by_project;
         ALTER TABLE sessions DROP COLUMN cwd;
         ALTER TABLE sessions DROP COLUMN project;
         DROP TRIGGER messages_counted;
         DROP TRIGGER messages_uncounted;
         DROP INDEX messages_user_turns;
         ALTER TABLE sessions DROP COLUMN message_count;
         ALTER TABLE messages DROP COLUMN blocks;
         DROP TABLE memory_decisions;
         ALTER TABLE memory_facts DROP COLUMN user_set;
         ALTER TABLE messages DROP COLUMN rewound;
         ALTER TABLE messages DROP COLUMN display;
         DELETE FROM schema_version WHERE version > 4;",
    )
    .unwrap();
    assert_eq!(version_rows(path), vec![1, 2, 3, 4]);
}

/// The recorded versions, in order (each must appear once).
fn version_rows(path: &Path) -> Vec<i64> {
    let c = rusqlite::Connection::open(path).unwrap();
    let mut st = c
        .prepare("SELECT version FROM schema_version ORDER BY version")
        .unwrap();
    st.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn columns(path: &Path, table: &str) -> Vec<String> {
    let c = rusqlite::Connection::open(path).unwrap();
    let mut st = c
        .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))
        .unwrap();
    st.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// The schema every store ends with, and each migration recorded once.
fn assert_current(path: &Path, fresh: &Path) {
    let versions = version_rows(path);
    assert_eq!(versions, version_rows(fresh), "each migration once");
    for table in ["messages", "memory_facts", "memory_decisions", "sessions"] {
        assert_eq!(columns(path, table), columns(fresh, table), "{table}");
    }
}

/// Ten stores opened from ten threads at the same moment.
fn open_ten_at_once(path: &Path) {
    let start = Arc::new(Barrier::new(10));
    let threads: Vec<_> = (0..10)
        .map(|_| {
            let (start, path) = (start.clone(), path.to_path_buf());
            std::thread::spawn(move || {
                start.wait();
                let store = SessionStore::open(&path).map_err(|e| e.to_string())?;
                // Usable at once: a write and a read.
                let s = store.create("developer").map_err(|e| e.to_string())?;
                store.meta(&s.id).map_err(|e| e.to_string()).map(|_| ())
            })
        })
        .collect();
    for t in threads {
        if let Err(e) = t.join().unwrap() {
            panic!("a store failed to open: {e}");
        }
    }
}

#[test]
fn ten_stores_opened_together_on_a_new_database_migrate_it_once() {
    let dir = tempfile::tempdir().unwrap();
    let fresh = dir.path().join("fresh.db");
    drop(SessionStore::open(&fresh).unwrap());
    for round in 0..3 {
        let path = dir.path().join(format!("new-{round}/navi.db"));
        open_ten_at_once(&path);
        assert_current(&path, &fresh);
        let store = SessionStore::open(&path).unwrap();
        assert_eq!(store.list().unwrap().len(), 10);
    }
}

#[test]
fn ten_stores_opened_together_on_an_old_schema_upgrade_it_once() {
    let dir = tempfile::tempdir().unwrap();
    let fresh = dir.path().join("fresh.db");
    drop(SessionStore::open(&fresh).unwrap());
    for round in 0..3 {
        let path = dir.path().join(format!("old-{round}.db"));
        make_version_4(&path);
        open_ten_at_once(&path);
        assert_current(&path, &fresh);
    }
}

/// Ten `navi run` processes started together, each answering one prompt.
async fn ten_runs(env: &Env) {
    let fake = FakeLlm::start().await;
    for _ in 0..10 {
        fake.push(Reply::text("done"));
    }
    let runs: Vec<_> = (0..10)
        .map(|i| {
            let mut c = env.cmd(&fake, "ollama");
            c.args(["run", "--profile", "tester", &format!("prompt {i}")]);
            tokio::spawn(async move { c.output().await.unwrap() })
        })
        .collect();
    for r in runs {
        let out = r.await.unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "done");
    }
    assert_eq!(fake.chat_requests().len(), 10);
}

#[tokio::test]
async fn ten_navi_runs_started_together_on_a_new_and_an_old_data_dir_all_succeed() {
    let probe = tempfile::tempdir().unwrap();
    let fresh = probe.path().join("fresh.db");
    drop(SessionStore::open(&fresh).unwrap());

    let new = Env::new();
    ten_runs(&new).await;
    let db = new.path("data/navi.db");
    assert_current(&db, &fresh);
    assert_eq!(SessionStore::open(&db).unwrap().list().unwrap().len(), 10);

    let old = Env::new();
    let db = old.path("data/navi.db");
    std::fs::create_dir_all(db.parent().unwrap()).unwrap();
    make_version_4(&db);
    ten_runs(&old).await;
    assert_current(&db, &fresh);
    assert_eq!(SessionStore::open(&db).unwrap().list().unwrap().len(), 10);
}

/// The stored message count: filled from the rows an older navi wrote, then
/// kept by the database for every writer (navi, or rows added with SQL).
#[test]
fn the_message_count_survives_the_upgrade_and_follows_every_insert() {
    use navi::llm::ChatMessage;
    use navi::session::{Buffer, MessageKind, StoredMessage};
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("navi.db");
    let id = {
        let store = SessionStore::open(&path).unwrap();
        let s = store.create("developer").unwrap();
        for text in ["one", "two"] {
            let m = StoredMessage::new(ChatMessage::user(text), MessageKind::Message);
            store.append_both(&s.id, &m).unwrap();
        }
        let m = StoredMessage::new(ChatMessage::assistant("ctx"), MessageKind::Message);
        store.append(&s.id, Buffer::Context, &m).unwrap();
        assert_eq!(store.meta(&s.id).unwrap().unwrap().message_count, 2);
        s.id
    };
    make_version_4(&path);
    let c = rusqlite::Connection::open(&path).unwrap();
    c.execute(
        "INSERT INTO messages (session_id, buffer, role, content, created_at) VALUES (?1, 0, 'user', 'old', 1)",
        [&id],
    )
    .unwrap();
    drop(c);
    let store = SessionStore::open(&path).unwrap();
    assert_eq!(store.meta(&id).unwrap().unwrap().message_count, 3);
    let c = rusqlite::Connection::open(&path).unwrap();
    c.execute(
        "INSERT INTO messages (session_id, buffer, role, content, created_at) VALUES (?1, 0, 'assistant', 'sql', 2)",
        [&id],
    )
    .unwrap();
    assert_eq!(store.meta(&id).unwrap().unwrap().message_count, 4);
    assert_eq!(store.list().unwrap()[0].message_count, 4);
}
