//! The approval gate: risky tool calls wait here for the user's answer.
//!
//! Policy: `[security].approval` (`ask` | `auto` | `deny`) with per-tool
//! overrides. In `ask` mode, an `approval_request` event goes to the front end
//! and the call waits for [`ApprovalGate::answer`] (or the run's cancel). A
//! front end that cannot ask (no TTY) makes the gate non-interactive: then only
//! tools pre-approved on the command line run.
//!
//! Precedence: a "deny" from the config (the default mode or a per-tool
//! entry) always wins; then `--approve TOOL` / `--approve-all`; then `auto`;
//! then the question.

use super::ToolContext;
use crate::config::{ApprovalMode, SecurityConfig};
use crate::protocol::{AgentEvent, Decision};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Mutex;
use tokio::sync::oneshot;

pub struct ApprovalGate {
    mode: ApprovalMode,
    per_tool: BTreeMap<String, ApprovalMode>,
    interactive: bool,
    preapproved: HashSet<String>,
    approve_all: bool,
    session_allowed: Mutex<HashMap<String, HashSet<String>>>,
    pending: Mutex<HashMap<String, oneshot::Sender<Decision>>>,
}

impl ApprovalGate {
    pub fn new(security: &SecurityConfig, interactive: bool) -> Self {
        ApprovalGate {
            mode: security.approval,
            per_tool: security.approval_tools.clone(),
            interactive,
            preapproved: HashSet::new(),
            approve_all: false,
            session_allowed: Mutex::new(HashMap::new()),
            pending: Mutex::new(HashMap::new()),
        }
    }

    /// Tools approved on the command line (`--approve TOOL`, `--approve-all`).
    pub fn with_preapproved(mut self, tools: impl IntoIterator<Item = String>, all: bool) -> Self {
        self.preapproved.extend(tools);
        self.approve_all = all;
        self
    }

    /// The approval mode in a word for the status line: `ask`, `auto`,
    /// `deny`, or `approve-all` (`--approve-all`); `+` marks per-tool
    /// overrides or `--approve` tools.
    pub fn mode_label(&self) -> String {
        if self.approve_all {
            return "approve-all".into();
        }
        let base = match self.mode {
            ApprovalMode::Ask => "ask",
            ApprovalMode::Auto => "auto",
            ApprovalMode::Deny => "deny",
        };
        if self.per_tool.is_empty() && self.preapproved.is_empty() {
            base.into()
        } else {
            format!("{base}+")
        }
    }

    /// What the approval mode means, in a sentence, for `/approvals`.
    pub fn mode_sentence(&self) -> String {
        let mut s = if self.approve_all {
            "approval: approve-all (--approve-all): risky tool calls run WITHOUT asking".to_string()
        } else {
            match self.mode {
                ApprovalMode::Ask => {
                    "approval: ask: risky tool calls ask first unless allowed below".to_string()
                }
                ApprovalMode::Auto => {
                    "approval: auto ([security].approval or NAVI_APPROVAL): risky tool calls run WITHOUT asking".to_string()
                }
                ApprovalMode::Deny => {
                    "approval: deny: risky tool calls are refused".to_string()
                }
            }
        };
        let overrides: Vec<String> = self
            .per_tool
            .iter()
            .map(|(t, m)| format!("{t}={}", format!("{m:?}").to_lowercase()))
            .chain(self.preapproved.iter().map(|t| format!("{t}=approved")))
            .collect();
        if !overrides.is_empty() {
            s.push_str(&format!("; per tool: {}", overrides.join(", ")));
        }
        s.push_str("; leaving the sandbox always asks");
        s
    }

    /// Whether risky calls of tools without an override are asked about.
    pub fn asks(&self) -> bool {
        !self.approve_all && self.mode == ApprovalMode::Ask
    }

    fn mode_for(&self, tool: &str) -> ApprovalMode {
        self.per_tool.get(tool).copied().unwrap_or(self.mode)
    }

    /// Forgets what was allowed "for the session" in a closed session.
    pub(crate) fn forget_session(&self, session: &str) {
        if let Ok(mut m) = self.session_allowed.lock() {
            m.remove(session);
        }
    }

    fn allowed_for_session(&self, session: &str, tool: &str) -> bool {
        self.session_allowed
            .lock()
            .map(|m| m.get(session).is_some_and(|s| s.contains(tool)))
            .unwrap_or(false)
    }

