//! Running a compaction: `plan_compaction` asks the model for a summary and
//! builds the new context without writing anything (so `/compact --preview`
//! can show it); `apply_compaction` writes it, only if the session did not
//! change in between. Automatic compaction (before and after a turn) and
//! `/compact` are plan + apply.
//!
//! The plan keeps as many recent turns as fit the target (a fraction of the
//! window, `[context].compression_target`), down to the newest turn alone.
//! The summary request is itself sized to the window; when the server still
//! refuses it as too long, it is retried without tool output, then with only
//! the newer half of what is being replaced.
use super::account::{self, ContextAccount};
use super::compaction::{
    MAX_SUMMARY_INPUT_CHARS, SUMMARY_HEADING, SUMMARY_PROMPT, choose_keep, clean_summary,
    partition, render_for_summary,
};
use super::events::{AgentEvent, EventSink};
use super::tokens::{estimate, scale};
use super::{Agent, AgentError};
use crate::config::ThinkSetting;
use crate::llm::{ChatChunk, ChatMessage, ChatRequest, LlmBackend, LlmError};
use crate::session::{MessageKind, StoredMessage};
use tokio_util::sync::CancellationToken;

/// What a compaction would do; nothing is written until it is applied.
#[derive(Clone, Debug, PartialEq)]
pub struct CompactionPlan {
    pub session_id: String,
    pub summary: String,
    /// The context messages the summary replaces.
    pub replaced: Vec<StoredMessage>,
    /// The context after compaction (summary first).
    pub new_context: Vec<StoredMessage>,
    /// Estimated tokens of the next request before and after.
    pub tokens_before: u64,
    pub tokens_after: u64,
    pub window: u64,
    /// Whole recent turns kept verbatim.
    pub keep: usize,
    /// Length and last row id of the context the plan was made from.
    pub context_len: usize,
    pub last_context_id: Option<i64>,
}

/// Tokens the summary may take: an eighth of the window, 200..=1500.
pub fn summary_budget(window: u64) -> u64 {
    if window == 0 {
        1000
    } else {
        (window / 8).clamp(200, 1500)
    }
}

fn tokens_of(messages: &[StoredMessage], ratio: f64) -> u64 {
    let msgs: Vec<ChatMessage> = messages.iter().map(|m| m.msg.clone()).collect();
    scale(estimate(&msgs), ratio)
}

impl Agent {
    /// Tokens of a profile's requests besides the history: system prompt,
    /// tool schemas and the memory summary (estimated, scaled by `ratio`).
    pub fn request_base_tokens(&self, profile_id: &str, ratio: f64) -> u64 {
        let base = self.base_cost(profile_id).map_or(0, |c| c.total);
        let memory = self
            .memory_summary()
            .map_or(0, |m| estimate(&[ChatMessage::system(m)]));
        scale(base + memory, ratio)
    }

