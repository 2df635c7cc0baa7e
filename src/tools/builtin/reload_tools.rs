//! `reload_tools`: re-reads the user tools directory without a restart.
use super::list_tools::NoArgs;
use crate::tools::user::{reload_into, tools_dir};
use crate::tools::{ToolContext, ToolError, ToolOutput, ToolRegistry, TypedTool};
use std::sync::{RwLock, Weak};

pub struct ReloadToolsTool {
    pub registry: Weak<RwLock<ToolRegistry>>,
}

/// Reloads and describes the result (shared with `write_tool`).
pub(crate) fn reload(
    registry: &Weak<RwLock<ToolRegistry>>,
    ctx: &ToolContext,
) -> Result<String, String> {
    let reg = registry
        .upgrade()
        .ok_or("the tool registry is gone (navi is shutting down)")?;
    let dir = tools_dir(&ctx.env);
    let mut guard = reg.write().map_err(|_| "the tool registry is unusable")?;
    let errors = reload_into(&mut guard, &dir);
    let names: Vec<String> = guard
        .names()
        .into_iter()
        .filter(|n| !guard.is_builtin(n))
        .collect();
    let enabled = guard.enabled_user();
    drop(guard);
    let mut out = format!(
        "user tools in {}: {}\nadded to every profile (enabled.json): {}",
        dir.display(),
        if names.is_empty() {
            "none".into()
        } else {
            names.join(", ")
        },
        if enabled.is_empty() {
            "none".into()
        } else {
            enabled.join(", ")
        }
    );
    if !errors.is_empty() {
        out.push_str(&format!("\nskipped:\n- {}", errors.join("\n- ")));
    }
    out.push_str("\nNew tools are offered from the next message on.");
    Ok(out)
}

#[async_trait::async_trait]
impl TypedTool for ReloadToolsTool {
    type Args = NoArgs;

    fn name(&self) -> &str {
        "reload_tools"
    }

    fn description(&self) -> &str {
        "Reload user tools from disk; lists what loaded and what failed."
    }

    async fn run(&self, _a: NoArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        Ok(reload(&self.registry, ctx)?.into())
    }
}
