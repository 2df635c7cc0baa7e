//! Tools that need the agent itself: `spawn_agent` (a subagent for a bounded
//! subtask) and `switch_profile`. They hold a weak reference, so the agent
//! owning its tool registry is not a cycle.
use super::Agent;
use crate::tools::{ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Weak;

/// Subagents may spawn subagents down to this depth.
pub(crate) const MAX_DEPTH: u32 = 2;

pub(crate) struct SpawnAgentTool {
    pub(crate) agent: Weak<Agent>,
}

// No doc comments on the fields: they would be sent to the model.
#[derive(Deserialize, JsonSchema)]
pub struct SpawnArgs {
    task: String,
    profile_id: Option<String>,
}

#[async_trait::async_trait]
impl TypedTool for SpawnAgentTool {
    type Args = SpawnArgs;

    fn name(&self) -> &str {
        crate::protocol::SPAWN_AGENT_TOOL
    }

    fn description(&self) -> &str {
        "Delegate a self-contained subtask to a helper agent; it sees only 'task', so include goal, paths and what to report."
    }

    fn describe(&self, a: &SpawnArgs, _base: &std::path::Path) -> crate::protocol::CallInfo {
        crate::protocol::CallInfo::titled(
            crate::protocol::CallKind::Other,
            crate::protocol::SPAWN_AGENT_TOOL,
            Some(&a.task),
        )
    }

    async fn run(&self, a: SpawnArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let Some(agent) = self.agent.upgrade() else {
            return Err(ToolError::failed("the agent is shutting down"));
        };
        if a.task.trim().is_empty() {
            return Err(ToolError::args(
                "argument 'task' is empty; describe the subtask in full",
            ));
        }
        let depth = ctx.origin.as_ref().map_or(0, |o| o.depth);
        if depth >= MAX_DEPTH {
            return Err(ToolError::failed(format!(
                "helpers may not nest deeper than {MAX_DEPTH} levels; do this part yourself"
            )));
        }
        let Some(parent) = ctx
            .owner
            .clone()
            .and_then(|o| o.downcast::<super::Session>().ok())
        else {
            return Err(ToolError::failed(
                "helpers run only inside a session's turn",
            ));
        };
        let profile_id = match a.profile_id {
            Some(p) => p,
            None => match &ctx.origin {
                Some(o) => o.profile_id.clone(),
                None => parent
                    .meta()
                    .map(|m| m.profile_id)
                    .unwrap_or_else(|| agent.profiles.default_id()),
            },
        };
        if let Err(e) = agent.profiles.check(&profile_id) {
            return Err(ToolError::failed(e.to_string()));
        }
        match agent
            .run_ephemeral(
                &a.task,
                &profile_id,
                &parent,
                depth + 1,
                &ctx.events,
                &ctx.cancel,
            )
            .await
        {
            Ok((text, true)) => Ok(ToolOutput::new(text)),
            Ok((text, false)) if ctx.cancel.is_cancelled() => {
                Err(ToolError::failed("operation cancelled by user").with_output(text))
            }
            Ok((text, false)) => Err(ToolError::failed(
                "the helper stopped at its iteration limit; its report may be incomplete",
            )
            .with_output(text)),
            Err(e) => Err(ToolError::failed(format!("the helper failed: {e}"))),
        }
    }
}

pub(crate) struct SwitchProfileTool {
    pub(crate) agent: Weak<Agent>,
}

#[derive(Deserialize, JsonSchema)]
pub struct SwitchArgs {
    profile_id: String,
    #[allow(dead_code)]
    reason: Option<String>,
}

#[async_trait::async_trait]
impl TypedTool for SwitchProfileTool {
    type Args = SwitchArgs;

    fn name(&self) -> &str {
        crate::protocol::SWITCH_PROFILE_TOOL
    }

    fn description(&self) -> &str {
        "Move this session to another profile when the topic has clearly changed."
    }

    fn describe(&self, a: &SwitchArgs, _base: &std::path::Path) -> crate::protocol::CallInfo {
        crate::protocol::CallInfo::titled(
            crate::protocol::CallKind::SwitchMode,
            crate::protocol::SWITCH_PROFILE_TOOL,
            Some(&a.profile_id),
        )
    }

    async fn run(&self, a: SwitchArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let Some(agent) = self.agent.upgrade() else {
            return Err(ToolError::failed("the agent is shutting down"));
        };
        if ctx.origin.is_some() {
            return Err(ToolError::failed(
                "a helper agent cannot switch the session's profile",
            ));
        }
        let id = a.profile_id.trim().to_string();
        let Some(p) = agent.profiles.get(&id) else {
            return Err(ToolError::failed(
                agent.profiles.unknown_described(&id).to_string(),
            ));
        };
        match agent.store.set_profile(&ctx.session_id, &p.id) {
            Ok(()) => Ok(ToolOutput::new(format!(
                "switched to {} ({}); its instructions and tools apply from the next step",
                p.name, p.id
            ))),
            Err(e) => Err(ToolError::failed(format!("could not switch: {e}"))),
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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schemas_are_the_small_inline_form_the_model_had_before() {
        assert_eq!(
            crate::tools::typed::args_schema::<SpawnArgs>(),
            json!({
                "type": "object",
                "properties": {
                    "task": {"type": "string"},
                    "profile_id": {"type": "string"}
                },
                "required": ["task"]
            })
        );
        assert_eq!(
            crate::tools::typed::args_schema::<SwitchArgs>(),
            json!({
                "type": "object",
                "properties": {
                    "profile_id": {"type": "string"},
                    "reason": {"type": "string"}
                },
                "required": ["profile_id"]
            })
        );
    }
}
