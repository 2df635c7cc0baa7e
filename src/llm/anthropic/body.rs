//! The JSON body of an Anthropic Messages request.
//!
//! Invariants:
//! - Messages go through `roles::normalize` first; the one system message
//!   becomes `system`, tool results become `tool_result` blocks of a user
//!   message, and consecutive messages of one role become one message.
//! - Thinking blocks go back only as the server gave them: with their
//!   signature (`thinking`), or as `redacted_thinking` with their payload.
//!   Reasoning without either (another server's) is not sent.
//! - No empty text block is sent (the API refuses them); a message left
//!   with no content is dropped.
//! - Prompt caching: `cache_control` marks the system prompt, the last tool
//!   and the last block of the last message (three of the four allowed), so
//!   each request reads the previous one's prefix from the cache.
//! - Thinking (`think`) is asked for with a budget below `max_tokens`;
//!   then `temperature` is left out (the API allows only its default).
use crate::config::ThinkSetting;
use crate::llm::{Block, ChatMessage, ChatRequest, Role};
use serde_json::{Map, Value, json};

/// `max_tokens` when the request sets no cap (the API requires one).
pub(crate) const DEFAULT_MAX_TOKENS: u32 = 8192;
/// The smallest thinking budget the API accepts.
const MIN_BUDGET: u32 = 1024;

fn ephemeral() -> Value {
    json!({"type": "ephemeral"})
}

/// The thinking budget for `think`, within `max_tokens`; `None`: no thinking.
pub(crate) fn thinking_budget(think: Option<&ThinkSetting>, max_tokens: u32) -> Option<u32> {
    let wanted = match think? {
        ThinkSetting::Bool(false) => return None,
        ThinkSetting::Bool(true) => 4096,
        ThinkSetting::Level(l) => match l.as_str() {
            "low" => MIN_BUDGET,
            "high" => 16384,
            _ => 4096,
        },
    };
    let budget = wanted.min(max_tokens.saturating_sub(MIN_BUDGET));
    (budget >= MIN_BUDGET).then_some(budget)
}

pub(crate) fn messages_body(req: &ChatRequest) -> Value {
    let normal = crate::llm::roles::normalize(&req.messages);
    let system: String = normal
        .iter()
        .filter(|m| m.role == Role::System)
        .map(|m| m.text().into_owned())
        .collect::<Vec<_>>()
        .join("\n\n");
    let mut messages: Vec<Value> = Vec::new();
    for m in normal.iter().filter(|m| m.role != Role::System) {
        let (role, content) = wire_message(m);
        push(&mut messages, role, content);
    }
    if messages.first().is_some_and(|m| m["role"] == "assistant") {
        messages.insert(
            0,
            json!({"role": "user", "content": [{"type": "text", "text": "(continued)"}]}),
        );
    }
    mark_last_block(&mut messages);
    let max_tokens = req.max_tokens.unwrap_or(DEFAULT_MAX_TOKENS).max(1);
    let budget =
        thinking_budget(req.think.as_ref(), max_tokens).filter(|_| thinking_allowed(&normal));
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    body.insert("max_tokens".into(), json!(max_tokens));
    if !system.trim().is_empty() {
        body.insert(
            "system".into(),
            json!([{"type": "text", "text": system, "cache_control": ephemeral()}]),
        );
    }
    body.insert("messages".into(), Value::Array(messages));
    if !req.tools.is_empty() {
        let mut tools: Vec<Value> = req
            .tools
            .iter()
            .map(|t| {
                json!({"name": t.name, "description": t.description, "input_schema": t.parameters})
            })
            .collect();
        if let Some(last) = tools.last_mut() {
            last["cache_control"] = ephemeral();
        }
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert("stream".into(), json!(true));
    match budget {
        Some(b) => {
            body.insert(
                "thinking".into(),
                json!({"type": "enabled", "budget_tokens": b}),
            );
        }
        None => {
            if let Some(t) = req.temperature {
                body.insert("temperature".into(), json!(t.clamp(0.0, 1.0)));
            }
        }
    }
    Value::Object(body)
}

/// With thinking on, the API wants the assistant message that a tool loop
/// continues to start with a signed thinking block; when it does not (it
/// came from another server, or was stopped), this request goes without
/// thinking rather than be refused.
fn thinking_allowed(messages: &[ChatMessage]) -> bool {
    let Some(last_asst) = messages.iter().rposition(|m| m.role == Role::Assistant) else {
        return true;
    };
    let continues_loop = messages[last_asst + 1..]
        .iter()
        .all(|m| m.role == Role::Tool)
        && messages[last_asst].has_tool_calls();
    !continues_loop || !wire_thinking(&messages[last_asst]).is_empty()
}

fn wire_thinking(m: &ChatMessage) -> Vec<Value> {
    m.thinking_blocks()
        .filter_map(|t| match (&t.signature, &t.encrypted, &t.id) {
            (Some(sig), _, _) if !sig.is_empty() => {
                Some(json!({"type": "thinking", "thinking": t.text, "signature": sig}))
            }
            (None, Some(data), None) if !data.is_empty() => {
                Some(json!({"type": "redacted_thinking", "data": data}))
            }
            _ => None,
        })
        .collect()
}

fn text_block(text: &str) -> Option<Value> {
    (!text.trim().is_empty()).then(|| json!({"type": "text", "text": text}))
}

fn image_blocks(m: &ChatMessage) -> impl Iterator<Item = Value> + '_ {
    m.images().map(|i| {
        json!({"type": "image", "source": {"type": "base64", "media_type": i.mime, "data": i.base64}})
    })
}

