//! The approval gate: risky tool calls wait here for the user's answer.
//!
//! Policy: `[security].approval` (`ask` | `auto` | `deny`) with per-tool
//! overrides, one gate for the whole process. In `ask` mode, an
//! `approval_request` event goes to the front end and the call waits for the
//! answer the session receives ([`SessionTools::answer`], or the run's
//! cancel); what was allowed "for the session" is kept by the session
//! ([`SessionTools`]), never here. A
//! front end that cannot ask (no TTY) makes the gate non-interactive: then only
//! tools pre-approved on the command line run.
//!
//! Precedence: a "deny" from the config (the default mode or a per-tool
//! entry) always wins; then `--approve TOOL` / `--approve-all`; then `auto`;
//! then the question.

use super::{SessionTools, ToolContext};
use crate::config::{ApprovalMode, SecurityConfig};
use crate::protocol::{AgentEvent, Decision};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};

pub struct ApprovalGate {
    mode: ApprovalMode,
    per_tool: BTreeMap<String, ApprovalMode>,
    interactive: bool,
    preapproved: HashSet<String>,
    approve_all: bool,
    /// `--full-auto`: what the sandbox contains runs without asking (see
    /// [`ApprovalGate::full_auto_covers`]); `Some(enforced)` tells whether
    /// the kernel sandbox holds commands in the workspace.
    full_auto: Option<bool>,
}

impl ApprovalGate {
    pub fn new(security: &SecurityConfig, interactive: bool) -> Self {
        ApprovalGate {
            mode: security.approval,
            per_tool: security.approval_tools.clone(),
            interactive,
            preapproved: HashSet::new(),
            approve_all: false,
            full_auto: None,
        }
    }

    /// `--full-auto`: file changes inside the session's workspace, and
    /// commands when `sandboxed` (the kernel sandbox confines them to the
    /// workspace), run without asking; anything else still asks.
    pub fn with_full_auto(mut self, sandboxed: bool) -> Self {
        self.full_auto = Some(sandboxed);
        self
    }

