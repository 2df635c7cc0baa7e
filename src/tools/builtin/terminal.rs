//! `terminal`: runs one shell command line with `sh -c`.
//!
//! Invariants: the allow-list ([`crate::tools::shell_check`]) is checked on the
//! whole command line before anything starts; the child runs in its own
//! process group in the work dir (or `cwd`), with stdin from /dev/null; the
//! group is killed on cancel, on timeout, and when the command finishes
//! (background jobs do not outlive the call). Every call needs approval.
//! Under ACP, a command runs in the editor's terminal instead when it
//! offers terminals ([`crate::tools::client_exec`]; `[sandbox].client_terminals
//! = false` keeps it local); a sandboxed call runs there under
//! `navi __sandbox-exec` ([`crate::tools::sandbox_exec`]), never unconfined.
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
            && cfg.sandbox.client_terminals
        {
            // The editor's terminal (ACP), shown live in the call; a
            // sandboxed call runs there under `navi __sandbox-exec`, in the
            // same sandbox as a local run.
            let shell = vec!["sh".to_string(), "-c".into(), command.to_string()];
            let (program, args, spec) = match &policy {
                None => ("sh".to_string(), shell[1..].to_vec(), None),
                Some(p) => {
                    let spec = crate::tools::sandbox_exec::ExecSpec {
                        policy: p.clone(),
                        env_passthrough: cfg.security.env_passthrough.clone(),
                        drop_bash_funcs: !list.allows_everything(),
                        pid_file: None,
                    };
                    wrapped(&ctx.env.paths, spec, shell)?
                }
            };
            let cmd = crate::tools::client::ClientCommand {
                call_id: ctx.call_id.clone(),
                program,
                args,
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
            let result =
                crate::tools::client_exec::run(&*client, cmd, &ctx.cancel, shown, policy.as_ref())
                    .await;
            if let Some(spec) = spec {
                let _ = std::fs::remove_file(&spec);
                crate::tools::sandbox_exec::end_leftovers(&spec.with_extension("pid"));
            }
            let result =
                result.map_err(|e| format!("the editor could not run the command: {e}"))?;
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

/// The editor's command for a sandboxed call: this navi binary with
/// `__sandbox-exec --policy FILE -- sh -c CMD`, and the spec file to remove
/// once the command ended.
fn wrapped(
    paths: &crate::config::Paths,
    mut spec: crate::tools::sandbox_exec::ExecSpec,
    shell: Vec<String>,
) -> Result<(String, Vec<String>, Option<std::path::PathBuf>), ToolError> {
    use crate::tools::sandbox_exec as se;
    let exe = std::env::current_exe()
        .map_err(|e| ToolError::failed(format!("cannot find navi's own program: {e}")))?;
    let dir = se::spec_dir(paths);
    let file = se::write_spec(&dir, &mut spec)
        .map_err(|e| ToolError::failed(format!("cannot write the sandbox policy file: {e}")))?;
    let mut args = vec![
        se::SUBCOMMAND.to_string(),
        "--policy".into(),
        file.to_string_lossy().into_owned(),
        "--".into(),
    ];
    args.extend(shell);
    Ok((exe.to_string_lossy().into_owned(), args, Some(file)))
}
