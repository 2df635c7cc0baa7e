//! Daily use over SSH, in line mode and from scripts (issue 26, items 1-9):
//! real ptys, a real sshd, real MCP servers and the real `navi` binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "daily_use_cases/mcp.rs"]
mod mcp;
#[path = "daily_use_cases/mcp_http.rs"]
mod mcp_http;
#[path = "daily_use_cases/memory.rs"]
mod memory;
#[path = "daily_use_cases/terminal.rs"]
mod terminal;
