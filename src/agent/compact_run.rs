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
use super::tokens::{estimate, scale};
use super::{Agent, AgentError, Session};
use crate::config::ThinkSetting;
use crate::llm::{ChatChunk, ChatMessage, ChatRequest, LlmBackend, LlmError};
use crate::protocol::{AgentEvent, EventSink};
use crate::session::{MessageKind, StoredMessage};
use tokio_util::sync::CancellationToken;

pub use crate::protocol::CompactMode;

/// What a compaction would do; nothing is written until it is applied.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct CompactionPlan {
    pub(crate) summary: String,
    /// The context messages the summary replaces.
    pub(crate) replaced: Vec<StoredMessage>,
    /// The context after compaction (summary first).
    pub(crate) new_context: Vec<StoredMessage>,
    /// Estimated tokens of the next request before and after.
    pub(crate) tokens_before: u64,
    pub(crate) tokens_after: u64,
    pub(crate) window: u64,
    /// Whole recent turns kept verbatim.
    pub(crate) keep: usize,
    /// Pinned messages from the replaced part, kept verbatim.
    pub(crate) pinned_kept: usize,
    /// Length and last row id of the context the plan was made from.
    pub(crate) context_len: usize,
    pub(crate) last_context_id: Option<i64>,
}

/// Tokens the summary may take: an eighth of the window, 200..=1500.
pub(crate) fn summary_budget(window: u64) -> u64 {
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
    pub(crate) fn request_base_tokens(&self, profile_id: &str, ratio: f64) -> u64 {
        let base = self.base_cost(profile_id).map_or(0, |c| c.total);
        let memory = self
            .memory_summary()
            .map_or(0, |m| estimate(&[ChatMessage::system(m)]));
        scale(base + memory, ratio)
    }

    /// Plans a compaction of a session keeping at most `keep` recent turns
    /// (`None`: `[context].keep_recent`), fewer when needed to reach the
    /// target. `Ok(None)`: nothing old enough to compact. Writes nothing.
    pub(crate) async fn plan_compaction(
        &self,
        open: &Session,
        keep: Option<usize>,
        prefix: Option<&ChatRequest>,
        cancel: &CancellationToken,
    ) -> Result<Option<CompactionPlan>, AgentError> {
        let session_id = open.id();
        if open.is_pending() {
            // Nothing sent yet: nothing to compact.
            return Ok(None);
        }
        let session = open
            .load()?
            .ok_or_else(|| AgentError::NoSession(session_id.to_string()))?;
        let profile = self.profile(&session.meta.profile_id)?.clone();
        let backend = self.backend_for(&profile)?;
        let model = tokio::select! {
            s = self.select_model(Some(open), &*backend, &profile) => s?.model,
            _ = cancel.cancelled() => return Err(LlmError::Cancelled.into()),
        };
        let window = self.context_window(&*backend, &model).await;
        let ratio = account::load_ratio(&self.store, session_id);
        let base = self.session_base_tokens(session_id, &profile.id, ratio);
        let cfg = &self.config.context;
        let target = if window > 0 {
            (window as f64 * cfg.compression_target.clamp(0.05, 1.0)) as u64
        } else {
            u64::MAX
        };
        let reserve = summary_budget(window);
        let start = keep.unwrap_or(cfg.keep_recent as usize);
        let ctx = &session.context;
        let pins = crate::session::pins::load(&self.store, session_id)?;
        let is_pinned = |m: &StoredMessage| {
            crate::session::pins::pinnable(m) && pins.contains(&crate::session::pins::key(m))
        };
        let pinned: Vec<StoredMessage> = ctx.iter().filter(|m| is_pinned(m)).cloned().collect();
        let fixed = base + reserve + tokens_of(&pinned, ratio);
        let Some(keep) = choose_keep(ctx, start, fixed, target, |m| tokens_of(m, ratio)) else {
            return Ok(None);
        };
        let (old, recent) = partition(ctx, keep);
        // Pinned messages stay verbatim (without tool calls, whose results
        // are summarised); the rest of the old part is summarised.
        let (kept, old): (Vec<StoredMessage>, Vec<StoredMessage>) =
            old.into_iter().partition(|m| is_pinned(m));
        if !old.iter().any(|m| m.kind != MessageKind::Summary) {
            return Ok(None);
        }
        let prefix = prefix
            .cloned()
            .or_else(|| self.session_prefix(&profile, &model));
        let summary = self
            .summarise(&*backend, &model, window, &old, (ratio, prefix), cancel)
            .await?;
        let pinned_kept = kept.len();
        let mut new_context = vec![StoredMessage::new(
            ChatMessage::user(format!("{SUMMARY_HEADING}\n{summary}")),
            MessageKind::Summary,
        )];
        new_context.extend(kept.into_iter().map(|mut m| {
            m.msg.set_tool_calls(Vec::new());
            m
        }));
        new_context.extend(recent);
        let (context_before, context_after) =
            (tokens_of(ctx, ratio), tokens_of(&new_context, ratio));
        let (tokens_before, tokens_after) = (base + context_before, base + context_after);
        // Judged on the context alone: the fixed base is the same either way.
        if saves_nothing(context_before, context_after) {
            return Err(AgentError::NothingSaved {
                replaced: old.len(),
                tokens_before,
                tokens_after,
            });
        }
        Ok(Some(CompactionPlan {
            summary,
            tokens_before,
            tokens_after,
            replaced: old,
            new_context,
            window,
            keep,
            pinned_kept,
            context_len: ctx.len(),
            last_context_id: ctx.last().map(|m| m.id),
        }))
    }

    /// The summary of `old`, retried smaller when the server says the
    /// summary request itself does not fit. The input is sized with the
    /// session's learnt ratio (a tokenizer denser than ~4 characters per
    /// token gets less text). Built on the session's own prefix where it
    /// fits, so a caching server evaluates only the instruction.
    async fn summarise(
        &self,
        backend: &dyn LlmBackend,
        model: &str,
        window: u64,
        old: &[StoredMessage],
        (ratio, prefix): (f64, Option<ChatRequest>),
        cancel: &CancellationToken,
    ) -> Result<String, AgentError> {
        let budget = summary_budget(window);
        if let Some(req) =
            prefix.and_then(|p| self.prefix_summary_request(&p, old, (window, ratio, budget)))
        {
            // A model that called a tool instead, or a server that found
            // it too long: a fresh prompt is asked next.
            match self.run_summary(backend, &req, cancel).await {
                Ok((_, true)) => {}
                Ok((raw, false)) => return usable(&raw, budget, backend),
                Err(e) if e.is_context_overflow() => {}
                Err(e) => return Err(e.into()),
            }
        }
        let prompt_tokens = scale(estimate(&[ChatMessage::system(SUMMARY_PROMPT)]), ratio);
        let room = if window > 0 {
            super::tokens::chars_for(window.saturating_sub(budget + prompt_tokens + 64), ratio)
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
                Ok(raw) => return usable(&raw, budget, backend),
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
        Ok(self.run_summary(backend, &req, cancel).await?.0)
    }

    /// The text of a summary call's answer, and whether the model called a
    /// tool instead.
    async fn run_summary(
        &self,
        backend: &dyn LlmBackend,
        req: &ChatRequest,
        cancel: &CancellationToken,
    ) -> Result<(String, bool), LlmError> {
        let mut stream = crate::llm::guard::open(backend, req, &self.guard, cancel).await?;
        let mut summary = String::new();
        let mut called = false;
        while let Some(c) = stream.next().await {
            match c? {
                ChatChunk::Text(t) => summary.push_str(&t),
                ChatChunk::ToolCalls(c) if !c.is_empty() => called = true,
                ChatChunk::Done { .. } => break,
                _ => {}
            }
        }
        Ok((summary, called))
    }

    /// Writes a plan. Refused when the session's context changed since the
    /// plan was made (a turn ran in between). Returns (messages before, after).
    pub(crate) fn apply_compaction(
        &self,
        open: &Session,
        plan: &CompactionPlan,
    ) -> Result<(usize, usize), AgentError> {
        let session_id = open.id();
        // Rewrites the context buffer: only the session's writer may (the
        // open session holds its lock).
        let session = open
            .load()?
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
    pub(crate) async fn compact_keep(
        &self,
        session: &Session,
        keep_turns: Option<usize>,
        prefix: Option<&ChatRequest>,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<(usize, usize), AgentError> {
        let Some(plan) = self
            .plan_compaction(session, keep_turns, prefix, cancel)
            .await?
        else {
            let n = context_len(session)?;
            return Ok((n, n));
        };
        self.apply_and_announce(session, &plan, sink).await
    }

    /// Applies `plan` and says so with a `context_compressed` event.
    async fn apply_and_announce(
        &self,
        session: &Session,
        plan: &CompactionPlan,
        sink: &EventSink,
    ) -> Result<(usize, usize), AgentError> {
        let (before, after) = self.apply_compaction(session, plan)?;
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
        session: &Session,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<(usize, usize), AgentError> {
        self.compact_keep(session, Some(2), None, sink, cancel)
            .await
    }

    /// `/compact` in its three forms. `Preview` plans, keeps the plan with
    /// the session and emits `compaction_planned`; `Apply` writes the kept
    /// plan (refused when there is none or a turn ran since); `Now` plans
    /// and applies.
    pub async fn compact_mode(
        &self,
        session: &Session,
        mode: CompactMode,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<(usize, usize), AgentError> {
        match mode {
            CompactMode::Now => self.compact(session, sink, cancel).await,
            CompactMode::Preview => {
                let Some(plan) = self.plan_compaction(session, Some(2), None, cancel).await? else {
                    let n = context_len(session)?;
                    return Ok((n, n));
                };
                sink.emit(AgentEvent::CompactionPlanned {
                    summary: plan.summary.clone(),
                    messages_replaced: plan.replaced.len(),
                    turns_kept: plan.keep,
                    pinned_kept: plan.pinned_kept,
                    tokens_before: plan.tokens_before,
                    tokens_after: plan.tokens_after,
                })
                .await;
                let counts = (plan.context_len, plan.new_context.len());
                session.keep_compaction(plan);
                // Unequal: there is a plan (nothing is written yet).
                Ok(counts)
            }
            CompactMode::Apply => {
                let plan = session
                    .take_compaction()
                    .ok_or_else(|| AgentError::NoPlan(session.id().to_string()))?;
                self.apply_and_announce(session, &plan, sink).await
            }
        }
    }

    /// The stored token account of a session.
    pub fn context_account(&self, session_id: &str) -> Result<ContextAccount, AgentError> {
        Ok(ContextAccount::load(&self.store, session_id)?)
    }
}

/// How many messages the session's context holds (0 while pending).
fn context_len(session: &Session) -> Result<usize, AgentError> {
    Ok(session.load()?.map_or(0, |s| s.context.len()))
}

/// Whether a compaction of the context from `before` to `after` tokens
/// gains nothing worth announcing: no saving, or less than 2 % of the
/// context (the "3.7k → 3.7k tokens" case). Such a plan is not applied;
/// `AgentError::NothingSaved` says why.
pub fn saves_nothing(before: u64, after: u64) -> bool {
    before > 0 && before.saturating_sub(after) * 50 < before
}

/// The summary as stored, or the error that leaves the context as it was.
fn usable(raw: &str, budget: u64, backend: &dyn LlmBackend) -> Result<String, AgentError> {
    clean_summary(raw, budget as usize * 4).ok_or_else(|| {
        LlmError::Protocol {
            backend: backend.kind().as_str().into(),
            message: "the summary came back empty or unusable; the context was left as it was"
                .into(),
        }
        .into()
    })
}

/// "40 → 6 messages, 7.2k → 1.9k tokens" (tokens left out when unknown).
pub(crate) fn compressed_line(
    before: usize,
    after: usize,
    tokens_before: u64,
    tokens_after: u64,
) -> String {
    let short = super::account::short;
    let tokens = if tokens_before == 0 && tokens_after == 0 {
        String::new()
    } else {
        format!(
            ", {} → {} tokens",
            short(tokens_before),
            short(tokens_after)
        )
    };
    format!("{before} → {after} messages{tokens}")
}

/// The lines both front ends show for a `compaction_planned` event.
pub(crate) fn preview_lines(
    summary: &str,
    replaced: usize,
    turns_kept: usize,
    pinned_kept: usize,
    tokens_before: u64,
    tokens_after: u64,
) -> Vec<String> {
    let short = super::account::short;
    let pinned = match pinned_kept {
        0 => String::new(),
        1 => " and 1 pinned message".into(),
        n => format!(" and {n} pinned messages"),
    };
    let turns = if turns_kept == 1 { "turn" } else { "turns" };
    let mut out = vec![format!(
        "compaction preview: {replaced} context messages would be replaced by this summary; the last {turns_kept} {turns}{pinned} stay verbatim; {} → {} tokens",
        short(tokens_before),
        short(tokens_after)
    )];
    out.extend(summary.lines().map(|l| format!("  │ {l}")));
    out.push("nothing has changed yet: /compact apply applies it; anything else leaves the context as it is".into());
    out
}
