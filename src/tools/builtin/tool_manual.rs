//! `tool_manual`: the manual of one tool.
//!
//! Lookup order: the user's override `<config_dir>/manuals/<name>.md`, then
//! the copy embedded in the binary (`manuals/<name>.md`), then a manual
//! generated from the tool's JSON schema. Only tools in the caller's live
//! tool list are documented; the name is validated before it touches a path
//! (no traversal through `name`).
use crate::llm::ToolSchema;
use crate::tools::{ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Value, json};

pub struct ToolManualTool;

/// A manual written from the schema when no file exists.
pub(crate) fn generated_manual(t: &ToolSchema) -> String {
    let mut out = format!("# {}\n\n{}\n\n## Parameters\n\n", t.name, t.description);
    let required: Vec<&str> = t
        .parameters
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    match t.parameters.get("properties").and_then(Value::as_object) {
        Some(props) if !props.is_empty() => {
            for (name, p) in props {
                let ty = p
                    .get("type")
                    .map(|v| match v {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    })
                    .unwrap_or_else(|| "any".into());
                let req = if required.contains(&name.as_str()) {
                    "required"
                } else {
                    "optional"
                };
                out.push_str(&format!("- `{name}` ({ty}, {req})"));
                if let Some(d) = p.get("description").and_then(Value::as_str) {
                    out.push_str(&format!(": {d}"));
                }
                if let Some(e) = p.get("enum").and_then(Value::as_array) {
                    let vals: Vec<String> = e
                        .iter()
                        .map(|v| {
                            v.as_str()
                                .map(String::from)
                                .unwrap_or_else(|| v.to_string())
                        })
                        .collect();
                    out.push_str(&format!(" — one of: {}", vals.join(", ")));
                }
                out.push('\n');
            }
        }
        _ => out.push_str("This tool takes no parameters.\n"),
    }
    out.push_str(
        "\n(No written manual exists for this tool; this one was generated from its schema.)\n",
    );
    out
}

fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct ToolManualArgs {
    name: String,
}

#[async_trait::async_trait]
impl TypedTool for ToolManualTool {
    type Args = ToolManualArgs;

    fn name(&self) -> &str {
        "tool_manual"
    }

    fn description(&self) -> &str {
        "Read a tool's full manual: parameters, examples, limits."
    }

    async fn run(&self, a: ToolManualArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let name = a.name.trim();
        let schema = ctx.tool_list.iter().find(|t| t.name == name);
        let Some(schema) = schema.filter(|_| valid_name(name)) else {
            let names: Vec<&str> = ctx.tool_list.iter().map(|t| t.name.as_str()).collect();
            return Err(format!(
                "unknown tool '{name}'; available tools: {}",
                names.join(", ")
            )
            .into());
        };
        let rel = format!("manuals/{name}.md");
        let user = ctx.env.paths.config_dir.join(&rel);
        if let Ok(text) = tokio::fs::read_to_string(&user).await {
            return Ok(ToolOutput::new(text).with_meta("source", json!(user.display().to_string())));
        }
        if let Some(text) = crate::embedded::get(&rel) {
            return Ok(ToolOutput::new(text).with_meta("source", json!("embedded")));
        }
        Ok(ToolOutput::new(generated_manual(schema)).with_meta("source", json!("generated")))
    }
}
