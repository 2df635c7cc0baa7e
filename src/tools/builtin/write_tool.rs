//! `write_tool`: the agent extends itself. Writes a script and its manifest
//! into the user tools directory (atomically), enables it, and reloads.
use super::reload_tools::reload;
use crate::tools::user::{ENABLED_FILE, Manifest, tools_dir, valid_name};
use crate::tools::{Tool, ToolContext, ToolRegistry, ToolResult, args};
use serde_json::{Value, json};
use std::path::Path;
use std::sync::{RwLock, Weak};

pub struct WriteToolTool {
    pub registry: Weak<RwLock<ToolRegistry>>,
}

fn interpreter(name: &str) -> Option<(&'static str, &'static str)> {
    match name {
        "python3" | "python" => Some(("python3", "py")),
        "bash" => Some(("bash", "sh")),
        "sh" => Some(("sh", "sh")),
        "node" => Some(("node", "js")),
        _ => None,
    }
}

fn write_atomic(path: &Path, content: &str) -> std::io::Result<()> {
    let tmp = path.with_extension("navi-tmp");
    std::fs::write(&tmp, content)?;
    std::fs::rename(&tmp, path)
}

#[async_trait::async_trait]
impl Tool for WriteToolTool {
    fn name(&self) -> &str {
        "write_tool"
    }

    fn description(&self) -> &str {
        "Create or replace a user tool (script: JSON args on stdin, result on stdout). Read tool_manual('write_tool') first."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "name": {"type": "string"},
                "description": {"type": "string"},
                "parameters": {"type": "object", "description": "JSON schema of the arguments"},
                "script": {"type": "string"},
                "interpreter": {"type": "string", "enum": ["python3", "bash", "sh", "node"]},
                "timeout_secs": {"type": "integer"}
            },
            "required": ["name", "description", "script"]
        })
    }

    fn approval_summary(&self, a: &Value) -> Option<String> {
        let name = a.get("name").and_then(Value::as_str).unwrap_or("?");
        let lines = a
            .get("script")
            .and_then(Value::as_str)
            .map_or(0, |s| s.lines().count());
        let interp = a
            .get("interpreter")
            .and_then(Value::as_str)
            .unwrap_or("python3");
        Some(format!(
            "write user tool '{name}' ({lines} lines of {interp}) and enable it for every profile"
        ))
    }

    async fn execute(&self, a: &Value, ctx: &ToolContext) -> ToolResult {
        let fields = (|| -> Result<(String, String, String, String), String> {
            Ok((
                args::str_req(a, "name")?.trim().to_string(),
                args::str_req(a, "description")?.trim().to_string(),
                args::str_req(a, "script")?.to_string(),
                args::str_opt(a, "interpreter")?
                    .unwrap_or("python3")
                    .to_string(),
            ))
        })();
        let (name, description, script, interp) = match fields {
            Ok(f) => f,
            Err(e) => return ToolResult::err(e),
        };
        if !valid_name(&name) {
            return ToolResult::err(format!(
                "invalid name {name:?}: use 2–48 lowercase letters, digits and _"
            ));
        }
        if self
            .registry
            .upgrade()
            .and_then(|r| r.read().ok().map(|g| g.is_builtin(&name)))
            .unwrap_or(false)
        {
            return ToolResult::err(format!("'{name}' is a built-in tool; pick another name"));
        }
        let Some((program, ext)) = interpreter(&interp) else {
            return ToolResult::err(format!(
                "unknown interpreter {interp:?}; use python3, bash, sh or node"
            ));
        };
        let parameters = a
            .get("parameters")
            .cloned()
            .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
        let timeout_secs = match args::u64_opt(a, "timeout_secs") {
            Ok(t) => t,
            Err(e) => return ToolResult::err(e),
        };
        let script_file = format!("{name}.{ext}");
        let manifest = Manifest {
            name: name.clone(),
            description,
            parameters,
            command: vec![program.into(), script_file.clone()],
            timeout_secs,
        };
        if let Err(e) = manifest.validate() {
            return ToolResult::err(e);
        }
        let dir = tools_dir(&ctx.env);
        let written = (|| -> std::io::Result<()> {
            std::fs::create_dir_all(&dir)?;
            write_atomic(&dir.join(&script_file), &script)?;
            let text = serde_json::to_string_pretty(&manifest).unwrap_or_default();
            write_atomic(&dir.join(format!("{name}.json")), &text)?;
            let enabled_path = dir.join(ENABLED_FILE);
            let mut enabled: Vec<String> = std::fs::read_to_string(&enabled_path)
                .ok()
                .and_then(|t| serde_json::from_str(&t).ok())
                .unwrap_or_default();
            if !enabled.contains(&name) {
                enabled.push(name.clone());
            }
            write_atomic(
                &enabled_path,
                &serde_json::to_string_pretty(&enabled).unwrap_or_default(),
            )
        })();
        if let Err(e) = written {
            return ToolResult::err(format!("cannot write the tool into {}: {e}", dir.display()));
        }
        match reload(&self.registry, ctx) {
            Ok(summary) => ToolResult::ok(format!(
                "wrote {} and {name}.json\n{summary}",
                dir.join(&script_file).display()
            )),
            Err(e) => ToolResult::err(e),
        }
    }
}
