//! Shared helpers for integration tests (`mod support;` in each test file).
#![allow(dead_code)]

pub mod checker;
pub mod fake_llm;
pub mod source_graph;
pub mod sshd;
pub mod stream;
pub use fake_llm::*;
