//! One MCP tool as a Navi [`Tool`]: named `<server>__<tool>`, its JSON schema
//! checked before it is offered, risky (approval) unless the server marks it
//! read-only *and* the server's config trusts that (`trust_read_only`).
use super::McpHub;
use crate::tools::{Tool, ToolContext, ToolResult, truncate_output};
use serde_json::{Map, Value};
use std::sync::Weak;

/// Between the server name and the tool name.
pub(crate) const SEPARATOR: &str = "__";
/// Longest tool name the OpenAI-style APIs accept.
const NAME_MAX: usize = 64;

/// What Navi keeps of a listed tool.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ToolInfo {
    pub(crate) server: String,
    /// The server's own name for it (sent in `tools/call`).
    pub(crate) tool: String,
    /// `<server>__<tool>` (characters outside `[A-Za-z0-9_-]` become `_`).
    pub(crate) full_name: String,
    pub(crate) description: String,
    pub(crate) schema: Value,
    /// `readOnlyHint: true` and `trust_read_only`: runs without approval.
    pub(crate) read_only: bool,
}

/// The model-facing name of a server's tool, or why it cannot have one.
pub(crate) fn full_name(server: &str, tool: &str) -> Result<String, String> {
    let clean: String = tool
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    if clean.is_empty() {
        return Err("the tool has an empty name".into());
    }
    let name = format!("{server}{SEPARATOR}{clean}");
    if name.len() > NAME_MAX {
        return Err(format!(
            "{name} is longer than {NAME_MAX} characters; use a shorter server name"
        ));
    }
    Ok(name)
}

/// Checks that `schema` can describe a tool's arguments: an object schema
/// whose `properties` is an object of schemas and whose `required` lists
/// strings. Returns the schema with `"type": "object"` filled in.
pub(crate) fn check_schema(schema: &Value) -> Result<Value, String> {
    let Value::Object(obj) = schema else {
        return Err(format!("inputSchema must be a JSON object, got {schema}"));
    };
    let mut obj = obj.clone();
    match obj.get("type") {
        None => {
            obj.insert("type".into(), Value::String("object".into()));
        }
        Some(Value::String(t)) if t == "object" => {}
        Some(other) => {
            return Err(format!(
                "inputSchema \"type\" must be \"object\", got {other}"
            ));
        }
    }
    match obj.get("properties") {
        None => {
            obj.insert("properties".into(), Value::Object(Map::new()));
        }
        Some(Value::Object(props)) => {
            for (k, v) in props {
                if !(v.is_object() || v.is_boolean()) {
                    return Err(format!(
                        "inputSchema property {k:?} must be a schema object, got {v}"
                    ));
                }
                if let Some(t) = v.get("type")
                    && !(t.is_string() || t.is_array())
                {
                    return Err(format!(
                        "inputSchema property {k:?} has an invalid \"type\": {t}"
                    ));
                }
            }
        }
        Some(other) => {
            return Err(format!(
                "inputSchema \"properties\" must be an object, got {other}"
            ));
        }
    }
    if let Some(req) = obj.get("required")
        && !req
            .as_array()
            .is_some_and(|a| a.iter().all(Value::is_string))
    {
        return Err(format!(
            "inputSchema \"required\" must be a list of names, got {req}"
        ));
    }
    Ok(Value::Object(obj))
}

/// A tool from a server, callable by the agent.
pub(crate) struct McpTool {
    pub(crate) info: ToolInfo,
    pub(crate) hub: Weak<McpHub>,
}

#[async_trait::async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.info.full_name
    }

    fn description(&self) -> &str {
        &self.info.description
    }

    fn describe(&self, _args: &Value, _base: &std::path::Path) -> crate::protocol::CallInfo {
        let subject = format!("{} · {}", self.info.server, self.info.tool);
        crate::protocol::CallInfo {
            mcp: Some(crate::protocol::McpCall {
                server: self.info.server.clone(),
                tool: self.info.tool.clone(),
            }),
            ..crate::protocol::CallInfo::titled(
                crate::protocol::CallKind::Other,
                "mcp",
                Some(&subject),
            )
        }
    }

    fn parameters(&self) -> Value {
        self.info.schema.clone()
    }

    fn approval_summary(&self, args: &Value) -> Option<String> {
        if self.info.read_only {
            return None;
        }
        Some(format!(
            "MCP server '{}' tool '{}' with {}",
            self.info.server,
            self.info.tool,
            truncate_output(&args.to_string(), 400)
        ))
    }

    async fn execute(&self, args: &Value, ctx: &ToolContext) -> ToolResult {
        let Some(hub) = self.hub.upgrade() else {
            return ToolResult::err("the MCP client is shut down (navi is exiting)");
        };
        let args = args.as_object().cloned().unwrap_or_default();
        let progress = super::progress::ProgressSink {
            events: ctx.events.clone(),
            id: ctx.call_id.clone(),
            tool: self.info.full_name.clone(),
        };
        hub.call(
            &self.info.server,
            &self.info.tool,
            args,
            &ctx.cancel,
            Some(&progress),
        )
        .await
    }
}

