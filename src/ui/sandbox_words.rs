//! What the sandbox lets one command do, in a sentence, for approval
//! questions (TUI overlay and plain mode): a user deciding whether to run
//! `terminal`/`code_exec` sees that it may write only in the workspace and
//! has no network — or that it will run outside the sandbox.
use crate::sandbox::{SandboxConfig, SandboxMode};
use serde_json::Value;

/// The sentence for a call of `tool` with `args`; `None` for tools that the
/// sandbox does not confine (files, web, MCP).
pub(crate) fn for_call(c: &SandboxConfig, tool: &str, args: &Value) -> Option<String> {
    if !matches!(tool, "terminal" | "code_exec") {
        return None;
    }
    let asked = args.get("sandbox").and_then(Value::as_str).unwrap_or("");
    let escalation = crate::sandbox::escalation(Some(asked)).ok()?;
    Some(sentence(
        c,
        escalation,
        crate::sandbox::support().available(),
    ))
}

fn sentence(c: &SandboxConfig, e: crate::sandbox::policy::Escalation, enforced: bool) -> String {
    use crate::sandbox::policy::Escalation;
    let mode = c.mode();
    if mode == SandboxMode::FullAccess {
        return "sandbox: none (full-access): this command may change any file of yours and use the network".into();
    }
    if e == Escalation::Unsandboxed {
        return "sandbox: OFF for this command: it may change any file of yours and use the network".into();
    }
    if !enforced {
        return format!(
            "sandbox: {} is not enforced here (no Landlock): this command may change any file of yours and use the network",
            mode.as_str()
        );
    }
    let writes = match mode {
        SandboxMode::ReadOnly => "may write no files (a private temporary directory only)",
        _ => "may write only in the workspace (and its temporary directory)",
    };
    let net = if c.network || e == Escalation::Network {
        "may use the network"
    } else {
        "no network"
    };
    format!(
        "sandbox: {} · {writes}, {net}",
        crate::sandbox::short_label(c)
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sandbox::policy::Escalation;

    #[test]
    fn says_what_a_command_may_do() {
        let c = SandboxConfig::default();
        let s = sentence(&c, Escalation::None, true);
        assert!(s.contains("may write only in the workspace"), "{s}");
        assert!(s.ends_with("no network"), "{s}");
        assert!(sentence(&c, Escalation::Network, true).ends_with("may use the network"));
        assert!(sentence(&c, Escalation::Unsandboxed, true).contains("OFF"));
        assert!(sentence(&c, Escalation::None, false).contains("not enforced"));
        let ro = SandboxConfig {
            mode: "read-only".into(),
            ..Default::default()
        };
        assert!(sentence(&ro, Escalation::None, true).contains("may write no files"));
        let t = serde_json::json!({"command": "ls"});
        assert!(for_call(&c, "filesystem", &t).is_none());
        assert!(for_call(&c, "terminal", &t).is_some());
    }
}
