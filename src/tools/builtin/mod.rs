//! Built-in tools, one per file.
pub mod code_exec;
pub mod filesystem;
pub mod http_request;
pub mod image_view;
pub mod list_tools;
pub mod scratchpad;
pub mod ssh_exec;
pub mod terminal;
pub mod todo;
pub mod tool_manual;
pub mod web_search;
pub mod web_view;

use super::ToolRegistry;
use std::sync::Arc;

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
}
