//! Navi: a personal, modular AI agent for the terminal.
//!
//! Layers (top depends on bottom, never the reverse): `cli` → `acp` → `ui` →
//! `app` → `agent` → `mcp` → `tools` → `checkpoint` → `memory`, `sandbox`,
//! `attach` → `session` → `llm`, `profile` → `config` → `logging` → `protocol`,
//! `util` and the other leaves, which import nothing in the crate
//! (docs/architecture.md; `tests/layering.rs` checks every import).
//!
//! Items are `pub(crate)` unless `main.rs`, `tests/` or `benches/` use them;
//! `unreachable_pub` keeps it so.
#![warn(unreachable_pub)]

pub(crate) mod acp;
pub mod agent;
pub mod app;
pub(crate) mod attach;
pub mod checkpoint;
pub mod cli;
pub mod config;
pub(crate) mod controls;
pub mod embedded;
pub mod llm;
pub(crate) mod logging;
pub(crate) mod mcp;
pub mod memory;
pub(crate) mod nofollow;
pub(crate) mod private_fs;
pub mod profile;
pub mod project;
pub mod protocol;
pub mod sandbox;
pub mod session;
pub(crate) mod text_diff;
pub mod tools;
pub mod ui;
pub(crate) mod util;
