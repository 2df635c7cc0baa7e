//! `code_exec`: runs Python code in a subprocess.
//!
//! Invariants: the code goes to a fresh temp file in the session's own
//! working directory (`<data_dir>/sessions/<id>/code`), which is also the
//! child's cwd, so files a script writes persist between calls of one session
//! and never mix with another's; the child gets RLIMIT_AS / RLIMIT_CPU /
//! RLIMIT_FSIZE before exec, runs in its own process group, and the group is
//! killed on cancel, timeout and exit. The temp file is removed afterwards.
//! Every call needs approval.
use crate::tools::exec_report::{self, report_capped};
use crate::tools::process::{self, Limits, RunSpec};
use crate::tools::typed::from_result;
use crate::tools::{ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use std::time::Duration;

pub struct CodeExecTool;

const MB: u64 = 1024 * 1024;

#[derive(Deserialize, JsonSchema)]
pub(crate) struct CodeExecArgs {
    code: String,
    timeout_secs: Option<u64>,
    /// Only after a sandbox denial: "network" (sandboxed, with network) or
    /// "off" (outside the sandbox). The user is asked either way. Left out
    /// of the schema (it goes out with every request); the `[sandbox]` note
    /// of a denied call and the manual tell the model about it.
    #[schemars(skip)]
    sandbox: Option<String>,
}

#[async_trait::async_trait]
impl TypedTool for CodeExecTool {
    type Args = CodeExecArgs;

    fn name(&self) -> &str {
        "code_exec"
    }

    fn description(&self) -> &str {
        "Run Python 3 code in a fresh process; returns exit code, stdout, stderr. print() results."
    }

    fn approval(&self, a: &CodeExecArgs) -> Option<String> {
        Some(crate::sandbox::escalation_question(
            &format!("run Python code:\n{}", a.code),
            a.sandbox.as_deref(),
        ))
    }

    fn describe(&self, a: &CodeExecArgs, base: &std::path::Path) -> crate::protocol::CallInfo {
        let mut info = crate::protocol::CallInfo::titled(
            crate::protocol::CallKind::Execute,
            "code_exec",
            Some(&a.code),
        );
        info.command = Some("python3".into());
        info.cwd = Some(base.to_string_lossy().into_owned());
        info
    }

    async fn run(&self, a: CodeExecArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let code = a.code.as_str();
        if code.trim().is_empty() {
            return Err(ToolError::empty("code"));
        }
        let cfg = &ctx.env.config.tools;
        let max = cfg.code_exec_timeout_secs.max(1);
        let timeout = Duration::from_secs(a.timeout_secs.unwrap_or(max).clamp(1, max));
        let escalation = crate::sandbox::escalation(a.sandbox.as_deref())?;
        let policy = crate::tools::sandbox_policy::for_tool(&ctx.env, &ctx.session, escalation)?;
        let dir = ctx
            .env
            .session_dir(ctx.state_session(), "code")
            .map_err(|e| format!("cannot create the session code directory: {e}"))?;
        let script = dir.join(format!("_navi_{}.py", uuid::Uuid::new_v4().simple()));
        if let Err(e) = tokio::fs::write(&script, code).await {
            return Err(format!("cannot write {}: {e}", script.display()).into());
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
            sandbox: policy,
        };
        let result = process::run(cmd, &spec, &ctx.cancel).await;
        let _ = tokio::fs::remove_file(&script).await;
        match result {
            Ok(outcome) => {
                let mut result =
                    report_capped(&outcome, "the Python process", timeout, cfg.max_line_bytes);
                crate::tools::sandbox_denial::annotate(&mut result, &outcome, spec.sandbox.as_ref());
                result.display = Some(exec_report::display(&outcome, python, None, timeout));
                from_result(result)
            }
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(format!(
                "Python interpreter '{python}' not found: install Python 3 (e.g. `apt-get install python3`) or set [tools].python to its path"
            )
            .into()),
            Err(e) => Err(format!("cannot start '{python}': {e}").into()),
        }
    }
}
