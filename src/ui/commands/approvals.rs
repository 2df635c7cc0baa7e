//! `/approvals`: the tools the user allowed for this session ("s" on an
//! approval request), and taking such an allowance back. Both front ends.
//!
//! Invariant: revoking only removes a session allowance; `--approve` on the
//! command line and `[security]` settings are reported, never changed here.
use crate::app::App;
use crate::tools::approval::ApprovalGate;

pub(crate) const USAGE: &str = "usage: /approvals [list | revoke <tool> | revoke all]";

/// Runs `/approvals <args>` on `session`; returns the lines to show.
pub(crate) fn execute(app: &App, session: &str, args: &[String]) -> Result<Vec<String>, String> {
    let mut lines = run(&app.agent.gate, session, args)?;
    if matches!(args.first().map(String::as_str), None | Some("list")) {
        lines.insert(
            1,
            format!("sandbox: {}", crate::sandbox::describe(&app.config.sandbox)),
        );
    }
    Ok(lines)
}

/// The command against a gate (separate from [`App`] for tests).
pub fn run(gate: &ApprovalGate, session: &str, args: &[String]) -> Result<Vec<String>, String> {
    let allowed = gate.session_allowed(session);
    match args
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>()
        .as_slice()
    {
        [] | ["list"] => {
            let mut v = vec![gate.mode_sentence()];
            if allowed.is_empty() {
                v.push(if gate.asks() {
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
            Ok(v)
        }
        ["revoke", "all"] | ["revoke", "*"] => {
            for t in &allowed {
                gate.revoke(session, t);
            }
            Ok(vec![if allowed.is_empty() {
                "nothing to revoke: no tool is allowed for this session".into()
            } else {
                format!("revoked: {}; they ask again", allowed.join(", "))
            }])
        }
        ["revoke", tool] => {
            if gate.revoke(session, tool) {
                Ok(vec![format!(
                    "revoked: {tool} asks again from its next call"
                )])
            } else if allowed.is_empty() {
                Err(format!(
                    "{tool} is not allowed for this session; nothing is (see /approvals)"
                ))
            } else {
                Err(format!(
                    "{tool} is not allowed for this session; allowed: {}",
                    allowed.join(", ")
                ))
            }
        }
        _ => Err(USAGE.into()),
    }
}