    /// Plans a compaction of a session keeping at most `keep` recent turns
    /// (`None`: `[context].keep_recent`), fewer when needed to reach the
    /// target. `Ok(None)`: nothing old enough to compact. Writes nothing.
    pub async fn plan_compaction(
        &self,
        session_id: &str,
        keep: Option<usize>,
        _sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<Option<CompactionPlan>, AgentError> {
        let session = self
            .store
            .load(session_id)?
            .ok_or_else(|| AgentError::NoSession(session_id.to_string()))?;
        let profile = self.profile(&session.meta.profile_id)?.clone();
        let backend = self.backend_for(&profile)?;
        let model = tokio::select! {
            s = self.select_model(&*backend, &profile) => s?.model,
            _ = cancel.cancelled() => return Err(LlmError::Cancelled.into()),
        };
        let window = self.context_window(&*backend, &model).await;
        let ratio = account::load_ratio(&self.store, session_id);
        let base = self.request_base_tokens(&profile.id, ratio);
        let cfg = &self.config.context;
        let target = if window > 0 {
            (window as f64 * cfg.compression_target.clamp(0.05, 1.0)) as u64
        } else {
            u64::MAX
        };
        let reserve = summary_budget(window);
        let start = keep.unwrap_or(cfg.keep_recent as usize);
        let ctx = &session.context;
        let Some(keep) = choose_keep(ctx, start, base + reserve, target, |m| tokens_of(m, ratio))
        else {
            return Ok(None);
        };
        let (old, recent) = partition(ctx, keep);
        let summary = self
            .summarise(&*backend, &model, window, &old, cancel)
            .await?;
        let mut new_context = vec![StoredMessage::new(
            ChatMessage::user(format!("{SUMMARY_HEADING}\n{summary}")),
            MessageKind::Summary,
        )];
        new_context.extend(recent);
        Ok(Some(CompactionPlan {
            session_id: session_id.to_string(),
            summary,
            tokens_before: base + tokens_of(ctx, ratio),
            tokens_after: base + tokens_of(&new_context, ratio),
            replaced: old,
            new_context,
            window,
            keep,
            context_len: ctx.len(),
            last_context_id: ctx.last().map(|m| m.id),
        }))
    }

    /// The summary of `old`, retried smaller when the server says the
    /// summary request itself does not fit.
    async fn summarise(
        &self,
        backend: &dyn LlmBackend,
        model: &str,
        window: u64,
        old: &[StoredMessage],
        cancel: &CancellationToken,
    ) -> Result<String, AgentError> {
        let budget = summary_budget(window);
        let prompt_tokens = estimate(&[ChatMessage::system(SUMMARY_PROMPT)]);
        let room = if window > 0 {
            window.saturating_sub(budget + prompt_tokens + 64) as usize * 4
        } else {
            MAX_SUMMARY_INPUT_CHARS
        };
        let max_chars = room.clamp(1_000, MAX_SUMMARY_INPUT_CHARS);
        let newer_half = &old[old.len() / 2..];
        let attempts = [
            render_for_summary(old, max_chars, true),
            render_for_summary(old, max_chars, false),
            render_for_summary(newer_half, max_chars / 2, false),
        ];
        let mut last_err = None;
        for input in attempts {
            match self
                .summary_call(backend, model, budget, input, cancel)
                .await
            {
                Ok(raw) => {
                    return clean_summary(&raw, budget as usize * 4).ok_or_else(|| {
                        LlmError::Protocol {
                            backend: backend.kind().as_str().into(),
                            message: "the summary came back empty or unusable; the context was left as it was".into(),
                        }
                        .into()
                    });
                }
                Err(e) if e.is_context_overflow() => last_err = Some(e),
                Err(e) => return Err(e.into()),
            }
        }
        Err(last_err.unwrap_or(LlmError::Cancelled).into())
    }

    async fn summary_call(
        &self,
        backend: &dyn LlmBackend,
        model: &str,
        budget: u64,
        input: String,
        cancel: &CancellationToken,
    ) -> Result<String, LlmError> {
        let mut req = ChatRequest::new(
            model,
            vec![
                ChatMessage::system(SUMMARY_PROMPT),
                ChatMessage::user(input),
            ],
        );
        req.temperature = Some(self.config.context.summary_temperature);
        req.think = Some(ThinkSetting::Bool(false));
        req.num_ctx = Some(self.config.llm.num_ctx);
        req.max_tokens = u32::try_from(budget).ok();
        let mut stream = crate::llm::guard::open(backend, &req, &self.guard, cancel).await?;
        let mut summary = String::new();
        while let Some(c) = stream.next().await {
            match c? {
                ChatChunk::Text(t) => summary.push_str(&t),
                ChatChunk::Done { .. } => break,
                _ => {}
            }
        }
        Ok(summary)
    }

    /// Writes a plan. Refused when the session's context changed since the
    /// plan was made (a turn ran in between). Returns (messages before, after).
    pub fn apply_compaction(
        &self,
        session_id: &str,
        plan: &CompactionPlan,
    ) -> Result<(usize, usize), AgentError> {
        // Rewrites the context buffer: only the session's writer may.
        self.store.lock(session_id)?;
        let session = self
            .store
            .load(session_id)?
            .ok_or_else(|| AgentError::NoSession(session_id.to_string()))?;
        if session.context.len() != plan.context_len
            || session.context.last().map(|m| m.id) != plan.last_context_id
        {
            return Err(AgentError::Stale(session_id.to_string()));
        }
        self.store.replace_context(session_id, &plan.new_context)?;
        self.store
            .set_context_tokens(session_id, plan.tokens_after)?;
        if plan.window > 0 {
            account::save_window(&self.store, session_id, plan.window)?;
        }
        Ok((plan.context_len, plan.new_context.len()))
    }

    /// Plan + apply + a `context_compressed` event. Returns (messages before,
    /// after); equal numbers mean there was nothing old enough to compact.
    pub async fn compact_keep(
        &self,
        session_id: &str,
        keep_turns: Option<usize>,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<(usize, usize), AgentError> {
        self.store.lock(session_id)?;
        let Some(plan) = self
            .plan_compaction(session_id, keep_turns, sink, cancel)
            .await?
        else {
            let n = self.store.load(session_id)?.map_or(0, |s| s.context.len());
            return Ok((n, n));
        };
        let (before, after) = self.apply_compaction(session_id, &plan)?;
        sink.emit(AgentEvent::ContextCompressed {
            messages_before: before,
            messages_after: after,
            tokens_before: plan.tokens_before,
            tokens_after: plan.tokens_after,
            max_context_tokens: plan.window,
        })
        .await;
        Ok((before, after))
    }

    /// `/compact`: keeps at most the last two turns verbatim.
    pub async fn compact(
        &self,
        session_id: &str,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<(usize, usize), AgentError> {
        self.compact_keep(session_id, Some(2), sink, cancel).await
    }

    /// The stored token account of a session.
    pub fn context_account(&self, session_id: &str) -> Result<ContextAccount, AgentError> {
        Ok(ContextAccount::load(&self.store, session_id)?)
    }
}
