//! A session's llama-server cache kept across server restarts (issue 36
//! item 4): with `--slot-save-path`, the slot that answered is saved after
//! the answer, and restored when the session is resumed on a server that
//! has not used a slot since it started.
//!
//! Invariants:
//! - Only servers with llama-server's `/props`. Whether the server saves
//!   slots is learned from the first save (a server without
//!   `--slot-save-path` answers 501) and kept with the server's identity;
//!   a server that cannot is never asked again.
//! - A restore goes only into a slot that has run no task since the
//!   server started (a slot in use holds someone's cache), and the request
//!   is then sent to that slot.
//! - Everything here is best effort: a failure is logged, never shown.
use super::OpenAiBackend;
use crate::llm::server_cache;
use serde_json::{Value, json};
use std::sync::atomic::Ordering;

impl OpenAiBackend {
    /// Whether saving slots is known not to work here.
    fn slots_refused(&self) -> bool {
        self.no_slot_save.load(Ordering::Relaxed)
            || self.kept().and_then(|e| e.slot_save) == Some(false)
    }

    fn note_slot_save(&self, works: bool) {
        if !works {
            self.no_slot_save.store(true, Ordering::Relaxed);
        }
        if let Some(c) = server_cache::get() {
            c.update(&self.target.base, |e| e.slot_save = Some(works));
        }
    }

    /// `GET /slots`: the server's slots, `None` when it has no such list.
    async fn slots(&self) -> Option<Vec<Value>> {
        let rb = self.root_request(reqwest::Method::GET, "/slots");
        let resp = rb.send().await.ok()?;
        if !resp.status().is_success() {
            return None;
        }
        match resp.json::<Value>().await.ok()? {
            Value::Array(a) => Some(a),
            _ => None,
        }
    }

    /// `POST /slots/ID?action=ACTION` with `filename`; the HTTP status.
    async fn slot_action(&self, id: u64, action: &str, name: &str) -> Option<u16> {
        let path = format!("/slots/{id}?action={action}");
        let rb = self
            .root_request(reqwest::Method::POST, &path)
            .json(&json!({ "filename": name }));
        let resp = rb.send().await.ok()?;
        Some(resp.status().as_u16())
    }

    /// Saves the slot that ran the latest task under `name`.
    pub(super) async fn save_slot_as(&self, name: &str) {
        if self.server_props().await.is_none() || self.slots_refused() {
            return;
        }
        let Some(slots) = self.slots().await else {
            // No slot list (`--no-slots`, or not llama-server after all).
            self.note_slot_save(false);
            return;
        };
        let latest = slots
            .iter()
            .filter(|s| s.get("is_processing") != Some(&Value::Bool(true)))
            .filter_map(|s| Some((s.get("id_task")?.as_u64()?, s.get("id")?.as_u64()?)))
            .max();
        let Some((_, id)) = latest else {
            return;
        };
        match self.slot_action(id, "save", name).await {
            Some(s) if (200..300).contains(&s) => self.note_slot_save(true),
            // 501: started without `--slot-save-path`.
            Some(501) => self.note_slot_save(false),
            Some(s) => tracing::info!("saving slot {id} as {name}: HTTP {s}"),
            None => {}
        }
    }

    /// Restores `name` into a slot the server has not used yet.
    pub(super) async fn restore_slot_from(&self, name: &str) -> Option<u32> {
        self.server_props().await?;
        // Only where a save was seen to work (the file may exist).
        if self.kept().and_then(|e| e.slot_save) != Some(true) {
            return None;
        }
        let slots = self.slots().await?;
        // A slot that has run no task since the server started holds no
        // one's cache; none such: the server's own caches are in use.
        let id = slots
            .iter()
            .filter(|s| s.get("is_processing") != Some(&Value::Bool(true)))
            .filter(|s| {
                s.get("id_task")
                    .and_then(Value::as_i64)
                    .is_none_or(|t| t < 0)
            })
            .find_map(|s| s.get("id")?.as_u64())?;
        match self.slot_action(id, "restore", name).await {
            Some(s) if (200..300).contains(&s) => u32::try_from(id).ok(),
            _ => None,
        }
    }
}
