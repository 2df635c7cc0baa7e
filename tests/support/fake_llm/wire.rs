//! Wire formats of the fake LLM server: the exact JSON lines and SSE events
//! Ollama and OpenAI-compatible servers send, and their model/error bodies
//! (Anthropic Messages and OpenAI Responses live in their own files).
//!
//! Invariants: text and thinking are cut into word-sized chunks (their
//! concatenation is the original text); Ollama tool calls are whole, OpenAI
//! tool calls are an id+name fragment followed by up to three argument
//! pieces; the closing messages (`done: true`, `finish_reason`, usage,
//! `[DONE]`) are kept apart in `Wire::tail` so faults can cut before them.

use super::{Part, Reply};
use serde_json::{Value, json};

#[derive(Clone, Copy, PartialEq)]
pub(super) enum Proto {
    Ollama,
    OpenAi,
    Anthropic,
    Responses,
}

impl Proto {
    pub(super) fn content_type(self) -> &'static str {
        match self {
            Proto::Ollama => "application/x-ndjson",
            _ => "text/event-stream",
        }
    }

    /// The protocol's way of reporting an error in the middle of a stream.
    pub(super) fn error_line(self, m: &str) -> String {
        match self {
            Proto::Ollama => format!("{}\n", json!({ "error": m })),
            Proto::OpenAi => {
                sse(&json!({"error": {"code": 500, "message": m, "type": "server_error"}}))
            }
            Proto::Anthropic => super::anthropic::error_event(m),
            Proto::Responses => super::responses::error_event(m),
        }
    }

    /// A line that is not the protocol's.
    pub(super) fn garbage(self) -> &'static str {
        match self {
            Proto::Ollama => "this is not json\n",
            _ => "data: {this is not json\n\n",
        }
    }
}

/// `GET /api/tags`
pub(super) fn tags(models: &[(String, Option<u64>)]) -> Value {
    let list: Vec<Value> = models
        .iter()
        .map(|(name, ctx)| {
            // Another window is another model file: another digest.
            let digest = format!("{:016x}", ctx.unwrap_or(0));
            json!({"name": name, "model": name, "modified_at": "2025-01-01T00:00:00Z",
                   "size": 1_000_000, "digest": digest,
                   "details": {"format": "gguf", "family": "fake", "parameter_size": "1B",
                               "quantization_level": "Q8_0"}})
        })
        .collect();
    json!({ "models": list })
}

/// `POST /api/show` for a known model.
pub(super) fn show(context_length: Option<u64>, caps: Option<&[String]>) -> Value {
    let mut info = json!({"general.architecture": "fake"});
    if let Some(n) = context_length {
        info["fake.context_length"] = json!(n);
    }
    json!({"modelfile": "FROM fake", "parameters": "", "template": "{{ .Prompt }}",
        "details": {"format": "gguf", "family": "fake"}, "model_info": info,
        "capabilities": caps.map_or_else(|| json!(["completion", "tools", "thinking"]), |c| json!(c))})
}

/// `GET …/models` (llama.cpp style: context length in `meta.n_ctx_train`).
pub(super) fn openai_models(models: &[(String, Option<u64>)]) -> Value {
    let data: Vec<Value> = models
        .iter()
        .map(|(name, ctx)| {
            let mut m = json!({"id": name, "object": "model", "created": 0, "owned_by": "fake"});
            if let Some(n) = ctx {
                m["meta"] = json!({ "n_ctx_train": n });
            }
            m
        })
        .collect();
    json!({"object": "list", "data": data})
}

pub(super) fn error_body(proto: Proto, code: u16, text: &str) -> Value {
    if let Ok(v) = serde_json::from_str::<Value>(text)
        && v.is_object()
    {
        return v;
    }
    match proto {
        Proto::Ollama => json!({ "error": text }),
        Proto::Anthropic => super::anthropic::error_body(code, text),
        Proto::OpenAi | Proto::Responses => {
            let kind = match code {
                401 | 403 => "authentication_error",
                404 => "not_found_error",
                429 => "rate_limit_error",
                c if c >= 500 => "server_error",
                _ => "invalid_request_error",
            };
            json!({"error": {"message": text, "type": kind, "code": code}})
        }
    }
}

/// A reply as protocol chunks: always-sent `head`, `content` (cut by
/// mid-stream faults) and the closing `tail`.
pub(super) struct Wire {
    pub(super) head: Vec<String>,
    pub(super) content: Vec<String>,
    pub(super) tail: Vec<String>,
}

pub(super) fn sse(v: &Value) -> String {
    format!("data: {v}\n\n")
}

pub(super) fn words(s: &str) -> Vec<&str> {
    s.split_inclusive(' ').collect()
}

/// Splits `s` into three pieces at char boundaries (empty pieces dropped).
pub(super) fn thirds(s: &str) -> Vec<&str> {
    let boundary = |mut i: usize| {
        while !s.is_char_boundary(i) {
            i += 1;
        }
        i
    };
    let (a, b) = (boundary(s.len() / 3), boundary(2 * s.len() / 3));
    [&s[..a], &s[a..b], &s[b..]]
        .into_iter()
        .filter(|p| !p.is_empty())
        .collect()
}