/// The role and content blocks `m` becomes on the wire.
fn wire_message(m: &ChatMessage) -> (&'static str, Vec<Value>) {
    match m.role {
        Role::Assistant => {
            let mut content = wire_thinking(m);
            content.extend(text_block(&m.text()));
            for b in &m.blocks {
                if let Block::ToolCall(c) = b {
                    let input = match &c.arguments {
                        Value::Object(_) => c.arguments.clone(),
                        _ => json!({}),
                    };
                    content.push(
                        json!({"type": "tool_use", "id": c.id, "name": c.name, "input": input}),
                    );
                }
            }
            ("assistant", content)
        }
        Role::Tool => {
            let mut inner: Vec<Value> = text_block(&m.text()).into_iter().collect();
            inner.extend(image_blocks(m));
            let mut result = json!({
                "type": "tool_result",
                "tool_use_id": m.tool_call_id().unwrap_or_default(),
            });
            match inner.as_slice() {
                [] => {}
                [only] if only["type"] == "text" => result["content"] = only["text"].clone(),
                _ => result["content"] = Value::Array(inner),
            }
            ("user", vec![result])
        }
        Role::User | Role::System => {
            let mut content: Vec<Value> = text_block(&m.text()).into_iter().collect();
            content.extend(image_blocks(m));
            ("user", content)
        }
    }
}

/// Appends a message, joining it to the previous one of the same role.
fn push(messages: &mut Vec<Value>, role: &str, content: Vec<Value>) {
    if content.is_empty() {
        return;
    }
    if let Some(prev) = messages.last_mut()
        && prev["role"] == role
        && let Some(blocks) = prev["content"].as_array_mut()
    {
        // Tool results first: the API wants them before other user content.
        blocks.extend(content);
        blocks.sort_by_key(|b| b["type"] != "tool_result");
        return;
    }
    messages.push(json!({"role": role, "content": content}));
}

/// `cache_control` on the last block of the last message that can carry it.
fn mark_last_block(messages: &mut [Value]) {
    let Some(blocks) = messages
        .last_mut()
        .and_then(|m| m["content"].as_array_mut())
    else {
        return;
    };
    if let Some(b) = blocks
        .iter_mut()
        .rev()
        .find(|b| !matches!(b["type"].as_str(), Some("thinking" | "redacted_thinking")))
    {
        b["cache_control"] = ephemeral();
    }
}

#[cfg(test)]
#[path = "body_tests.rs"]
mod tests;
