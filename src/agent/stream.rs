//! Streaming one model call: events out as chunks arrive, the answer written
//! to the store before each piece is shown, tool calls given unique ids.
use super::AgentError;
use super::events::AgentEvent;
use super::turn::{CallResult, FLUSH_EVERY, Run};
use crate::llm::{ChatChunk, ChatMessage, ChatRequest, LlmError, ToolCall, guard};
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
        let mut usage = None;
        let mut stopped = false;
        let mut failure = None;
        let mut thinking_open = false;
        let mut last_flush = Instant::now()
            .checked_sub(FLUSH_EVERY)
            .unwrap_or_else(Instant::now);
        match guard::open(&*self.backend, req, &self.agent.guard, self.cancel).await {
            Err(LlmError::Cancelled) => stopped = true,
            Err(e) => return Err(e.into()),
            Ok(mut stream) => {
                while let Some(item) = stream.next().await {
                    match item {
                        Ok(ChatChunk::Thinking(d)) => {
                            thinking.push_str(&d);
                            thinking_open = true;
                            // Written before it is shown: a crash loses nothing on screen.
                            if persist && last_flush.elapsed() >= FLUSH_EVERY {
                                self.conv.stream_update(&text, &thinking)?;
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
                            text.push_str(&d);
                            // Written before it is shown: a crash loses nothing on screen.
                            if persist && last_flush.elapsed() >= FLUSH_EVERY {
                                self.conv.stream_update(&text, &thinking)?;
                                last_flush = Instant::now();
                            }
                            self.emit(AgentEvent::StreamDelta {
                                delta: d,
                                is_subagent: sub,
                                agent: origin.clone(),
                            })
                            .await;
                        }
                        Ok(ChatChunk::ToolCalls(c)) => calls.extend(c),
                        Ok(ChatChunk::Usage(u)) => usage = Some(u),
                        Ok(ChatChunk::Done { .. }) => break,
                        Err(LlmError::Cancelled) => {
                            stopped = true;
                            break;
                        }
                        Err(e) => {
                            failure = Some(e);
                            break;
                        }
                    }
                }
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
        msg.thinking = (!thinking.is_empty()).then_some(thinking);
        if !stopped && failure.is_none() {
            msg.tool_calls = calls;
        }
        if persist
            && (!self.conv.stream_finish(&msg)?
                && (!msg.content.is_empty()
                    || msg.thinking.is_some()
                    || !msg.tool_calls.is_empty()
                    || !stopped))
        {
            self.conv.push(msg.clone(), MessageKind::Message, None)?;
        }
        if let Some(e) = failure {
            return Err(e.into());
        }
        self.tracker.record(usage, &req.messages, &msg);
        if !self.is_subagent() {
            self.emit(AgentEvent::TokenUsage {
                prompt_tokens: usage.map_or(0, |u| u.prompt_tokens),
                completion_tokens: usage.map_or(0, |u| u.completion_tokens),
                context_tokens: self.tracker.context_tokens,
                max_context_tokens: self.tracker.window,
            })
            .await;
            if self
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
