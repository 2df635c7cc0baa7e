//! `load_tools`: tools on demand. A profile offers a small core of tools
//! with their full schemas; every other tool it may use (built-in, user
//! tools, MCP servers) is named in this tool's description with one line,
//! and its schema reaches the model only once it is loaded. The agent loop
//! reads a successful call's `loaded` metadata and adds those schemas to
//! every later request of the session (`agent::on_demand`).
//!
//! A name may also be an MCP server's name, which loads all of its tools.
use crate::tools::{ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;

pub(crate) const NAME: &str = "load_tools";

pub(crate) struct LoadToolsTool;

// `names`: the tools (or MCP servers) to load.
#[derive(Deserialize, JsonSchema)]
pub(crate) struct LoadArgs {
    names: Vec<String>,
}

/// The tools of `all` that `name` stands for: the tool itself, or every
/// tool of the MCP server `name` (registered as `<server>__<tool>`).
pub(crate) fn expand<'a>(name: &str, all: impl Iterator<Item = &'a str>) -> Vec<String> {
    let name = name.trim();
    let prefix = format!("{name}__");
    let mut out = Vec::new();
    for n in all {
        if n == name || n.starts_with(&prefix) {
            out.push(n.to_string());
        }
    }
    out
}

#[async_trait::async_trait]
impl TypedTool for LoadToolsTool {
    type Args = LoadArgs;

    fn name(&self) -> &str {
        NAME
    }

    fn description(&self) -> &str {
        "Load more tools by name before using them."
    }

    async fn run(&self, a: LoadArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        if a.names.iter().all(|n| n.trim().is_empty()) {
            return Err(ToolError::empty("names"));
        }
        let known = || {
            ctx.tool_list
                .iter()
                .map(|t| t.name.as_str())
                .filter(|n| *n != NAME)
        };
        let mut loaded: Vec<String> = Vec::new();
        let mut unknown: Vec<&str> = Vec::new();
        for n in a.names.iter().filter(|n| !n.trim().is_empty()) {
            let found = expand(n, known());
            if found.is_empty() {
                unknown.push(n.trim());
            }
            for f in found {
                if !loaded.contains(&f) {
                    loaded.push(f);
                }
            }
        }
        if loaded.is_empty() {
            let names: Vec<&str> = known().collect();
            return Err(ToolError::args(format!(
                "no tool named {}; you can load: {}",
                unknown.join(", "),
                names.join(", ")
            )));
        }
        let mut text = format!(
            "Loaded: {}. Call them now with their own arguments.",
            loaded.join(", ")
        );
        if !unknown.is_empty() {
            text.push_str(&format!(" Not found: {}.", unknown.join(", ")));
        }
        Ok(ToolOutput::new(text).with_meta("loaded", json!(loaded)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_name_loads_all_its_tools() {
        let all = ["terminal", "time__now", "time__convert", "timer"];
        assert_eq!(
            expand("time", all.into_iter()),
            ["time__now", "time__convert"]
        );
        assert_eq!(expand(" terminal ", all.into_iter()), ["terminal"]);
        assert!(expand("nope", all.into_iter()).is_empty());
    }
}
