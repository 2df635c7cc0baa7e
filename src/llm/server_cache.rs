//! What navi learned about a model server, kept across runs in
//! `<data dir>/servers.json`: its model list, llama-server's `/props`,
//! Ollama's `/api/show` answers, the server's token counts of fixed prompt
//! prefixes, and notices already shown. A warm run asks the server nothing
//! but the chat itself.
//!
//! Invariants:
//! - One entry per server base URL, with the server's own identity (a hash
//!   of what does not change while the same build serves the same model
//!   file: llama-server's `build_info`, model path, window and chat
//!   template; the model ids and their metadata; Ollama's digests and
//!   `modified_at`). Model names are part of every per-model key.
//! - A cached answer is used as is on the path of a turn, however old.
//!   After the answer, an entry older than [`CHECK_AFTER`] is checked
//!   (`LlmBackend::revalidate`): the same identity only renews it, another
//!   one replaces everything that came from the server (counts included).
//! - A chat request the server refuses with an HTTP error drops the entry
//!   (the server may have changed): the next run asks afresh.
//! - Only a navi process keeps one ([`enable`] at the binary's entry, then
//!   [`install`] by the app with its data dir); without it (library and
//!   in-process tests, benches) every backend asks the server as before.
//! - Writes go to a temporary file renamed over the old one, after
//!   re-reading it (another process may have written since): a reader sees
//!   the old or the new file, never half of one. A file that cannot be read
//!   or parsed counts as empty; a failure to write is only logged. No key or
//!   header is ever kept.
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};
use std::time::Duration;

/// How long an entry is trusted before it is checked after an answer.
pub(crate) const CHECK_AFTER: Duration = Duration::from_secs(600);
/// Counts kept per server (the oldest go first).
const MAX_COUNTS: usize = 64;
/// How long a one-shot front end waits for a check after its answer.
pub(crate) const CHECK_WAIT: Duration = Duration::from_secs(3);

/// What is known about one server.
#[derive(Clone, Debug, Default, Serialize, Deserialize, PartialEq)]
pub(crate) struct Entry {
    /// The server's identity when the rest was learned.
    #[serde(default)]
    pub(crate) identity: String,
    /// When the identity was last confirmed (unix ms).
    #[serde(default)]
    pub(crate) checked_at: i64,
    /// The model list as the server gave it (OpenAI `data`, Ollama `models`).
    #[serde(default)]
    pub(crate) models: Option<Vec<Value>>,
    /// llama-server's `/props` answer (`Null`: the server has none).
    #[serde(default)]
    pub(crate) props: Option<Value>,
    /// Ollama's `/api/show` answers by model.
    #[serde(default)]
    pub(crate) shows: BTreeMap<String, Value>,
    /// The server's token counts by request hash, oldest first.
    #[serde(default)]
    pub(crate) counts: Vec<(String, u64)>,
    /// Models this server was seen to re-read the previous answer for on
    /// the next call (a sliding-window or recurrent model on llama-server
    /// without `--swa-full`): navi re-sends the conversation after each
    /// answer (`agent/cache_warm.rs`).
    #[serde(default, skip_serializing_if = "std::collections::BTreeSet::is_empty")]
    pub(crate) rereads_answers: std::collections::BTreeSet<String>,
    /// Whether the server saves and restores slots (`--slot-save-path`);
    /// `None` until a save was tried.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(crate) slot_save: Option<bool>,
}

impl Entry {
    /// The count kept for `key`.
    pub(crate) fn count(&self, key: &str) -> Option<u64> {
        self.counts.iter().find(|(k, _)| k == key).map(|(_, n)| *n)
    }

    fn set_count(&mut self, key: String, n: u64) {
        self.counts.retain(|(k, _)| *k != key);
        self.counts.push((key, n));
        let over = self.counts.len().saturating_sub(MAX_COUNTS);
        self.counts.drain(..over);
    }

    /// Older than [`CHECK_AFTER`].
    pub(crate) fn due(&self) -> bool {
        let age = now_ms().saturating_sub(self.checked_at);
        u128::try_from(age).map_or(true, |a| a >= CHECK_AFTER.as_millis())
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct CacheFile {
    #[serde(default)]
    servers: BTreeMap<String, Entry>,
    /// Notices shown once (e.g. an MCP server version's unusable tools).
    #[serde(default)]
    shown: Vec<String>,
}

/// The cache of one data dir.
pub(crate) struct ServerCache {
    path: PathBuf,
    file: Mutex<Option<CacheFile>>,
}

static CACHE: OnceLock<ServerCache> = OnceLock::new();
/// Set by the binary's entry: only a navi process keeps a cache (a test
/// process that builds many apps over many data dirs and fake servers,
/// whose ports come back, keeps none).
static ENABLED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);
/// Checks started after an answer, for a one-shot front end to wait on.
static PENDING: Mutex<Vec<tokio::task::JoinHandle<()>>> = Mutex::new(Vec::new());

/// Keeps what backends learn in `data_dir` (once per process; later calls
/// are ignored). Nothing is read until a backend asks.
pub(crate) fn install(data_dir: &Path) {
    if !ENABLED.load(std::sync::atomic::Ordering::Relaxed) {
        return;
    }
    let _ = CACHE.set(ServerCache {
        path: data_dir.join("servers.json"),
        file: Mutex::new(None),
    });
}

/// Lets [`install`] keep a cache in this process (the binary's entry).
pub(crate) fn enable() {
    ENABLED.store(true, std::sync::atomic::Ordering::Relaxed);
}

/// The installed cache, if any.
pub(crate) fn get() -> Option<&'static ServerCache> {
    CACHE.get()
}

