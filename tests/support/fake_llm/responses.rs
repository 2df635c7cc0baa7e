//! The OpenAI Responses wire format of the fake server: the SSE events of a
//! streamed response (`response.created`, `response.output_item.added` /
//! `.done`, `response.reasoning_summary_text.delta`,
//! `response.output_text.delta`, `response.function_call_arguments.delta`,
//! `response.completed`), and the check the API makes on a stateless
//! request that navi must pass: a reasoning item sent back must carry the
//! `encrypted_content` it was given (with `store: false` the server has
//! nothing else to find it by).
//!
//! Invariants: every event has a growing `sequence_number`; a thinking part
//! is a reasoning item with id `rs_fake_N` whose summary streams word by
//! word and whose `encrypted_content` is [`encrypted`] of its text; a tool
//! call is a `function_call` item whose arguments arrive in up to three
//! pieces; `response.completed` (or `.incomplete` for "length") is the tail.
use super::wire::{Wire, args_text, thirds, words};
use super::{Part, Reply};
use serde_json::{Value, json};
use std::cell::Cell;

/// The encrypted content the fake gives a reasoning text.
pub fn encrypted(text: &str) -> String {
    format!("enc-{}", super::anthropic::signature(text))
}

/// What the API would refuse in `req`, if anything.
pub(super) fn refusal(req: &Value) -> Option<(u16, String)> {
    let items = req.get("input").and_then(Value::as_array)?;
    for item in items.iter().filter(|i| i["type"] == "reasoning") {
        let id = item["id"].as_str().unwrap_or("");
        let text: String = item["summary"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|s| s["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n\n");
        let given = item["encrypted_content"].as_str();
        let known = given.is_some_and(|e| e == encrypted(&text) || e.starts_with("redacted:"));
        if !known {
            return Some((
                404,
                format!(
                    "Item with id '{id}' not found. Items are not persisted when `store` is set to false. Try again with `store` set to true, or remove this item from your input."
                ),
            ));
        }
    }
    if req.get("store") != Some(&json!(false)) {
        return Some((400, "the fake only serves store: false".into()));
    }
    None
}

pub(super) fn render(model: &str, reply: &Reply) -> Wire {
    let seq = Cell::new(0u64);
    let ev = |mut v: Value| {
        v["sequence_number"] = json!(seq.get());
        seq.set(seq.get() + 1);
        let kind = v["type"].as_str().unwrap_or("").to_string();
        format!("event: {kind}\ndata: {v}\n\n")
    };
    let response = |status: &str| {
        json!({"id": "resp_fake", "object": "response", "created_at": 1_700_000_000,
               "status": status, "model": model, "output": []})
    };
    let head = vec![
        ev(json!({"type": "response.created", "response": response("in_progress")})),
        ev(json!({"type": "response.in_progress", "response": response("in_progress")})),
    ];
    let mut content = Vec::new();
    for (k, part) in reply.parts.iter().enumerate() {
        let added = |item: Value| json!({"type": "response.output_item.added", "output_index": k, "item": item});
        let done = |item: Value| json!({"type": "response.output_item.done", "output_index": k, "item": item});
        match part {
            Part::Thinking(t) => {
                let id = format!("rs_fake_{k}");
                content.push(ev(added(
                    json!({"id": id, "type": "reasoning", "summary": []}),
                )));
                content.push(ev(json!({"type": "response.reasoning_summary_part.added",
                    "item_id": id, "output_index": k, "summary_index": 0,
                    "part": {"type": "summary_text", "text": ""}})));
                content.extend(words(t).into_iter().map(|w| {
                    ev(
                        json!({"type": "response.reasoning_summary_text.delta", "item_id": id,
                              "output_index": k, "summary_index": 0, "delta": w}),
                    )
                }));
                content.push(ev(json!({"type": "response.reasoning_summary_text.done",
                    "item_id": id, "output_index": k, "summary_index": 0, "text": t})));
                content.push(ev(done(json!({"id": id, "type": "reasoning",
                    "summary": [{"type": "summary_text", "text": t}],
                    "encrypted_content": encrypted(t)}))));
            }
            Part::Redacted(data) => {
                let id = format!("rs_fake_{k}");
                content.push(ev(added(
                    json!({"id": id, "type": "reasoning", "summary": []}),
                )));
                content.push(ev(done(
                    json!({"id": id, "type": "reasoning", "summary": [],
                    "encrypted_content": format!("redacted:{data}")}),
                )));
            }
            Part::Text(t) => {
                let id = format!("msg_fake_{k}");
                content.push(ev(added(json!({"id": id, "type": "message",
                    "status": "in_progress", "role": "assistant", "content": []}))));
                content.extend(words(t).into_iter().map(|w| {
                    ev(json!({"type": "response.output_text.delta", "item_id": id,
                              "output_index": k, "content_index": 0, "delta": w}))
                }));
                content.push(ev(
                    json!({"type": "response.output_text.done", "item_id": id,
                    "output_index": k, "content_index": 0, "text": t}),
                ));
                content.push(ev(done(json!({"id": id, "type": "message",
                    "status": "completed", "role": "assistant",
                    "content": [{"type": "output_text", "text": t, "annotations": []}]}))));
            }
            Part::ToolCall { name, args } => {
                let (id, call_id) = (format!("fc_fake_{k}"), format!("call_fake_{k}"));
                let text = args_text(args);
                content.push(ev(added(json!({"id": id, "type": "function_call",
                    "status": "in_progress", "call_id": call_id, "name": name, "arguments": ""}))));
                content.extend(thirds(&text).into_iter().map(|piece| {
                    ev(
                        json!({"type": "response.function_call_arguments.delta", "item_id": id,
                              "output_index": k, "delta": piece}),
                    )
                }));
                content.push(ev(json!({"type": "response.function_call_arguments.done",
                    "item_id": id, "output_index": k, "arguments": text})));
                content.push(ev(done(json!({"id": id, "type": "function_call",
                    "status": "completed", "call_id": call_id, "name": name, "arguments": text}))));
            }
        }
    }
    let (input, output) = reply.usage.unwrap_or((0, 0));
    let (cached, _) = reply.cache_tokens.unwrap_or((0, 0));
    let usage = json!({"input_tokens": input, "input_tokens_details": {"cached_tokens": cached},
                       "output_tokens": output, "output_tokens_details": {"reasoning_tokens": 0},
                       "total_tokens": input + output});
    let tail = if reply.finish_reason.as_deref() == Some("length") {
        let mut r = response("incomplete");
        r["incomplete_details"] = json!({"reason": "max_output_tokens"});
        r["usage"] = usage;
        vec![ev(json!({"type": "response.incomplete", "response": r}))]
    } else {
        let mut r = response("completed");
        r["usage"] = usage;
        vec![ev(json!({"type": "response.completed", "response": r}))]
    };
    Wire {
        head,
        content,
        tail,
    }
}

/// The `error` event sent in the middle of a stream.
pub(super) fn error_event(message: &str) -> String {
    let v = json!({"type": "error", "code": "server_error", "message": message, "param": null});
    format!("event: error\ndata: {v}\n\n")
}
