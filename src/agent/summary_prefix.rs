//! Summary calls that reuse the session's KV cache: the request is the
//! session's own prefix — the same system message, memory and tool schemas,
//! then the messages being replaced exactly as they were sent — with one
//! instruction at the end. A server that caches prompts (llama-server's
//! `cache_prompt`, which puts it on the slot holding that prefix) evaluates
//! only the instruction. Used when it fits the window with room for a
//! summary; otherwise, or when the model answers with something other than
//! a summary (a tool call, nothing), the summary is asked for with a fresh
//! prompt (`compact_run.rs`).
use super::Agent;
use super::compaction::SUMMARY_PROMPT;
use super::tokens::{estimate_request, scale};
use crate::config::ThinkSetting;
use crate::llm::{ChatMessage, ChatRequest, Role};
use crate::profile::Profile;
use crate::session::StoredMessage;

/// The user line before a summarised part that starts with an answer.
const KEPT_APART: &str = "[navi: compaction] (an earlier message is pinned and kept apart)";
/// The instruction that ends a prefix summary request.
pub(crate) const SUMMARY_INSTRUCTION: &str = "[navi: compaction] Stop here: do not answer the conversation above and do not call any tool. Instead summarise it for yourself.";
/// A prefix summary needs at least this much room for its answer.
const MIN_ANSWER: u64 = 200;

/// The prefix of a request: its leading system messages and its tools
/// (every other field kept, so the call looks like the session's own).
pub(crate) fn prefix_of(req: &ChatRequest) -> ChatRequest {
    let mut p = req.clone();
    p.messages = req
        .messages
        .iter()
        .take_while(|m| m.role == Role::System)
        .cloned()
        .collect();
    p
}

impl Agent {
    /// The prefix of a session's requests outside a turn (for `/compact`):
    /// system message and tool schemas as `base_cost` has them, memory.
    pub(crate) fn session_prefix(&self, profile: &Profile, model: &str) -> Option<ChatRequest> {
        let mut req = self.base_cost(&profile.id).ok()?.request?;
        req.model = model.to_string();
        if let Some(m) = self.memory_summary().filter(|m| !m.trim().is_empty()) {
            req.messages.push(ChatMessage::system(format!(
                "{}\n\n{}",
                super::context::MEMORY_HEADING,
                m.trim()
            )));
        }
        req.think = Some(if profile.think_enabled {
            self.config.llm.think.clone()
        } else {
            ThinkSetting::Bool(false)
        });
        req.num_ctx = Some(self.config.llm.num_ctx);
        Some(req)
    }

    /// The summary request built on `prefix`, or `None` when it would not
    /// leave `MIN_ANSWER` tokens for the summary in the window.
    pub(crate) fn prefix_summary_request(
        &self,
        prefix: &ChatRequest,
        old: &[StoredMessage],
        (window, ratio, budget): (u64, f64, u64),
    ) -> Option<ChatRequest> {
        let mut req = prefix.clone();
        // Closed turns as every request has them (`integrity.rs`); a part
        // that starts with an answer (its question is pinned, so kept apart)
        // gets a user line first, so the roles still alternate.
        let old = super::integrity::close_history(old);
        if old.first().is_some_and(|m| m.role != Role::User) {
            req.messages.push(ChatMessage::user(KEPT_APART));
        }
        req.messages.extend(old);
        req.messages.push(ChatMessage::user(format!(
            "{SUMMARY_INSTRUCTION} {SUMMARY_PROMPT}"
        )));
        let used = scale(estimate_request(&req.messages, &req.tools), ratio);
        let limit = if window > 0 {
            (window as f64 * self.config.context.hard_limit.clamp(0.1, 1.0)) as u64
        } else {
            u64::MAX
        };
        let room = limit.saturating_sub(used).min(budget);
        if room < MIN_ANSWER || req.messages.iter().any(ChatMessage::has_images) {
            return None;
        }
        req.temperature = Some(self.config.context.summary_temperature);
        req.max_tokens = u32::try_from(room).ok();
        Some(req)
    }
}