/// Runs `check` in the background (the server's identity after an answer).
pub(crate) fn spawn_check(check: impl std::future::Future<Output = ()> + Send + 'static) {
    let Ok(rt) = tokio::runtime::Handle::try_current() else {
        return;
    };
    let h = rt.spawn(check);
    if let Ok(mut p) = PENDING.lock() {
        p.retain(|h| !h.is_finished());
        p.push(h);
    }
}

/// Waits up to `wait` for the checks started so far (a one-shot front end,
/// before it exits).
pub(crate) async fn finish_checks(wait: Duration) {
    let pending: Vec<_> = PENDING
        .lock()
        .map(|mut p| std::mem::take(&mut *p))
        .unwrap_or_default();
    let all = futures_util::future::join_all(pending);
    let _ = tokio::time::timeout(wait, all).await;
}

/// Milliseconds since the Unix epoch (0 before it).
pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

/// A short stable hash (FNV-1a, 64 bits) of `text`, hex.
pub(crate) fn hash(text: &str) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.as_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("{h:016x}")
}

impl ServerCache {
    fn read_file(&self) -> CacheFile {
        std::fs::read_to_string(&self.path)
            .ok()
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default()
    }

    fn with_file<T>(&self, f: impl FnOnce(&mut CacheFile) -> T) -> Option<T> {
        let mut guard = self.file.lock().ok()?;
        let file = guard.get_or_insert_with(|| self.read_file());
        Some(f(file))
    }

    /// The entry of the server at `base`.
    pub(crate) fn entry(&self, base: &str) -> Option<Entry> {
        self.with_file(|f| f.servers.get(base).cloned()).flatten()
    }

    /// Changes the entry of `base` (made when missing) and writes the file.
    pub(crate) fn update(&self, base: &str, change: impl FnOnce(&mut Entry)) {
        self.write_with(|f| {
            let e = f.servers.entry(base.to_string()).or_default();
            if e.checked_at == 0 {
                e.checked_at = now_ms();
            }
            change(e);
        });
    }

    /// Keeps `n` as the count of request `key` on `base`.
    pub(crate) fn put_count(&self, base: &str, key: String, n: u64) {
        self.update(base, |e| e.set_count(key, n));
    }

    /// Forgets everything about `base`.
    pub(crate) fn forget(&self, base: &str) {
        let had = self.with_file(|f| f.servers.contains_key(base)) == Some(true);
        if had {
            tracing::debug!("forgetting what was kept about {base}");
            self.write_with(|f| {
                f.servers.remove(base);
            });
        }
    }

    /// Records `key` as shown; true when it was not shown before.
    pub(crate) fn first_time(&self, key: &str) -> bool {
        let seen = self.with_file(|f| f.shown.iter().any(|k| k == key));
        if seen != Some(false) {
            return false;
        }
        let mut fresh = false;
        self.write_with(|f| {
            if !f.shown.iter().any(|k| k == key) {
                f.shown.push(key.to_string());
                fresh = true;
            }
        });
        fresh
    }

    /// Re-reads the file, applies `change`, writes it atomically.
    fn write_with(&self, change: impl FnOnce(&mut CacheFile)) {
        let Ok(mut guard) = self.file.lock() else {
            return;
        };
        let mut file = self.read_file();
        change(&mut file);
        if let Err(e) = self.write_file(&file) {
            tracing::debug!("cannot keep {}: {e}", self.path.display());
        }
        *guard = Some(file);
    }

    fn write_file(&self, file: &CacheFile) -> std::io::Result<()> {
        let text = serde_json::to_string(file).map_err(std::io::Error::other)?;
        if let Some(dir) = self.path.parent() {
            crate::private_fs::create_dir_all(dir)?;
        }
        crate::private_fs::write_atomic(&self.path, text.as_bytes())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    fn cache(dir: &Path) -> ServerCache {
        ServerCache {
            path: dir.join("servers.json"),
            file: Mutex::new(None),
        }
    }

    #[test]
    fn entries_survive_a_new_process_and_counts_are_bounded() {
        let d = tempfile::tempdir().unwrap();
        let c = cache(d.path());
        c.update("http://a/v1", |e| {
            e.identity = "id1".into();
            e.props = Some(json!({"n_ctx": 4096}));
        });
        for i in 0..(MAX_COUNTS + 5) {
            c.put_count("http://a/v1", format!("k{i}"), i as u64);
        }
        let again = cache(d.path());
        let e = again.entry("http://a/v1").unwrap();
        assert_eq!(e.identity, "id1");
        assert_eq!(e.props, Some(json!({"n_ctx": 4096})));
        assert_eq!(e.counts.len(), MAX_COUNTS);
        assert_eq!(e.count("k0"), None, "the oldest went first");
        assert_eq!(e.count(&format!("k{}", MAX_COUNTS + 4)), Some(68));
        assert!(!e.due(), "just learned");
        again.forget("http://a/v1");
        assert!(cache(d.path()).entry("http://a/v1").is_none());
    }

    #[test]
    fn a_notice_is_shown_once_and_a_broken_file_counts_as_empty() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(d.path().join("servers.json"), "{not json").unwrap();
        let c = cache(d.path());
        assert!(c.entry("x").is_none());
        assert!(c.first_time("mcp:s:1.0"));
        assert!(!c.first_time("mcp:s:1.0"));
        assert!(!cache(d.path()).first_time("mcp:s:1.0"));
        assert!(cache(d.path()).first_time("mcp:s:2.0"));
        assert_ne!(hash("a"), hash("b"));
        assert_eq!(hash("a"), hash("a"));
    }
}
