//! The Anthropic Messages wire format of the fake server: `event:` +
//! `data:` SSE events as the API sends them, its error bodies, its model
//! list, and the checks the API makes on a request that navi must pass
//! (signed thinking sent back unchanged; a tool loop with thinking on
//! starting with its thinking block).
//!
//! Invariants: a thinking part is one `thinking` block streamed word by
//! word, then a `signature_delta` whose value is [`signature`] of its text;
//! a tool call is a `tool_use` block whose input arrives as up to three
//! `input_json_delta` pieces; `message_delta` + `message_stop` are the
//! tail.
use super::wire::{Wire, args_text, thirds, words};
use super::{Part, Reply};
use serde_json::{Value, json};

/// The signature the fake gives a thinking text (and checks on return).
pub fn signature(text: &str) -> String {
    // FNV-1a: stable across runs and platforms.
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in text.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    format!("sig-{h:016x}")
}

pub(super) fn event(v: &Value) -> String {
    let kind = v.get("type").and_then(Value::as_str).unwrap_or("message");
    format!("event: {kind}\ndata: {v}\n\n")
}

pub(super) fn error_body(code: u16, text: &str) -> Value {
    let kind = match code {
        400 => "invalid_request_error",
        401 => "authentication_error",
        403 => "permission_error",
        404 => "not_found_error",
        413 => "request_too_large",
        429 => "rate_limit_error",
        529 => "overloaded_error",
        _ => "api_error",
    };
    json!({"type": "error", "error": {"type": kind, "message": text}})
}

/// The `error` event sent in the middle of a stream.
pub(super) fn error_event(message: &str) -> String {
    let kind = if message.contains("verloaded") {
        "overloaded_error"
    } else {
        "api_error"
    };
    event(&json!({"type": "error", "error": {"type": kind, "message": message}}))
}

/// `GET /v1/models` as Anthropic lists models.
pub(super) fn models(models: &[(String, Option<u64>)]) -> Value {
    let data: Vec<Value> = models
        .iter()
        .map(|(name, _)| {
            json!({"type": "model", "id": name, "display_name": name,
                   "created_at": "2025-01-01T00:00:00Z"})
        })
        .collect();
    let first = data.first().map(|m| m["id"].clone()).unwrap_or(Value::Null);
    let last = data.last().map(|m| m["id"].clone()).unwrap_or(Value::Null);
    json!({"data": data, "has_more": false, "first_id": first, "last_id": last})
}

/// What the API would refuse in `req` (status and message), if anything.
pub(super) fn refusal(req: &Value) -> Option<(u16, String)> {
    let messages = req.get("messages").and_then(Value::as_array)?;
    if req.get("max_tokens").and_then(Value::as_u64).is_none() {
        return Some((400, "max_tokens: Field required".into()));
    }
    for (i, m) in messages.iter().enumerate() {
        let content = m.get("content").and_then(Value::as_array);
        for (j, b) in content.into_iter().flatten().enumerate() {
            if b["type"] == "thinking"
                && b["signature"].as_str() != Some(&signature(b["thinking"].as_str().unwrap_or("")))
            {
                return Some((
                    400,
                    format!("messages.{i}.content.{j}: Invalid `signature` in `thinking` block"),
                ));
            }
            if b["type"] == "text" && b["text"].as_str().is_none_or(|t| t.trim().is_empty()) {
                return Some((
                    400,
                    format!("messages.{i}.content.{j}: text content blocks must be non-empty"),
                ));
            }
        }
    }
    let thinking_on = req.pointer("/thinking/type").and_then(Value::as_str) == Some("enabled");
    let last_asst = messages.iter().rposition(|m| m["role"] == "assistant");
    if let (true, Some(i)) = (thinking_on, last_asst) {
        let blocks = messages[i]["content"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        let uses_tools = blocks.iter().any(|b| b["type"] == "tool_use");
        let in_loop = messages[i + 1..].iter().all(|m| {
            m["content"]
                .as_array()
                .is_some_and(|c| c.iter().all(|b| b["type"] == "tool_result"))
        });
        let starts_with_thinking = blocks
            .first()
            .is_some_and(|b| b["type"] == "thinking" || b["type"] == "redacted_thinking");
        if uses_tools && in_loop && !starts_with_thinking {
            return Some((
                400,
                "messages.1.content.0.type: Expected `thinking` or `redacted_thinking`, but found `tool_use`. When `thinking` is enabled, a final `assistant` message must start with a thinking block".into(),
            ));
        }
    }
    None
}

pub(super) fn render(model: &str, reply: &Reply) -> Wire {
    // `with_usage` gives the whole prompt; Anthropic's `input_tokens` is
    // what is left after the cached parts.
    let (prompt, output) = reply.usage.unwrap_or((0, 0));
    let (read, write) = reply.cache_tokens.unwrap_or((0, 0));
    let input = prompt.saturating_sub(read + write);
    let head = vec![
        event(&json!({"type": "message_start", "message": {
            "id": "msg_fake", "type": "message", "role": "assistant", "content": [],
            "model": model, "stop_reason": null, "stop_sequence": null,
            "usage": {"input_tokens": input, "cache_creation_input_tokens": write,
                      "cache_read_input_tokens": read, "output_tokens": 1}}})),
        event(&json!({"type": "ping"})),
    ];
    let mut content = Vec::new();
    let mut calls = 0;
    for (index, part) in reply.parts.iter().enumerate() {
        let start = |block: Value| {
            event(&json!({"type": "content_block_start", "index": index, "content_block": block}))
        };
        let delta =
            |d: Value| event(&json!({"type": "content_block_delta", "index": index, "delta": d}));
        match part {
            Part::Thinking(t) => {
                content.push(start(
                    json!({"type": "thinking", "thinking": "", "signature": ""}),
                ));
                content.extend(
                    words(t)
                        .into_iter()
                        .map(|w| delta(json!({"type": "thinking_delta", "thinking": w}))),
                );
                content.push(delta(
                    json!({"type": "signature_delta", "signature": signature(t)}),
                ));
            }
            Part::Redacted(data) => {
                content.push(start(json!({"type": "redacted_thinking", "data": data})));
            }
            Part::Text(t) => {
                content.push(start(json!({"type": "text", "text": ""})));
                content.extend(
                    words(t)
                        .into_iter()
                        .map(|w| delta(json!({"type": "text_delta", "text": w}))),
                );
            }
            Part::ToolCall { name, args } => {
                calls += 1;
                content.push(start(json!({"type": "tool_use",
                    "id": format!("toolu_fake_{index}"), "name": name, "input": {}})));
                let text = args_text(args);
                content.extend(thirds(&text).into_iter().map(|piece| {
                    delta(json!({"type": "input_json_delta", "partial_json": piece}))
                }));
            }
        }
        content.push(event(
            &json!({"type": "content_block_stop", "index": index}),
        ));
    }
    let stop = match reply.finish_reason.as_deref() {
        Some("length") => "max_tokens",
        Some(other) => other,
        None if calls > 0 => "tool_use",
        None => "end_turn",
    };
    let tail = vec![
        event(&json!({"type": "message_delta",
            "delta": {"stop_reason": stop, "stop_sequence": null},
            "usage": {"output_tokens": output}})),
        event(&json!({"type": "message_stop"})),
    ];
    Wire {
        head,
        content,
        tail,
    }
}
