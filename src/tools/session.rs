//! What the tools keep for one open session: the directory its tools work
//! in, its todo list and scratchpads (cached here, persisted in the
//! session's stored state), the approvals given "for the session" and the
//! questions waiting for an answer, and the network destinations approved
//! for one call.
//!
//! Invariants:
//! - one value per open session, owned by it (`agent::Session`) and handed
//!   to every tool call of the session and of its subagents through
//!   [`ToolContext::session`](super::ToolContext); closing the session drops
//!   it, so nothing of a closed session lingers in the process;
//! - what must survive a restart (todo list, scratchpads) is written to the
//!   store when it changes; the rest (allowances, open questions) ends with
//!   the session on purpose.
use super::net_guard::Vetted;
use crate::protocol::{Decision, TodoItem, TodoStatus};
use crate::session::SessionStore;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::oneshot;

/// Session state key of the todo list.
const TODO_KEY: &str = "todo";

/// A scratchpad: section name → text.
pub(crate) type Pad = BTreeMap<String, String>;

/// See the module docs.
pub struct SessionTools {
    id: String,
    work_dir: PathBuf,
    /// Where the todo list and scratchpads persist; `None`: memory only.
    store: Option<Arc<SessionStore>>,
    /// The todo list, once read.
    todos: Mutex<Option<Vec<TodoItem>>>,
    /// Scratchpads read so far, by slot (`scratchpad`, `scratchpad:<subagent>`).
    pads: Mutex<HashMap<String, Pad>>,
    /// Tools (or escalation keys) allowed until the session ends.
    allowed: Mutex<HashSet<String>>,
    /// Questions waiting for the user, by tool-call id.
    waiting: Mutex<HashMap<String, oneshot::Sender<Decision>>>,
    /// Non-public destinations put to the user, by tool-call id.
    net: Mutex<HashMap<String, Vetted>>,
    /// The editor's file system and terminals, when its front end offers them.
    client: Mutex<Option<super::client::Client>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl SessionTools {
    /// The tool state of session `id`, working in `work_dir`; what persists
    /// goes to `store` (none: kept in memory only).
    pub fn new(id: &str, work_dir: PathBuf, store: Option<Arc<SessionStore>>) -> Self {
        SessionTools {
            id: id.to_string(),
            work_dir,
            store,
            todos: Mutex::new(None),
            pads: Mutex::new(HashMap::new()),
            allowed: Mutex::new(HashSet::new()),
            waiting: Mutex::new(HashMap::new()),
            net: Mutex::new(HashMap::new()),
            client: Mutex::new(None),
        }
    }

    /// The session's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// The directory commands run in and relative paths start from.
    pub fn work_dir(&self) -> &Path {
        &self.work_dir
    }

    /// The editor's side (ACP's `fs/*`, `terminal/*`), if the front end
    /// offers it.
    pub fn client(&self) -> Option<super::client::Client> {
        lock(&self.client).clone()
    }

    /// Sets (or, with `None`, removes) the editor's side for this session's tools.
    pub fn set_client(&self, client: Option<super::client::Client>) {
        *lock(&self.client) = client;
    }

    // ---- todo list ----

    /// The todo list (read from the store the first time).
    pub fn todos(&self) -> Vec<TodoItem> {
        let mut cached = lock(&self.todos);
        if let Some(items) = cached.as_ref() {
            return items.clone();
        }
        let loaded: Vec<TodoItem> = self
            .store
            .as_ref()
            .and_then(|s| s.get_state(&self.id, TODO_KEY).ok().flatten())
            .and_then(|json| serde_json::from_str(&json).ok())
            .unwrap_or_default();
        *cached = Some(loaded.clone());
        loaded
    }

    /// Replaces the todo list (and stores it).
    pub fn set_todos(&self, items: Vec<TodoItem>) {
        if let Some(store) = &self.store
            && let Ok(json) = serde_json::to_string(&items)
            && let Err(e) = store.put_state(&self.id, TODO_KEY, &json)
        {
            // A session that is not stored yet keeps it in memory.
            tracing::debug!("todo list of {} kept in memory only: {e}", self.id);
        }
        *lock(&self.todos) = Some(items);
    }

    /// Replaces the list from plain texts (and optional executors).
    pub fn set_todo_texts(&self, texts: Vec<(String, Option<String>)>) -> Vec<TodoItem> {
        let items: Vec<TodoItem> = texts
            .into_iter()
            .enumerate()
            .map(|(i, (text, executor))| TodoItem {
                id: i as u32 + 1,
                text,
                status: TodoStatus::Pending,
                executor,
                validation: None,
            })
            .collect();
        self.set_todos(items.clone());
        items
    }

    // ---- scratchpads ----

    /// The scratchpad in `slot` (read from the store the first time).
    pub(crate) fn pad(&self, slot: &str) -> Pad {
        if let Some(p) = lock(&self.pads).get(slot) {
            return p.clone();
        }
        let loaded: Pad = self
            .store
            .as_ref()
            .and_then(|s| s.get_state(&self.id, slot).ok().flatten())
            .and_then(|json| serde_json::from_str(&json).ok())
            .unwrap_or_default();
        lock(&self.pads)
            .entry(slot.to_string())
            .or_insert_with(|| loaded.clone());
        loaded
    }

    /// Changes the scratchpad in `slot` (and stores it).
    pub(crate) fn update_pad(&self, slot: &str, f: impl FnOnce(&mut Pad)) {
        let mut pad = self.pad(slot);
        f(&mut pad);
        if let Some(store) = &self.store
            && let Ok(json) = serde_json::to_string(&pad)
            && let Err(e) = store.put_state(&self.id, slot, &json)
        {
            tracing::debug!("scratchpad {}/{slot} kept in memory only: {e}", self.id);
        }
        lock(&self.pads).insert(slot.to_string(), pad);
    }

    // ---- approvals ----

    /// Whether `key` (a tool, or an escalation such as `terminal
    /// sandbox=off`) was allowed for the rest of the session.
    pub(crate) fn allows(&self, key: &str) -> bool {
        lock(&self.allowed).contains(key)
    }

    pub(crate) fn allow(&self, key: &str) {
        lock(&self.allowed).insert(key.to_string());
    }

    /// What was allowed for the session, sorted.
    pub fn allowed(&self) -> Vec<String> {
        let mut v: Vec<String> = lock(&self.allowed).iter().cloned().collect();
        v.sort();
        v
    }

    /// Takes an allowance back: the next call asks again. False when it
    /// was not allowed.
    pub fn revoke(&self, key: &str) -> bool {
        lock(&self.allowed).remove(key)
    }

    /// Registers a question for call `id`; its answer comes through
    /// [`answer`](Self::answer).
    pub(crate) fn wait_for(&self, id: &str) -> oneshot::Receiver<Decision> {
        let (tx, rx) = oneshot::channel();
        lock(&self.waiting).insert(id.to_string(), tx);
        rx
    }

    /// Forgets the question of call `id` (the call was cancelled).
    pub(crate) fn withdraw(&self, id: &str) {
        lock(&self.waiting).remove(id);
    }

    /// The user's answer to the question of call `id`. False when none waits.
    pub fn answer(&self, id: &str, decision: Decision) -> bool {
        match lock(&self.waiting).remove(id) {
            Some(tx) => tx.send(decision).is_ok(),
            None => false,
        }
    }

    /// Ids of the questions waiting for an answer.
    pub fn waiting(&self) -> Vec<String> {
        lock(&self.waiting).keys().cloned().collect()
    }

    // ---- network approvals ----

    /// Keeps what `call`'s destination resolved to while the user is asked.
    pub(crate) fn keep_vetted(&self, call: &str, vetted: Vetted) {
        let mut m = lock(&self.net);
        if m.len() > 256 {
            m.clear();
        }
        m.insert(call.to_string(), vetted);
    }

    /// Takes what was kept for `call` (approved when the call runs at all).
    pub(crate) fn take_vetted(&self, call: &str) -> Option<Vetted> {
        lock(&self.net).remove(call)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn todo_and_pads_persist_per_session_and_slot() {
        let store = Arc::new(SessionStore::open_in_memory().unwrap());
        let s = store.create("developer").unwrap();
        let tools = SessionTools::new(&s.id, PathBuf::from("."), Some(store.clone()));
        tools.set_todo_texts(vec![("one".into(), None)]);
        tools.update_pad("scratchpad", |p| {
            p.insert("notes".into(), "main".into());
        });
        tools.update_pad("scratchpad:subagent_a", |p| {
            p.insert("notes".into(), "from a".into());
        });
        // The session opened again (a restart) reads what was saved.
        let again = SessionTools::new(&s.id, PathBuf::from("."), Some(store));
        assert_eq!(again.todos()[0].text, "one");
        assert_eq!(again.pad("scratchpad")["notes"], "main");
        assert_eq!(again.pad("scratchpad:subagent_a")["notes"], "from a");
        assert!(again.pad("scratchpad:subagent_b").is_empty());
        // Without a store everything still works, in memory.
        let loose = SessionTools::new("subagent_x", PathBuf::from("."), None);
        loose.update_pad("scratchpad", |p| {
            p.insert("n".into(), "v".into());
        });
        assert_eq!(loose.pad("scratchpad")["n"], "v");
    }

    #[tokio::test]
    async fn answers_reach_the_waiting_call_once() {
        let tools = SessionTools::new("s", PathBuf::from("."), None);
        let rx = tools.wait_for("call-1");
        assert_eq!(tools.waiting(), vec!["call-1"]);
        assert!(tools.answer("call-1", Decision::Session));
        assert!(!tools.answer("call-1", Decision::Once));
        assert_eq!(rx.await.unwrap(), Decision::Session);
        tools.allow("terminal");
        assert!(tools.allows("terminal"));
        assert!(tools.revoke("terminal"));
        assert!(!tools.revoke("terminal"));
    }
}
