//! Built-in tools, one per file.
pub mod code_exec;
pub mod filesystem;
pub mod http_request;
pub mod image_view;
pub mod list_tools;
pub(crate) mod load_tools;
pub(crate) mod memory_forget;
pub(crate) mod memory_search;
pub mod reload_tools;
pub(crate) mod scratchpad;
pub mod ssh_exec;
pub mod terminal;
pub(crate) mod todo;
pub mod tool_manual;
pub mod web_search;
pub mod web_view;
pub mod write_tool;

use super::ToolRegistry;
use std::sync::{Arc, RwLock};

/// Registers every built-in tool that needs nothing but the shared `ToolEnv`.
pub fn register_all(reg: &mut ToolRegistry) {
    reg.register_builtin(Arc::new(todo::TodoTool));
    reg.register_builtin(Arc::new(scratchpad::ScratchpadTool));
    reg.register_builtin(Arc::new(filesystem::FilesystemTool));
    reg.register_builtin(Arc::new(terminal::TerminalTool));
    reg.register_builtin(Arc::new(code_exec::CodeExecTool));
    reg.register_builtin(Arc::new(http_request::HttpRequestTool));
    reg.register_builtin(Arc::new(web_search::WebSearchTool));
    reg.register_builtin(Arc::new(web_view::WebViewTool));
    reg.register_builtin(Arc::new(ssh_exec::SshExecTool));
    reg.register_builtin(Arc::new(image_view::ImageViewTool));
    reg.register_builtin(Arc::new(list_tools::ListToolsTool));
    reg.register_builtin(Arc::new(tool_manual::ToolManualTool));
    reg.register_builtin(Arc::new(load_tools::LoadToolsTool));
}

/// Registers the tools that change the registry itself (`reload_tools`,
/// `write_tool`); they hold a weak reference to it.
pub fn register_self_extension(reg: &Arc<RwLock<ToolRegistry>>) {
    if let Ok(mut r) = reg.write() {
        r.register_builtin(Arc::new(reload_tools::ReloadToolsTool {
            registry: Arc::downgrade(reg),
        }));
        r.register_builtin(Arc::new(write_tool::WriteToolTool {
            registry: Arc::downgrade(reg),
        }));
    }
}

/// Registers `memory_search` and `memory_forget` (only when memory is on).
pub(crate) fn register_memory(reg: &mut ToolRegistry, memory: &Arc<crate::memory::MemoryStore>) {
    reg.register_builtin(Arc::new(memory_search::MemorySearchTool {
        memory: memory.clone(),
    }));
    reg.register_builtin(Arc::new(memory_forget::MemoryForgetTool {
        memory: memory.clone(),
    }));
}
