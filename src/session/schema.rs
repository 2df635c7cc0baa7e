//! Versioned schema migrations. Each entry runs once, in order, in a
//! transaction that holds the database's write lock; `schema_version`
//! records how far a database got (see [`migrate`] for concurrent starts).
use rusqlite::{Connection, TransactionBehavior};

const MIGRATIONS: &[&str] = &[
    // 1: sessions and the two message buffers.
    "CREATE TABLE sessions (
        id TEXT PRIMARY KEY,
        profile_id TEXT NOT NULL,
        title TEXT NOT NULL DEFAULT '',
        pinned INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        last_active INTEGER NOT NULL,
        context_token_count INTEGER NOT NULL DEFAULT 0
    );
    CREATE TABLE messages (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        buffer INTEGER NOT NULL,
        role TEXT NOT NULL,
        content TEXT NOT NULL,
        thinking TEXT,
        tool_calls TEXT,
        tool_call_id TEXT,
        tool_name TEXT,
        images TEXT,
        kind TEXT NOT NULL DEFAULT 'message',
        success INTEGER,
        created_at INTEGER NOT NULL
    );
    CREATE INDEX messages_by_session ON messages(session_id, buffer, id);
    CREATE INDEX sessions_by_activity ON sessions(pinned DESC, last_active DESC);",
    // 2: per-session tool state (todo list, scratchpad) that survives restarts.
    "CREATE TABLE session_state (
        session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        PRIMARY KEY (session_id, key)
    );",
    // 3: long-term memory: facts (proposed until accepted), the summary built
    // from the accepted ones, per-session extraction state with a claim
    // (owner + lease) so two processes never extract one session, and
    // tombstones so a forgotten or rejected fact is not re-extracted from the
    // message it came from.
    "CREATE TABLE memory_facts (
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        category TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        status TEXT NOT NULL DEFAULT 'proposed',
        source_session TEXT,
        source_message INTEGER,
        created_at INTEGER NOT NULL,
        updated_at INTEGER NOT NULL,
        UNIQUE (category, key)
    );
    CREATE TABLE memory_summary (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        content TEXT NOT NULL,
        updated_at INTEGER NOT NULL
    );
    CREATE TABLE session_memory_state (
        session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
        extracted_at INTEGER,
        last_message INTEGER NOT NULL DEFAULT 0,
        lock_owner TEXT,
        lock_until INTEGER
    );
    CREATE TABLE memory_tombstones (
        category TEXT NOT NULL,
        key TEXT NOT NULL,
        source_session TEXT NOT NULL,
        source_message INTEGER NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (category, key, source_session, source_message)
    );",
    // 4: streamed text as appended pieces (see session/deltas.rs), folded
    // into the message when its model call ends. No index on message_id:
    // the table holds at most the pieces of the answers streaming right now
    // (a scan is cheap), and an index page would double what each piece
    // writes.
    "CREATE TABLE message_deltas (
        seq INTEGER PRIMARY KEY,
        message_id INTEGER NOT NULL REFERENCES messages(id) ON DELETE CASCADE,
        context_id INTEGER,
        content TEXT NOT NULL DEFAULT '',
        thinking TEXT NOT NULL DEFAULT ''
    );",
    // 5: the user's decisions about memory, which extraction respects: a
    // fact the user edited (`user_set`) is never overwritten, and a fact the
    // user forgot or rejected (`memory_decisions`) is not proposed again from
    // any session — not its value, and no value from a message written
    // before the decision.
    "ALTER TABLE memory_facts ADD COLUMN user_set INTEGER NOT NULL DEFAULT 0;
    CREATE TABLE memory_decisions (
        category TEXT NOT NULL,
        key TEXT NOT NULL,
        value TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        PRIMARY KEY (category, key, value)
    );",
    // 6: `/rewind`: messages after the point rewound to stay in the history,
    // marked; the context buffer leaves them out (see session/rewind.rs).
    "ALTER TABLE messages ADD COLUMN rewound INTEGER NOT NULL DEFAULT 0;",
    // 7: typed display data of a tool result (JSON of `protocol::ToolDisplay`),
    // kept on display-buffer rows only; NULL for every other row and for rows
    // written before it existed (they replay as plain text).
    "ALTER TABLE messages ADD COLUMN display TEXT;",
    // 8: messages are lists of content blocks (see session/store/rows.rs):
    // the columns above keep a message's flat form (text, thinking, calls,
    // the result's call, images), which is all every earlier row holds, so
    // those rows need no rewriting; `blocks` holds the whole list as JSON
    // when the flat form cannot (a thinking signature, an encrypted
    // reasoning payload, blocks in another order).
    "ALTER TABLE messages ADD COLUMN blocks TEXT;",
    // 9: reading costs what is read, not the history. `message_count` (the
    // display rows) is kept by triggers, for every writer, instead of
    // counted on each `meta`; the partial index holds the user's messages
    // (the turns `/rewind` numbers), so counting or finding one reads the
    // index only.
    "ALTER TABLE sessions ADD COLUMN message_count INTEGER NOT NULL DEFAULT 0;
    UPDATE sessions SET message_count =
        (SELECT COUNT(*) FROM messages m WHERE m.session_id = sessions.id AND m.buffer = 0);
    CREATE TRIGGER messages_counted AFTER INSERT ON messages WHEN NEW.buffer = 0 BEGIN
        UPDATE sessions SET message_count = message_count + 1 WHERE id = NEW.session_id;
    END;
    CREATE TRIGGER messages_uncounted AFTER DELETE ON messages WHEN OLD.buffer = 0 BEGIN
        UPDATE sessions SET message_count = message_count - 1 WHERE id = OLD.session_id;
    END;
    CREATE INDEX messages_user_turns ON messages(session_id, rewound, id)
        WHERE buffer = 0 AND role = 'user' AND kind = 'message';",
    // 10: sessions belong to a project (see src/project/mod.rs): `cwd` is
    // the directory the session was started in (its tools' workspace; ACP's
    // session/list reads it), `project` that directory's git top level or
    // the directory itself. NULL on sessions from before: they belong to no
    // project and are listed with `--all` only.
    "ALTER TABLE sessions ADD COLUMN cwd TEXT;
    ALTER TABLE sessions ADD COLUMN project TEXT;
    CREATE INDEX sessions_by_project ON sessions(project, last_active DESC);",
];

