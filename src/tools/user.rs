//! User tools: a JSON manifest plus a script, in the tools directory
//! (`[tools].dir`, relative paths resolved against the config dir).
//!
//! `<dir>/<name>.json`:
//! `{"name", "description", "parameters": {JSON schema}, "command": ["python3", "x.py"], "timeout_secs": 30}`.
//! The command runs in the tools directory with the arguments as JSON on
//! stdin; stdout is the result; a non-zero exit is a failure (stderr says
//! why). Files starting with `_` are ignored; `enabled.json` lists the user
//! tools added to every profile. One broken manifest never stops the others.
use super::process::{self, RunSpec};
use super::{Tool, ToolContext, ToolEnv, ToolResult};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub(crate) const ENABLED_FILE: &str = "enabled.json";
const DEFAULT_TIMEOUT: u64 = 60;
const MAX_TIMEOUT: u64 = 600;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Manifest {
    pub name: String,
    pub description: String,
    #[serde(default = "empty_schema")]
    pub parameters: Value,
    pub command: Vec<String>,
    #[serde(default)]
    pub timeout_secs: Option<u64>,
}

fn empty_schema() -> Value {
    serde_json::json!({"type": "object", "properties": {}})
}

/// The tools directory for this configuration.
pub(crate) fn tools_dir(env: &ToolEnv) -> PathBuf {
    let dir = PathBuf::from(&env.config.tools.dir);
    if dir.is_absolute() {
        dir
    } else {
        env.paths.config_dir.join(dir)
    }
}

/// Whether `name` is a usable tool name: lowercase, digits, `_`; 2–48 chars.
pub(crate) fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    (2..=48).contains(&name.len())
        && chars.next().is_some_and(|c| c.is_ascii_lowercase())
        && chars.all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
}

impl Manifest {
    /// Checks what serde cannot. The message names the key.
    pub(crate) fn validate(&self) -> Result<(), String> {
        if !valid_name(&self.name) {
            return Err(format!(
                "name {:?}: use 2–48 lowercase letters, digits and _",
                self.name
            ));
        }
        if self.description.trim().is_empty() {
            return Err("description: must say what the tool does and when to use it".into());
        }
        if self.parameters.get("type").and_then(Value::as_str) != Some("object") {
            return Err("parameters: must be a JSON schema with \"type\": \"object\"".into());
        }
        if self.command.is_empty() || self.command[0].trim().is_empty() {
            return Err(
                "command: must name the program to run, e.g. [\"python3\", \"my_tool.py\"]".into(),
            );
        }
        Ok(())
    }
}

/// A tool backed by a manifest and a script.
pub struct UserTool {
    pub manifest: Manifest,
    pub dir: PathBuf,
}

#[async_trait::async_trait]
impl Tool for UserTool {
    fn name(&self) -> &str {
        &self.manifest.name
    }

    fn description(&self) -> &str {
        &self.manifest.description
    }

    fn parameters(&self) -> Value {
        self.manifest.parameters.clone()
    }

    async fn execute(&self, args: &Value, ctx: &ToolContext) -> ToolResult {
        let timeout = Duration::from_secs(
            self.manifest
                .timeout_secs
                .unwrap_or(DEFAULT_TIMEOUT)
                .clamp(1, MAX_TIMEOUT),
        );
        let mut cmd = tokio::process::Command::new(&self.manifest.command[0]);
        cmd.args(&self.manifest.command[1..])
            .current_dir(&self.dir)
            .env("NAVI_SESSION_ID", ctx.state_session());
        let spec = RunSpec {
            timeout,
            output_limit: ctx.env.config.tools.output_limit_bytes,
            kill_group_on_exit: true,
            limits: None,
            env_passthrough: ctx.env.config.security.env_passthrough.clone(),
            sandbox: match crate::sandbox::Policy::for_tool(
                &ctx.env,
                &ctx.session,
                crate::sandbox::policy::Escalation::None,
            ) {
                Ok(p) => p,
                Err(e) => return ToolResult::err(e),
            },
        };
        let input = serde_json::to_vec(args).unwrap_or_default();
        let outcome = match process::run_with_input(cmd, &spec, Some(input), &ctx.cancel).await {
            Ok(o) => o,
            Err(e) => {
                return ToolResult::err(format!(
                    "cannot start user tool '{}' ({}): {e}; check \"command\" in {}",
                    self.manifest.name,
                    self.manifest.command.join(" "),
                    self.dir
                        .join(format!("{}.json", self.manifest.name))
                        .display()
                ));
            }
        };
        // Huge output is already cut to head + tail; very long lines are cut too.
        let max_line = ctx.env.config.tools.max_line_bytes;
        let stdout = super::cap_long_lines(&outcome.stdout.text(), max_line).into_owned();
        let stderr = super::cap_long_lines(&outcome.stderr.text(), max_line).into_owned();
        let mut result = self.result_of(&outcome, stdout, stderr, timeout);
        crate::sandbox::denial::annotate(&mut result, &outcome, spec.sandbox.as_ref());
        result
    }
}

