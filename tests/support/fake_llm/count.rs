//! The fake server as a llama-server that counts: `POST /tokenize`,
//! `POST /apply-template` (a ChatML template that renders the tool schemas
//! into the system turn, as `../shared/llama/chatml-tools.jinja` does),
//! `usage` computed from the prompt, and the "exceeds the available context
//! size" refusal when a prompt is larger than the `/props` window.
//!
//! With a `/props` `chat_template` that folds the system message into the
//! first user turn (Gemma 3's, which names `first_user_prefix`), it renders
//! as that template does: no system turn, tools not rendered.
//!
//! Its tokenizer is denser than navi's fallback estimate on purpose: one
//! token per 3 characters (rounded up) of plain text, special tokens
//! (`<|im_start|>`, `<|im_end|>`) one each, as SmolLM2's is denser than
//! ~4 characters per token.

use super::{Fault, Io, Part, Proto, Reply, State, chat, next_reply, simple};
use serde_json::{Value, json};
use std::sync::Mutex;
use tokio::net::tcp::OwnedWriteHalf;

const SPECIAL: [&str; 2] = ["<|im_start|>", "<|im_end|>"];

/// Tokens of `text` for the fake tokenizer.
pub fn tokens_of(text: &str) -> u64 {
    let mut n = 0u64;
    let mut rest = text;
    loop {
        let next = SPECIAL
            .iter()
            .filter_map(|s| rest.find(s).map(|i| (i, s.len())))
            .min();
        let (plain, after) = match next {
            Some((i, len)) => {
                n += 1;
                (&rest[..i], Some(&rest[i + len..]))
            }
            None => (rest, None),
        };
        n += (plain.chars().count() as u64).div_ceil(3);
        match after {
            Some(a) => rest = a,
            None => return n,
        }
    }
}

fn text_of(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join(""),
        other => other.to_string(),
    }
}

/// The prompt a chat body becomes (ChatML, tools in the system turn, the
/// generation prompt at the end).
pub fn render_prompt(body: &Value) -> String {
    let empty = Vec::new();
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let (system, rest) = match messages.first() {
        Some(m) if m["role"] == "system" => (text_of(&m["content"]), &messages[1..]),
        _ => (String::from("You are a helpful assistant"), &messages[..]),
    };
    let mut out = format!("<|im_start|>system\n{system}");
    if let Some(tools) = body.get("tools").and_then(Value::as_array)
        && !tools.is_empty()
    {
        out.push_str("\n\n# Tools\n\nYou may call one or more functions to assist with the user query.\n\nYou are provided with function signatures within <tools></tools> XML tags:\n<tools>");
        for t in tools {
            out.push('\n');
            out.push_str(&tojson(t));
        }
        out.push_str("\n</tools>\n\nFor each function call, return a json object with function name and arguments within <tool_call></tool_call> XML tags:\n<tool_call>\n{\"name\": <function-name>, \"arguments\": <args-json-object>}\n</tool_call>");
    }
    out.push_str("<|im_end|>\n");
    for m in rest {
        let role = m["role"].as_str().unwrap_or("user");
        let role = if role == "tool" { "user" } else { role };
        out.push_str(&format!("<|im_start|>{role}\n{}", text_of(&m["content"])));
        for c in m["tool_calls"].as_array().into_iter().flatten() {
            let f = &c["function"];
            out.push_str(&format!(
                "\n<tool_call>\n{{\"name\": \"{}\", \"arguments\": {}}}\n</tool_call>",
                f["name"].as_str().unwrap_or(""),
                text_of(&f["arguments"])
            ));
        }
        out.push_str("<|im_end|>\n");
    }
    out.push_str("<|im_start|>assistant\n");
    out
}

/// Whether the `/props` of the server names a folding template.
pub fn folds(props: &Option<Value>) -> bool {
    props
        .as_ref()
        .and_then(|p| p.get("chat_template"))
        .and_then(Value::as_str)
        .is_some_and(|t| t.contains("first_user_prefix"))
}