/// The schema version this build writes.
pub(crate) const CURRENT: i64 = MIGRATIONS.len() as i64;

/// The highest version recorded in `schema_version` (0 for a new database).
fn version(conn: &Connection) -> rusqlite::Result<i64> {
    conn.query_row(
        "SELECT COALESCE(MAX(version), 0) FROM schema_version",
        [],
        |r| r.get(0),
    )
}

/// Brings the database up to [`CURRENT`]; returns the version it had.
///
/// Any number of processes may do this at once on one database (ten `navi
/// run` started together on a new data directory): each step runs in a
/// `BEGIN IMMEDIATE` transaction — the database's write lock, taken before
/// anything is read — that reads the version again and applies the next
/// migration only if no other process has meanwhile. A process that waited
/// for the lock finds the work done and applies nothing twice. Adding a
/// migration is adding an entry to [`MIGRATIONS`].
pub(crate) fn migrate(conn: &mut Connection) -> rusqlite::Result<i64> {
    conn.execute_batch("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL);")?;
    let found = version(conn)?;
    if found >= CURRENT {
        // The common case: nothing to do, no write lock taken.
        return Ok(found);
    }
    loop {
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let now = version(&tx)?;
        let Some(sql) = usize::try_from(now).ok().and_then(|v| MIGRATIONS.get(v)) else {
            // Up to date (or newer: the caller refuses that).
            tx.commit()?;
            return Ok(found);
        };
        tx.execute_batch(sql)?;
        tx.execute(
            "INSERT INTO schema_version (version) VALUES (?1)",
            [now + 1],
        )?;
        tx.commit()?;
    }
}
