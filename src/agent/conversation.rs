//! A conversation being worked on: the in-memory context plus, for a
//! persistent session, the durable record of both buffers.
//!
//! Invariant: every message is written to the store the moment it is pushed
//! (streaming text is written on its first chunk and updated as it grows), so
//! a crash loses nothing already shown. Ephemeral conversations (subagents)
//! keep everything in memory.
use crate::llm::ChatMessage;
use crate::session::{Buffer, MessageKind, SessionStore, StoreError, StoredMessage};
use std::sync::Arc;

pub struct Conversation {
    pub session_id: String,
    store: Option<Arc<SessionStore>>,
    /// What the model sees (system messages are never stored here).
    pub context: Vec<StoredMessage>,
    /// Rows of the message currently streaming (display, context).
    streaming: Option<(usize, i64, i64)>,
}

impl Conversation {
    pub fn persistent(
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

    pub fn ephemeral(session_id: &str) -> Self {
        Conversation {
            session_id: session_id.to_string(),
            store: None,
            context: Vec::new(),
            streaming: None,
        }
    }

    pub fn is_persistent(&self) -> bool {
        self.store.is_some()
    }

    /// Appends to both buffers.
    pub fn push(
        &mut self,
        msg: ChatMessage,
        kind: MessageKind,
        success: Option<bool>,
    ) -> Result<(), StoreError> {
        let mut m = StoredMessage::new(msg, kind);
        m.success = success;
        if let Some(store) = &self.store {
            let (_, ctx_row) = store.append_both(&self.session_id, &m)?;
            m.id = ctx_row;
        }
        self.context.push(m);
        Ok(())
    }

    /// Appends to the context buffer only (images, injected plan context).
    pub fn push_context_only(
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
    pub fn push_split(
        &mut self,
        display: ChatMessage,
        context: ChatMessage,
        kind: MessageKind,
        success: Option<bool>,
    ) -> Result<(), StoreError> {
        let mut d = StoredMessage::new(display, kind);
        d.success = success;
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
    pub fn push_display_only(
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

    /// Writes (first call) or updates (later calls) the assistant message that
    /// is streaming right now.
    pub fn stream_update(&mut self, content: &str, thinking: &str) -> Result<(), StoreError> {
        let thinking_opt = (!thinking.is_empty()).then_some(thinking);
        match self.streaming {
            None => {
                let mut msg = ChatMessage::assistant(content);
                msg.thinking = thinking_opt.map(String::from);
                let mut m = StoredMessage::new(msg, MessageKind::Message);
                let (mut d, mut x) = (0, 0);
                if let Some(store) = &self.store {
                    (d, x) = store.append_both(&self.session_id, &m)?;
                    m.id = x;
                }
                self.context.push(m);
                self.streaming = Some((self.context.len() - 1, d, x));
            }
            Some((idx, d, x)) => {
                if let Some(store) = &self.store {
                    store.update_content(&[d, x], content, thinking_opt)?;
                }
                if let Some(m) = self.context.get_mut(idx) {
                    m.msg.content = content.to_string();
                    m.msg.thinking = thinking_opt.map(String::from);
                }
            }
        }
        Ok(())
    }

    /// Finishes the streaming message with its final content and tool calls.
    /// Returns false when nothing was streaming (the caller pushes instead).
    pub fn stream_finish(&mut self, msg: &ChatMessage) -> Result<bool, StoreError> {
        let Some((idx, d, x)) = self.streaming.take() else {
            return Ok(false);
        };
        if !msg.tool_calls.is_empty() {
            // Tool calls arrive complete at the end; rewrite the rows with them.
            if let Some(store) = &self.store {
                store.set_tool_calls(&[d, x], &msg.tool_calls)?;
            }
        }
        if let Some(store) = &self.store {
            store.update_content(&[d, x], &msg.content, msg.thinking.as_deref())?;
        }
        if let Some(m) = self.context.get_mut(idx) {
            m.msg = msg.clone();
        }
        Ok(true)
    }

    pub fn set_context_tokens(&self, tokens: u64) -> Result<(), StoreError> {
        match &self.store {
            Some(store) => store.set_context_tokens(&self.session_id, tokens),
            None => Ok(()),
        }
    }

    /// The profile the stored session is on now (a tool may have switched it).
    pub fn stored_profile(&self) -> Option<String> {
        self.store
            .as_ref()
            .and_then(|s| s.meta(&self.session_id).ok().flatten())
            .map(|m| m.profile_id)
    }

    pub fn store(&self) -> Option<&Arc<SessionStore>> {
        self.store.as_ref()
    }
}
