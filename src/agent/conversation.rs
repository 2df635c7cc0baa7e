//! A conversation being worked on: the in-memory context plus, for a
//! persistent session, the durable record of both buffers.
//!
//! Invariant: every message is written to the store the moment it is pushed
//! (streaming text is written on its first chunk, then only what each later
//! write adds is appended as a delta), so a crash loses nothing already
//! shown. Ephemeral conversations (subagents) keep everything in memory.
use crate::llm::ChatMessage;
use crate::protocol::ToolDisplay;
use crate::session::{Buffer, MessageKind, SessionStore, StoreError, StoredMessage};
use std::sync::Arc;

pub(crate) struct Conversation {
    pub(crate) session_id: String,
    store: Option<Arc<SessionStore>>,
    /// What the model sees (system messages are never stored here).
    pub(crate) context: Vec<StoredMessage>,
    /// The message currently streaming.
    streaming: Option<Streaming>,
}

/// A message being streamed: where it is, and how much of it is stored.
struct Streaming {
    /// Index in `context`.
    idx: usize,
    /// Display and context rows (0 when not persistent).
    display: i64,
    context: i64,
    /// Bytes of content and thinking already written.
    content_len: usize,
    thinking_len: usize,
}

impl Conversation {
    pub(crate) fn persistent(
        store: Arc<SessionStore>,
        session_id: &str,
        context: Vec<StoredMessage>,
    ) -> Self {
        Conversation {
            session_id: session_id.to_string(),
            store: Some(store),
            context,
            streaming: None,
        }
    }

    pub(crate) fn ephemeral(session_id: &str) -> Self {
        Conversation {
            session_id: session_id.to_string(),
            store: None,
            context: Vec::new(),
            streaming: None,
        }
    }

    pub(crate) fn is_persistent(&self) -> bool {
        self.store.is_some()
    }

    /// Appends to both buffers.
    pub(crate) fn push(
        &mut self,
        msg: ChatMessage,
        kind: MessageKind,
        success: Option<bool>,
    ) -> Result<(), StoreError> {
        self.push_shown(msg, kind, success, None)
    }

    /// [`push`](Self::push) of a tool result with its display data (kept
    /// on the display row).
    pub(crate) fn push_shown(
        &mut self,
        msg: ChatMessage,
        kind: MessageKind,
        success: Option<bool>,
        display: Option<ToolDisplay>,
    ) -> Result<(), StoreError> {
        let mut m = StoredMessage::new(msg, kind);
        m.success = success;
        m.display = display;
        if let Some(store) = &self.store {
            let (_, ctx_row) = store.append_both(&self.session_id, &m)?;
            m.id = ctx_row;
        }
        // The context copy is for the model: no display data.
        m.display = None;
        self.context.push(m);
        Ok(())
    }

    /// Appends to the context buffer only (images, injected plan context).
    pub(crate) fn push_context_only(
        &mut self,
        msg: ChatMessage,
        kind: MessageKind,
    ) -> Result<(), StoreError> {
        let mut m = StoredMessage::new(msg, kind);
        if let Some(store) = &self.store {
            m.id = store.append(&self.session_id, Buffer::Context, &m)?;
        }
        self.context.push(m);
        Ok(())
    }

    /// Appends one message whose context copy differs from what the user
    /// sees (an oversized tool result: full on display, cut in the context).
    pub(crate) fn push_split(
        &mut self,
        display: ChatMessage,
        context: ChatMessage,
        kind: MessageKind,
        success: Option<bool>,
        shown: Option<ToolDisplay>,
    ) -> Result<(), StoreError> {
        let mut d = StoredMessage::new(display, kind);
        d.success = success;
        d.display = shown;
        let mut c = StoredMessage::new(context, kind);
        c.success = success;
        c.created_at = d.created_at;
        if let Some(store) = &self.store {
            store.append(&self.session_id, Buffer::Display, &d)?;
            c.id = store.append(&self.session_id, Buffer::Context, &c)?;
        }
        self.context.push(c);
        Ok(())
    }

    /// Appends to the display buffer only (notices).
    pub(crate) fn push_display_only(
        &mut self,
        msg: ChatMessage,
        kind: MessageKind,
    ) -> Result<(), StoreError> {
        if let Some(store) = &self.store {
            store.append(
                &self.session_id,
                Buffer::Display,
                &StoredMessage::new(msg, kind),
            )?;
        }
        Ok(())
    }

