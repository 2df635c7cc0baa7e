//! `memory_search`: look up accepted long-term facts about the user.
use crate::memory::{FactStatus, MemoryStore};
use crate::tools::{Tool, ToolContext, ToolResult, args};
use serde_json::{Value, json};
use std::sync::Arc;

pub struct MemorySearchTool {
    pub memory: Arc<MemoryStore>,
}

#[async_trait::async_trait]
impl Tool for MemorySearchTool {
    fn name(&self) -> &str {
        "memory_search"
    }

    fn description(&self) -> &str {
        "Search what you remember about the user (facts from past sessions) by keywords."
    }

    fn parameters(&self) -> Value {
        json!({
            "type": "object",
            "properties": {
                "query": {"type": "string", "description": "keywords"},
                "limit": {"type": "integer", "description": "max results, default 15"}
            },
            "required": ["query"]
        })
    }

    async fn execute(&self, a: &Value, _ctx: &ToolContext) -> ToolResult {
        let query = match args::str_req(a, "query") {
            Ok(q) if !q.trim().is_empty() => q,
            Ok(_) => return ToolResult::err("argument 'query' is empty; give a few keywords"),
            Err(e) => return ToolResult::err(e),
        };
        let limit = match args::u64_opt(a, "limit") {
            Ok(n) => n.unwrap_or(15).clamp(1, 100) as usize,
            Err(e) => return ToolResult::err(e),
        };
        match self.memory.search(query, limit, Some(FactStatus::Active)) {
            Ok(facts) if facts.is_empty() => {
                ToolResult::ok(format!("Nothing remembered matches '{query}'."))
            }
            Ok(facts) => ToolResult::ok(
                facts
                    .iter()
                    .map(|f| format!("{}: {} = {}", f.category, f.key, f.value))
                    .collect::<Vec<_>>()
                    .join("\n"),
            ),
            Err(e) => ToolResult::err(format!("cannot search memory: {e}")),
        }
    }
}
