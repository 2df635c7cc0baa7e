//! A command in the client's terminal: `terminal/create`, the terminal
//! embedded in the tool call (the editor shows it live), then
//! `terminal/wait_for_exit` and `terminal/output` for what the model reads,
//! `terminal/kill` at the time limit or a stop, `terminal/release` always.
//!
//! The call's last update (its result) keeps the terminal: ACP replaces a
//! call's content with each update, and the editor still shows a released
//! terminal's output.
use super::client_fs::{AcpClient, said};
use super::session::notify;
use crate::protocol::{ClientCommand, ClientExit};
use agent_client_protocol::v1::schema::{
    CreateTerminalRequest, EnvVariable, KillTerminalRequest, ReleaseTerminalRequest, SessionUpdate,
    Terminal, TerminalExitStatus, TerminalId, TerminalOutputRequest, ToolCallContent,
    ToolCallStatus, ToolCallUpdate, ToolCallUpdateFields, WaitForTerminalExitRequest,
};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use tokio_util::sync::CancellationToken;

/// How long a killed terminal gets to report how it ended.
const AFTER_KILL: Duration = Duration::from_secs(5);

/// The terminal of each call that ran in one, by call id.
#[derive(Clone, Default)]
pub(crate) struct Shown(Arc<Mutex<HashMap<String, TerminalId>>>);

impl Shown {
    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<String, TerminalId>> {
        self.0.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The updates of an event, the call's result keeping its terminal:
    /// first in the content (a failed call keeps its text after it, which
    /// says why; a completed one shows the terminal alone).
    pub(crate) fn keep(&self, updates: Vec<SessionUpdate>) -> Vec<SessionUpdate> {
        updates
            .into_iter()
            .map(|u| match u {
                SessionUpdate::ToolCallUpdate(mut t) if t.fields.content.is_some() => {
                    let id = t.tool_call_id.0.to_string();
                    if let Some(tid) = self.lock().remove(&id) {
                        let failed = t.fields.status == Some(ToolCallStatus::Failed);
                        let mut content = vec![ToolCallContent::Terminal(Terminal::new(tid))];
                        if failed {
                            content.extend(t.fields.content.take().unwrap_or_default());
                        }
                        t.fields.content = Some(content);
                    }
                    SessionUpdate::ToolCallUpdate(t)
                }
                other => other,
            })
            .collect()
    }
}

/// Runs `cmd` in a terminal of the client. `Err`: the client could not
/// create one (nothing ran).
pub(crate) async fn run(
    c: &AcpClient,
    cmd: ClientCommand,
    cancel: &CancellationToken,
) -> Result<ClientExit, String> {
    let started = Instant::now();
    let env = cmd
        .env
        .iter()
        .map(|(k, v)| EnvVariable::new(k.clone(), v.clone()))
        .collect();
    let req = CreateTerminalRequest::new(c.session.clone(), cmd.program.clone())
        .args(cmd.args.clone())
        .env(env)
        .cwd(cmd.cwd.clone())
        .output_byte_limit(cmd.output_limit);
    let tid =
        c.cx.send_request(req)
            .block_task()
            .await
            .map_err(|e| said(&e))?
            .terminal_id;
    c.shown.lock().insert(cmd.call_id.clone(), tid.clone());
    let embed = ToolCallUpdateFields::new()
        .content(vec![ToolCallContent::Terminal(Terminal::new(tid.clone()))]);
    notify(
        &c.cx,
        &c.session,
        SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(cmd.call_id.clone(), embed)),
    );
    let exit = watch(c, &tid, cmd.timeout, cancel).await;
    let output =
        c.cx.send_request(TerminalOutputRequest::new(c.session.clone(), tid.clone()))
            .block_task()
            .await;
    let release = ReleaseTerminalRequest::new(c.session.clone(), tid.clone());
    if let Err(e) = c.cx.send_request(release).block_task().await {
        tracing::debug!("terminal/release {} failed: {}", tid.0, said(&e));
    }
    let mut done = ClientExit {
        timed_out: exit.timed_out,
        cancelled: exit.cancelled,
        elapsed: started.elapsed(),
        ..Default::default()
    };
    let mut status = exit.status;
    match output {
        Ok(o) => {
            done.output = o.output;
            done.truncated = o.truncated;
            status = status.or(o.exit_status);
        }
        Err(e) => {
            done.output = format!(
                "[the editor did not give the terminal's output: {}]",
                said(&e)
            )
        }
    }
    match status {
        Some(s) => {
            done.exit_code = s.exit_code;
            done.signal = s.signal;
        }
        None if !done.timed_out && !done.cancelled => {
            let why = exit.error.unwrap_or_else(|| "no exit status".into());
            done.signal = Some(format!("unknown (the editor said: {why})"));
        }
        None => {}
    }
    Ok(done)
}

