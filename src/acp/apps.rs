//! The navi cores `navi acp` runs: one per working directory and set of
//! client-supplied MCP servers.
//!
//! A core's tools work in the directory it was built in, and its MCP servers
//! are fixed when it is built. An ACP session names its own `cwd` and may
//! bring MCP servers, so sessions that differ in either get their own core
//! (sharing the one database, whose locks keep each session to one writer);
//! sessions that agree share one. Nothing is built before a session needs it.

use crate::app::launch::{Failure, GlobalArgs, load_config};
use crate::app::{App, AppOptions};
use crate::config::{Config, McpServerConfig, Overrides, Paths};
use agent_client_protocol::v1::schema::McpServer;
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// What every core starts from.
pub(crate) struct Base {
    config: Config,
    paths: Paths,
    overrides: Overrides,
    backend_forced: bool,
    no_plan: bool,
}

/// The cores built so far, by key.
pub(crate) struct Apps {
    base: Base,
    built: Mutex<HashMap<String, Arc<App>>>,
    /// The process's directory: cores for other directories are built with
    /// it switched for the moment of building (nothing else reads it then).
    home_cwd: PathBuf,
}

impl Apps {
    /// Reads the configuration (exit 2 on a bad one) and starts file
    /// logging. Builds nothing.
    pub(crate) fn load(g: &GlobalArgs) -> Result<(Apps, crate::logging::LogGuard), Failure> {
        let (config, paths, overrides) = load_config(g)?;
        let log = crate::logging::init(&paths.log_dir, &config.logging.level);
        let home_cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
        let base = Base {
            config,
            paths,
            overrides,
            backend_forced: g.backend.is_some() || g.provider.is_some(),
            no_plan: g.no_plan,
        };
        let apps = Apps {
            base,
            built: Mutex::new(HashMap::new()),
            home_cwd,
        };
        Ok((apps, log))
    }

    /// The directory of the process (sessions without one of their own).
    pub(crate) fn home_cwd(&self) -> &Path {
        &self.home_cwd
    }

    /// The core for `cwd` with `mcp` joining the configured MCP servers.
    pub(crate) fn get(&self, cwd: &Path, mcp: &[McpServer]) -> Result<Arc<App>, String> {
        let extra = client_servers(mcp)?;
        let cwd = if cwd.as_os_str().is_empty() {
            self.home_cwd.clone()
        } else {
            cwd.to_path_buf()
        };
        if !cwd.is_absolute() {
            return Err(format!(
                "cwd must be an absolute path, got '{}'",
                cwd.display()
            ));
        }
        let cwd =
            std::fs::canonicalize(&cwd).map_err(|e| format!("cwd '{}': {e}", cwd.display()))?;
        let key = format!(
            "{}\u{0}{}",
            cwd.display(),
            serde_json::to_string(&extra).unwrap_or_default()
        );
        let mut built = self.built.lock().map_err(|_| "internal lock poisoned")?;
        if let Some(app) = built.get(&key) {
            return Ok(app.clone());
        }
        let app = Arc::new(self.build(&cwd, extra)?);
        built.insert(key, app.clone());
        Ok(app)
    }

    /// Any core (for reads that do not depend on the directory: the session
    /// list), building the plain one when none is built yet.
    pub(crate) fn any(&self) -> Result<Arc<App>, String> {
        if let Some(app) = self
            .built
            .lock()
            .ok()
            .and_then(|b| b.values().next().cloned())
        {
            return Ok(app);
        }
        let home = self.home_cwd.clone();
        self.get(&home, &[])
    }

    /// Every core built (to stop their MCP servers at the end).
    pub(crate) fn all(&self) -> Vec<Arc<App>> {
        self.built
            .lock()
            .map(|b| b.values().cloned().collect())
            .unwrap_or_default()
    }

