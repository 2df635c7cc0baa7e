//! The agent: planning, the tool-calling loop, thinking mechanics, context
//! building and token accounting. Knows no terminal: it emits `AgentEvent`s
//! and reads a cancellation token.

pub mod events;