impl UserTool {
    fn result_of(
        &self,
        outcome: &process::RunOutcome,
        stdout: String,
        stderr: String,
        timeout: Duration,
    ) -> ToolResult {
        match outcome.ending {
            process::Ending::Exited(0) => ToolResult::ok(stdout.trim_end().to_string()),
            process::Ending::Exited(code) => {
                let why = if stderr.trim().is_empty() {
                    stdout.trim()
                } else {
                    stderr.trim()
                };
                ToolResult::err(format!(
                    "user tool '{}' failed (exit {code}): {why}",
                    self.manifest.name
                ))
            }
            process::Ending::Signaled(s) => ToolResult::err(format!(
                "user tool '{}' was killed by signal {s}",
                self.manifest.name
            )),
            process::Ending::TimedOut => ToolResult::err(format!(
                "user tool '{}' timed out after {}s",
                self.manifest.name,
                timeout.as_secs()
            )),
            process::Ending::Cancelled => ToolResult::err("operation cancelled by user"),
        }
    }
}

/// What loading a directory produced.
#[derive(Default)]
pub struct LoadResult {
    pub tools: Vec<UserTool>,
    /// `file: why`, one per broken manifest.
    pub errors: Vec<String>,
    /// Names listed in `enabled.json`.
    pub(crate) enabled: Vec<String>,
}

/// Loads every manifest in `dir` (a missing dir is simply empty).
pub fn load_dir(dir: &Path) -> LoadResult {
    let mut out = LoadResult::default();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    let mut files: Vec<PathBuf> = entries.flatten().map(|e| e.path()).collect();
    files.sort();
    for path in files {
        let Some(file) = path.file_name().and_then(|n| n.to_str()) else {
            continue;
        };
        if file.starts_with('_') || file.starts_with('.') || !file.ends_with(".json") {
            continue;
        }
        if file == ENABLED_FILE {
            match std::fs::read_to_string(&path)
                .map_err(|e| e.to_string())
                .and_then(|t| serde_json::from_str::<Vec<String>>(&t).map_err(|e| e.to_string()))
            {
                Ok(names) => out.enabled = names,
                Err(e) => out.errors.push(format!(
                    "{}: must be a JSON list of tool names: {e}",
                    path.display()
                )),
            }
            continue;
        }
        let parsed = std::fs::read_to_string(&path)
            .map_err(|e| e.to_string())
            .and_then(|t| serde_json::from_str::<Manifest>(&t).map_err(|e| e.to_string()))
            .and_then(|m| m.validate().map(|_| m));
        match parsed {
            Ok(m) if format!("{}.json", m.name) != file => {
                out.errors.push(format!(
                    "{}: name {:?} must match the file name",
                    path.display(),
                    m.name
                ));
            }
            Ok(manifest) => out.tools.push(UserTool {
                manifest,
                dir: dir.to_path_buf(),
            }),
            Err(e) => out.errors.push(format!("{}: {e}", path.display())),
        }
    }
    out
}

/// (Re)loads user tools into `reg`; returns the load errors.
pub fn reload_into(reg: &mut super::ToolRegistry, dir: &Path) -> Vec<String> {
    let loaded = load_dir(dir);
    reg.clear_user_tools();
    let mut errors = loaded.errors;
    for t in loaded.tools {
        let name = t.manifest.name.clone();
        if !reg.register_user(std::sync::Arc::new(t)) {
            errors.push(format!(
                "{}: '{name}' is a built-in tool name; pick another",
                dir.join(format!("{name}.json")).display()
            ));
        }
    }
    for e in &errors {
        tracing::warn!("user tool skipped: {e}");
    }
    reg.set_enabled_user(loaded.enabled);
    errors
}
