//! `todo`: a per-session checklist. Statuses: pending, in_progress, done,
//! failed, skipped. With step validation on, `done` needs a `validation` note.
//!
//! The list belongs to the session ([`crate::tools::SessionTools`]): a
//! subagent works on its parent session's list, and the list survives a
//! restart and `/session resume`.
use crate::protocol::{AgentEvent, TodoItem, TodoStatus};
use crate::tools::{ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;

/// The statuses' wire names, in order.
pub(crate) fn statuses() -> Vec<&'static str> {
    TodoStatus::ALL.iter().map(|s| s.as_str()).collect()
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

    fn describe(&self, _a: &TodoArgs, _base: &std::path::Path) -> crate::protocol::CallInfo {
        crate::protocol::CallInfo::titled(crate::protocol::CallKind::Think, "todo", None)
    }

    async fn run(&self, a: TodoArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let board = &ctx.session;
        let result = match a.action {
            TodoAction::Read => return Ok(render(&board.todos()).into()),
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
                    board.set_todo_texts(items);
                } else {
                    let mut list = board.todos();
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
                    board.set_todos(list);
                }
                ToolOutput::new(render(&board.todos()))
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
                let mut list = board.todos();
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
                board.set_todos(list);
                ToolOutput::new(render(&board.todos()))
            }
        };
        ctx.events
            .emit(AgentEvent::TodoUpdated {
                items: board.todos(),
            })
            .await;
        Ok(result)
    }
}
