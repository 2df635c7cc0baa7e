//! The one navi core `navi acp` runs, and how an ACP session is opened on it.
//!
//! One [`App`] serves every session, whatever its working directory (one
//! database, one writer thread): an ACP session names its own `cwd`, which
//! becomes its session's working directory, and the MCP servers a client
//! gives for one session become that session's own servers (they start
//! with its first prompt and stop when it closes). The core is built when
//! the first session (or the first listing) needs it.

use crate::app::launch::{Failure, GlobalArgs, load_config};
use crate::app::{App, AppOptions, OpenOptions, TurnTweaks};
use crate::config::{Config, McpServerConfig, Overrides, Paths};
use agent_client_protocol::v1::schema::McpServer;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

/// What the core is built from.
struct Base {
    config: Config,
    paths: Paths,
    overrides: Overrides,
    backend_forced: bool,
    no_plan: bool,
}

/// See the module docs.
pub(crate) struct Core {
    base: Base,
    built: Mutex<Option<Arc<App>>>,
    /// The process's directory: the working directory of sessions that do
    /// not name one.
    home_cwd: PathBuf,
}

impl Core {
    /// Reads the configuration (exit 2 on a bad one) and starts file
    /// logging. Builds nothing.
    pub(crate) fn load(g: &GlobalArgs) -> Result<(Core, crate::logging::LogGuard), Failure> {
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
        let core = Core {
            base,
            built: Mutex::new(None),
            home_cwd,
        };
        Ok((core, log))
    }

    /// The directory of the process (sessions without one of their own).
    pub(crate) fn home_cwd(&self) -> &Path {
        &self.home_cwd
    }

    /// The core, built on first use.
    pub(crate) fn app(&self) -> Result<Arc<App>, String> {
        let mut built = self.built.lock().map_err(|_| "internal lock poisoned")?;
        if let Some(app) = built.as_ref() {
            return Ok(app.clone());
        }
        let b = &self.base;
        let opts = AppOptions {
            interactive: true,
            approve: Vec::new(),
            approve_all: false,
            full_auto: false,
            backend_forced: b.backend_forced,
            backend: None,
            ephemeral: false,
            one_connection: false,
            work_dir: Some(self.home_cwd.clone()),
            session_model: None,
        };
        let app = App::build(b.config.clone(), b.paths.clone(), b.overrides.clone(), opts)
            .map_err(|e| e.to_string())?;
        if b.no_plan {
            app.set_default_tweaks(TurnTweaks {
                no_plan: true,
                ..Default::default()
            });
        }
        for e in app.profile_errors() {
            tracing::warn!("skipped {e}");
        }
        let app = Arc::new(app);
        *built = Some(app.clone());
        Ok(app)
    }

    /// The core if it was built (to stop its MCP servers at the end).
    pub(crate) fn built(&self) -> Option<Arc<App>> {
        self.built.lock().ok().and_then(|b| b.clone())
    }

    /// How a session in `cwd` (empty: the process's) with the client's
    /// MCP servers `mcp` is opened; the app checks the directory.
    pub(crate) fn options(&self, cwd: &Path, mcp: &[McpServer]) -> Result<OpenOptions, String> {
        let cwd = if cwd.as_os_str().is_empty() {
            self.home_cwd.clone()
        } else {
            cwd.to_path_buf()
        };
        Ok(OpenOptions {
            work_dir: Some(cwd),
            mcp_servers: client_servers(mcp)?,
            ..Default::default()
        })
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
