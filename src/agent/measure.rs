//! Real token counts where the server can give them. Before a request is
//! checked against the window (and before automatic compaction decides),
//! the server counts the next request (`LlmBackend::count_prompt`,
//! llama-server's `/apply-template` + `/tokenize`); the ratio count /
//! estimate becomes the run's ratio, so every figure derived from the
//! estimate — the account, the status bar, `/context`, the refusals —
//! follows the server's count. The fixed part (system message and tools)
//! is counted on its own once per run, for the refusal's "alone take" and
//! for `/context`. Servers that cannot count leave the estimate (see
//! `tokens.rs`), scaled by what their usage showed.
//!
//! Counting is lazy: only inside a turn or a command that shows a figure,
//! never at start-up; at most once per change of the context, and only the
//! first time in a run while the estimate is far below the window — and
//! then only the fixed part, whose count the backend keeps across runs (a
//! warm run asks nothing; see `llm/server_cache.rs`).
use super::compact_run::summary_budget;
use super::tokens::{chars_for, estimate, estimate_request, estimate_tools, ratio_of};
use super::turn::Run;
use crate::llm::{ChatMessage, ChatRequest};

/// Session state key: the server's count of the session's base request.
pub(crate) const BASE_KEY: &str = "base_tokens";

/// Below this share of the window a run counts only once.
const RECOUNT_FROM: f64 = 0.5;
/// A message longer than this is not sent to the server to be counted
/// (only the base is): it is cut to the room anyway.
const COUNT_MAX_CHARS: usize = 200_000;
/// What the cut message's note takes besides its head and tail.
const NOTE_CHARS: usize = 400;
/// A cut message keeps at least this much of its head and tail.
const MIN_MESSAGE_CHARS: usize = 600;

/// Tokens kept free for the answer: an eighth of the window, 256..=2048,
/// at most the per-call cap when there is one.
pub(crate) fn answer_reserve(window: u64, max_tokens: Option<u32>) -> u64 {
    let r = (window / 8).clamp(256, 2048);
    max_tokens.map_or(r, |m| r.min(u64::from(m).max(1)))
}

/// The base request of `req`: its first (system) message and its tools.
pub(crate) fn base_of(req: &ChatRequest) -> ChatRequest {
    let mut base = req.clone();
    base.messages.truncate(1);
    base
}

/// Estimated tokens of the base of `req`.
pub(crate) fn base_estimate(req: &ChatRequest) -> u64 {
    estimate(&req.messages[..req.messages.len().min(1)]) + estimate_tools(&req.tools)
}

impl super::Agent {
    /// The server's count of a session's base request as its last run
    /// counted it, when the base is still the same (`estimate` matches).
    pub(crate) fn stored_base_count(&self, session_id: &str, estimate: u64) -> Option<u64> {
        let v = self.store.get_state(session_id, BASE_KEY).ok()??;
        let (e, real) = v.split_once(' ')?;
        (e.parse::<u64>().ok()? == estimate)
            .then(|| real.parse().ok())
            .flatten()
    }

    /// `request_base_tokens` for a session: its base as the server counted
    /// it when it did, else the scaled estimate.
    pub(crate) fn session_base_tokens(
        &self,
        session_id: &str,
        profile_id: &str,
        ratio: f64,
    ) -> u64 {
        let Ok(cost) = self.base_cost(profile_id) else {
            return self.request_base_tokens(profile_id, ratio);
        };
        match self.stored_base_count(session_id, cost.total) {
            Some(real) => {
                let memory = self
                    .memory_summary()
                    .map_or(0, |m| estimate(&[ChatMessage::system(m)]));
                real + super::tokens::scale(memory, ratio)
            }
            None => self.request_base_tokens(profile_id, ratio),
        }
    }
}