    fn build(&self, cwd: &Path, extra: BTreeMap<String, McpServerConfig>) -> Result<App, String> {
        let b = &self.base;
        let mut config = b.config.clone();
        for (name, server) in extra {
            config.mcp_servers.insert(name, server);
        }
        crate::config::mcp::validate(&config.mcp_servers, "the client's mcpServers")
            .map_err(|e| e.to_string())?;
        crate::sandbox::check_workspace(&config.sandbox, cwd).map_err(|e| e.to_string())?;
        let opts = AppOptions {
            interactive: true,
            approve: Vec::new(),
            approve_all: false,
            backend_forced: b.backend_forced,
            backend: None,
            ephemeral: false,
            work_dir: Some(cwd.to_path_buf()),
        };
        if !cwd.is_dir() {
            return Err(format!("cwd '{}' is not a directory", cwd.display()));
        }
        let app = App::build(config, b.paths.clone(), b.overrides.clone(), opts)
            .map_err(|e| e.to_string())?;
        if b.no_plan {
            app.agent.set_turn_tweaks(crate::agent::tweaks::TurnTweaks {
                no_plan: true,
                ..Default::default()
            });
        }
        for e in &app.profiles.errors {
            tracing::warn!("skipped {e}");
        }
        Ok(app)
    }
}

/// The client's MCP servers as navi server entries, named `acp-<name>`.
fn client_servers(mcp: &[McpServer]) -> Result<BTreeMap<String, McpServerConfig>, String> {
    let mut out = BTreeMap::new();
    for s in mcp {
        let (name, cfg) = match s {
            McpServer::Stdio(s) => (
                &s.name,
                McpServerConfig {
                    transport: "stdio".into(),
                    command: s.command.to_string_lossy().into_owned(),
                    args: s.args.clone(),
                    env: s
                        .env
                        .iter()
                        .map(|e| (e.name.clone(), e.value.clone()))
                        .collect(),
                    ..McpServerConfig::default()
                },
            ),
            McpServer::Http(s) => (
                &s.name,
                McpServerConfig {
                    transport: "http".into(),
                    url: s.url.clone(),
                    headers: s
                        .headers
                        .iter()
                        .map(|h| (h.name.clone(), h.value.clone()))
                        .collect(),
                    ..McpServerConfig::default()
                },
            ),
            McpServer::Sse(s) => {
                return Err(format!(
                    "MCP server '{}': the SSE transport is not supported (use stdio or http)",
                    s.name
                ));
            }
            _ => return Err("an MCP server of an unknown transport".into()),
        };
        let clean: String = name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect::<String>()
            .replace("__", "_");
        let key = format!("acp-{}", clean.chars().take(28).collect::<String>());
        if out.insert(key.clone(), cfg).is_some() {
            return Err(format!("two MCP servers named '{name}'"));
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    fn servers(v: serde_json::Value) -> Vec<McpServer> {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn client_servers_become_valid_navi_entries() {
        let got = client_servers(&servers(json!([
            {"name": "git hub/x", "command": "/bin/gh-mcp", "args": ["-v"],
             "env": [{"name": "TOKEN", "value": "t"}]},
            {"type": "http", "name": "docs__api", "url": "http://127.0.0.1:9/mcp",
             "headers": [{"name": "Authorization", "value": "Bearer x"}]},
            {"name": "a-very-long-name-that-goes-on-and-on-and-on", "command": "x", "args": [], "env": []}
        ])))
        .unwrap();
        let names: Vec<&String> = got.keys().collect();
        assert_eq!(
            names,
            [
                "acp-a-very-long-name-that-goes-o",
                "acp-docs_api",
                "acp-git_hub_x"
            ]
        );
        for name in got.keys() {
            assert!(crate::config::mcp::valid_server_name(name), "{name}");
        }
        let gh = &got["acp-git_hub_x"];
        assert_eq!(gh.command, "/bin/gh-mcp");
        assert_eq!(gh.env["TOKEN"], "t");
        let http = &got["acp-docs_api"];
        assert_eq!(http.transport, "http");
        assert_eq!(http.headers["Authorization"], "Bearer x");
        crate::config::mcp::validate(&got, "test").unwrap();
    }

    #[test]
    fn sse_and_duplicate_servers_are_refused() {
        let sse =
            servers(json!([{"type": "sse", "name": "old", "url": "http://h/sse", "headers": []}]));
        assert!(client_servers(&sse).unwrap_err().contains("'old'"));
        let twice = servers(json!([
            {"name": "a", "command": "x", "args": [], "env": []},
            {"name": "a", "command": "y", "args": [], "env": []}
        ]));
        assert!(
            client_servers(&twice)
                .unwrap_err()
                .contains("two MCP servers named 'a'")
        );
    }
}
