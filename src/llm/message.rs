//! A chat message as a list of content blocks.
//!
//! Every wire protocol navi speaks builds its request from these blocks:
//! Ollama and OpenAI chat read them through the accessors (text, images,
//! tool calls, the result's call id), which give exactly the strings the
//! flat message of earlier releases held, so their request bytes are
//! unchanged; protocols that need more (a thinking block's signature, an
//! encrypted reasoning payload, the reasoning item's id) find it in the
//! [`Thinking`] blocks.
//!
//! Invariants:
//! - The builders keep blocks in one order: thinking, the tool-result
//!   header, text, images, tool calls ([`ChatMessage::from_flat`] makes that
//!   order). Blocks a backend sends back in another order are kept as sent.
//! - No builder makes an empty text block: `text() == ""` means no text.
//! - [`ChatMessage::to_flat`] gives the flat fields of earlier releases
//!   (the session store's columns and `navi sessions show --json`); its
//!   `blocks` is `Some` exactly when the flat fields alone would not give
//!   the same message back (a signature, an encrypted payload, two thinking
//!   blocks, blocks out of the usual order…). Flat + blocks is lossless.
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use std::borrow::Cow;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    System,
    User,
    Assistant,
    Tool,
}

impl Role {
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Role::System => "system",
            Role::User => "user",
            Role::Assistant => "assistant",
            Role::Tool => "tool",
        }
    }
}

/// A complete tool call requested by the model.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ToolCall {
    pub id: String,
    pub name: String,
    /// Normally a JSON object. When the model sent arguments that are not valid
    /// JSON, this is `Value::String(raw)` and the agent answers with an error.
    pub arguments: Value,
}

/// An image attached to a message (base64 without a `data:` prefix).
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct ImageData {
    pub mime: String,
    pub base64: String,
}

/// A model's reasoning, with what its server needs to get it back.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Thinking {
    /// The reasoning as shown (a summary, for servers that only give one).
    #[serde(default)]
    pub text: String,
    /// Anthropic: the block's signature, sent back unchanged.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub signature: Option<String>,
    /// An encrypted payload: Anthropic's redacted thinking (`data`), the
    /// Responses API's `encrypted_content`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub encrypted: Option<String>,
    /// The Responses API's reasoning item id (`rs_…`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub id: Option<String>,
}

impl Thinking {
    /// Reasoning text only, nothing to send back with it.
    pub fn text(text: impl Into<String>) -> Self {
        Thinking {
            text: text.into(),
            ..Thinking::default()
        }
    }
}

/// One piece of a message.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    Text {
        text: String,
    },
    Image(ImageData),
    Thinking(Thinking),
    ToolCall(ToolCall),
    /// Marks a tool message as the answer to one call; the result itself
    /// is the message's text and image blocks.
    ToolResult {
        call_id: String,
        name: String,
    },
}

