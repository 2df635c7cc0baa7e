//! The tool registry: name → tool, schemas for the model, and the one place a
//! call is executed (argument checks, approval, cancellation).
use super::{ApprovalGate, Tool, ToolContext, ToolResult, truncate_output};
use crate::llm::{ToolCall, ToolSchema};
use crate::protocol::CallInfo;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

/// How long a cancelled tool gets to clean up (kill its children) before the
/// registry stops waiting for it.
const CANCEL_GRACE: Duration = Duration::from_secs(3);
/// Hard cap on what any tool result may put into the context.
const RESULT_LIMIT: usize = 100_000;

#[derive(Clone, Default)]
pub struct ToolRegistry {
    tools: BTreeMap<String, Arc<dyn Tool>>,
    builtin: BTreeSet<String>,
    /// User tools added to every profile (`enabled.json`).
    enabled_user: Vec<String>,
    /// Tools from MCP servers (`<server>__<tool>`), kept across user-tool reloads.
    mcp: BTreeSet<String>,
}

impl ToolRegistry {
    pub fn new() -> Self {
        Self::default()
    }

    /// Registers a built-in tool (kept across user-tool reloads).
    pub fn register_builtin(&mut self, tool: Arc<dyn Tool>) {
        self.builtin.insert(tool.name().to_string());
        self.tools.insert(tool.name().to_string(), tool);
    }

    /// Registers a user tool; a built-in of the same name is never replaced.
    pub(crate) fn register_user(&mut self, tool: Arc<dyn Tool>) -> bool {
        if self.builtin.contains(tool.name()) || self.mcp.contains(tool.name()) {
            return false;
        }
        self.tools.insert(tool.name().to_string(), tool);
        true
    }

    /// Registers (or replaces) a tool from an MCP server. Refused when a
    /// built-in or user tool already has the name.
    pub(crate) fn register_mcp(&mut self, tool: Arc<dyn Tool>) -> Result<(), String> {
        let name = tool.name().to_string();
        if self.tools.contains_key(&name) && !self.mcp.contains(&name) {
            let kind = if self.builtin.contains(&name) {
                "built-in"
            } else {
                "user"
            };
            return Err(format!("its name {name} clashes with a {kind} tool"));
        }
        self.mcp.insert(name.clone());
        self.tools.insert(name, tool);
        Ok(())
    }

    /// Names of the registered MCP tools.
    #[cfg(test)]
    pub(crate) fn mcp_names(&self) -> Vec<String> {
        self.mcp.iter().cloned().collect()
    }

    /// Drops every user tool (before a reload).
    pub(crate) fn clear_user_tools(&mut self) {
        let (builtin, mcp) = (&self.builtin, &self.mcp);
        self.tools
            .retain(|name, _| builtin.contains(name) || mcp.contains(name));
    }

    pub(crate) fn set_enabled_user(&mut self, names: Vec<String>) {
        self.enabled_user = names;
    }

    /// User tools every profile gets, that are actually loaded.
    pub fn enabled_user(&self) -> Vec<String> {
        self.enabled_user
            .iter()
            .filter(|n| self.tools.contains_key(*n) && !self.builtin.contains(*n))
            .cloned()
            .collect()
    }

    pub fn get(&self, name: &str) -> Option<&Arc<dyn Tool>> {
        self.tools.get(name)
    }

    pub fn names(&self) -> Vec<String> {
        self.tools.keys().cloned().collect()
    }

    pub fn is_builtin(&self, name: &str) -> bool {
        self.builtin.contains(name)
    }

    /// Schemas of the named tools that exist, in the given order, no duplicates.
    pub fn schemas_for(&self, names: &[String]) -> Vec<ToolSchema> {
        let mut seen = BTreeSet::new();
        names
            .iter()
            .filter(|n| seen.insert(n.as_str()))
            .filter_map(|n| self.tools.get(n))
            .map(|t| t.schema())
            .collect()
    }

