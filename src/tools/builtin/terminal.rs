//! `terminal`: runs one shell command line with `sh -c`.
//!
//! Invariants: the allow-list ([`crate::tools::shell_check`]) is checked on the
//! whole command line before anything starts; the child runs in its own
//! process group in the work dir (or `cwd`), with stdin from /dev/null; the
//! group is killed on cancel, on timeout, and when the command finishes
//! (background jobs do not outlive the call). Every call needs approval.
use crate::tools::exec_report::report_capped;
use crate::tools::paths;
use crate::tools::process::{self, RunSpec};
use crate::tools::shell_check::{self, AllowList};
use crate::tools::{Tool, ToolContext, ToolResult, args};
use serde_json::{Value, json};
use std::time::Duration;

pub struct TerminalTool;

#[async_trait::async_trait]
impl Tool for TerminalTool {
    fn name(&self) -> &str {
        "terminal"
    }

    fn description(&self) -> &str {
        "Run a shell command (sh -c, no stdin); returns exit code, stdout, stderr."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "command": {"type": "string"},
                "cwd": {"type": "string"},
                "timeout_secs": {"type": "integer"}
            },
            "required": ["command"]
        })
    }

    fn approval_summary(&self, a: &Value) -> Option<String> {
        let cmd = a.get("command").and_then(Value::as_str).unwrap_or("");
        match a.get("cwd").and_then(Value::as_str) {
            Some(cwd) => Some(format!("run `{cmd}` in {cwd}")),
            None => Some(format!("run `{cmd}`")),
        }
    }

    async fn execute(&self, a: &Value, ctx: &ToolContext) -> ToolResult {
        let command = match args::str_req(a, "command") {
            Ok(c) if !c.trim().is_empty() => c,
            Ok(_) => return ToolResult::err("argument 'command' is empty"),
            Err(e) => return ToolResult::err(e),
        };
        let cfg = &ctx.env.config;
        let max = cfg.tools.terminal_timeout_secs.max(1);
        let timeout = match args::u64_opt(a, "timeout_secs") {
            Ok(t) => Duration::from_secs(t.unwrap_or(max).clamp(1, max)),
            Err(e) => return ToolResult::err(e),
        };
        let cwd = match args::str_opt(a, "cwd") {
            Ok(Some(c)) => paths::absolute(c, &ctx.env.work_dir),
            Ok(None) => ctx.env.work_dir.clone(),
            Err(e) => return ToolResult::err(e),
        };
        if !cwd.is_dir() {
            return ToolResult::err(format!(
                "working directory {} does not exist or is not a directory",
                cwd.display()
            ));
        }
        let list = AllowList::new(&cfg.security.terminal_allowed_commands)
            .with_file_redirects(cfg.security.terminal_allow_file_redirects);
        if let Err(why) = shell_check::check(command, &list) {
            return ToolResult::err(why);
        }
        let mut cmd = tokio::process::Command::new("sh");
        cmd.arg("-c").arg(command).current_dir(&cwd);
        if !list.allows_everything() {
            // Exported bash functions could shadow an allowed name.
            for (k, _) in std::env::vars_os() {
                if k.to_string_lossy().starts_with("BASH_FUNC_") {
                    cmd.env_remove(k);
                }
            }
        }
        let spec = RunSpec {
            timeout,
            output_limit: cfg.tools.output_limit_bytes,
            kill_group_on_exit: true,
            limits: None,
            env_passthrough: cfg.security.env_passthrough.clone(),
        };
        match process::run(cmd, &spec, &ctx.cancel).await {
            Ok(outcome) => {
                report_capped(&outcome, "the command", timeout, cfg.tools.max_line_bytes)
            }
            Err(e) => ToolResult::err(format!("cannot start sh: {e}")),
        }
    }
}
