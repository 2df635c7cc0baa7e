//! Every integration test in one binary, so `cargo test` links the test code once
//! instead of once per file. A new test file `tests/foo.rs` must be added below as
//! `#[path = "foo.rs"] mod foo;` (the `#[path]` keeps nested `#[path]` modules
//! resolving relative to `tests/`); shared helpers are declared once here and
//! used from test files with `use crate::support;`. A file in `tests/` that
//! nothing here reaches fails `test_suite` (it would otherwise never run).
#![allow(clippy::unwrap_used, clippy::expect_used)]

// Shared helpers (directories with a mod.rs).
#[path = "acp/support.rs"]
mod acp_support;
mod cli_support;
mod common;
mod context_support;
mod mcp_support;
mod plain_support;
mod sandbox_support;
mod support;
mod tools_support;
mod tui_loop_support;
mod tui_support;

// One module per former test binary.
#[path = "acp.rs"]
mod acp;
#[path = "acp_acpx.rs"]
mod acp_acpx;
#[path = "acp_bad_input.rs"]
mod acp_bad_input;
#[path = "acp_client_fs.rs"]
mod acp_client_fs;
#[path = "acp_client_sandbox.rs"]
mod acp_client_sandbox;
#[path = "acp_client_terminal.rs"]
mod acp_client_terminal;
#[path = "acp_edits.rs"]
mod acp_edits;
#[path = "acp_history.rs"]
mod acp_history;
#[path = "acp_mcp.rs"]
mod acp_mcp;
#[path = "acp_prompt.rs"]
mod acp_prompt;
#[path = "acp_providers.rs"]
mod acp_providers;
#[path = "acp_selectors.rs"]
mod acp_selectors;
#[path = "acp_utf8.rs"]
mod acp_utf8;
#[path = "acp_workdirs.rs"]
mod acp_workdirs;
#[path = "agent_delegate.rs"]
mod agent_delegate;
#[path = "agent_loop.rs"]
mod agent_loop;
#[path = "agent_planning.rs"]
mod agent_planning;
#[path = "checkpoints.rs"]
mod checkpoints;
#[path = "checkpoints_paths.rs"]
mod checkpoints_paths;
#[path = "checkpoints_safety.rs"]
mod checkpoints_safety;
#[path = "checkpoints_scale.rs"]
mod checkpoints_scale;
#[path = "checkpoints_undo.rs"]
mod checkpoints_undo;
#[path = "cli_commands.rs"]
mod cli_commands;
#[path = "cli_complete.rs"]
mod cli_complete;
#[path = "cli_completion_man.rs"]
mod cli_completion_man;
#[path = "cli_scripts.rs"]
mod cli_scripts;
#[path = "config.rs"]
mod config;
#[path = "context_compact.rs"]
mod context_compact;
#[path = "context_mgmt.rs"]
mod context_mgmt;
#[path = "context_oversize.rs"]
mod context_oversize;
#[path = "context_tokens.rs"]
mod context_tokens;
#[path = "conversation_cases.rs"]
mod conversation_cases;
#[path = "conversation_gemma.rs"]
mod conversation_gemma;
#[path = "conversation_gen.rs"]
mod conversation_gen;
#[path = "layering.rs"]
mod layering;
#[path = "llm_guard.rs"]
mod llm_guard;
#[path = "llm_ollama.rs"]
mod llm_ollama;
#[path = "llm_openai.rs"]
mod llm_openai;
#[path = "llm_realserver.rs"]
mod llm_realserver;
#[path = "mcp.rs"]
mod mcp;
#[path = "mcp_errors.rs"]
mod mcp_errors;
#[path = "mcp_readme.rs"]
mod mcp_readme;
#[path = "memory.rs"]
mod memory;
#[path = "message_blocks.rs"]
mod message_blocks;
#[path = "plain_pipe.rs"]
mod plain_pipe;
#[path = "plain_pty.rs"]
mod plain_pty;
#[path = "planning_cli.rs"]
mod planning_cli;
#[path = "planning_cost.rs"]
mod planning_cost;
#[path = "process_lifetime.rs"]
mod process_lifetime;
#[path = "project.rs"]
mod project;
#[path = "project_acp.rs"]
mod project_acp;
#[path = "project_modes.rs"]
mod project_modes;
#[path = "project_plain.rs"]
mod project_plain;
mod protocol;
#[path = "providers.rs"]
mod providers;
#[path = "run_approvals.rs"]
mod run_approvals;
#[path = "run_cli.rs"]
mod run_cli;
#[path = "run_context.rs"]
mod run_context;
#[path = "sandbox.rs"]
mod sandbox;
#[path = "sandbox_cli.rs"]
mod sandbox_cli;
#[path = "sandbox_config.rs"]
mod sandbox_config;
#[path = "sandbox_escapes.rs"]
mod sandbox_escapes;
#[path = "sandbox_git.rs"]
mod sandbox_git;
#[path = "sandbox_tty.rs"]
mod sandbox_tty;
#[path = "security_cli.rs"]
mod security_cli;
#[path = "server_cache.rs"]
mod server_cache;
#[path = "session_handle.rs"]
mod session_handle;
#[path = "session_lock.rs"]
mod session_lock;
#[path = "session_migrate.rs"]
mod session_migrate;
#[path = "session_pages.rs"]
mod session_pages;
#[path = "session_store.rs"]
mod session_store;
#[path = "session_upgrade.rs"]
mod session_upgrade;
#[path = "small_echo.rs"]
mod small_echo;
#[path = "small_models.rs"]
mod small_models;
#[path = "ssh_line_mode.rs"]
mod ssh_line_mode;
#[path = "test_suite.rs"]
mod test_suite;
#[path = "tool_display.rs"]
mod tool_display;
#[path = "tools_code_exec.rs"]
mod tools_code_exec;
#[path = "tools_display.rs"]
mod tools_display;
#[path = "tools_exposure.rs"]
mod tools_exposure;
#[path = "tools_filesystem.rs"]
mod tools_filesystem;
#[path = "tools_meta.rs"]
mod tools_meta;
#[path = "tools_on_demand.rs"]
mod tools_on_demand;
#[path = "tools_ssh.rs"]
mod tools_ssh;
#[path = "tools_terminal.rs"]
mod tools_terminal;
#[path = "tools_terminal_allowlist.rs"]
mod tools_terminal_allowlist;
#[path = "tools_terminal_bash.rs"]
mod tools_terminal_bash;
#[path = "tools_user.rs"]
mod tools_user;
#[path = "tools_web.rs"]
mod tools_web;
#[path = "tui_attach.rs"]
mod tui_attach;
#[path = "tui_cards.rs"]
mod tui_cards;
#[path = "tui_cells.rs"]
mod tui_cells;
#[path = "tui_e2e.rs"]
mod tui_e2e;
#[path = "tui_loop.rs"]
mod tui_loop;
#[path = "tui_overlays.rs"]
mod tui_overlays;
#[path = "tui_states.rs"]
mod tui_states;
#[path = "vision_cli.rs"]
mod vision_cli;
#[path = "wording.rs"]
mod wording;