    /// What a live call is about, with an edited file's text before the
    /// call read now (off the async threads). An unknown tool is `other`.
    /// With a `client` that reads files, the old text is the editor's
    /// (an unsaved buffer included).
    pub(crate) async fn describe(
        &self,
        call: &ToolCall,
        base: &Path,
        client: Option<super::client::Client>,
    ) -> CallInfo {
        let Some(tool) = self.tools.get(&call.name) else {
            return CallInfo::other(&call.name);
        };
        let mut info = tool.describe(&call.arguments, base);
        if info.edit.is_none() {
            return info;
        }
        let appended = super::describe::appended(&info);
        let job = tokio::task::spawn_blocking(move || {
            super::describe::load_old_text(&mut info);
            info
        });
        let mut info = job.await.unwrap_or_else(|_| CallInfo::other(&call.name));
        if let Some(c) = client {
            super::client::old_text_from(&mut info, appended, &c).await;
        }
        info
    }

    /// What a stored call was about, for a replay: described from its
    /// arguments only (the file has moved on; an edit's note says so).
    pub(crate) fn describe_stored(&self, tool: &str, args: &Value, base: &Path) -> CallInfo {
        let Some(t) = self.tools.get(tool) else {
            return CallInfo::other(tool);
        };
        let mut info = t.describe(args, base);
        super::describe::mark_not_kept(&mut info);
        info
    }

    /// Runs one call. Never panics, never returns early without a result:
    /// unknown tools, bad arguments, denials and cancellation all become an
    /// error result the model can read.
    pub async fn execute(
        &self,
        call: &ToolCall,
        ctx: &ToolContext,
        gate: &ApprovalGate,
    ) -> ToolResult {
        let allowed: BTreeSet<&str> = ctx.tool_list.iter().map(|s| s.name.as_str()).collect();
        let tool = match self.tools.get(&call.name) {
            Some(t) if allowed.contains(call.name.as_str()) => t,
            _ => {
                let names: Vec<&str> = allowed.into_iter().collect();
                return ToolResult::err(format!(
                    "unknown tool '{}'; available tools: {}",
                    call.name,
                    names.join(", ")
                ));
            }
        };
        let args = match &call.arguments {
            Value::Object(_) => call.arguments.clone(),
            Value::Null => Value::Object(Default::default()),
            Value::String(raw) => {
                return ToolResult::err(format!(
                    "arguments for '{}' are not valid JSON: {}; send a JSON object matching the tool's schema",
                    call.name,
                    truncate_output(raw, 500)
                ));
            }
            other => {
                return ToolResult::err(format!(
                    "arguments for '{}' must be a JSON object, got {other}",
                    call.name
                ));
            }
        };
        if ctx.cancel.is_cancelled() {
            return ToolResult::err("operation cancelled by user");
        }
        if let Some(summary) = tool.approval_request(&args, ctx).await {
            let checked = match crate::sandbox::escalation_key(&call.name, &args) {
                Some(key) => {
                    gate.check_escalation(ctx, &call.name, &key, &summary, &args)
                        .await
                }
                None => gate.check(ctx, &call.name, &summary, &args).await,
            };
            if let Err(msg) = checked {
                return ToolResult::err(msg);
            }
        }
        let run = tool.execute(&args, ctx);
        let grace = async {
            ctx.cancel.cancelled().await;
            tokio::time::sleep(CANCEL_GRACE).await;
        };
        let mut result = tokio::select! {
            r = run => r,
            _ = grace => ToolResult::err("operation cancelled by user"),
        };
        let max_line = ctx.env.config.tools.max_line_bytes;
        if let std::borrow::Cow::Owned(capped) = super::cap_long_lines(&result.output, max_line) {
            result.output = capped;
        }
        if result.output.len() > RESULT_LIMIT {
            result.output = truncate_output(&result.output, RESULT_LIMIT);
        }
        result
    }
}