    /// Writes (first call) the assistant message that is streaming right
    /// now, or appends (later calls) what it gained since the last write.
    /// `content` and `thinking` are the whole text so far. Durable on return.
    pub(crate) async fn stream_update(
        &mut self,
        content: &str,
        thinking: &str,
    ) -> Result<(), StoreError> {
        let thinking_opt = (!thinking.is_empty()).then_some(thinking);
        let Some(s) = &mut self.streaming else {
            let mut msg = ChatMessage::assistant(content);
            msg.set_thinking(thinking_opt.map(String::from));
            let mut m = StoredMessage::new(msg, MessageKind::Message);
            let (mut display, mut context) = (0, 0);
            if let Some(store) = &self.store {
                (display, context) = store.append_both_async(&self.session_id, &m).await?;
                m.id = context;
            }
            self.context.push(m);
            self.streaming = Some(Streaming {
                idx: self.context.len() - 1,
                display,
                context,
                content_len: content.len(),
                thinking_len: thinking.len(),
            });
            return Ok(());
        };
        if let Some(store) = &self.store {
            // Only the text added since the last write; should the text ever
            // not extend what was written, it is rewritten whole.
            match (content.get(s.content_len..), thinking.get(s.thinking_len..)) {
                (Some(""), Some("")) => {}
                (Some(c), Some(t)) => {
                    store
                        .append_delta_async(s.display, Some(s.context), c, t)
                        .await?
                }
                _ => {
                    let mut m = ChatMessage::assistant(content);
                    m.set_thinking(thinking_opt.map(String::from));
                    store
                        .finish_stream_async(&[s.display, s.context], &m)
                        .await?
                }
            }
        }
        s.content_len = content.len();
        s.thinking_len = thinking.len();
        if let Some(m) = self.context.get_mut(s.idx) {
            m.msg.set_text(content);
            m.msg.set_thinking(thinking_opt.map(String::from));
        }
        Ok(())
    }

    /// Finishes the streaming message with its final content and tool calls
    /// (one transaction: the final text replaces the row's text and deltas).
    /// Returns false when nothing was streaming (the caller pushes instead).
    pub(crate) async fn stream_finish(&mut self, msg: &ChatMessage) -> Result<bool, StoreError> {
        let Some(s) = self.streaming.take() else {
            return Ok(false);
        };
        if let Some(store) = &self.store {
            store
                .finish_stream_async(&[s.display, s.context], msg)
                .await?;
        }
        if let Some(m) = self.context.get_mut(s.idx) {
            m.msg = msg.clone();
        }
        Ok(true)
    }

    /// Adds `extra` (after a blank line) to the context copy of the message
    /// at `idx`, in memory and in the store; the display copy is untouched.
    /// Used for what navi itself tells the model (loop notes, the plan), so
    /// that it stays in the history every later request sends, byte for
    /// byte, instead of appearing once and vanishing (which breaks the
    /// server's prompt cache at that point).
    pub(crate) fn amend_context(&mut self, idx: usize, extra: &str) -> Result<(), StoreError> {
        let Some(m) = self.context.get_mut(idx) else {
            return Ok(());
        };
        if !m.msg.text().is_empty() {
            m.msg.push_text("\n\n");
        }
        m.msg.push_text(extra);
        if let Some(store) = &self.store
            && m.id > 0
        {
            store.finish_stream(&[m.id], &m.msg)?;
        }
        Ok(())
    }

    /// The index of the last tool result after the last assistant message,
    /// if the context ends with a batch of results (and maybe a steer).
    pub(crate) fn last_result_index(&self) -> Option<usize> {
        use crate::llm::Role;
        self.context
            .iter()
            .rposition(|m| m.msg.role == Role::Tool)
            .filter(|&i| {
                !self.context[i + 1..]
                    .iter()
                    .any(|m| m.msg.role == Role::Assistant)
            })
    }

    pub(crate) fn set_context_tokens(&self, tokens: u64) -> Result<(), StoreError> {
        match &self.store {
            Some(store) => store.set_context_tokens(&self.session_id, tokens),
            None => Ok(()),
        }
    }

    /// The profile the stored session is on now (a tool may have switched it).
    pub(crate) fn stored_profile(&self) -> Option<String> {
        self.store
            .as_ref()
            .and_then(|s| s.meta(&self.session_id).ok().flatten())
            .map(|m| m.profile_id)
    }

    pub(crate) fn store(&self) -> Option<&Arc<SessionStore>> {
        self.store.as_ref()
    }
}
