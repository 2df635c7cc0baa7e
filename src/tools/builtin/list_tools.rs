//! `list_tools`: the tools the calling agent has right now, with their
//! descriptions — read live from `ToolContext::tool_list`, so it always
//! matches what the model can call (profile filters and reloads included).
use crate::tools::{ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

pub struct ListToolsTool;

/// `list_tools` takes no arguments.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct NoArgs {}

#[async_trait::async_trait]
impl TypedTool for ListToolsTool {
    type Args = NoArgs;

    fn name(&self) -> &str {
        "list_tools"
    }

    fn description(&self) -> &str {
        "List the tools you can use now, one line each."
    }

    fn describe(&self, _a: &NoArgs, _base: &std::path::Path) -> crate::protocol::CallInfo {
        crate::protocol::CallInfo::titled(crate::protocol::CallKind::Search, "list_tools", None)
    }

    async fn run(&self, _a: NoArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if ctx.tool_list.is_empty() {
            return Ok("No tools are available.".into());
        }
        let mut out = format!("{} tools available:\n", ctx.tool_list.len());
        for t in ctx.tool_list.iter() {
            let params: Vec<String> = t
                .parameters
                .get("properties")
                .and_then(Value::as_object)
                .map(|p| p.keys().cloned().collect())
                .unwrap_or_default();
            out.push_str(&format!(
                "\n- {}({}): {}",
                t.name,
                params.join(", "),
                t.description
            ));
        }
        let names: Vec<&str> = ctx.tool_list.iter().map(|t| t.name.as_str()).collect();
        Ok(ToolOutput::new(out).with_meta("tools", json!(names)))
    }
}
