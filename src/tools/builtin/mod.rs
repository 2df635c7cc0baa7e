//! Built-in tools, one per file.
pub mod scratchpad;
pub mod todo;

use super::ToolRegistry;
use std::sync::Arc;

/// Registers every built-in tool that needs nothing but the shared `ToolEnv`.
pub fn register_all(reg: &mut ToolRegistry) {
    reg.register_builtin(Arc::new(todo::TodoTool));
    reg.register_builtin(Arc::new(scratchpad::ScratchpadTool));
}
