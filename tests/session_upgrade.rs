//! A database written by the release before content-block messages
//! (schema 7, `tests/fixtures/release_v7`) opens in this build, shows
//! exactly what that release showed, and continues with exactly the request
//! bytes that release sent, on both wire protocols; the continued session
//! keeps growing append-only (the server's prompt cache holds).
use crate::cli_support::Env;
use crate::support::{FakeLlm, Reply};
use navi::session::SessionStore;
use serde_json::Value;
use std::path::{Path, PathBuf};

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/release_v7")
        .join(name)
}

fn read(name: &str) -> String {
    std::fs::read_to_string(fixture(name)).unwrap()
}

/// A fresh copy of the old database in `env`'s data dir.
fn restore(env: &Env) {
    let data = env.path("data");
    std::fs::create_dir_all(&data).unwrap();
    for f in ["navi.db", "navi.db-wal", "navi.db-shm"] {
        let _ = std::fs::remove_file(data.join(f));
    }
    let c = rusqlite::Connection::open(data.join("navi.db")).unwrap();
    c.execute_batch(&read("session.sql")).unwrap();
    let version: i64 = c
        .query_row("SELECT MAX(version) FROM schema_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, 7, "the fixture is a schema-7 database");
}

async fn fake() -> FakeLlm {
    let fake = FakeLlm::start().await;
    fake.set_capabilities(&["completion", "vision", "tools", "thinking"]);
    fake
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_old_database_shows_what_its_release_showed() {
    let env = Env::new();
    let fake = fake().await;
    for (args, want) in [
        (
            &["sessions", "export", "--format", "json", "1"][..],
            "export.json",
        ),
        (&["sessions", "export", "1"][..], "export.md"),
        (&["sessions", "show", "--json", "1"][..], "show.json"),
    ] {
        restore(&env);
        let o = env.run(&fake, "ollama", args).await;
        assert_eq!(o.code, 0, "{args:?}: {}", o.stderr);
        assert_eq!(o.stdout, read(want), "{args:?}");
    }
    // Opening it migrated it, rows untouched: the flat columns still hold
    // every message, and no row needed its blocks.
    let db = env.path("data/navi.db");
    let store = SessionStore::open(&db).unwrap();
    drop(store);
    let c = rusqlite::Connection::open(&db).unwrap();
    let (rows, with_blocks): (i64, i64) = c
        .query_row("SELECT COUNT(*), COUNT(blocks) FROM messages", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .unwrap();
    assert_eq!((rows, with_blocks), (31, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_old_database_continues_with_the_same_request_bytes() {
    for backend in ["ollama", "openai"] {
        let env = Env::new();
        let fake = fake().await;
        restore(&env);
        fake.push(Reply::text("Continued."));
        let o = env.run(&fake, backend, &["run", "-c", "and now?"]).await;
        assert_eq!(o.code, 0, "{backend}: {}", o.stderr);
        assert!(o.stdout.contains("Continued."), "{backend}: {}", o.stdout);
        let sent = fake.chat_requests().pop().unwrap();
        let want: Value = serde_json::from_str(&read(&format!("continue-{backend}.json"))).unwrap();
        assert_eq!(sent, want, "{backend}: the request the old release sent");
        // The next turn extends that request: what was sent is its prefix.
        fake.push(Reply::thinking_text("Still here.", "Again."));
        let o = env.run(&fake, backend, &["run", "-c", "once more"]).await;
        assert_eq!(o.code, 0, "{backend}: {}", o.stderr);
        let next = fake.chat_requests().pop().unwrap();
        let (a, b) = (
            sent["messages"].as_array().unwrap(),
            next["messages"].as_array().unwrap(),
        );
        assert_eq!(&b[..a.len()], &a[..], "{backend}: append-only");
        let answer = &b[a.len()];
        assert_eq!(answer["content"], "Continued.", "{backend}");
    }
}
