//! `memory_search`: look up accepted long-term facts about the user.
use crate::memory::{FactStatus, MemoryStore};
use crate::tools::{ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;

pub(crate) struct MemorySearchTool {
    pub(crate) memory: Arc<MemoryStore>,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct MemorySearchArgs {
    /// keywords
    query: String,
    /// max results, default 15
    limit: Option<u64>,
}

#[async_trait::async_trait]
impl TypedTool for MemorySearchTool {
    type Args = MemorySearchArgs;

    fn name(&self) -> &str {
        "memory_search"
    }

    fn description(&self) -> &str {
        "Search what you remember about the user (facts from past sessions) by keywords."
    }

    fn describe(&self, a: &MemorySearchArgs, _base: &std::path::Path) -> crate::protocol::CallInfo {
        let mut info = crate::protocol::CallInfo::titled(
            crate::protocol::CallKind::Search,
            "memory_search",
            Some(&a.query),
        );
        info.query = Some(a.query.clone());
        info
    }

    async fn run(&self, a: MemorySearchArgs, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let query = a.query.as_str();
        if query.trim().is_empty() {
            return Err(ToolError::args(
                "argument 'query' is empty; give a few keywords",
            ));
        }
        let limit = a.limit.unwrap_or(15).clamp(1, 100) as usize;
        match self.memory.search(query, limit, Some(FactStatus::Active)) {
            Ok(facts) if facts.is_empty() => {
                Ok(format!("Nothing remembered matches '{query}'.").into())
            }
            Ok(facts) => Ok(ToolOutput::new(
                facts
                    .iter()
                    .map(|f| format!("{}: {} = {}", f.category, f.key, f.value))
                    .collect::<Vec<_>>()
                    .join("\n"),
            )),
            Err(e) => Err(format!("cannot search memory: {e}").into()),
        }
    }
}
