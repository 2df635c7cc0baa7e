//! Streaming one model call: events out as chunks arrive, the answer written
//! to the store before each piece is shown, tool calls given unique ids.
//!
//! Generation guards: an answer the server cut at the token cap
//! (`finish_reason`/`done_reason` "length") comes with a warning; an answer
//! that has turned into a loop (`repetition.rs`) is stopped with a warning
//! and kept as far as it got. A server's "prompt exceeds the context"
//! rejection becomes the same clear error as the agent's own window check.
//! With the lean preset, the answer goes through the echo guard
//! (`echo.rs`): navi's own prompt read back is never shown or stored, and
//! the call stops where the model loops back into it.
use super::AgentError;
use super::echo::{EchoGuard, ONLY_ECHO};
use super::echo_align::Reference;
use super::repetition::{RepetitionGuard, Runaway};
use super::turn::{CallResult, FLUSH_EVERY, Run};
use crate::llm::{ChatChunk, ChatMessage, ChatRequest, LlmError, Thinking, ToolCall, guard};
use crate::protocol::AgentEvent;
use crate::session::MessageKind;
use std::time::Instant;

impl Run<'_> {
    /// Streams one model call, emitting events and persisting the answer as it
    /// grows. Tool calls in the answer get unique ids.
    pub(super) async fn stream_call(
        &mut self,
        req: &ChatRequest,
        persist: bool,
    ) -> Result<CallResult, AgentError> {
        let sub = self.is_subagent();
        let origin = self.origin.clone();
        let mut text = String::new();
        let mut thinking = String::new();
        let mut calls: Vec<ToolCall> = Vec::new();
        // Finished reasoning blocks with what the server needs back.
        let mut sealed: Vec<Thinking> = Vec::new();
        let mut usage = None;
        let mut stopped = false;
        let mut failure = None;
        let mut thinking_open = false;
        let mut cut_at_length = false;
        let mut runaway: Option<Runaway> = None;
        let mut text_guard = RepetitionGuard::new();
        let mut thinking_guard = RepetitionGuard::new();
        let mut echo = self
            .small
            .lean
            .then(|| EchoGuard::new(prompt_reference(req)));
        let mut last_flush = Instant::now()
            .checked_sub(FLUSH_EVERY)
            .unwrap_or_else(Instant::now);
        match guard::open(&*self.backend, req, &self.agent.guard, self.cancel).await {
            Err(LlmError::Cancelled) => stopped = true,
            Err(e) => return Err(self.explain_rejection(e, req)),
            Ok(mut stream) => {
                while let Some(item) = stream.next().await {
                    match item {
                        Ok(ChatChunk::Thinking(d)) => {
                            runaway = thinking_guard.push(&d);
                            thinking.push_str(&d);
                            thinking_open = true;
                            // Written before it is shown: a crash loses nothing on screen.
                            if persist && last_flush.elapsed() >= FLUSH_EVERY {
                                self.conv.stream_update(&text, &thinking).await?;
                                last_flush = Instant::now();
                            }
                            self.emit(AgentEvent::ThinkingDelta {
                                delta: d,
                                is_subagent: sub,
                                agent: origin.clone(),
                            })
                            .await;
                        }
                        Ok(ChatChunk::Text(d)) => {
                            if thinking_open {
                                thinking_open = false;
                                self.emit(AgentEvent::ThinkingEnd {
                                    is_subagent: sub,
                                    agent: origin.clone(),
                                })
                                .await;
                            }
                            runaway = text_guard.push(&d);
                            let (d, stop) = match echo.as_mut() {
                                Some(g) => {
                                    let step = g.push(&d);
                                    (step.show, step.stop)
                                }
                                None => (d, false),
                            };
                            self.show_text(d, &mut text, &thinking, persist, &mut last_flush)
                                .await?;
                            if stop {
                                // Dropping the stream below stops the server generating.
                                break;
                            }
                        }
                        Ok(ChatChunk::ToolCalls(c)) => calls.extend(c),
                        Ok(ChatChunk::Reasoning(t)) => sealed.push(t),
                        Ok(ChatChunk::Usage(u)) => usage = Some(u),
                        Ok(ChatChunk::Done { finish_reason }) => {
                            cut_at_length = finish_reason.as_deref() == Some("length");
                            break;
                        }
                        Err(LlmError::Cancelled) => {
                            stopped = true;
                            break;
                        }
                        Err(e) => {
                            failure = Some(e);
                            break;
                        }
                    }
                    if runaway.is_some() {
                        // Dropping the stream below stops the server generating.
                        break;
                    }
                }
            }
        }
        if let Some(g) = echo.as_mut() {
            let rest = g.finish();
            if g.echoes() > 0 {
                tracing::info!(
                    "echo guard: dropped {} read-back(s) of navi's prompt{}",
                    g.echoes(),
                    if g.stopped() {
                        "; stopped the call"
                    } else {
                        ""
                    }
                );
            }
            self.show_text(rest, &mut text, &thinking, persist, &mut last_flush)
                .await?;
            if g.only_echo() {
                text.clear();
                self.show_text(
                    ONLY_ECHO.into(),
                    &mut text,
                    &thinking,
                    persist,
                    &mut last_flush,
                )
                .await?;
            }
        }
        if thinking_open {
            self.emit(AgentEvent::ThinkingEnd {
                is_subagent: sub,
                agent: origin.clone(),
            })
            .await;
        }
        if !thinking.is_empty() {
            self.emit(AgentEvent::TurnThinking {
                thinking: thinking.clone(),
                is_subagent: sub,
                agent: origin,
            })
            .await;
        }
        for c in calls.iter_mut() {
            if c.id.is_empty() || !self.seen_ids.insert(c.id.clone()) {
                c.id = format!("call_{}", &uuid::Uuid::new_v4().simple().to_string()[..12]);
                self.seen_ids.insert(c.id.clone());
            }
        }
        let mut msg = ChatMessage::assistant(text);
        msg.set_thinking_blocks(thinking_blocks(sealed, &thinking));
        if !stopped && failure.is_none() {
            msg.set_tool_calls(calls);
        }
        if persist
            && (!self.conv.stream_finish(&msg).await?
                && (!msg.text().is_empty()
                    || msg.thinking().is_some()
                    || msg.has_tool_calls()
                    || !stopped))
        {
            self.conv.push(msg.clone(), MessageKind::Message, None)?;
        }
        if let Some(e) = failure {
            return Err(e.into());
        }
        self.tracker.record(usage, req, &msg);
        self.tracker.measured_len = Some(self.conv.context.len());
        let looped = echo.as_ref().is_some_and(|g| g.stopped() && !g.only_echo());
        self.warn_guards(req, usage, cut_at_length, runaway, &msg)
            .await;
        if looped {
            self.emit(AgentEvent::Warning {
                message: "stopped the answer: the model went back to repeating navi's instructions"
                    .into(),
            })
            .await;
        }
        if !self.is_subagent() {
            self.emit(AgentEvent::TokenUsage {
                prompt_tokens: usage.map_or(0, |u| u.prompt_tokens),
                completion_tokens: usage.map_or(0, |u| u.completion_tokens),
                context_tokens: self.tracker.context_tokens,
                max_context_tokens: self.tracker.window,
            })
            .await;
            // With compaction on, the warning waits for the end of the turn
            // (post-turn compaction usually makes it moot).
            if !self.agent.config.context.compression_enabled
                && self
                    .tracker
                    .should_warn(self.agent.config.context.warn_threshold)
            {
                self.emit(AgentEvent::Warning {
                    message: format!(
                        "context is {:.0}% full ({} of {} tokens); consider /compact or a new session",
                        self.tracker.fraction() * 100.0,
                        self.tracker.context_tokens,
                        self.tracker.window
                    ),
                })
                .await;
            }
        }
        Ok(CallResult { msg, stopped })
    }
}

