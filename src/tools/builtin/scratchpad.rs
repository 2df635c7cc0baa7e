//! `scratchpad`: per-session named sections of working notes.
use crate::tools::{Tool, ToolContext, ToolResult, args};
use serde_json::{Value, json};
use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;

#[derive(Default)]
pub struct ScratchBoard {
    pads: Mutex<HashMap<String, BTreeMap<String, String>>>,
}

impl ScratchBoard {
    pub fn sections(&self, session: &str) -> BTreeMap<String, String> {
        self.pads
            .lock()
            .map(|m| m.get(session).cloned().unwrap_or_default())
            .unwrap_or_default()
    }

    fn update(&self, session: &str, f: impl FnOnce(&mut BTreeMap<String, String>)) {
        if let Ok(mut m) = self.pads.lock() {
            f(m.entry(session.to_string()).or_default());
        }
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
        // Subagents get their own scratchpad (their own session id).
        let session = ctx.session_id.as_str();
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
                board.update(session, |pad| {
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
                    .sections(session)
                    .get(&name)
                    .map(String::len)
                    .unwrap_or(0);
                ToolResult::ok(format!("section '{name}' now has {len} characters"))
            }
            "read" => {
                let pad = board.sections(session);
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
                board.update(session, |pad| match &name {
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
