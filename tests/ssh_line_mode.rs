//! Navi over SSH, in line mode and from scripts:
//! real ptys, a real sshd, real MCP servers and the real `navi` binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]
#[path = "ssh_line_mode_cases/mcp.rs"]
mod mcp;
#[path = "ssh_line_mode_cases/mcp_http.rs"]
mod mcp_http;
#[path = "ssh_line_mode_cases/memory.rs"]
mod memory;
#[path = "ssh_line_mode_cases/terminal.rs"]
mod terminal;
