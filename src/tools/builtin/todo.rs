//! `todo`: a per-session checklist. Statuses: pending, in_progress, done,
//! failed, skipped. With step validation on, `done` needs a `validation` note.
use crate::protocol::{AgentEvent, TodoItem, TodoStatus};
use crate::session::SessionStore;
use crate::tools::{Tool, ToolContext, ToolResult, args};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

pub const STATUSES: [&str; 5] = ["pending", "in_progress", "done", "failed", "skipped"];

/// All sessions' todo lists: cached in memory, persisted per session in the
/// session database (`session_state`, key `todo`) once a store is attached,
/// so a list survives a restart and `/session resume`.
#[derive(Default)]
pub struct TodoBoard {
    lists: Mutex<HashMap<String, Vec<TodoItem>>>,
    store: OnceLock<Arc<SessionStore>>,
}

const STATE_KEY: &str = "todo";

impl TodoBoard {
    /// Persists lists from now on (and loads them on first use).
    pub fn attach(&self, store: Arc<SessionStore>) {
        let _ = self.store.set(store);
    }

    pub fn get(&self, session: &str) -> Vec<TodoItem> {
        if let Some(items) = self.lists.lock().ok().and_then(|m| m.get(session).cloned()) {
            return items;
        }
        let loaded: Vec<TodoItem> = self
            .store
            .get()
            .and_then(|s| s.get_state(session, STATE_KEY).ok().flatten())
            .and_then(|json| serde_json::from_str(&json).ok())
            .unwrap_or_default();
        if let Ok(mut m) = self.lists.lock() {
            m.entry(session.to_string())
                .or_insert_with(|| loaded.clone());
        }
        loaded
    }

    pub fn set(&self, session: &str, items: Vec<TodoItem>) {
        if let Some(store) = self.store.get() {
            // Ids that are not sessions (a subagent without a parent session)
            // stay in memory only.
            if let Ok(json) = serde_json::to_string(&items)
                && let Err(e) = store.put_state(session, STATE_KEY, &json)
            {
                tracing::debug!("todo list of {session} kept in memory only: {e}");
            }
        }
        if let Ok(mut m) = self.lists.lock() {
            m.insert(session.to_string(), items);
        }
    }

    /// Replaces the list from plain texts (and optional executors).
    pub fn set_texts(&self, session: &str, texts: Vec<(String, Option<String>)>) -> Vec<TodoItem> {
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
        self.set(session, items.clone());
        items
    }

    /// How many items are finished (done, failed or skipped): progress measure.
    pub fn progress(&self, session: &str) -> usize {
        self.get(session)
            .iter()
            .filter(|i| i.status.is_finished())
            .count()
    }

    /// Ids of items currently marked failed.
    pub fn failed_ids(&self, session: &str) -> Vec<u32> {
        self.get(session)
            .iter()
            .filter(|i| i.status == TodoStatus::Failed)
            .map(|i| i.id)
            .collect()
    }

    /// Copies one session's list to another (subagent → parent hand-over).
    pub fn copy(&self, from: &str, to: &str) {
        let items = self.get(from);
        self.set(to, items);
    }
}

pub fn render(items: &[TodoItem]) -> String {
    if items.is_empty() {
        return "The todo list is empty.".into();
    }
    items
        .iter()
        .map(|i| {
            let mark = i.status.checkbox();
            let exec = i
                .executor
                .as_deref()
                .map(|e| format!(" ({e})"))
                .unwrap_or_default();
            format!("{mark} {}. {}{exec} — {}", i.id, i.text, i.status)
        })
        .collect::<Vec<_>>()
        .join("\n")
}

pub struct TodoTool;

