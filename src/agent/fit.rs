//! Keeping every request inside the window during a turn: automatic
//! compaction before the first call and after the answer (at
//! `compression_threshold`), before any call that would pass the hard limit,
//! and once more when the server refuses a request as too long — then the
//! server's figures (its window, its real token count) replace ours for the
//! rest of the session.
use super::AgentError;
use super::conversation::Conversation;
use super::tokens::estimate_request;
use super::turn::{CallResult, Run};
use crate::protocol::AgentEvent;

impl Run<'_> {
    /// Automatic compaction: before a turn's first call and after its answer
    /// when the account is at `compression_threshold` of the window, and
    /// before any call whose request would pass the hard limit (`force`).
    /// A failure is a warning, never the end of the turn; a stop leaves the
    /// context as it was.
    pub(super) async fn auto_compact(&mut self, force: bool) -> Result<bool, AgentError> {
        if self.tracker.window > 0 {
            self.count_next().await;
        }
        let cfg = &self.agent.config.context;
        let window = self.tracker.window;
        if self.is_subagent()
            || !self.conv.is_persistent()
            || !cfg.compression_enabled
            || window == 0
        {
            return Ok(false);
        }
        let used = self.account() as f64;
        let limit = if force {
            cfg.hard_limit
        } else {
            cfg.compression_threshold
        };
        if used < window as f64 * limit {
            return Ok(false);
        }
        let id = self.conv.session_id.clone();
        // The session's own prefix: the summary call reuses its KV cache.
        let prefix = super::summary_prefix::prefix_of(&self.request(self.messages(&[]), true));
        let session = self.session.clone();
        match self
            .agent
            .compact_keep(&session, None, Some(&prefix), self.sink, self.cancel)
            .await
        {
            Ok((before, after)) if after < before => {
                if let Some(s) = session.load()? {
                    self.tracker.context_tokens = s.meta.context_token_count;
                    self.tracker.measured_len = Some(s.context.len());
                    self.conv = Conversation::persistent(self.agent.store.clone(), &id, s.context);
                }
                return Ok(true);
            }
            Ok(_) => {}
            Err(_) if self.cancel.is_cancelled() => {}
            Err(e @ AgentError::NothingSaved { .. }) => {
                self.emit(AgentEvent::Notice {
                    message: e.to_string(),
                })
                .await
            }
            Err(e) => {
                self.emit(AgentEvent::Warning {
                    message: format!(
                        "context compaction failed, the context was left as it was: {e}"
                    ),
                })
                .await
            }
        }
        Ok(false)
    }

    /// Stores the account (and what it learned) with the session.
    pub(super) fn save_account(&mut self) -> Result<u64, AgentError> {
        let used = self.account();
        self.tracker.context_tokens = used;
        self.tracker.measured_len = Some(self.conv.context.len());
        self.conv.set_context_tokens(used)?;
        if let Some(store) = self.conv.store()
            && !self.is_subagent()
        {
            super::account::save_ratio(store, &self.conv.session_id, self.tracker.ratio)?;
            super::account::save_model_ratio(
                store,
                &self.conv.session_id,
                &self.model,
                self.tracker.ratio,
            )?;
        }
        Ok(used)
    }

    /// One call of the tool loop: compaction first when the request would
    /// pass the hard limit, the window check, the call; a server refusal for
    /// length is learnt from and retried once after compacting.
    pub(super) async fn call_fitting(
        &mut self,
        notes: &[String],
    ) -> Result<CallResult, AgentError> {
        self.auto_compact(true).await?;
        self.squeeze_to_fit(notes).await?;
        let req = self.request(self.messages(notes), true);
        self.check_room_shown(&req).await?;
        match self.stream_call(&req, true).await {
            Err(AgentError::PromptTooLarge { needed, window, .. })
                if self.learn_refusal(needed, window, &req)? && self.auto_compact(true).await? =>
            {
                let req = self.request(self.messages(notes), true);
                self.check_room_shown(&req).await?;
                self.stream_call(&req, true).await
            }
            Err(e) => {
                self.show_refusal(&e).await;
                Err(e)
            }
            ok => ok,
        }
    }

    /// `check_room`; when the turn in progress is what does not fit, it is
    /// squeezed first (`squeeze.rs`). On a refusal the refused figure
    /// becomes the session's account (status bar, `/context`): one number
    /// everywhere.
    pub(super) async fn check_room_shown(
        &mut self,
        req: &crate::llm::ChatRequest,
    ) -> Result<(), AgentError> {
        let mut checked = self.check_room(req);
        if checked.is_err() && self.squeeze_to_fit(&[]).await? {
            checked = self.check_room(&self.request(self.messages(&[]), true));
        }
        if let Err(e) = &checked {
            self.show_refusal(e).await;
        }
        checked
    }

    async fn show_refusal(&mut self, e: &AgentError) {
        let (used, window) = match e {
            AgentError::ContextFull { used, window, .. } => (*used, *window),
            AgentError::PromptTooLarge { needed, window, .. } => (*needed, *window),
            _ => return,
        };
        if self.is_subagent() {
            return;
        }
        let _ = self.conv.set_context_tokens(used);
        self.emit(AgentEvent::TokenUsage {
            prompt_tokens: 0,
            completion_tokens: 0,
            context_tokens: used,
            max_context_tokens: window,
        })
        .await;
    }

    /// Takes a server's "needs N tokens, has W" as the truth: a smaller
    /// window, a higher real/estimated ratio. True when something changed
    /// (so compacting and retrying can help).
    fn learn_refusal(
        &mut self,
        needed: u64,
        window: u64,
        req: &crate::llm::ChatRequest,
    ) -> Result<bool, AgentError> {
        if self.is_subagent() || !self.conv.is_persistent() {
            return Ok(false);
        }
        let mut changed = false;
        if window > 0 && (self.tracker.window == 0 || window < self.tracker.window) {
            self.tracker.window = window;
            self.agent.learn_window(&self.model, window);
            super::account::save_window(&self.agent.store, &self.conv.session_id, window)?;
            changed = true;
        }
        let est = estimate_request(&req.messages, &req.tools);
        if est > 0 && needed > est {
            let r = super::tokens::clamp_ratio(needed as f64 / est as f64);
            if r > self.tracker.ratio {
                self.tracker.ratio = r;
                super::account::save_ratio(&self.agent.store, &self.conv.session_id, r)?;
                changed = true;
            }
        }
        Ok(changed)
    }
}