    /// Decides whether a risky call may run. `Err` carries the message the
    /// model gets as the tool result.
    pub(crate) async fn check(
        &self,
        ctx: &ToolContext,
        tool: &str,
        summary: &str,
        args: &Value,
    ) -> Result<(), String> {
        // A "deny" in the config wins over `--approve` / `--approve-all`:
        // the command line can skip questions, never lift a ban.
        match self.mode_for(tool) {
            ApprovalMode::Deny => {
                return Err(format!(
                    "denied by policy: [security] approval for '{tool}' is \"deny\" (the command line's --approve/--approve-all do not override it); do not retry, tell the user what you wanted to run"
                ));
            }
            _ if self.approve_all || self.preapproved.contains(tool) => return Ok(()),
            ApprovalMode::Auto => return Ok(()),
            ApprovalMode::Ask => {}
        }
        self.ask(ctx, tool, tool, summary, args).await
    }

    /// Like [`ApprovalGate::check`] for a call that asks to leave the sandbox
    /// or to use the network (`key` is e.g. `terminal sandbox=off`): a
    /// "deny" for the tool still wins, but `auto`, `--approve TOOL` and
    /// `--approve-all` do not cover it — the user is asked, and may allow
    /// it for the session under `key` only.
    pub(crate) async fn check_escalation(
        &self,
        ctx: &ToolContext,
        tool: &str,
        key: &str,
        summary: &str,
        args: &Value,
    ) -> Result<(), String> {
        if self.mode_for(tool) == ApprovalMode::Deny {
            return Err(format!(
                "denied by policy: [security] approval for '{tool}' is \"deny\"; do not retry"
            ));
        }
        self.ask(ctx, tool, key, summary, args).await
    }

    async fn ask(
        &self,
        ctx: &ToolContext,
        tool: &str,
        key: &str,
        summary: &str,
        args: &Value,
    ) -> Result<(), String> {
        let (session, call_id, sink, cancel) = (
            ctx.state_session(),
            ctx.call_id.as_str(),
            &ctx.events,
            &ctx.cancel,
        );
        if self.allowed_for_session(session, key) {
            return Ok(());
        }
        if !self.interactive {
            return Err(format!(
                "denied: no terminal to ask for approval of '{tool}'; the user can allow it with --approve {tool} or --approve-all (the call: {summary})"
            ));
        }
        let (tx, rx) = oneshot::channel();
        if let Ok(mut p) = self.pending.lock() {
            p.insert(call_id.to_string(), tx);
        }
        sink.emit(AgentEvent::ApprovalRequest {
            id: call_id.to_string(),
            tool: tool.to_string(),
            summary: summary.to_string(),
            args: args.clone(),
        })
        .await;
        let decision = tokio::select! {
            d = rx => d.unwrap_or(Decision::Deny),
            _ = cancel.cancelled() => {
                if let Ok(mut p) = self.pending.lock() { p.remove(call_id); }
                return Err("operation cancelled by user".into());
            }
        };
        match decision {
            Decision::Once => Ok(()),
            Decision::Session => {
                if let Ok(mut m) = self.session_allowed.lock() {
                    m.entry(session.to_string())
                        .or_default()
                        .insert(key.to_string());
                }
                Ok(())
            }
            Decision::Deny => Err(format!(
                "the user denied this {tool} call ({summary}); do not retry it, ask the user how to proceed"
            )),
        }
    }

    /// The front end's answer to an `approval_request`. False if nothing waits
    /// under that id.
    pub fn answer(&self, id: &str, decision: Decision) -> bool {
        let tx = self.pending.lock().ok().and_then(|mut p| p.remove(id));
        match tx {
            Some(tx) => tx.send(decision).is_ok(),
            None => false,
        }
    }

    /// Tools the user allowed for the rest of `session` ("s" on a request),
    /// sorted.
    pub fn session_allowed(&self, session: &str) -> Vec<String> {
        let mut v: Vec<String> = self
            .session_allowed
            .lock()
            .map(|m| m.get(session).map(|s| s.iter().cloned().collect()))
            .ok()
            .flatten()
            .unwrap_or_default();
        v.sort();
        v
    }

    /// Takes back a session-wide allowance: the next call of `tool` asks
    /// again. False when it was not allowed.
    pub(crate) fn revoke(&self, session: &str, tool: &str) -> bool {
        self.session_allowed
            .lock()
            .map(|mut m| m.get_mut(session).is_some_and(|s| s.remove(tool)))
            .unwrap_or(false)
    }

    /// Ids of requests still waiting for an answer.
    pub fn pending_ids(&self) -> Vec<String> {
        self.pending
            .lock()
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default()
    }
}