/// How waiting for the terminal ended.
struct Watched {
    status: Option<TerminalExitStatus>,
    timed_out: bool,
    cancelled: bool,
    /// The client's answer when waiting failed.
    error: Option<String>,
}

/// Waits for the command to end; kills it at the time limit or a stop.
async fn watch(
    c: &AcpClient,
    tid: &TerminalId,
    timeout: Duration,
    cancel: &CancellationToken,
) -> Watched {
    let wait = || {
        c.cx.send_request(WaitForTerminalExitRequest::new(
            c.session.clone(),
            tid.clone(),
        ))
        .block_task()
    };
    let mut w = Watched {
        status: None,
        timed_out: false,
        cancelled: false,
        error: None,
    };
    tokio::select! {
        r = wait() => match r {
            Ok(r) => w.status = Some(r.exit_status),
            Err(e) => w.error = Some(said(&e)),
        },
        _ = tokio::time::sleep(timeout) => w.timed_out = true,
        _ = cancel.cancelled() => w.cancelled = true,
    }
    if w.timed_out || w.cancelled {
        let kill = KillTerminalRequest::new(c.session.clone(), tid.clone());
        if let Err(e) = c.cx.send_request(kill).block_task().await {
            tracing::debug!("terminal/kill {} failed: {}", tid.0, said(&e));
        }
        // The status after the kill, briefly: the output comes either way.
        if let Ok(Ok(r)) = tokio::time::timeout(AFTER_KILL, wait()).await {
            w.status = Some(r.exit_status);
        }
    }
    w
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn result(id: &str, status: ToolCallStatus) -> SessionUpdate {
        SessionUpdate::ToolCallUpdate(ToolCallUpdate::new(
            id.to_string(),
            ToolCallUpdateFields::new()
                .status(status)
                .content(vec![ToolCallContent::from("exit code: 0".to_string())]),
        ))
    }

    fn content(u: &SessionUpdate) -> serde_json::Value {
        serde_json::to_value(u).unwrap()["content"].clone()
    }

    #[test]
    fn a_result_keeps_its_terminal_once() {
        let shown = Shown::default();
        shown.lock().insert("c1".into(), TerminalId::new("t1"));
        let out = shown.keep(vec![result("c1", ToolCallStatus::Completed)]);
        let c = content(&out[0]);
        assert_eq!(c.as_array().unwrap().len(), 1, "{c}");
        assert_eq!(c[0]["type"], "terminal");
        assert_eq!(c[0]["terminalId"], "t1");
        // Gone once used; other calls are untouched.
        let again = shown.keep(vec![result("c1", ToolCallStatus::Completed)]);
        assert_eq!(content(&again[0])[0]["type"], "content");

        shown.lock().insert("c2".into(), TerminalId::new("t2"));
        let failed = shown.keep(vec![result("c2", ToolCallStatus::Failed)]);
        let c = content(&failed[0]);
        assert_eq!(c[0]["terminalId"], "t2");
        assert_eq!(c[1]["type"], "content", "{c}");
    }
}