impl Run<'_> {
    /// Lets the server count the next request (without notes) when the
    /// context changed since the last count, and learns the ratio.
    pub(super) async fn count_next(&mut self) {
        let len = self.conv.context.len();
        if self.tracker.counted_len == Some(len) || self.cancel.is_cancelled() {
            return;
        }
        let req = self.request(self.messages(&[]), true);
        let est = estimate_request(&req.messages, &req.tools);
        let window = self.tracker.window as f64;
        let far_below = window > 0.0 && (self.tracker.scaled(est) as f64) < window * RECOUNT_FROM;
        if self.tracker.counted_len.is_some() && far_below {
            return;
        }
        if far_below {
            // Far below the window the fixed part's count (which the
            // backend keeps across runs) gives the ratio: the whole request
            // is not sent to be counted.
            self.count_base(&req).await;
            if let Some((e, real)) = self.tracker.base_count {
                self.tracker.counted_len = Some(len);
                if let Some(r) = ratio_of(real, e) {
                    self.tracker.ratio = r;
                }
                return;
            }
        }
        let Some(real) = self.backend.count_prompt(&req).await else {
            // Not a counting server: do not ask again in this run.
            self.tracker.counted_len = Some(usize::MAX);
            return;
        };
        self.tracker.counted_len = Some(len);
        if let Some(r) = ratio_of(real, est) {
            self.tracker.ratio = r;
        }
        self.count_base(&req).await;
    }

    /// Counts the base request once per run (again when it changed, e.g.
    /// tools were added) and stores it with the session for `/context`.
    async fn count_base(&mut self, req: &ChatRequest) {
        let est = base_estimate(req);
        if self.tracker.base_count.is_some_and(|(e, _)| e == est) {
            return;
        }
        let Some(real) = self.backend.count_prompt(&base_of(req)).await else {
            return;
        };
        self.tracker.base_count = Some((est, real));
        if let Some(store) = self.conv.store()
            && !self.is_subagent()
        {
            let _ = store.put_state(&self.conv.session_id, BASE_KEY, &format!("{est} {real}"));
        }
    }

    /// Tokens of the base of `req`: the server's count when it counted this
    /// base, else the scaled estimate.
    pub(super) fn base_tokens(&self, req: &ChatRequest) -> u64 {
        let est = base_estimate(req);
        match self.tracker.base_count {
            Some((e, real)) if e == est => real,
            _ => self.tracker.scaled(est),
        }
    }

    /// A session that has not learnt a ratio yet starts from the one the
    /// most recently active session learnt for the same model (kept in the
    /// database, so across processes): its first figures are already close
    /// to the server's on servers that cannot count.
    pub(super) fn inherit_ratio(&mut self) {
        let Some(store) = self.conv.store() else {
            return;
        };
        if self.is_subagent()
            || self.tracker.measured_len.is_some()
            || store
                .get_state(&self.conv.session_id, super::account::RATIO_KEY)
                .ok()
                .flatten()
                .is_some()
        {
            return;
        }
        if let Some(r) = super::account::latest_model_ratio(store, &self.model) {
            self.tracker.ratio = r;
        }
    }

    /// Before the user's message is fitted: the server counts the request
    /// with it (or only the base, for a huge message).
    pub(super) async fn count_for_fit(&mut self) {
        let huge = self
            .conv
            .context
            .last()
            .is_some_and(|m| m.msg.text().len() > COUNT_MAX_CHARS);
        if huge {
            let req = self.request(self.messages(&[]), true);
            self.count_base(&req).await;
        } else {
            self.count_next().await;
        }
    }

    /// Characters the newest user message may take so that the request
    /// fits under the hard limit with room for the answer: the window less
    /// the base (system, tools, memory), the answer's reserve and, when
    /// there are earlier turns, the summary they compact into.
    pub(super) fn message_room(&self) -> usize {
        let window = self.tracker.window;
        if window == 0 {
            return usize::MAX;
        }
        let req = self.request(self.messages(&[]), true);
        let limit = (window as f64 * self.agent.config.context.hard_limit.clamp(0.1, 1.0)) as u64;
        let memory: Vec<ChatMessage> = req.messages[1..]
            .iter()
            .take_while(|m| m.role == crate::llm::Role::System)
            .cloned()
            .collect();
        let earlier = self.conv.context.len() > 1;
        let fixed = self.base_tokens(&req)
            + self.tracker.scaled(estimate(&memory))
            + answer_reserve(window, req.max_tokens)
            + if earlier { summary_budget(window) } else { 0 };
        let room = chars_for(limit.saturating_sub(fixed), self.tracker.ratio);
        room.saturating_sub(NOTE_CHARS).max(MIN_MESSAGE_CHARS)
    }
}
