//! Tools that need the agent itself: `spawn_agent` (a subagent for a bounded
//! subtask) and `switch_profile`. They hold a weak reference, so the agent
//! owning its tool registry is not a cycle.
use super::Agent;
use crate::tools::{Tool, ToolContext, ToolResult, args};
use serde_json::{Value, json};
use std::sync::Weak;

/// Subagents may spawn subagents down to this depth.
pub(crate) const MAX_DEPTH: u32 = 2;

pub(crate) struct SpawnAgentTool {
    pub(crate) agent: Weak<Agent>,
}

#[async_trait::async_trait]
impl Tool for SpawnAgentTool {
    fn name(&self) -> &str {
        crate::protocol::SPAWN_AGENT_TOOL
    }

    fn description(&self) -> &str {
        "Delegate a self-contained subtask to a helper agent; it sees only 'task', so include goal, paths and what to report."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "task": {"type": "string"},
                "profile_id": {"type": "string"}
            },
            "required": ["task"]
        })
    }

    async fn execute(&self, a: &Value, ctx: &ToolContext) -> ToolResult {
        let Some(agent) = self.agent.upgrade() else {
            return ToolResult::err("the agent is shutting down");
        };
        let task = match args::str_req(a, "task") {
            Ok(t) if !t.trim().is_empty() => t.to_string(),
            Ok(_) => {
                return ToolResult::err("argument 'task' is empty; describe the subtask in full");
            }
            Err(e) => return ToolResult::err(e),
        };
        let depth = ctx.origin.as_ref().map_or(0, |o| o.depth);
        if depth >= MAX_DEPTH {
            return ToolResult::err(format!(
                "helpers may not nest deeper than {MAX_DEPTH} levels; do this part yourself"
            ));
        }
        let parent_session = ctx
            .parent_session_id
            .clone()
            .unwrap_or_else(|| ctx.session_id.clone());
        let profile_id = match args::str_opt(a, "profile_id") {
            Ok(Some(p)) => p.to_string(),
            Ok(None) => match &ctx.origin {
                Some(o) => o.profile_id.clone(),
                None => agent
                    .store
                    .meta(&parent_session)
                    .ok()
                    .flatten()
                    .map(|m| m.profile_id)
                    .unwrap_or_else(|| agent.profiles.default_id()),
            },
            Err(e) => return ToolResult::err(e),
        };
        if agent.profiles.get(&profile_id).is_none() {
            return ToolResult::err(format!(
                "unknown profile '{profile_id}'; available: {}",
                agent.profiles.ids().join(", ")
            ));
        }
        match agent
            .run_ephemeral(
                &task,
                &profile_id,
                Some(&parent_session),
                depth + 1,
                &ctx.events,
                &ctx.cancel,
            )
            .await
        {
            Ok((text, true)) => ToolResult::ok(text),
            Ok((text, false)) if ctx.cancel.is_cancelled() => ToolResult {
                output: text,
                ..ToolResult::err("operation cancelled by user")
            },
            Ok((text, false)) => ToolResult {
                output: text,
                ..ToolResult::err(
                    "the helper stopped at its iteration limit; its report may be incomplete",
                )
            },
            Err(e) => ToolResult::err(format!("the helper failed: {e}")),
        }
    }
}

pub(crate) struct SwitchProfileTool {
    pub(crate) agent: Weak<Agent>,
}

#[async_trait::async_trait]
impl Tool for SwitchProfileTool {
    fn name(&self) -> &str {
        crate::protocol::SWITCH_PROFILE_TOOL
    }

    fn description(&self) -> &str {
        "Move this session to another profile when the topic has clearly changed."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "profile_id": {"type": "string"},
                "reason": {"type": "string"}
            },
            "required": ["profile_id"]
        })
    }

    async fn execute(&self, a: &Value, ctx: &ToolContext) -> ToolResult {
        let Some(agent) = self.agent.upgrade() else {
            return ToolResult::err("the agent is shutting down");
        };
        if ctx.origin.is_some() {
            return ToolResult::err("a helper agent cannot switch the session's profile");
        }
        let id = match args::str_req(a, "profile_id") {
            Ok(id) => id.trim().to_string(),
            Err(e) => return ToolResult::err(e),
        };
        let Some(p) = agent.profiles.get(&id) else {
            let list: Vec<String> = agent
                .profiles
                .all()
                .map(|p| format!("{} ({})", p.id, p.short_description))
                .collect();
            return ToolResult::err(format!(
                "unknown profile '{id}'; available: {}",
                list.join(", ")
            ));
        };
        match agent.store.set_profile(&ctx.session_id, &p.id) {
            Ok(()) => ToolResult::ok(format!(
                "switched to {} ({}); its instructions and tools apply from the next step",
                p.name, p.id
            )),
            Err(e) => ToolResult::err(format!("could not switch: {e}")),
        }
    }
}

/// Registers the agent-backed tools on the agent's own registry.
pub fn register(agent: &std::sync::Arc<Agent>) {
    if let Ok(mut reg) = agent.tools.write() {
        reg.register_builtin(std::sync::Arc::new(SpawnAgentTool {
            agent: std::sync::Arc::downgrade(agent),
        }));
        reg.register_builtin(std::sync::Arc::new(SwitchProfileTool {
            agent: std::sync::Arc::downgrade(agent),
        }));
    }
}
