//! `scratchpad`: per-session named sections of working notes.
use crate::session::SessionStore;
use crate::tools::{Tool, ToolContext, ToolResult, args};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, Mutex, OnceLock};

/// Scratchpads: cached in memory, persisted in the session database once a
/// store is attached. A pad belongs to an owner session (`session_state` row)
/// and a slot: `scratchpad` for the session itself, `scratchpad:<subagent id>`
/// for each subagent, so subagents never see each other's notes.
#[derive(Default)]
pub struct ScratchBoard {
    pads: Mutex<HashMap<String, BTreeMap<String, String>>>,
    store: OnceLock<Arc<SessionStore>>,
}

impl ScratchBoard {
    /// Persists pads from now on (and loads them on first use).
    pub fn attach(&self, store: Arc<SessionStore>) {
        let _ = self.store.set(store);
    }

    fn cache_key(owner: &str, slot: &str) -> String {
        format!("{owner}\u{0}{slot}")
    }

    pub fn sections(&self, owner: &str, slot: &str) -> BTreeMap<String, String> {
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
pub fn pad_of(ctx: &ToolContext) -> (String, String) {
    match &ctx.parent_session_id {
        Some(parent) => (parent.clone(), format!("scratchpad:{}", ctx.session_id)),
        None => (ctx.session_id.clone(), "scratchpad".to_string()),
    }
}

pub struct ScratchpadTool;

#[async_trait::async_trait]
impl Tool for ScratchpadTool {
    fn name(&self) -> &str {
        "scratchpad"
    }

    fn description(&self) -> &str {
        "Working notes in named sections: write, append, read or clear a section (all when omitted)."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["write", "append", "read", "clear"]},
                "section": {"type": "string"},
                "content": {"type": "string"}
            },
            "required": ["action"]
        })
    }

    async fn execute(&self, a: &Value, ctx: &ToolContext) -> ToolResult {
        let board = &ctx.env.scratch;
        // Subagents get their own scratchpad (their own slot).
        let (owner, slot) = pad_of(ctx);
        let (owner, slot) = (owner.as_str(), slot.as_str());
        let action = match args::str_req(a, "action") {
            Ok(s) => s,
            Err(e) => return ToolResult::err(e),
        };
        let section = match args::str_opt(a, "section") {
            Ok(s) => s.map(str::trim).filter(|s| !s.is_empty()),
            Err(e) => return ToolResult::err(e),
        };
        match action {
            "write" | "append" => {
                let content = match args::str_req(a, "content") {
                    Ok(c) => c.to_string(),
                    Err(e) => return ToolResult::err(e),
                };
                let name = section.unwrap_or("notes").to_string();
                let append = action == "append";
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
                ToolResult::ok(format!("section '{name}' now has {len} characters"))
            }
            "read" => {
                let pad = board.sections(owner, slot);
                match section {
                    Some(name) => match pad.get(name) {
                        Some(text) => ToolResult::ok(format!("## {name}\n{text}")),
                        None => ToolResult::ok(format!(
                            "section '{name}' is empty; sections: {}",
                            if pad.is_empty() {
                                "none".to_string()
                            } else {
                                pad.keys().cloned().collect::<Vec<_>>().join(", ")
                            }
                        )),
                    },
                    None if pad.is_empty() => ToolResult::ok("The scratchpad is empty."),
                    None => ToolResult::ok(
                        pad.iter()
                            .map(|(k, v)| format!("## {k}\n{v}"))
                            .collect::<Vec<_>>()
                            .join("\n\n"),
                    ),
                }
            }
            "clear" => {
                let name = section.map(String::from);
                board.update(owner, slot, |pad| match &name {
                    Some(n) => {
                        pad.remove(n);
                    }
                    None => pad.clear(),
                });
                ToolResult::ok(match section {
                    Some(n) => format!("section '{n}' cleared"),
                    None => "scratchpad cleared".into(),
                })
            }
            other => ToolResult::err(format!(
                "unknown action '{other}'; use write, append, read or clear"
            )),
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