impl Run<'_> {
    /// Shows a piece of the answer: added to `text`, written to the store
    /// first (a crash loses nothing on screen), then emitted.
    async fn show_text(
        &mut self,
        piece: String,
        text: &mut String,
        thinking: &str,
        persist: bool,
        last_flush: &mut Instant,
    ) -> Result<(), AgentError> {
        if piece.is_empty() {
            return Ok(());
        }
        text.push_str(&piece);
        if persist && last_flush.elapsed() >= FLUSH_EVERY {
            self.conv.stream_update(text, thinking).await?;
            *last_flush = Instant::now();
        }
        self.emit(AgentEvent::StreamDelta {
            delta: piece,
            is_subagent: self.is_subagent(),
            agent: self.origin.clone(),
        })
        .await;
        Ok(())
    }

    /// Warnings for an answer cut at the token cap or stopped as a loop.
    async fn warn_guards(
        &self,
        req: &ChatRequest,
        usage: Option<crate::llm::Usage>,
        cut_at_length: bool,
        runaway: Option<Runaway>,
        msg: &ChatMessage,
    ) {
        if let Some(r) = runaway {
            self.emit(AgentEvent::Warning {
                message: format!(
                    "stopped the answer: it kept repeating the same {}-character passage ({} characters of repetition)",
                    r.period, r.stretch
                ),
            })
            .await;
        } else if cut_at_length {
            let n = usage
                .map(|u| u.completion_tokens)
                .filter(|n| *n > 0)
                .or(req.max_tokens.map(u64::from))
                .unwrap_or_else(|| super::tokens::estimate(std::slice::from_ref(msg)));
            self.emit(AgentEvent::Warning {
                message: format!(
                    "the answer was cut at {n} tokens (the per-call cap, [llm].max_tokens, or the server's limit)"
                ),
            })
            .await;
        }
    }

    /// A server's "the prompt is larger than the context" rejection becomes
    /// the agent's own clear error; anything else passes through.
    pub(super) fn explain_rejection(&self, e: LlmError, req: &ChatRequest) -> AgentError {
        if let Some(t) = template_rejection(&e, &self.model, req) {
            return t;
        }
        let LlmError::Rejected {
            status: 400,
            message,
            ..
        } = &e
        else {
            return e.into();
        };
        let m = message.to_ascii_lowercase();
        let about_context = m.contains("context")
            && (m.contains("exceed") || m.contains("too long") || m.contains("too many"));
        if !about_context {
            return e.into();
        }
        let numbers: Vec<u64> = m
            .split(|c: char| !c.is_ascii_digit())
            .filter_map(|w| w.parse().ok())
            .collect();
        let estimated = super::tokens::estimate_request(&req.messages, &req.tools);
        let (needed, window) = match numbers.as_slice() {
            [a, b, ..] => (*a.max(b), *a.min(b)),
            _ => (self.tracker.scaled(estimated), self.tracker.window),
        };
        AgentError::PromptTooLarge {
            needed,
            base: self.base_tokens(req),
            window,
            model: self.model.clone(),
            profile: self.profile.id.clone(),
        }
    }
}

