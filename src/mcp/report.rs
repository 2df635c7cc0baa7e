//! Text for `/mcp` and `navi mcp list|tools|check`.
use super::{ServerState, ServerStatus};
use crate::config::McpServerConfig;
use crate::config::mcp::McpTransport;

/// `stdio: cmd args…` or `http: url`.
pub(crate) fn target(cfg: &McpServerConfig) -> String {
    match cfg.transport_kind() {
        McpTransport::Stdio => {
            let mut s = format!("stdio: {}", cfg.command);
            for a in &cfg.args {
                s.push(' ');
                s.push_str(a);
            }
            s
        }
        McpTransport::Http => format!("http: {}", cfg.url),
    }
}

/// The first line of `s`, at most `max` characters.
fn preview(s: &str, max: usize) -> String {
    let line = s.lines().next().unwrap_or("");
    let mut out: String = line.chars().take(max).collect();
    if line.chars().count() > max {
        out.push('…');
    }
    out
}

fn state_line(s: &ServerStatus) -> String {
    let tools = match s.state {
        ServerState::Ready | ServerState::Down(_) => format!(", {} tools", s.tools.len()),
        _ => String::new(),
    };
    let restarts = if s.restarts > 0 {
        format!(", restarted {}x", s.restarts)
    } else {
        String::new()
    };
    format!(
        "{}: {}{tools}{restarts} ({})",
        s.name,
        s.state.label(),
        s.target
    )
}

/// One block per server: state, tools, skipped tools, stderr tail.
pub(crate) fn status_lines(servers: &[ServerStatus], with_tools: bool) -> Vec<String> {
    if servers.is_empty() {
        return vec![
            "no MCP servers configured; add [mcp_servers.<name>] to config.toml (see docs/mcp.md)"
                .into(),
        ];
    }
    let mut out = Vec::new();
    for s in servers {
        out.push(state_line(s));
        if with_tools {
            for t in &s.tools {
                let approval = if t.read_only { "read-only" } else { "asks" };
                out.push(format!(
                    "  {:<32} [{approval}] {}",
                    t.full_name,
                    preview(&t.description, 70)
                ));
            }
        }
        for k in &s.skipped {
            out.push(format!("  skipped {k}"));
        }
        let show_stderr = !matches!(s.state, ServerState::Ready) || with_tools;
        if show_stderr && !s.stderr_tail.is_empty() {
            out.push("  stderr:".into());
            for l in &s.stderr_tail {
                out.push(format!("    {l}"));
            }
        }
    }
    out
}
