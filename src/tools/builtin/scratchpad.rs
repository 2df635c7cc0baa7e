//! `scratchpad`: per-session named sections of working notes.
use crate::session::SessionStore;
use crate::tools::{ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

/// Scratchpads: cached in memory, persisted in the session database once a
/// store is attached. A pad belongs to an owner session (`session_state` row)
/// and a slot: `scratchpad` for the session itself, `scratchpad:<subagent id>`
/// for each subagent, so subagents never see each other's notes.
#[derive(Default)]
pub(crate) struct ScratchBoard {
    pads: Mutex<HashMap<String, BTreeMap<String, String>>>,
    store: OnceLock<Arc<SessionStore>>,
}

impl ScratchBoard {
    /// Persists pads from now on (and loads them on first use).
    pub(crate) fn attach(&self, store: Arc<SessionStore>) {
        let _ = self.store.set(store);
    }

    /// Drops the cached pads of a closed session and of its subagents
    /// (they stay stored).
    pub(crate) fn forget(&self, owner: &str) {
        let prefix = format!("{owner}\u{0}");
        if let Ok(mut m) = self.pads.lock() {
            m.retain(|k, _| !k.starts_with(&prefix));
        }
    }

    fn cache_key(owner: &str, slot: &str) -> String {
        format!("{owner}\u{0}{slot}")
    }

    pub(crate) fn sections(&self, owner: &str, slot: &str) -> BTreeMap<String, String> {
        let key = Self::cache_key(owner, slot);
        if let Some(p) = self.pads.lock().ok().and_then(|m| m.get(&key).cloned()) {
            return p;
        }
        let loaded: BTreeMap<String, String> = self
            .store
            .get()
            .and_then(|s| s.get_state(owner, slot).ok().flatten())
            .and_then(|json| serde_json::from_str(&json).ok())
            .unwrap_or_default();
        if let Ok(mut m) = self.pads.lock() {
            m.entry(key).or_insert_with(|| loaded.clone());
        }
        loaded
    }

    fn update(&self, owner: &str, slot: &str, f: impl FnOnce(&mut BTreeMap<String, String>)) {
        let mut pad = self.sections(owner, slot);
        f(&mut pad);
        if let Some(store) = self.store.get()
            && let Ok(json) = serde_json::to_string(&pad)
            && let Err(e) = store.put_state(owner, slot, &json)
        {
            tracing::debug!("scratchpad {owner}/{slot} kept in memory only: {e}");
        }
        if let Ok(mut m) = self.pads.lock() {
            m.insert(Self::cache_key(owner, slot), pad);
        }
    }
}

/// (owner session, slot) of the pad a call uses.
pub(crate) fn pad_of(ctx: &ToolContext) -> (String, String) {
    match &ctx.parent_session_id {
        Some(parent) => (parent.clone(), format!("scratchpad:{}", ctx.session_id)),
        None => (ctx.session_id.clone(), "scratchpad".to_string()),
    }
}

pub(crate) struct ScratchpadTool;

#[derive(Clone, Copy, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum PadAction {
    Write,
    Append,
    Read,
    Clear,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct ScratchpadArgs {
    action: PadAction,
    section: Option<String>,
    content: Option<String>,
}

#[async_trait::async_trait]
impl TypedTool for ScratchpadTool {
    type Args = ScratchpadArgs;

    fn name(&self) -> &str {
        "scratchpad"
    }

    fn description(&self) -> &str {
        "Working notes in named sections: write, append, read or clear a section (all when omitted)."
    }

    async fn run(&self, a: ScratchpadArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let board = &ctx.env.scratch;
        let (owner, slot) = pad_of(ctx);
        let (owner, slot) = (owner.as_str(), slot.as_str());
        let action = a.action;
        let section = a
            .section
            .as_deref()
            .map(str::trim)
            .filter(|s| !s.is_empty());
        match action {
            PadAction::Write | PadAction::Append => {
                let content = a
                    .content
                    .ok_or_else(|| ToolError::missing("content", "a string"))?;
                let name = section.unwrap_or("notes").to_string();
                let append = action == PadAction::Append;
                board.update(owner, slot, |pad| {
                    let entry = pad.entry(name.clone()).or_default();
                    if append && !entry.is_empty() {
                        entry.push('\n');
                        entry.push_str(&content);
                    } else if append {
                        entry.push_str(&content);
                    } else {
                        *entry = content;
                    }
                });
                let len = board
                    .sections(owner, slot)
                    .get(&name)
                    .map(String::len)
                    .unwrap_or(0);
                Ok(format!("section '{name}' now has {len} characters").into())
            }
            PadAction::Read => {
                let pad = board.sections(owner, slot);
                Ok(match section {
                    Some(name) => match pad.get(name) {
                        Some(text) => format!("## {name}\n{text}").into(),
                        None => format!(
                            "section '{name}' is empty; sections: {}",
                            if pad.is_empty() {
                                "none".to_string()
                            } else {
                                pad.keys().cloned().collect::<Vec<_>>().join(", ")
                            }
                        )
                        .into(),
                    },
                    None if pad.is_empty() => "The scratchpad is empty.".into(),
                    None => pad
                        .iter()
                        .map(|(k, v)| format!("## {k}\n{v}"))
                        .collect::<Vec<_>>()
                        .join("\n\n")
                        .into(),
                })
            }
            PadAction::Clear => {
                let name = section.map(String::from);
                board.update(owner, slot, |pad| match &name {
                    Some(n) => {
                        pad.remove(n);
                    }
                    None => pad.clear(),
                });
                Ok(match section {
                    Some(n) => format!("section '{n}' cleared"),
                    None => "scratchpad cleared".to_string(),
                }
                .into())
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pads_persist_per_owner_and_slot() {
        let store = Arc::new(SessionStore::open_in_memory().unwrap());
        let s = store.create("developer").unwrap();
        let board = ScratchBoard::default();
        board.attach(store.clone());
        board.update(&s.id, "scratchpad", |p| {
            p.insert("notes".into(), "main".into());
        });
        board.update(&s.id, "scratchpad:subagent_a", |p| {
            p.insert("notes".into(), "from a".into());
        });
        // A fresh board (a restart) reads what was saved; slots stay apart.
        let again = ScratchBoard::default();
        again.attach(store);
        assert_eq!(again.sections(&s.id, "scratchpad")["notes"], "main");
        assert_eq!(
            again.sections(&s.id, "scratchpad:subagent_a")["notes"],
            "from a"
        );
        assert!(again.sections(&s.id, "scratchpad:subagent_b").is_empty());
        // An id that is no session (a subagent without a parent) still works, in memory.
        again.update("subagent_x", "scratchpad", |p| {
            p.insert("n".into(), "v".into());
        });
        assert_eq!(again.sections("subagent_x", "scratchpad")["n"], "v");
    }
}
