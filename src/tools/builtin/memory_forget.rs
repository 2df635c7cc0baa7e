//! `memory_forget`: delete remembered facts by key (and category).
use crate::memory::MemoryStore;
use crate::tools::{ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use std::sync::Arc;

pub(crate) struct MemoryForgetTool {
    pub(crate) memory: Arc<MemoryStore>,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct MemoryForgetArgs {
    key: String,
    category: Option<String>,
}

#[async_trait::async_trait]
impl TypedTool for MemoryForgetTool {
    type Args = MemoryForgetArgs;

    fn name(&self) -> &str {
        "memory_forget"
    }

    fn description(&self) -> &str {
        "Forget remembered facts with this key (optionally only in one category)."
    }

    async fn run(&self, a: MemoryForgetArgs, _ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let key = a.key.as_str();
        if key.trim().is_empty() {
            return Err(ToolError::empty("key"));
        }
        let category = a.category.as_deref().filter(|c| !c.trim().is_empty());
        match self.memory.forget(key, category) {
            Ok(gone) if gone.is_empty() => Ok(format!(
                "No remembered fact has the key '{key}'{}; memory_search shows what is stored.",
                category.map(|c| format!(" in '{c}'")).unwrap_or_default()
            )
            .into()),
            Ok(gone) => Ok(format!(
                "Forgot: {}",
                gone.iter()
                    .map(|f| format!("{}: {} = {}", f.category, f.key, f.value))
                    .collect::<Vec<_>>()
                    .join("; ")
            )
            .into()),
            Err(e) => Err(format!("cannot forget: {e}").into()),
        }
    }
}
