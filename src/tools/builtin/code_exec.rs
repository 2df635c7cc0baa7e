//! `code_exec`: runs Python code in a subprocess.
//!
//! Invariants: the code goes to a fresh temp file in the session's own
//! working directory (`<data_dir>/sessions/<id>/code`), which is also the
//! child's cwd, so files a script writes persist between calls of one session
//! and never mix with another's; the child gets RLIMIT_AS / RLIMIT_CPU /
//! RLIMIT_FSIZE before exec, runs in its own process group, and the group is
//! killed on cancel, timeout and exit. The temp file is removed afterwards.
//! Every call needs approval.
use crate::tools::exec_report::report_capped;
use crate::tools::process::{self, Limits, RunSpec};
use crate::tools::{Tool, ToolContext, ToolResult, args};
use serde_json::{Value, json};
use std::time::Duration;

pub struct CodeExecTool;

const MB: u64 = 1024 * 1024;

#[async_trait::async_trait]
impl Tool for CodeExecTool {
    fn name(&self) -> &str {
        "code_exec"
    }

    fn description(&self) -> &str {
        "Run Python 3 code in a fresh process; returns exit code, stdout, stderr. print() results."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "code": {"type": "string"},
                "timeout_secs": {"type": "integer"}
            },
            "required": ["code"]
        })
    }

    fn approval_summary(&self, a: &Value) -> Option<String> {
        let code = a.get("code").and_then(Value::as_str).unwrap_or("");
        Some(format!("run Python code:\n{code}"))
    }

    async fn execute(&self, a: &Value, ctx: &ToolContext) -> ToolResult {
        let code = match args::str_req(a, "code") {
            Ok(c) if !c.trim().is_empty() => c,
            Ok(_) => return ToolResult::err("argument 'code' is empty"),
            Err(e) => return ToolResult::err(e),
        };
        let cfg = &ctx.env.config.tools;
        let max = cfg.code_exec_timeout_secs.max(1);
        let timeout = match args::u64_opt(a, "timeout_secs") {
            Ok(t) => Duration::from_secs(t.unwrap_or(max).clamp(1, max)),
            Err(e) => return ToolResult::err(e),
        };
        let dir = match ctx.env.session_dir(ctx.state_session(), "code") {
            Ok(d) => d,
            Err(e) => {
                return ToolResult::err(format!("cannot create the session code directory: {e}"));
            }
        };
        let script = dir.join(format!("_navi_{}.py", uuid::Uuid::new_v4().simple()));
        if let Err(e) = tokio::fs::write(&script, code).await {
            return ToolResult::err(format!("cannot write {}: {e}", script.display()));
        }
        let python = if cfg.python.trim().is_empty() {
            "python3"
        } else {
            cfg.python.trim()
        };
        let mut cmd = tokio::process::Command::new(python);
        cmd.arg("-u")
            .arg(&script)
            .current_dir(&dir)
            .env("PYTHONDONTWRITEBYTECODE", "1")
            .env("PYTHONUNBUFFERED", "1");
        let spec = RunSpec {
            timeout,
            output_limit: cfg.output_limit_bytes,
            kill_group_on_exit: true,
            limits: Some(Limits {
                address_space: (cfg.code_exec_memory_mb > 0).then(|| cfg.code_exec_memory_mb * MB),
                cpu_secs: Some(timeout.as_secs() + 5),
                file_size: (cfg.code_exec_file_size_mb > 0)
                    .then(|| cfg.code_exec_file_size_mb * MB),
            }),
            env_passthrough: ctx.env.config.security.env_passthrough.clone(),
        };
        let result = process::run(cmd, &spec, &ctx.cancel).await;
        let _ = tokio::fs::remove_file(&script).await;
        match result {
            Ok(outcome) => {
                report_capped(&outcome, "the Python process", timeout, cfg.max_line_bytes)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => ToolResult::err(format!(
                "Python interpreter '{python}' not found: install Python 3 (e.g. `apt-get install python3`) or set [tools].python to its path"
            )),
            Err(e) => ToolResult::err(format!("cannot start '{python}': {e}")),
        }
    }
}