pub(super) fn args_text(args: &Value) -> String {
    match args {
        Value::String(raw) => raw.clone(),
        other => other.to_string(),
    }
}

pub(super) fn render(proto: Proto, req: &Value, reply: &Reply) -> Wire {
    let model = req
        .get("model")
        .and_then(Value::as_str)
        .unwrap_or("test-model");
    match proto {
        Proto::Ollama => render_ollama(model, reply),
        Proto::OpenAi => {
            let usage = req
                .pointer("/stream_options/include_usage")
                .and_then(Value::as_bool)
                .unwrap_or(false);
            render_openai(model, reply, usage)
        }
        Proto::Anthropic => super::anthropic::render(model, reply),
        Proto::Responses => super::responses::render(model, reply),
    }
}

fn render_ollama(model: &str, reply: &Reply) -> Wire {
    let line = |message: Value| {
        let v = json!({"model": model, "created_at": "2025-01-01T00:00:00.000000Z",
                       "message": message, "done": false});
        format!("{v}\n")
    };
    let mut content = Vec::new();
    for (k, part) in reply.parts.iter().enumerate() {
        match part {
            Part::Thinking(t) => content.extend(
                words(t)
                    .into_iter()
                    .map(|w| line(json!({"role": "assistant", "content": "", "thinking": w}))),
            ),
            Part::Text(t) => content.extend(
                words(t)
                    .into_iter()
                    .map(|w| line(json!({"role": "assistant", "content": w}))),
            ),
            Part::ToolCall { name, args } => content.push(line(json!({
                "role": "assistant", "content": "",
                "tool_calls": [{"function": {"index": k, "name": name, "arguments": args}}]
            }))),
            Part::Redacted(_) => {}
        }
    }
    let mut done = json!({"model": model, "created_at": "2025-01-01T00:00:01.000000Z",
        "message": {"role": "assistant", "content": ""}, "done": true,
        "done_reason": reply.finish_reason.as_deref().unwrap_or("stop"),
        "total_duration": 1_000_000, "load_duration": 1000});
    if let Some((p, c)) = reply.usage {
        done["prompt_eval_count"] = json!(p);
        done["eval_count"] = json!(c);
    }
    Wire {
        head: Vec::new(),
        content,
        tail: vec![format!("{done}\n")],
    }
}

fn render_openai(model: &str, reply: &Reply, include_usage: bool) -> Wire {
    let chunk = |delta: Value, finish: Value| {
        sse(
            &json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk", "created": 1_700_000_000,
                    "model": model, "system_fingerprint": "fake",
                    "choices": [{"index": 0, "delta": delta, "logprobs": null, "finish_reason": finish}]}),
        )
    };
    let thinking_key = reply
        .reasoning_field
        .as_deref()
        .unwrap_or("reasoning_content");
    let head = vec![chunk(
        json!({"role": "assistant", "content": null}),
        Value::Null,
    )];
    let mut content = Vec::new();
    let mut calls = 0;
    for part in &reply.parts {
        match part {
            Part::Thinking(t) => content.extend(
                words(t)
                    .into_iter()
                    .map(|w| chunk(json!({ thinking_key: w }), Value::Null)),
            ),
            Part::Text(t) => content.extend(
                words(t)
                    .into_iter()
                    .map(|w| chunk(json!({ "content": w }), Value::Null)),
            ),
            Part::ToolCall { name, args } => {
                let index = calls;
                calls += 1;
                content.push(chunk(
                    json!({"tool_calls": [{"index": index, "id": format!("call_fake_{index}"), "type": "function",
                                           "function": {"name": name, "arguments": ""}}]}),
                    Value::Null,
                ));
                let text = args_text(args);
                content.extend(thirds(&text).into_iter().map(|piece| {
                    chunk(
                        json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                        Value::Null,
                    )
                }));
            }
            Part::Redacted(_) => {}
        }
    }
    let finish = match &reply.finish_reason {
        Some(r) => r.as_str(),
        None if calls > 0 => "tool_calls",
        None => "stop",
    };
    let mut tail = vec![chunk(json!({}), json!(finish))];
    if let (true, Some((p, c))) = (include_usage, reply.usage) {
        let mut usage = json!({"prompt_tokens": p, "completion_tokens": c, "total_tokens": p + c});
        if let Some((read, _)) = reply.cache_tokens {
            // llama-server's and OpenAI's prompt-cache figure.
            usage["prompt_tokens_details"] = json!({"cached_tokens": read});
        }
        tail.push(sse(
            &json!({"id": "chatcmpl-fake", "object": "chat.completion.chunk",
            "created": 1_700_000_000, "model": model, "choices": [], "usage": usage}),
        ));
    }
    tail.push("data: [DONE]\n\n".to_string());
    Wire {
        head,
        content,
        tail,
    }
}
