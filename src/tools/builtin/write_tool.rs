//! `write_tool`: the agent extends itself. Writes a script and its manifest
//! into the user tools directory (atomically), enables it, and reloads.
use super::reload_tools::reload;
use crate::tools::user::{ENABLED_FILE, Manifest, tools_dir, valid_name};
use crate::tools::{ToolContext, ToolError, ToolOutput, ToolRegistry, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::path::Path;
use std::sync::{RwLock, Weak};

pub struct WriteToolTool {
    pub registry: Weak<RwLock<ToolRegistry>>,
}

// The interpreters a user tool may run with (`python` means `python3`). No
// doc comment: it would become a description the model is sent.
#[derive(Clone, Copy, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub(crate) enum Interpreter {
    #[serde(rename = "python3", alias = "python")]
    Python3,
    Bash,
    Sh,
    Node,
}

impl Interpreter {
    /// The program to run and the script file's extension.
    fn program(self) -> (&'static str, &'static str) {
        match self {
            Interpreter::Python3 => ("python3", "py"),
            Interpreter::Bash => ("bash", "sh"),
            Interpreter::Sh => ("sh", "sh"),
            Interpreter::Node => ("node", "js"),
        }
    }
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct WriteToolArgs {
    name: String,
    description: String,
    /// JSON schema of the arguments
    parameters: Option<Map<String, Value>>,
    script: String,
    interpreter: Option<Interpreter>,
    timeout_secs: Option<u64>,
}

fn write_atomic(path: &Path, content: &str) -> std::io::Result<()> {
    let tmp = path.with_extension("navi-tmp");
    std::fs::write(&tmp, content)?;
    std::fs::rename(&tmp, path)
}

#[async_trait::async_trait]
impl TypedTool for WriteToolTool {
    type Args = WriteToolArgs;

    fn name(&self) -> &str {
        "write_tool"
    }

    fn description(&self) -> &str {
        "Create or replace a user tool (script: JSON args on stdin, result on stdout). Read tool_manual('write_tool') first."
    }

    fn approval(&self, a: &WriteToolArgs) -> Option<String> {
        let lines = a.script.lines().count();
        let (interp, _) = a.interpreter.unwrap_or(Interpreter::Python3).program();
        Some(format!(
            "write user tool '{}' ({lines} lines of {interp}) and enable it for every profile",
            a.name
        ))
    }

    fn describe(&self, a: &WriteToolArgs, _base: &std::path::Path) -> crate::protocol::CallInfo {
        crate::protocol::CallInfo::titled(
            crate::protocol::CallKind::Edit,
            "write_tool",
            Some(&a.name),
        )
    }

    async fn run(&self, a: WriteToolArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let name = a.name.trim().to_string();
        let description = a.description.trim().to_string();
        let script = a.script;
        if !valid_name(&name) {
            return Err(ToolError::args(format!(
                "invalid name {name:?}: use 2–48 lowercase letters, digits and _"
            )));
        }
        if self
            .registry
            .upgrade()
            .and_then(|r| r.read().ok().map(|g| g.is_builtin(&name)))
            .unwrap_or(false)
        {
            return Err(ToolError::args(format!(
                "'{name}' is a built-in tool; pick another name"
            )));
        }
        let (program, ext) = a.interpreter.unwrap_or(Interpreter::Python3).program();
        let parameters = a
            .parameters
            .map(Value::Object)
            .unwrap_or_else(|| json!({"type": "object", "properties": {}}));
        let timeout_secs = a.timeout_secs;
        let script_file = format!("{name}.{ext}");
        let manifest = Manifest {
            name: name.clone(),
            description,
            parameters,
            command: vec![program.into(), script_file.clone()],
            timeout_secs,
        };
        manifest.validate().map_err(ToolError::args)?;
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
            return Err(format!("cannot write the tool into {}: {e}", dir.display()).into());
        }
        let summary = reload(&self.registry, ctx)?;
        Ok(format!(
            "wrote {} and {name}.json\n{summary}",
            dir.join(&script_file).display()
        )
        .into())
    }
}