/// Which of the ready MCP tools a profile gets. A profile that names no MCP
/// tool (nothing with `__` in its list) gets them all, like the user tools in
/// `enabled.json`; one that names any gets only those: exact names or
/// `<server>__*`.
pub(crate) fn select_for_profile(listed: &[String], available: &[String]) -> Vec<String> {
    let selectors: Vec<&String> = listed.iter().filter(|n| n.contains(SEPARATOR)).collect();
    if selectors.is_empty() {
        return available.to_vec();
    }
    available
        .iter()
        .filter(|name| {
            selectors.iter().any(|s| match s.strip_suffix('*') {
                Some(prefix) if prefix.ends_with(SEPARATOR) => name.starts_with(prefix),
                _ => s.as_str() == name.as_str(),
            })
        })
        .cloned()
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn names_are_prefixed_and_cleaned() {
        assert_eq!(full_name("fs", "read_file").unwrap(), "fs__read_file");
        assert_eq!(full_name("fs", "a.b/c").unwrap(), "fs__a_b_c");
        assert!(full_name("fs", "").is_err());
        assert!(full_name("fs", &"x".repeat(80)).is_err());
    }

    #[test]
    fn schemas_are_checked() {
        assert!(
            check_schema(&json!({"type":"object","properties":{"a":{"type":"string"}}})).is_ok()
        );
        assert_eq!(
            check_schema(&json!({})).unwrap(),
            json!({"type":"object","properties":{}})
        );
        for bad in [
            json!({"type": 42}),
            json!({"type":"array"}),
            json!({"type":"object","properties":"oops"}),
            json!({"type":"object","properties":{"a":5}}),
            json!({"type":"object","properties":{"a":{"type":7}}}),
            json!({"type":"object","required":"a"}),
            json!("schema"),
        ] {
            assert!(check_schema(&bad).is_err(), "{bad}");
        }
    }

    fn tool(full: &str) -> std::sync::Arc<McpTool> {
        std::sync::Arc::new(McpTool {
            info: ToolInfo {
                server: "s".into(),
                tool: "t".into(),
                full_name: full.into(),
                description: String::new(),
                schema: json!({"type": "object"}),
                read_only: false,
            },
            hub: Weak::new(),
        })
    }

    #[test]
    fn clashes_are_refused_and_mcp_tools_survive_user_reloads() {
        let mut reg = crate::tools::ToolRegistry::new();
        crate::tools::builtin::register_all(&mut reg);
        let err = reg.register_mcp(tool("todo")).unwrap_err();
        assert!(err.contains("clashes with a built-in tool"), "{err}");
        reg.register_mcp(tool("s__t")).unwrap();
        reg.register_mcp(tool("s__t")).unwrap(); // a restart re-registers
        reg.clear_user_tools();
        assert_eq!(reg.mcp_names(), vec!["s__t"]);
        assert!(reg.get("s__t").is_some());
        assert!(tool("s__t").approval_summary(&json!({"a": 1})).is_some());
    }

    #[test]
    fn profiles_select_by_name_or_server_wildcard() {
        let avail: Vec<String> = ["fs__read", "fs__write", "time__now"]
            .map(String::from)
            .to_vec();
        let s = |l: &[&str]| {
            select_for_profile(&l.iter().map(|x| x.to_string()).collect::<Vec<_>>(), &avail)
        };
        assert_eq!(s(&["terminal"]), avail);
        assert_eq!(s(&["terminal", "fs__*"]), vec!["fs__read", "fs__write"]);
        assert_eq!(s(&["time__now", "fs__read"]), vec!["fs__read", "time__now"]);
        assert_eq!(s(&["f__*"]), Vec::<String>::new());
    }
}