/// Where a block goes in the usual order (see the module invariants).
fn rank(b: &Block) -> u8 {
    match b {
        Block::Thinking(_) => 0,
        Block::ToolResult { .. } => 1,
        Block::Text { .. } => 2,
        Block::Image(_) => 3,
        Block::ToolCall(_) => 4,
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct ChatMessage {
    pub role: Role,
    pub blocks: Vec<Block>,
}

impl ChatMessage {
    /// A message with `content` as its text (no block when it is empty).
    pub fn new(role: Role, content: impl Into<String>) -> Self {
        let mut m = ChatMessage {
            role,
            blocks: Vec::new(),
        };
        m.set_text(content);
        m
    }
    pub fn system(content: impl Into<String>) -> Self {
        Self::new(Role::System, content)
    }
    pub fn user(content: impl Into<String>) -> Self {
        Self::new(Role::User, content)
    }
    pub fn assistant(content: impl Into<String>) -> Self {
        Self::new(Role::Assistant, content)
    }
    pub fn tool_result(call: &ToolCall, content: impl Into<String>) -> Self {
        let mut m = Self::new(Role::Tool, content);
        m.insert(Block::ToolResult {
            call_id: call.id.clone(),
            name: call.name.clone(),
        });
        m
    }

    /// Puts `b` after the blocks that come before it in the usual order.
    fn insert(&mut self, b: Block) {
        let r = rank(&b);
        let at = self
            .blocks
            .iter()
            .rposition(|x| rank(x) <= r)
            .map_or(0, |i| i + 1);
        self.blocks.insert(at, b);
    }

    /// The message's text: its text blocks, in order.
    pub fn text(&self) -> Cow<'_, str> {
        let mut texts = self.blocks.iter().filter_map(|b| match b {
            Block::Text { text } => Some(text.as_str()),
            _ => None,
        });
        let Some(first) = texts.next() else {
            return Cow::Borrowed("");
        };
        match texts.next() {
            None => Cow::Borrowed(first),
            Some(second) => {
                let mut all = format!("{first}{second}");
                texts.for_each(|t| all.push_str(t));
                Cow::Owned(all)
            }
        }
    }

    /// Replaces the text (one block where the first one was, or none when
    /// `text` is empty).
    pub fn set_text(&mut self, text: impl Into<String>) {
        let text = text.into();
        let at = self
            .blocks
            .iter()
            .position(|b| matches!(b, Block::Text { .. }));
        self.blocks.retain(|b| !matches!(b, Block::Text { .. }));
        if text.is_empty() {
            return;
        }
        match at {
            Some(i) => self.blocks.insert(i, Block::Text { text }),
            None => self.insert(Block::Text { text }),
        }
    }

    /// Appends to the text (to the last text block).
    pub fn push_text(&mut self, more: &str) {
        if more.is_empty() {
            return;
        }
        match self.blocks.iter_mut().rev().find_map(|b| match b {
            Block::Text { text } => Some(text),
            _ => None,
        }) {
            Some(text) => text.push_str(more),
            None => self.insert(Block::Text { text: more.into() }),
        }
    }

    /// The reasoning text, `None` when the message has no thinking block.
    /// Several blocks are joined by a blank line.
    pub fn thinking(&self) -> Option<Cow<'_, str>> {
        let mut blocks = self.thinking_blocks().map(|t| t.text.as_str());
        let first = blocks.next()?;
        let rest: Vec<&str> = blocks.filter(|t| !t.is_empty()).collect();
        if rest.is_empty() {
            return Some(Cow::Borrowed(first));
        }
        let mut all = first.to_string();
        for t in rest {
            if !all.is_empty() {
                all.push_str("\n\n");
            }
            all.push_str(t);
        }
        Some(Cow::Owned(all))
    }

    /// Replaces every thinking block by one holding `text` only (or none).
    pub fn set_thinking(&mut self, text: Option<String>) {
        self.set_thinking_blocks(text.map(Thinking::text).into_iter().collect());
    }

    /// Appends reasoning text to the last thinking block.
    pub fn push_thinking(&mut self, more: &str) {
        match self.blocks.iter_mut().rev().find_map(|b| match b {
            Block::Thinking(t) => Some(t),
            _ => None,
        }) {
            Some(t) => t.text.push_str(more),
            None => self.insert(Block::Thinking(Thinking::text(more))),
        }
    }

    pub fn thinking_blocks(&self) -> impl Iterator<Item = &Thinking> {
        self.blocks.iter().filter_map(|b| match b {
            Block::Thinking(t) => Some(t),
            _ => None,
        })
    }

    /// Replaces the thinking blocks (placed first).
    pub fn set_thinking_blocks(&mut self, blocks: Vec<Thinking>) {
        let at = self
            .blocks
            .iter()
            .position(|b| matches!(b, Block::Thinking(_)))
            .unwrap_or(0);
        self.blocks.retain(|b| !matches!(b, Block::Thinking(_)));
        let at = at.min(self.blocks.len());
        self.blocks
            .splice(at..at, blocks.into_iter().map(Block::Thinking));
    }

    pub fn tool_calls(&self) -> impl DoubleEndedIterator<Item = &ToolCall> {
        self.blocks.iter().filter_map(|b| match b {
            Block::ToolCall(c) => Some(c),
            _ => None,
        })
    }

    pub fn tool_calls_mut(&mut self) -> impl Iterator<Item = &mut ToolCall> {
        self.blocks.iter_mut().filter_map(|b| match b {
            Block::ToolCall(c) => Some(c),
            _ => None,
        })
    }

    pub fn has_tool_calls(&self) -> bool {
        self.tool_calls().next().is_some()
    }

    /// Replaces the tool calls (placed last).
    pub fn set_tool_calls(&mut self, calls: Vec<ToolCall>) {
        self.blocks.retain(|b| !matches!(b, Block::ToolCall(_)));
        self.blocks.extend(calls.into_iter().map(Block::ToolCall));
    }

    pub fn push_tool_call(&mut self, call: ToolCall) {
        self.blocks.push(Block::ToolCall(call));
    }

    pub fn images(&self) -> impl Iterator<Item = &ImageData> {
        self.blocks.iter().filter_map(|b| match b {
            Block::Image(i) => Some(i),
            _ => None,
        })
    }

    pub fn has_images(&self) -> bool {
        self.images().next().is_some()
    }

    pub fn image_count(&self) -> usize {
        self.images().count()
    }

    pub fn push_image(&mut self, image: ImageData) {
        self.insert(Block::Image(image));
    }

    /// Removes the images and returns them.
    pub fn take_images(&mut self) -> Vec<ImageData> {
        let mut out = Vec::new();
        self.blocks.retain(|b| match b {
            Block::Image(i) => {
                out.push(i.clone());
                false
            }
            _ => true,
        });
        out
    }

    fn result_header(&self) -> Option<(&str, &str)> {
        self.blocks.iter().find_map(|b| match b {
            Block::ToolResult { call_id, name } => Some((call_id.as_str(), name.as_str())),
            _ => None,
        })
    }

    /// For role `tool`: the id of the call this answers.
    pub fn tool_call_id(&self) -> Option<&str> {
        self.result_header()
            .map(|(id, _)| id)
            .filter(|s| !s.is_empty())
    }

    /// For role `tool`: the tool's name (Ollama pairs results by name).
    pub fn tool_name(&self) -> Option<&str> {
        self.result_header()
            .map(|(_, name)| name)
            .filter(|s| !s.is_empty())
    }

    /// The flat fields of earlier releases, and the blocks when those
    /// fields alone do not give this message back.
    pub fn to_flat(&self) -> (FlatMessage, Option<Vec<Block>>) {
        let flat = FlatMessage {
            role: self.role,
            content: self.text().into_owned(),
            thinking: self.thinking().map(Cow::into_owned),
            tool_calls: self.tool_calls().cloned().collect(),
            tool_call_id: self.tool_call_id().map(String::from),
            tool_name: self.tool_name().map(String::from),
            images: self.images().cloned().collect(),
        };
        let exact = ChatMessage::from_flat(flat.clone()) == *self;
        (flat, (!exact).then(|| self.blocks.clone()))
    }

    /// The message the flat fields describe, blocks in the usual order.
    pub fn from_flat(f: FlatMessage) -> Self {
        let mut blocks = Vec::new();
        if let Some(t) = f.thinking {
            blocks.push(Block::Thinking(Thinking::text(t)));
        }
        if f.tool_call_id.is_some() || f.tool_name.is_some() {
            blocks.push(Block::ToolResult {
                call_id: f.tool_call_id.unwrap_or_default(),
                name: f.tool_name.unwrap_or_default(),
            });
        }
        if !f.content.is_empty() {
            blocks.push(Block::Text { text: f.content });
        }
        blocks.extend(f.images.into_iter().map(Block::Image));
        blocks.extend(f.tool_calls.into_iter().map(Block::ToolCall));
        ChatMessage {
            role: f.role,
            blocks,
        }
    }

    /// `from_flat`, unless `blocks` holds the whole message.
    pub fn from_parts(flat: FlatMessage, blocks: Option<Vec<Block>>) -> Self {
        match blocks {
            Some(blocks) => ChatMessage {
                role: flat.role,
                blocks,
            },
            None => ChatMessage::from_flat(flat),
        }
    }
}

/// A message in the flat form of earlier releases: one text, one thinking
/// text, tool calls, the result's call id and tool name, images.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FlatMessage {
    pub role: Role,
    #[serde(default)]
    pub content: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub thinking: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tool_calls: Vec<ToolCall>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_call_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_name: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<ImageData>,
}

/// The JSON form: the flat fields (as earlier releases wrote them), plus
/// `blocks` when they are needed to give the message back.
#[derive(Serialize, Deserialize)]
struct MessageJson {
    #[serde(flatten)]
    flat: FlatMessage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    blocks: Option<Vec<Block>>,
}

impl Serialize for ChatMessage {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let (flat, blocks) = self.to_flat();
        MessageJson { flat, blocks }.serialize(s)
    }
}

impl<'de> Deserialize<'de> for ChatMessage {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let j = MessageJson::deserialize(d)?;
        Ok(ChatMessage::from_parts(j.flat, j.blocks))
    }
}

#[cfg(test)]
#[path = "message_tests.rs"]
mod tests;
