//! What one model call sends, built in one place so every call of a turn —
//! planner calls, the tool loop, the iteration-cap summary — shares the same
//! byte-stable prefix (system prompt, tools, history) and only differs at the
//! end. Local servers reuse their KV cache only for a shared prefix.
//!
//! Invariants:
//! - The system prompt has no timestamps or counters; per-call notes go at
//!   the end (`context::build_messages`).
//! - Nothing is sent that is known not to fit the window: `check_room`
//!   refuses it with the numbers and the fix.
//! - A backend that sizes its context per request (Ollama) gets `num_ctx` =
//!   the window the agent plans with, so the server never truncates silently
//!   at its own default.
use super::AgentError;
use super::context::{NOTE_PREFIX, build_messages};
use super::tokens::{estimate, estimate_request};
use super::turn::Run;
use crate::config::ThinkSetting;
use crate::llm::{ChatMessage, ChatRequest};

impl Run<'_> {
    /// The messages of a call: system prompt, history, then `notes` at the end.
    pub(super) fn messages(&self, notes: &[String]) -> Vec<ChatMessage> {
        // The lean preset leaves the memory summary out (it would outweigh
        // the rest of a tiny model's prompt).
        let memory = if self.small.lean {
            None
        } else {
            self.memory.as_deref()
        };
        build_messages(&self.system(), memory, &self.conv.context, notes)
    }

    /// Puts loop notes into the history: appended to the last tool result
    /// of the context (stored, so every later request repeats them byte for
    /// byte), never as words of the user. False when there is no result to
    /// carry them (the caller may then send them with one request only).
    pub(super) fn notes_into_history(&mut self, notes: &[String]) -> Result<bool, AgentError> {
        if notes.is_empty() {
            return Ok(true);
        }
        let Some(idx) = self.conv.last_result_index() else {
            return Ok(false);
        };
        let text = notes
            .iter()
            .map(|n| format!("{NOTE_PREFIX} {n}"))
            .collect::<Vec<_>>()
            .join("\n");
        self.conv.amend_context(idx, &text)?;
        Ok(true)
    }

    /// The request for a call of this turn.
    pub(super) fn request(&self, messages: Vec<ChatMessage>, with_tools: bool) -> ChatRequest {
        let mut req = ChatRequest::new(&self.model, messages);
        req.slot = self.slot;
        // A constrained run offers its tools as text (`small.rs`).
        if with_tools && !self.small.constrained {
            req.tools = self.offered_schemas();
        }
        req.temperature = Some(self.profile.temperature);
        req.think = Some(if self.profile.think_enabled {
            self.agent.config.llm.think.clone()
        } else {
            ThinkSetting::Bool(false)
        });
        req.num_ctx = Some(
            self.backend
                .descriptor_for(&self.model)
                .num_ctx(self.tracker.window, self.agent.config.llm.num_ctx),
        );
        req.keep_alive = Some(self.agent.config.llm.keep_alive.clone());
        let cap = self.agent.config.llm.max_tokens;
        req.max_tokens = (cap > 0).then_some(cap);
        if !self.is_subagent() {
            // `navi run --max-tokens N` overrides the configured cap.
            if let Some(n) = self.agent.turn_tweaks(&self.session).max_tokens {
                req.max_tokens = Some(n);
            }
        }
        req
    }

    /// The scaled estimate of the next request without notes: system
    /// prompt, tools, memory and the whole context.
    pub(super) fn estimate_next(&self) -> u64 {
        let req = self.request(self.messages(&[]), true);
        self.tracker
            .scaled(estimate_request(&req.messages, &req.tools))
    }

    /// The session's token account now: the last measured figure plus the
    /// estimate of what was added since, never below the estimate of the
    /// whole next request (see `account.rs`).
    pub(super) fn account(&self) -> u64 {
        let est = self.estimate_next();
        match self.tracker.measured_len {
            Some(n) if n <= self.conv.context.len() => {
                let added: Vec<ChatMessage> = self.conv.context[n..]
                    .iter()
                    .map(|m| m.msg.clone())
                    .collect();
                (self.tracker.context_tokens + self.tracker.scaled(estimate(&added))).max(est)
            }
            _ => est,
        }
    }

    /// Refuses a call that cannot fit: a request larger than the window
    /// (with the numbers and the fix), or a conversation over the hard limit
    /// (compaction can help there).
    pub(super) fn check_room(&self, req: &ChatRequest) -> Result<(), AgentError> {
        let window = self.tracker.window;
        if window == 0 {
            return Ok(());
        }
        let used = self
            .tracker
            .scaled(estimate_request(&req.messages, &req.tools));
        let base = self.base_tokens(req);
        let newest = self.tracker.scaled(estimate(
            &req.messages[req.messages.len().saturating_sub(1)..],
        ));
        let history_helps = self.conv.context.len() > 1 && base + newest < window;
        if used >= window && !history_helps {
            return Err(AgentError::PromptTooLarge {
                needed: used,
                base,
                window,
                model: self.model.clone(),
                profile: self.profile.id.clone(),
            });
        }
        let limit = self.agent.config.context.hard_limit;
        if used as f64 > window as f64 * limit && self.conv.context.len() > 1 {
            return Err(AgentError::ContextFull {
                used,
                window,
                limit: (limit * 100.0) as u32,
            });
        }
        Ok(())
    }
}
