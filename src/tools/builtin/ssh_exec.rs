//! `ssh_exec`: runs a command on a named host through the system OpenSSH
//! client.
//!
//! Invariants: only hosts named in `[security].ssh_hosts_file` are reachable
//! (the model gives a name, never a raw address); the file is re-read on every
//! call; `BatchMode=yes` (never a password prompt) and host keys are checked
//! against Navi's own `<data_dir>/known_hosts` with
//! `[security].ssh_host_key_checking`; connections are shared per session
//! through a ControlMaster socket keyed by the session id, and
//! [`close_session`] ends them; the local `ssh` runs in its own process
//! group, killed on cancel and timeout. Every call needs approval.
use crate::tools::exec_report::{self, report_capped};
use crate::tools::process::{self, RunSpec};
use crate::tools::ssh_hosts::{self, HostEntry};
use crate::tools::typed::from_result;
use crate::tools::{ToolContext, ToolEnv, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::json;
use std::path::{Path, PathBuf};
use std::time::Duration;
use tokio_util::sync::CancellationToken;

pub struct SshExecTool;

/// Seconds an idle master connection stays up.
const CONTROL_PERSIST_SECS: u64 = 300;

/// Quotes an `-o` value for ssh's own tokenizer when it has spaces.
fn opt_path(p: &Path) -> String {
    let s = p.display().to_string();
    if s.contains(char::is_whitespace) {
        format!("\"{s}\"")
    } else {
        s
    }
}

/// The `ssh` argument list for one command on one host.
pub(crate) fn ssh_args(
    env: &ToolEnv,
    session_id: &str,
    name: &str,
    h: &HostEntry,
    command: &str,
    connect_timeout: u64,
) -> Result<Vec<String>, String> {
    let checking = match env.config.security.ssh_host_key_checking.trim() {
        "accept-new" => "accept-new",
        _ => "yes",
    };
    let data_dir = &env.paths.data_dir;
    crate::private_fs::create_dir_all(data_dir)
        .map_err(|e| format!("cannot create {}: {e}", data_dir.display()))?;
    let socket = ssh_hosts::control_socket(env, session_id, name, h)?;
    let mut a: Vec<String> = [
        "-T",
        "-o",
        "BatchMode=yes",
        "-o",
        "LogLevel=ERROR",
        "-o",
        &format!("StrictHostKeyChecking={checking}"),
        "-o",
        &format!(
            "UserKnownHostsFile={}",
            opt_path(&data_dir.join("known_hosts"))
        ),
        "-o",
        "ControlMaster=auto",
        "-o",
        &format!("ControlPath={}", opt_path(&socket)),
        "-o",
        &format!("ControlPersist={CONTROL_PERSIST_SECS}"),
        "-o",
        &format!("ConnectTimeout={connect_timeout}"),
        "-p",
        &h.port.to_string(),
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if let Some(key) = &h.key_file {
        a.push("-i".into());
        a.push(ssh_hosts::key_path(env, key).display().to_string());
        a.push("-o".into());
        a.push("IdentitiesOnly=yes".into());
    }
    a.push("--".into());
    a.push(match &h.user {
        Some(u) => format!("{u}@{}", h.host),
        None => h.host.clone(),
    });
    a.push(command.to_string());
    Ok(a)
}

/// Ends the shared connections of `session_id` (`ssh -O exit` on each of its
/// control sockets) and removes the sockets. Returns how many were closed.
pub async fn close_session(env: &ToolEnv, session_id: &str) -> usize {
    let Ok(dir) = ssh_hosts::control_dir(env) else {
        return 0;
    };
    let prefix = ssh_hosts::session_prefix(session_id);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return 0;
    };
    let sockets: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .filter(|e| e.file_name().to_string_lossy().starts_with(&prefix))
        .map(|e| e.path())
        .collect();
    let mut closed = 0;
    for sock in sockets {
        let mut cmd = tokio::process::Command::new("ssh");
        cmd.arg("-o")
            .arg(format!("ControlPath={}", opt_path(&sock)))
            .arg("-O")
            .arg("exit")
            .arg("navi-control");
        let spec = RunSpec {
            timeout: Duration::from_secs(5),
            output_limit: 4096,
            kill_group_on_exit: false,
            limits: None,
            sandbox: None,
            env_passthrough: Vec::new(),
        };
        if let Ok(out) = process::run(cmd, &spec, &CancellationToken::new()).await
            && out.ending == process::Ending::Exited(0)
        {
            closed += 1;
        }
        let _ = std::fs::remove_file(&sock);
    }
    closed
}

/// A hint for ssh's own failures (exit code 255).
fn ssh_failure_hint(stderr: &str, name: &str) -> String {
    let s = stderr.to_ascii_lowercase();
    if s.contains("host key verification failed")
        || s.contains("remote host identification has changed")
    {
        format!(
            "the host key of '{name}' is unknown or changed; add it to Navi's known_hosts (ssh-keyscan) or set [security].ssh_host_key_checking = \"accept-new\" to trust it on first use"
        )
    } else if s.contains("permission denied") {
        format!("authentication to '{name}' failed; check 'user' and 'key_file' in the hosts file")
    } else if s.contains("connection refused")
        || s.contains("timed out")
        || s.contains("no route")
        || s.contains("could not resolve")
    {
        format!(
            "cannot reach '{name}'; check 'host' and 'port' in the hosts file and that sshd runs there"
        )
    } else {
        format!("ssh could not run the command on '{name}'")
    }
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct SshExecArgs {
    host: String,
    command: String,
    timeout_secs: Option<u64>,
}

#[async_trait::async_trait]
impl TypedTool for SshExecTool {
    type Args = SshExecArgs;

    fn name(&self) -> &str {
        "ssh_exec"
    }

    fn description(&self) -> &str {
        "Run a command on a configured remote host (by its name in the hosts file) over SSH."
    }

    fn approval(&self, a: &SshExecArgs) -> Option<String> {
        Some(format!("run `{}` on ssh host '{}'", a.command, a.host))
    }

    fn describe(&self, a: &SshExecArgs, _base: &std::path::Path) -> crate::protocol::CallInfo {
        let subject = format!("{} $ {}", a.host, a.command);
        let mut info = crate::protocol::CallInfo::titled(
            crate::protocol::CallKind::Execute,
            "ssh_exec",
            Some(&subject),
        );
        info.command = Some(a.command.clone());
        info.host = Some(a.host.clone());
        info
    }

    async fn run(&self, a: SshExecArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let (name, command) = (a.host.trim(), a.command.as_str());
        if command.trim().is_empty() {
            return Err(ToolError::empty("command"));
        }
        let max = ctx.env.config.tools.ssh_timeout_secs.max(1);
        let timeout = Duration::from_secs(a.timeout_secs.unwrap_or(max).clamp(1, max));
        let hosts = ssh_hosts::load(&ctx.env)?;
        let Some(entry) = hosts.get(name) else {
            let names: Vec<&str> = hosts.keys().map(String::as_str).collect();
            return Err(format!(
                "unknown ssh host '{name}'; configured hosts: {}",
                if names.is_empty() {
                    "none".to_string()
                } else {
                    names.join(", ")
                }
            )
            .into());
        };
        let session = ctx.state_session().to_string();
        let ssh_args = ssh_args(
            &ctx.env,
            &session,
            name,
            entry,
            command,
            timeout.as_secs().min(15),
        )?;
        let mut cmd = tokio::process::Command::new("ssh");
        cmd.args(&ssh_args);
        let spec = RunSpec {
            timeout,
            output_limit: ctx.env.config.tools.output_limit_bytes,
            // The ControlPersist master detaches itself; nothing else to reap.
            kill_group_on_exit: false,
            limits: None,
            sandbox: None,
            env_passthrough: ctx.env.config.security.env_passthrough.clone(),
        };
        let outcome = match process::run(cmd, &spec, &ctx.cancel).await {
            Ok(o) => o,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(
                    "the OpenSSH client `ssh` is not installed; install openssh-client".into(),
                );
            }
            Err(e) => return Err(format!("cannot start ssh: {e}").into()),
        };
        let mut result = report_capped(
            &outcome,
            "the remote command",
            timeout,
            ctx.env.config.tools.max_line_bytes,
        );
        if outcome.ending == process::Ending::Exited(255) {
            result.error = Some(ssh_failure_hint(&outcome.stderr.text(), name));
        }
        result.display = Some(exec_report::display(&outcome, command, Some(name), timeout));
        from_result(result.with_meta("host", json!(name)))
    }
}
