//! `terminal`: runs one shell command line with `sh -c`.
//!
//! Invariants: the allow-list ([`crate::tools::shell_check`]) is checked on the
//! whole command line before anything starts; the child runs in its own
//! process group in the work dir (or `cwd`), with stdin from /dev/null; the
//! group is killed on cancel, on timeout, and when the command finishes
//! (background jobs do not outlive the call). Every call needs approval.
//! Under ACP, a command may run in the editor's terminal instead
//! ([`crate::tools::client_exec`]): only when the sandbox would not confine
//! it anyway, or `[sandbox].client_terminals` says so.
use crate::tools::exec_report::{self, report_capped};
use crate::tools::paths;
use crate::tools::process::{self, RunSpec};
use crate::tools::shell_check::{self, AllowList};
use crate::tools::typed::from_result;
use crate::tools::{ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use std::time::Duration;

pub struct TerminalTool;

#[derive(Deserialize, JsonSchema)]
pub(crate) struct TerminalArgs {
    command: String,
    cwd: Option<String>,
    timeout_secs: Option<u64>,
    /// Only after a sandbox denial: "network" (sandboxed, with network) or
    /// "off" (outside the sandbox). The user is asked either way. Left out
    /// of the schema (it goes out with every request); the `[sandbox]` note
    /// of a denied call and the manual tell the model about it.
    #[schemars(skip)]
    sandbox: Option<String>,
}

#[async_trait::async_trait]
impl TypedTool for TerminalTool {
    type Args = TerminalArgs;

    fn name(&self) -> &str {
        "terminal"
    }

    fn description(&self) -> &str {
        "Run a shell command (sh -c, no stdin); returns exit code, stdout, stderr."
    }

    fn approval(&self, a: &TerminalArgs) -> Option<String> {
        let cmd = &a.command;
        let what = match &a.cwd {
            Some(cwd) => format!("run `{cmd}` in {cwd}"),
            None => format!("run `{cmd}`"),
        };
        Some(crate::sandbox::escalation_question(
            &what,
            a.sandbox.as_deref(),
        ))
    }

    fn describe(&self, a: &TerminalArgs, base: &std::path::Path) -> crate::protocol::CallInfo {
        let mut info = crate::protocol::CallInfo::titled(
            crate::protocol::CallKind::Execute,
            "terminal",
            Some(&a.command),
        );
        info.command = Some(a.command.clone());
        info.cwd = Some(match &a.cwd {
            Some(c) => crate::tools::describe::abs(c, base),
            None => base.to_string_lossy().into_owned(),
        });
        info
    }

    async fn run(&self, a: TerminalArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let command = a.command.as_str();
        if command.trim().is_empty() {
            return Err(ToolError::empty("command"));
        }
        let cfg = &ctx.env.config;
        let max = cfg.tools.terminal_timeout_secs.max(1);
        let timeout = Duration::from_secs(a.timeout_secs.unwrap_or(max).clamp(1, max));
        let cwd = match &a.cwd {
            Some(c) => paths::absolute(c, ctx.work_dir()),
            None => ctx.work_dir().to_path_buf(),
        };
        if !cwd.is_dir() {
            return Err(ToolError::failed(format!(
                "working directory {} does not exist or is not a directory",
                cwd.display()
            )));
        }
        let list = AllowList::new(&cfg.security.terminal_allowed_commands)
            .with_file_redirects(cfg.security.terminal_allow_file_redirects);
        shell_check::check(command, &list)?;
        let escalation = crate::sandbox::escalation(a.sandbox.as_deref())?;
        let policy = crate::tools::sandbox_policy::for_tool(&ctx.env, &ctx.session, escalation)?;
        if let Some(client) = ctx.client().filter(|c| c.terminals())
            && (policy.is_none() || (cfg.sandbox.client_terminals && !cfg.sandbox.is_required()))
        {
            // The editor's terminal (ACP), shown live in the call. It runs
            // outside navi's sandbox: only when the call would run
            // unsandboxed anyway, or the config says so.
            let cmd = crate::tools::client::ClientCommand {
                call_id: ctx.call_id.clone(),
                program: "sh".into(),
                args: vec!["-c".into(), command.to_string()],
                env: Vec::new(),
                cwd: cwd.clone(),
                output_limit: cfg.tools.output_limit_bytes as u64,
                timeout,
            };
            let shown = (
                command,
                cfg.tools.max_line_bytes,
                cfg.tools.output_limit_bytes,
            );
            let result = crate::tools::client_exec::run(&*client, cmd, &ctx.cancel, shown)
                .await
                .map_err(|e| format!("the editor could not run the command: {e}"))?;
            return from_result(result);
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
            sandbox: policy,
        };
        let outcome = process::run(cmd, &spec, &ctx.cancel)
            .await
            .map_err(|e| format!("cannot start sh: {e}"))?;
        let mut result = report_capped(&outcome, "the command", timeout, cfg.tools.max_line_bytes);
        crate::tools::sandbox_denial::annotate(&mut result, &outcome, spec.sandbox.as_ref());
        result.display = Some(exec_report::display(&outcome, command, None, timeout));
        from_result(result)
    }
}
