//! `scratchpad`: per-session named sections of working notes.
//!
//! A pad belongs to the session ([`crate::tools::SessionTools`], persisted
//! in its state) and a slot: `scratchpad` for the session itself,
//! `scratchpad:<subagent id>` for each subagent, so subagents never see each
//! other's notes.
use crate::tools::{ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;

/// The slot of the pad a call uses.
pub(crate) fn pad_of(ctx: &ToolContext) -> String {
    match &ctx.parent_session_id {
        Some(_) => format!("scratchpad:{}", ctx.session_id),
        None => "scratchpad".to_string(),
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

    fn describe(&self, a: &ScratchpadArgs, _base: &std::path::Path) -> crate::protocol::CallInfo {
        crate::protocol::CallInfo::titled(
            crate::protocol::CallKind::Think,
            "scratchpad",
            a.section.as_deref(),
        )
    }

    async fn run(&self, a: ScratchpadArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let board = &ctx.session;
        let slot = pad_of(ctx);
        let slot = slot.as_str();
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
                board.update_pad(slot, |pad| {
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
                let len = board.pad(slot).get(&name).map(String::len).unwrap_or(0);
                Ok(format!("section '{name}' now has {len} characters").into())
            }
            PadAction::Read => {
                let pad = board.pad(slot);
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
                board.update_pad(slot, |pad| match &name {
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