impl TodoTool {
    fn parse_items(v: &Value) -> Result<Vec<(String, Option<String>)>, String> {
        let arr = v
            .as_array()
            .ok_or("argument 'items' must be a list of task strings")?;
        let mut out = Vec::new();
        for (i, item) in arr.iter().enumerate() {
            match item {
                Value::String(s) if !s.trim().is_empty() => out.push((s.trim().to_string(), None)),
                Value::Object(o) => {
                    let text = o
                        .get("text")
                        .and_then(Value::as_str)
                        .filter(|s| !s.trim().is_empty())
                        .ok_or(format!("item {} has no 'text'", i + 1))?;
                    let exec = o.get("executor").and_then(Value::as_str).map(String::from);
                    out.push((text.trim().to_string(), exec));
                }
                other => {
                    return Err(format!(
                        "item {} must be a non-empty string, got {other}",
                        i + 1
                    ));
                }
            }
        }
        Ok(out)
    }
}

#[async_trait::async_trait]
impl Tool for TodoTool {
    fn name(&self) -> &str {
        "todo"
    }

    fn description(&self) -> &str {
        "Task checklist: set or add 'items'; update item 'id' to a 'status' with 'validation' evidence; read."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "action": {"type": "string", "enum": ["set", "add", "update", "read"]},
                "items": {"type": "array", "items": {"type": "string"}},
                "id": {"type": "integer"},
                "status": {"type": "string", "enum": STATUSES},
                "validation": {"type": "string", "description": "how you checked the step is done"}
            },
            "required": ["action"]
        })
    }

    async fn execute(&self, a: &Value, ctx: &ToolContext) -> ToolResult {
        let board = &ctx.env.todos;
        let session = ctx.state_session();
        let action = match args::str_req(a, "action") {
            Ok(s) => s,
            Err(e) => return ToolResult::err(e),
        };
        let result = match action {
            "read" => return ToolResult::ok(render(&board.get(session))),
            "set" | "add" => {
                let items = match a.get("items").map(Self::parse_items) {
                    Some(Ok(items)) if !items.is_empty() => items,
                    Some(Err(e)) => return ToolResult::err(e),
                    _ => {
                        return ToolResult::err(
                            "action 'set'/'add' needs a non-empty 'items' list",
                        );
                    }
                };
                if action == "set" {
                    board.set_texts(session, items);
                } else {
                    let mut list = board.get(session);
                    let start = list.iter().map(|i| i.id).max().unwrap_or(0);
                    for (n, (text, executor)) in items.into_iter().enumerate() {
                        list.push(TodoItem {
                            id: start + n as u32 + 1,
                            text,
                            status: TodoStatus::Pending,
                            executor,
                            validation: None,
                        });
                    }
                    board.set(session, list);
                }
                ToolResult::ok(render(&board.get(session)))
            }
            "update" => {
                let id = match args::u64_opt(a, "id") {
                    Ok(Some(id)) => id as u32,
                    Ok(None) => return ToolResult::err("action 'update' needs 'id'"),
                    Err(e) => return ToolResult::err(e),
                };
                let status = match args::str_req(a, "status") {
                    Ok(s) if TodoStatus::parse(s).is_some() => {
                        TodoStatus::parse(s).unwrap_or_default()
                    }
                    Ok(s) => {
                        return ToolResult::err(format!(
                            "unknown status '{s}'; use one of {}",
                            STATUSES.join(", ")
                        ));
                    }
                    Err(e) => return ToolResult::err(e),
                };
                let validation = args::str_opt(a, "validation")
                    .ok()
                    .flatten()
                    .map(str::trim)
                    .filter(|s| !s.is_empty());
                if status == TodoStatus::Done && ctx.step_validation && validation.is_none() {
                    return ToolResult::err(format!(
                        "step {id} not marked done: step validation is on, so say in 'validation' how you verified the result (command output, file checked, test passed), then update again"
                    ));
                }
                let mut list = board.get(session);
                let Some(item) = list.iter_mut().find(|i| i.id == id) else {
                    return ToolResult::err(format!(
                        "no todo item {id}; the list has {} items",
                        list.len()
                    ));
                };
                item.status = status;
                if let Some(v) = validation {
                    item.validation = Some(v.to_string());
                }
                board.set(session, list);
                ToolResult::ok(render(&board.get(session)))
            }
            other => {
                return ToolResult::err(format!(
                    "unknown action '{other}'; use set, add, update or read"
                ));
            }
        };
        ctx.events
            .emit(AgentEvent::TodoUpdated {
                items: board.get(session),
            })
            .await;
        result
    }
}
