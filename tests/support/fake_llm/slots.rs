//! The fake server's llama-server slots: `GET /slots` and the slot actions
//! of `--slot-save-path` (`POST /slots/ID?action=save|restore`), for a
//! counting server (`count.rs`). A chat request runs a task on the slot its
//! `id_slot` names, else on slot 0.
use super::http::simple;
use super::{FakeLlm, Io, State, lock};
use serde_json::{Value, json};
use std::collections::BTreeSet;
use std::sync::Mutex;
use tokio::net::tcp::OwnedWriteHalf;

/// What the slots hold.
#[derive(Clone, Debug, Default)]
pub struct Slots {
    /// The task each slot ran last since the server started.
    tasks: Vec<Option<u64>>,
    next_task: u64,
    /// Started with `--slot-save-path`: slot actions work.
    save: bool,
    /// Files saved so far (they outlive a restart).
    files: BTreeSet<String>,
}

impl FakeLlm {
    /// Serve `n` llama-server slots; `save`: as if started with
    /// `--slot-save-path` (else slot actions answer 501).
    pub fn set_slots(&self, n: usize, save: bool) {
        lock(&self.state).slots = Some(Slots {
            tasks: vec![None; n],
            save,
            ..Slots::default()
        });
    }

    /// Like a server restart: no slot has run a task; saved files stay.
    pub fn restart_slots(&self) {
        if let Some(s) = lock(&self.state).slots.as_mut() {
            s.tasks.iter_mut().for_each(|t| *t = None);
        }
    }
}

/// A chat request ran a task on its slot.
pub(super) fn on_chat(state: &Mutex<State>, body: &Value) {
    if let Some(s) = lock(state).slots.as_mut() {
        let id = body.get("id_slot").and_then(Value::as_u64).unwrap_or(0) as usize;
        s.next_task += 1;
        if let Some(t) = s.tasks.get_mut(id) {
            *t = Some(s.next_task);
        }
    }
}

/// The slot routes; `None`: not one of them (or no slots served).
pub(super) async fn respond(
    wr: &mut OwnedWriteHalf,
    method: &str,
    path: &str,
    body: &Value,
    state: &Mutex<State>,
) -> Option<Io> {
    let slots = lock(state).slots.clone()?;
    if method == "GET" && path == "/slots" {
        let list: Vec<Value> = (0..slots.tasks.len())
            .map(|i| match slots.tasks[i] {
                Some(t) => json!({"id": i, "is_processing": false, "id_task": t}),
                None => json!({"id": i, "is_processing": false}),
            })
            .collect();
        return Some(simple(wr, 200, &[], &Value::Array(list)).await);
    }
    let rest = path.strip_prefix("/slots/")?;
    if method != "POST" {
        return None;
    }
    if !slots.save {
        let err = json!({"error": {"code": 501, "type": "not_supported_error",
            "message": "This server does not support slots action. Start it with `--slot-save-path`"}});
        return Some(simple(wr, 501, &[], &err).await);
    }
    let (id, action) = rest.split_once("?action=")?;
    let name = body
        .get("filename")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    let ok = json!({"id_slot": id.parse::<u64>().unwrap_or(0), "filename": name});
    Some(match action {
        "save" => {
            if let Some(s) = lock(state).slots.as_mut() {
                s.files.insert(name);
            }
            simple(wr, 200, &[], &ok).await
        }
        "restore" if slots.files.contains(&name) => simple(wr, 200, &[], &ok).await,
        _ => {
            let err = json!({"error": {"code": 400, "type": "invalid_request_error",
                "message": "failed to restore slot"}});
            simple(wr, 400, &[], &err).await
        }
    })
}
