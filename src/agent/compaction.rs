//! Context compaction: older turns of the context buffer are replaced by one
//! summary message; the display buffer is never touched.
//!
//! A turn is a user message and everything after it up to the next user
//! message, so a tool call and its results are never split. Summaries from
//! earlier passes are folded into the next one. A failed summary call leaves
//! the context as it was.
use super::events::{AgentEvent, EventSink};
use super::{Agent, AgentError};
use crate::config::ThinkSetting;
use crate::llm::{ChatChunk, ChatMessage, ChatRequest, LlmError, Role};
use crate::session::{MessageKind, StoredMessage};
use tokio_util::sync::CancellationToken;

pub const MAX_SUMMARY_INPUT_CHARS: usize = 12_000;
pub const SUMMARY_HEADING: &str = "Summary of the earlier conversation:";

const SUMMARY_PROMPT: &str = "You compress a conversation between a user and an assistant so the assistant can continue without the full text. Write a bullet list of what matters for continuing: the user's goals and preferences, decisions made, facts found (paths, names, versions, numbers, commands that worked or failed), work finished, and what is still open. Keep it short and concrete; no commentary.";

/// Splits the context into (older, recent) keeping the last `keep` turns.
pub fn partition(
    context: &[StoredMessage],
    keep: usize,
) -> (Vec<StoredMessage>, Vec<StoredMessage>) {
    let starts: Vec<usize> = context
        .iter()
        .enumerate()
        .filter(|(_, m)| {
            m.msg.role == Role::User && m.kind != MessageKind::Summary && m.msg.images.is_empty()
        })
        .map(|(i, _)| i)
        .collect();
    if starts.len() <= keep {
        return (Vec::new(), context.to_vec());
    }
    let cut = starts[starts.len() - keep.max(1).min(starts.len())];
    let cut = if keep == 0 { context.len() } else { cut };
    (context[..cut].to_vec(), context[cut..].to_vec())
}

fn cut(s: &str, n: usize) -> String {
    let mut t: String = s.chars().take(n).collect();
    if s.chars().count() > n {
        t.push('…');
    }
    t
}

/// Plain-text rendering of messages for the summariser.
pub fn render_for_summary(messages: &[StoredMessage]) -> String {
    let mut out = String::new();
    for m in messages {
        let line = match m.msg.role {
            Role::User if m.kind == MessageKind::Summary => {
                format!("[earlier summary]\n{}", m.msg.content)
            }
            Role::User => format!("User: {}", m.msg.content),
            Role::Assistant => {
                let mut s = format!("Assistant: {}", m.msg.content);
                for c in &m.msg.tool_calls {
                    s.push_str(&format!(
                        "\n  called {}({})",
                        c.name,
                        cut(&c.arguments.to_string(), 120)
                    ));
                }
                s
            }
            Role::Tool => format!(
                "  result of {}: {}",
                m.msg.tool_name.as_deref().unwrap_or("tool"),
                cut(&m.msg.content, 300)
            ),
            Role::System => continue,
        };
        out.push_str(&line);
        out.push('\n');
    }
    if out.len() > MAX_SUMMARY_INPUT_CHARS {
        // Keep the most recent part: it matters most for continuing.
        let mut start = out.len() - MAX_SUMMARY_INPUT_CHARS;
        while !out.is_char_boundary(start) {
            start += 1;
        }
        out = format!("[…older part omitted…]\n{}", &out[start..]);
    }
    out
}

impl Agent {
    /// Compacts a session's context, keeping the last `keep_turns` turns
    /// (`None`: `[context].keep_recent`). Returns (messages before, after);
    /// equal numbers mean there was nothing old enough to compact.
    pub async fn compact_keep(
        &self,
        session_id: &str,
        keep_turns: Option<usize>,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<(usize, usize), AgentError> {
        // Rewrites the context buffer: only the session's writer may.
        self.store.lock(session_id)?;
        let session = self
            .store
            .load(session_id)?
            .ok_or_else(|| AgentError::NoSession(session_id.to_string()))?;
        let keep = keep_turns.unwrap_or(self.config.context.keep_recent as usize);
        let before = session.context.len();
        let (old, recent) = partition(&session.context, keep);
        if old.is_empty() {
            return Ok((before, before));
        }
        let profile = self.profile(&session.meta.profile_id)?.clone();
        let backend = self.backend_for(&profile)?;
        let model = self.select_model(&*backend, &profile).await?.model;
        let mut req = ChatRequest::new(
            model,
            vec![
                ChatMessage::system(SUMMARY_PROMPT),
                ChatMessage::user(render_for_summary(&old)),
            ],
        );
        req.temperature = Some(self.config.context.summary_temperature);
        req.think = Some(ThinkSetting::Bool(false));
        req.num_ctx = Some(self.config.llm.num_ctx);
        let mut stream = crate::llm::guard::open(&*backend, &req, &self.guard, cancel).await?;
        let mut summary = String::new();
        while let Some(c) = stream.next().await {
            match c? {
                ChatChunk::Text(t) => summary.push_str(&t),
                ChatChunk::Done { .. } => break,
                _ => {}
            }
        }
        if summary.trim().is_empty() {
            return Err(LlmError::Protocol {
                backend: backend.kind().as_str().into(),
                message: "the summary came back empty; the context was left as it was".into(),
            }
            .into());
        }
        let mut new_context = vec![StoredMessage::new(
            ChatMessage::user(format!("{SUMMARY_HEADING}\n{}", summary.trim())),
            MessageKind::Summary,
        )];
        new_context.extend(recent);
        self.store.replace_context(session_id, &new_context)?;
        let est = super::tokens::estimate(
            &new_context
                .iter()
                .map(|m| m.msg.clone())
                .collect::<Vec<_>>(),
        );
        self.store.set_context_tokens(session_id, est)?;
        let after = new_context.len();
        sink.emit(AgentEvent::ContextCompressed {
            messages_before: before,
            messages_after: after,
        })
        .await;
        Ok((before, after))
    }

    /// `/compact`: keeps only the last two turns verbatim.
    pub async fn compact(
        &self,
        session_id: &str,
        sink: &EventSink,
        cancel: &CancellationToken,
    ) -> Result<(usize, usize), AgentError> {
        self.compact_keep(session_id, Some(2), sink, cancel).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(role: Role, text: &str) -> StoredMessage {
        let msg = match role {
            Role::User => ChatMessage::user(text),
            _ => ChatMessage::assistant(text),
        };
        StoredMessage::new(msg, MessageKind::Message)
    }

    #[test]
    fn keeps_whole_recent_turns() {
        let ctx = vec![
            m(Role::User, "1"),
            m(Role::Assistant, "a"),
            m(Role::User, "2"),
            m(Role::Assistant, "b"),
            m(Role::User, "3"),
            m(Role::Assistant, "c"),
        ];
        let (old, recent) = partition(&ctx, 2);
        assert_eq!(old.len(), 2);
        assert_eq!(recent[0].msg.content, "2");
        let (old, recent) = partition(&ctx, 5);
        assert!(old.is_empty() && recent.len() == 6);
    }

    #[test]
    fn summary_input_is_capped() {
        let big: Vec<StoredMessage> = (0..500)
            .map(|i| {
                m(
                    Role::User,
                    &format!("message number {i} {}", "x".repeat(50)),
                )
            })
            .collect();
        let s = render_for_summary(&big);
        assert!(s.len() <= MAX_SUMMARY_INPUT_CHARS + 40);
        assert!(s.contains("message number 499"));
    }
}