impl Run<'_> {
    /// The per-item budget of this run, in characters.
    fn item_budget(&self) -> usize {
        super::oversize::budget_chars(
            self.tracker.window,
            self.agent.config.context.item_max_share,
        )
    }

    /// A tool result into both buffers: whole on display, head + tail with
    /// the stored file's path in the context when it is over the budget.
    pub(super) fn push_tool_result(
        &mut self,
        call: &crate::llm::ToolCall,
        content: &str,
        success: bool,
        display: Option<crate::protocol::ToolDisplay>,
    ) -> Result<(), AgentError> {
        use crate::llm::ChatMessage;
        use crate::session::MessageKind;
        let max = self.item_budget();
        let full = ChatMessage::tool_result(call, content);
        if content.len() <= max {
            self.conv
                .push_shown(full, MessageKind::Message, Some(success), display)?;
            return Ok(());
        }
        let name = format!("output-{}-{}.txt", call.name, call.id);
        let what = format!("output of {}", call.name);
        let cut = self
            .agent
            .fit_text(&self.state_session(), &name, &what, content, max);
        self.conv.push_split(
            full,
            ChatMessage::tool_result(call, cut),
            MessageKind::Message,
            Some(success),
            display,
        )?;
        Ok(())
    }

    /// Arguments of the calls just made, as kept in the context: long
    /// string values stored and referenced (the tools got them whole).
    pub(super) fn fit_call_arguments(&mut self) -> Result<(), AgentError> {
        let max = self.item_budget();
        let session = self.state_session();
        let Some(idx) = self
            .conv
            .context
            .iter()
            .rposition(|m| m.msg.has_tool_calls())
        else {
            return Ok(());
        };
        let mut calls: Vec<_> = self.conv.context[idx].msg.tool_calls().cloned().collect();
        let mut changed = false;
        for c in &mut calls {
            if c.arguments.to_string().len() <= max {
                continue;
            }
            if let Some(v) = self.agent.fit_arguments(&session, &c.id, &c.arguments, max) {
                c.arguments = v;
                changed = true;
            }
        }
        if !changed {
            return Ok(());
        }
        let row = self.conv.context[idx].id;
        if let Some(store) = self.conv.store()
            && row > 0
        {
            store.set_tool_calls(&[row], &calls)?;
        }
        self.conv.context[idx].msg.set_tool_calls(calls);
        Ok(())
    }

    /// The user message that opened this turn, as kept in the context: one
    /// over its share of the window, or over the room the window has for it
    /// (see `message_room`), is stored and previewed (the transcript keeps
    /// it whole) — answered from its head and tail, never refused.
    pub(super) async fn fit_user_message(&mut self) -> Result<(), AgentError> {
        use crate::llm::Role;
        use crate::session::MessageKind;
        if self.is_subagent() {
            return Ok(());
        }
        let is_message = |m: &crate::session::StoredMessage| {
            m.msg.role == Role::User && m.kind == MessageKind::Message
        };
        if !self.conv.context.last().is_some_and(is_message) {
            return Ok(());
        }
        self.inherit_ratio();
        if self.tracker.window > 0 {
            self.count_for_fit().await;
        }
        let max = self.item_budget().min(self.message_room());
        let Some(last) = self.conv.context.last() else {
            return Ok(());
        };
        if last.msg.text().len() <= max {
            return Ok(());
        }
        let text = last.msg.text().into_owned();
        let (row, thinking) = (last.id, last.msg.thinking().map(String::from));
        let cut = self.agent.fit_text(
            &self.conv.session_id,
            "message.txt",
            "user's message",
            &text,
            max,
        );
        if let Some(store) = self.conv.store()
            && row > 0
        {
            store.update_content(&[row], &cut, thinking.as_deref())?;
        }
        if let Some(m) = self.conv.context.last_mut() {
            m.msg.set_text(cut);
        }
        // The context changed: the next figure is counted again.
        self.tracker.counted_len = None;
        Ok(())
    }
}