    /// Whether `--full-auto` lets this call run without asking: a file
    /// tool whose path lies inside the workspace (after resolving links of
    /// the parts that exist), or a command the kernel sandbox confines.
    fn full_auto_covers(&self, ctx: &ToolContext, tool: &str, args: &Value) -> bool {
        let Some(sandboxed) = self.full_auto else {
            return false;
        };
        match tool {
            "terminal" | "code_exec" => sandboxed,
            "filesystem" => {
                let Some(path) = args.get("path").and_then(Value::as_str) else {
                    return false;
                };
                let root = ctx.session.work_dir();
                inside(root, path)
            }
            _ => false,
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
        if self.full_auto.is_some() && self.mode != ApprovalMode::Deny {
            return "full-auto".into();
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
        } else if let Some(sandboxed) = self.full_auto.filter(|_| self.mode != ApprovalMode::Deny) {
            if sandboxed {
                "approval: full-auto (--full-auto): file changes inside the workspace and sandboxed commands run without asking; other calls ask".to_string()
            } else {
                "approval: full-auto (--full-auto): file changes inside the workspace run without asking; commands ask (the sandbox is off or not enforced here), other calls too".to_string()
            }
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

    /// Whether risky calls of tools without an override are asked about
    /// (under `--full-auto` some are, so it asks).
    pub fn asks(&self) -> bool {
        !self.approve_all && self.mode == ApprovalMode::Ask
    }

    fn mode_for(&self, tool: &str) -> ApprovalMode {
        self.per_tool.get(tool).copied().unwrap_or(self.mode)
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
            ApprovalMode::Ask if self.full_auto_covers(ctx, tool, args) => return Ok(()),
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
        let (session, call_id, sink, cancel) =
            (&ctx.session, ctx.call_id.as_str(), &ctx.events, &ctx.cancel);
        if session.allows(key) {
            return Ok(());
        }
        if !self.interactive {
            return Err(format!(
                "denied: no terminal to ask for approval of '{tool}'; the user can allow it with --approve {tool} or --approve-all (the call: {summary})"
            ));
        }
        let rx = session.wait_for(call_id);
        sink.emit(AgentEvent::ApprovalRequest {
            id: call_id.to_string(),
            tool: tool.to_string(),
            summary: summary.to_string(),
            args: args.clone(),
            call: ctx.call_info.as_deref().cloned().map(Box::new),
        })
        .await;
        let decision = tokio::select! {
            d = rx => d.unwrap_or(Decision::Deny),
            _ = cancel.cancelled() => {
                session.withdraw(call_id);
                return Err("operation cancelled by user".into());
            }
        };
        match decision {
            Decision::Once => Ok(()),
            Decision::Session => {
                session.allow(key);
                Ok(())
            }
            Decision::Deny => Err(format!(
                "the user denied this {tool} call ({summary}); do not retry it, ask the user how to proceed"
            )),
        }
    }

    /// `/approvals` for one session: the mode in a sentence, then what the
    /// session allowed for itself.
    pub fn report(&self, session: &SessionTools) -> Vec<String> {
        let allowed = session.allowed();
        let mut v = vec![self.mode_sentence()];
        if allowed.is_empty() {
            v.push(if self.asks() {
                "no tool is allowed for this whole session; risky calls ask each time".into()
            } else {
                "no tool is allowed for this whole session (none needs it in this mode)".into()
            });
            v.push(
                "(answer s on an approval request to allow a tool until you leave or revoke it)"
                    .into(),
            );
        } else {
            v.push("allowed for this session without asking:".to_string());
            v.extend(allowed.iter().map(|t| format!("  {t}")));
            v.push("/approvals revoke <tool> (or all) makes it ask again".into());
        }
        v
    }
}

/// Takes back what the session allowed for itself: `tool`, or everything
/// (`None`). The line to show, or why nothing was revoked.
pub fn revoke(session: &SessionTools, tool: Option<&str>) -> Result<String, String> {
    let allowed = session.allowed();
    match tool {
        None => {
            for t in &allowed {
                session.revoke(t);
            }
            Ok(if allowed.is_empty() {
                "nothing to revoke: no tool is allowed for this session".into()
            } else {
                format!("revoked: {}; they ask again", allowed.join(", "))
            })
        }
        Some(tool) if session.revoke(tool) => {
            Ok(format!("revoked: {tool} asks again from its next call"))
        }
        Some(tool) if allowed.is_empty() => Err(format!(
            "{tool} is not allowed for this session; nothing is (see /approvals)"
        )),
        Some(tool) => Err(format!(
            "{tool} is not allowed for this session; allowed: {}",
            allowed.join(", ")
        )),
    }
}

/// Whether `path` (relative to `root`, or absolute) names something inside
/// `root`: `..` parts are resolved, and so are the links of the longest
/// part of it that exists (a link inside the workspace to a file outside
/// is outside).
fn inside(root: &std::path::Path, path: &str) -> bool {
    use std::path::{Component, PathBuf};
    let root = std::fs::canonicalize(root).unwrap_or_else(|_| root.to_path_buf());
    let joined = root.join(path);
    let mut norm = PathBuf::new();
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                norm.pop();
            }
            Component::CurDir => {}
            other => norm.push(other),
        }
    }
    // The deepest existing ancestor, resolved; the rest appended.
    let mut existing = norm.as_path();
    let mut rest = Vec::new();
    while std::fs::symlink_metadata(existing).is_err() {
        match (existing.parent(), existing.file_name()) {
            (Some(p), Some(n)) => {
                rest.push(n.to_os_string());
                existing = p;
            }
            _ => return false,
        }
    }
    let Ok(mut real) = std::fs::canonicalize(existing) else {
        return false;
    };
    for n in rest.iter().rev() {
        real.push(n);
    }
    real.starts_with(&root)
}
