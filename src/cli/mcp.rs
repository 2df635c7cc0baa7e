//! `navi mcp list|tools|check`: the configured MCP servers, their state and
//! tools. `list` starts nothing; `tools` and `check` start the servers, wait
//! for them (each bounded by its start-up timeout) and stop them on exit.
use super::{Failure, GlobalArgs, McpCommand, load_config};
use crate::mcp::{McpHub, ServerState, report};
use serde_json::json;

pub(crate) async fn run(g: &GlobalArgs, command: McpCommand) -> Result<u8, Failure> {
    let (mut config, paths, _) = load_config(g)?;
    let only = match &command {
        McpCommand::List { .. } => None,
        McpCommand::Tools { server, .. } | McpCommand::Check { server } => server.clone(),
    };
    if let Some(name) = &only {
        if !config.mcp_servers.contains_key(name) {
            let known: Vec<&str> = config.mcp_servers.keys().map(String::as_str).collect();
            return Err(Failure::usage(format!(
                "no MCP server named '{name}' in the config; configured: {}",
                if known.is_empty() {
                    "none".to_string()
                } else {
                    known.join(", ")
                }
            )));
        }
        config.mcp_servers.retain(|k, _| k == name);
    }
    let hub = McpHub::new(&config, &paths);
    match command {
        McpCommand::List { json } => {
            let status = hub.status();
            if json {
                let rows: Vec<_> = status
                    .iter()
                    .map(|s| {
                        json!({
                            "name": s.name,
                            "target": s.target,
                            "enabled": s.state != ServerState::Disabled,
                        })
                    })
                    .collect();
                println!("{}", serde_json::Value::Array(rows));
            } else {
                for l in report::status_lines(&status, false) {
                    println!("{l}");
                }
            }
            Ok(0)
        }
        McpCommand::Tools { json, .. } => {
            hub.start();
            hub.wait_started().await;
            let status = hub.status();
            if json {
                let rows: Vec<_> = status
                    .iter()
                    .map(|s| {
                        json!({
                            "server": s.name,
                            "state": s.state.label(),
                            "tools": s.tools.iter().map(|t| json!({
                                "name": t.full_name,
                                "tool": t.tool,
                                "description": t.description,
                                "read_only": t.read_only,
                                "parameters": t.schema,
                            })).collect::<Vec<_>>(),
                            "skipped": s.skipped,
                        })
                    })
                    .collect();
                println!("{}", serde_json::Value::Array(rows));
            } else {
                for l in report::status_lines(&status, true) {
                    println!("{l}");
                }
            }
            Ok(0)
        }
        McpCommand::Check { .. } => {
            hub.start();
            hub.wait_started().await;
            let status = hub.status();
            for l in report::status_lines(&status, false) {
                println!("{l}");
            }
            let failed = status
                .iter()
                .filter(|s| !matches!(s.state, ServerState::Ready | ServerState::Disabled))
                .count();
            if failed > 0 {
                eprintln!("navi: {failed} MCP server(s) failed the check");
                return Ok(1);
            }
            Ok(0)
        }
    }
}
