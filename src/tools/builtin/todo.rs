//! `todo`: a per-session checklist. Statuses: pending, in_progress, done,
//! failed, skipped. With step validation on, `done` needs a `validation` note.
use crate::protocol::{AgentEvent, TodoItem, TodoStatus};
use crate::session::SessionStore;
use crate::tools::{ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::collections::HashMap;
use std::sync::{Arc, Mutex, OnceLock};

/// The statuses' wire names, in order.
pub(crate) fn statuses() -> Vec<&'static str> {
    TodoStatus::ALL.iter().map(|s| s.as_str()).collect()
}

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
    pub(crate) fn attach(&self, store: Arc<SessionStore>) {
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

    /// Drops the cached list of a closed session (it stays stored).
    pub(crate) fn forget(&self, session: &str) {
        if let Ok(mut m) = self.lists.lock() {
            m.remove(session);
        }
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
}

pub(crate) fn render(items: &[TodoItem]) -> String {
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

pub(crate) struct TodoTool;

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

#[derive(Clone, Copy, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum TodoAction {
    Set,
    Add,
    Update,
    Read,
}

// The schema of `protocol::TodoStatus`, which the arguments deserialise
// into (no doc comment: it would be sent to the model).
#[derive(JsonSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)]
enum StatusSchema {
    Pending,
    InProgress,
    Done,
    Failed,
    Skipped,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct TodoArgs {
    action: TodoAction,
    // Task strings, or `{text, executor}` objects (what a plan hands over);
    // checked by `parse_items` so each bad item is named.
    #[schemars(with = "Option<Vec<String>>")]
    items: Option<Value>,
    id: Option<u64>,
    #[schemars(with = "Option<StatusSchema>")]
    status: Option<TodoStatus>,
    /// how you checked the step is done
    validation: Option<String>,
}

#[async_trait::async_trait]
impl TypedTool for TodoTool {
    type Args = TodoArgs;

    fn name(&self) -> &str {
        "todo"
    }

    fn description(&self) -> &str {
        "Task checklist: set or add 'items'; update item 'id' to a 'status' with 'validation' evidence; read."
    }

    async fn run(&self, a: TodoArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let board = &ctx.env.todos;
        let session = ctx.state_session();
        let result = match a.action {
            TodoAction::Read => return Ok(render(&board.get(session)).into()),
            TodoAction::Set | TodoAction::Add => {
                let items = match a.items.as_ref().map(Self::parse_items) {
                    Some(Ok(items)) if !items.is_empty() => items,
                    Some(Err(e)) => return Err(ToolError::args(e)),
                    _ => {
                        return Err(ToolError::args(
                            "action 'set'/'add' needs a non-empty 'items' list",
                        ));
                    }
                };
                if a.action == TodoAction::Set {
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
                ToolOutput::new(render(&board.get(session)))
            }
            TodoAction::Update => {
                let Some(id) = a.id.map(|id| id as u32) else {
                    return Err(ToolError::args("action 'update' needs 'id'"));
                };
                let Some(status) = a.status else {
                    return Err(ToolError::missing(
                        "status",
                        &format!("one of {}", statuses().join(", ")),
                    ));
                };
                let validation = a
                    .validation
                    .as_deref()
                    .map(str::trim)
                    .filter(|s| !s.is_empty());
                if status == TodoStatus::Done && ctx.step_validation && validation.is_none() {
                    return Err(ToolError::failed(format!(
                        "step {id} not marked done: step validation is on, so say in 'validation' how you verified the result (command output, file checked, test passed), then update again"
                    )));
                }
                let mut list = board.get(session);
                let Some(item) = list.iter_mut().find(|i| i.id == id) else {
                    return Err(ToolError::failed(format!(
                        "no todo item {id}; the list has {} items",
                        list.len()
                    )));
                };
                item.status = status;
                if let Some(v) = validation {
                    item.validation = Some(v.to_string());
                }
                board.set(session, list);
                ToolOutput::new(render(&board.get(session)))
            }
        };
        ctx.events
            .emit(AgentEvent::TodoUpdated {
                items: board.get(session),
            })
            .await;
        Ok(result)
    }
}
