//! `memory_forget`: delete remembered facts by key (and category).
use crate::memory::MemoryStore;
use crate::tools::{Tool, ToolContext, ToolResult, args};
use serde_json::{Value, json};
use std::sync::Arc;

pub struct MemoryForgetTool {
    pub memory: Arc<MemoryStore>,
}

#[async_trait::async_trait]
impl Tool for MemoryForgetTool {
    fn name(&self) -> &str {
        "memory_forget"
    }

    fn description(&self) -> &str {
        "Forget remembered facts with this key (optionally only in one category)."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "key": {"type": "string"},
                "category": {"type": "string"}
            },
            "required": ["key"]
        })
    }

    async fn execute(&self, a: &Value, _ctx: &ToolContext) -> ToolResult {
        let key = match args::str_req(a, "key") {
            Ok(k) if !k.trim().is_empty() => k,
            Ok(_) => return ToolResult::err("argument 'key' is empty"),
            Err(e) => return ToolResult::err(e),
        };
        let category = match args::str_opt(a, "category") {
            Ok(c) => c.filter(|c| !c.trim().is_empty()),
            Err(e) => return ToolResult::err(e),
        };
        match self.memory.forget(key, category) {
            Ok(gone) if gone.is_empty() => ToolResult::ok(format!(
                "No remembered fact has the key '{key}'{}; memory_search shows what is stored.",
                category.map(|c| format!(" in '{c}'")).unwrap_or_default()
            )),
            Ok(gone) => ToolResult::ok(format!(
                "Forgot: {}",
                gone.iter()
                    .map(|f| format!("{}: {} = {}", f.category, f.key, f.value))
                    .collect::<Vec<_>>()
                    .join("; ")
            )),
            Err(e) => ToolResult::err(format!("cannot forget: {e}")),
        }
    }
}