/// The prompt as Gemma 3's template renders a chat body: the system
/// message opens the first user turn, nothing of it without one.
pub fn render_folded(body: &Value) -> String {
    let empty = Vec::new();
    let messages = body
        .get("messages")
        .and_then(Value::as_array)
        .unwrap_or(&empty);
    let (mut prefix, rest) = match messages.first() {
        Some(m) if m["role"] == "system" => {
            (format!("{}\n\n", text_of(&m["content"])), &messages[1..])
        }
        _ => (String::new(), &messages[..]),
    };
    let mut out = String::from("<bos>");
    for m in rest {
        let role = if m["role"] == "assistant" {
            "model"
        } else {
            "user"
        };
        let text = format!("{}{}", std::mem::take(&mut prefix), text_of(&m["content"]));
        out.push_str(&format!("<start_of_turn>{role}\n{text}<end_of_turn>\n"));
    }
    out.push_str("<start_of_turn>model\n");
    out
}

/// The server's count of a chat body's prompt, folding or not.
pub fn prompt_tokens_as(body: &Value, fold: bool) -> u64 {
    tokens_of(&if fold {
        render_folded(body)
    } else {
        render_prompt(body)
    })
}

/// JSON with `", "` and `": "` separators, as Jinja's `tojson` writes it.
fn tojson(v: &Value) -> String {
    match v {
        Value::Object(m) => {
            let items: Vec<String> = m
                .iter()
                .map(|(k, v)| format!("{}: {}", Value::String(k.clone()), tojson(v)))
                .collect();
            format!("{{{}}}", items.join(", "))
        }
        Value::Array(a) => {
            let items: Vec<String> = a.iter().map(tojson).collect();
            format!("[{}]", items.join(", "))
        }
        other => other.to_string(),
    }
}

/// The server's count of a chat body's prompt.
pub fn prompt_tokens(body: &Value) -> u64 {
    tokens_of(&render_prompt(body))
}

/// `POST /tokenize`: `{"tokens": [...]}` with one id per token.
pub fn tokenize(body: &Value) -> Value {
    let text = body.get("content").and_then(Value::as_str).unwrap_or("");
    let n = tokens_of(text);
    json!({ "tokens": (0..n).collect::<Vec<u64>>() })
}

/// `POST /apply-template`: `{"prompt": "..."}`.
pub fn apply_template(body: &Value, fold: bool) -> Value {
    let prompt = if fold {
        render_folded(body)
    } else {
        render_prompt(body)
    };
    json!({ "prompt": prompt })
}

/// llama-server's refusal of a prompt larger than its window.
pub fn overflow_error(n_prompt: u64, n_ctx: u64) -> String {
    json!({"error": {"code": 400, "type": "exceed_context_size_error",
        "message": "the request exceeds the available context size, try increasing it",
        "n_prompt_tokens": n_prompt, "n_ctx": n_ctx}})
    .to_string()
}

/// The counting server's own routes; `None`: not one of them.
pub(super) async fn respond(
    wr: &mut OwnedWriteHalf,
    method: &str,
    path: &str,
    body: &Value,
    state: &Mutex<State>,
    props: &Option<Value>,
) -> Option<Io> {
    let n_ctx = props.as_ref().and_then(|p| {
        p.pointer("/default_generation_settings/n_ctx")
            .or_else(|| p.get("n_ctx"))
            .and_then(Value::as_u64)
    });
    let fold = folds(props);
    if let Some(done) = super::slots::respond(wr, method, path, body, state).await {
        return Some(done);
    }
    Some(match (method, path) {
        ("POST", "/tokenize") => simple(wr, 200, &[], &tokenize(body)).await,
        ("POST", "/apply-template") => simple(wr, 200, &[], &apply_template(body, fold)).await,
        ("POST", p) if p.ends_with("/chat/completions") => {
            super::slots::on_chat(state, body);
            let prompt = prompt_tokens_as(body, fold);
            let reply = match n_ctx {
                Some(w) if prompt >= w => {
                    Reply::fault(Fault::Status(400, overflow_error(prompt, w)))
                }
                _ => {
                    let mut r = next_reply(state);
                    if r.usage.is_none() {
                        let answer: String = r
                            .parts
                            .iter()
                            .map(|p| match p {
                                Part::Text(t) | Part::Thinking(t) => t.clone(),
                                Part::ToolCall { name, args } => format!("{name}{args}"),
                                Part::Redacted(_) => String::new(),
                            })
                            .collect();
                        r.usage = Some((prompt, tokens_of(&answer)));
                    }
                    r
                }
            };
            chat(wr, Proto::OpenAi, body, reply).await
        }
        _ => return None,
    })
}