/// The thinking blocks of an answer: the finished blocks the server sent
/// (signatures and encrypted payloads kept for the next request), then the
/// streamed reasoning they do not cover (a block cut short, or all of it
/// from a server that sends no finished blocks) as a plain block.
fn thinking_blocks(sealed: Vec<Thinking>, streamed: &str) -> Vec<Thinking> {
    let covered: usize = sealed.iter().map(|t| t.text.len()).sum();
    let mut out = sealed;
    if let Some(rest) = streamed.get(covered..).filter(|r| !r.is_empty()) {
        out.push(Thinking::text(rest));
    }
    out
}

/// A server whose chat template raised an error on the request (llama.cpp's
/// jinja `raise_exception`, "roles must alternate", an unknown role): the
/// server's words, the role order navi sent, and a hint.
fn template_rejection(e: &LlmError, model: &str, req: &ChatRequest) -> Option<AgentError> {
    let message = match e {
        LlmError::Rejected { message, .. } => message,
        LlmError::Server { body, .. } => body,
        _ => return None,
    };
    let m = message.to_ascii_lowercase();
    let about_template = m.contains("template")
        || m.contains("jinja")
        || m.contains("raise_exception")
        || (m.contains("role") && (m.contains("alternate") || m.contains("must be")));
    if !about_template {
        return None;
    }
    let sent = crate::llm::roles::normalize(&req.messages);
    let roles: Vec<&str> = sent.iter().map(|m| m.role.as_str()).collect();
    Some(AgentError::TemplateRejected {
        model: model.to_string(),
        message: message.trim().to_string(),
        roles: roles.join(", "),
    })
}

/// What the echo guard checks an answer against: the system prompt and
/// the user's last message, as sent.
fn prompt_reference(req: &ChatRequest) -> Reference {
    let system: Vec<String> = req
        .messages
        .iter()
        .filter(|m| m.role == crate::llm::Role::System)
        .map(|m| m.text().into_owned())
        .collect();
    let user = req
        .messages
        .iter()
        .rev()
        .find(|m| m.role == crate::llm::Role::User)
        .map(|m| m.text().into_owned())
        .unwrap_or_default();
    Reference::new(&system.join("\n"), &user)
}
