//! Counting tokens with the server's own tokenizer (llama-server): the chat
//! body goes through `POST /apply-template` (the model's chat template, with
//! the tool schemas rendered as the template renders them) and the prompt
//! that comes back through `POST /tokenize`. The count is the prompt the
//! server would evaluate for that request.
//!
//! Invariants:
//! - Only for a server that answered `/props` (llama-server); the caller
//!   checks. Nothing here runs at start-up: the first count is asked for
//!   when a figure is needed.
//! - A request without a user turn (the base: system message and tools) is
//!   templated with a probe user turn, and only the prompt before the probe
//!   is counted: some templates (Gemma's) fold the system message into the
//!   first user turn and render nothing of it without one. The count then
//!   includes the opening of the first user turn, as every real request has.
//! - A server without `/apply-template` (older builds) gets the messages
//!   and tool schemas tokenized as plain text plus a few tokens of framing
//!   per message. A server whose `/tokenize` fails is not asked again.
use serde_json::{Value, json};
use std::time::Duration;

/// A count must come back quickly; otherwise the estimate is used.
pub(crate) const COUNT_TIMEOUT: Duration = Duration::from_secs(10);
/// Framing tokens per message when the template could not be applied
/// (`<|im_start|>role\n … <|im_end|>\n` is 4–6 tokens in most templates).
pub(crate) const FRAMING_TOKENS: u64 = 6;

/// A POST of `body` to `url` answering JSON; `None` on any failure.
pub(crate) async fn post_json(
    client: &reqwest::Client,
    url: String,
    api_key: &str,
    body: &Value,
) -> Option<Value> {
    let mut rb = client.post(url).timeout(COUNT_TIMEOUT).json(body);
    if !api_key.is_empty() {
        rb = rb.bearer_auth(api_key);
    }
    let resp = rb.send().await.ok()?;
    if !resp.status().is_success() {
        return None;
    }
    resp.json().await.ok()
}

/// The text of the probe user turn (unlikely in any prompt).
const PROBE: &str = "NAVI-COUNT-PROBE-5e1f";

/// Adds a probe user turn to a chat body that has none; true when added.
pub(crate) fn with_probe(body: &mut Value) -> bool {
    let Some(messages) = body.get_mut("messages").and_then(Value::as_array_mut) else {
        return false;
    };
    if messages
        .iter()
        .any(|m| m.get("role") == Some(&json!("user")))
    {
        return false;
    }
    messages.push(json!({"role": "user", "content": PROBE}));
    true
}

/// The part of a templated prompt before the probe (all of it when the
/// template dropped the probe).
pub(crate) fn before_probe(prompt: &str) -> &str {
    prompt.find(PROBE).map_or(prompt, |i| &prompt[..i])
}

/// The number of tokens in a `/tokenize` answer.
pub(crate) fn token_count(v: &Value) -> Option<u64> {
    v.get("tokens")
        .and_then(Value::as_array)
        .map(|t| t.len() as u64)
}

/// The body `/tokenize` gets: special tokens in the text are parsed as such
/// (the template wrote them), no BOS is added (the template has its own).
pub(crate) fn tokenize_body(text: &str) -> Value {
    json!({"content": text, "add_special": false, "parse_special": true})
}

/// The plain text of a chat body for tokenizing when the template cannot be
/// applied: every message's content and tool calls, then the tool schemas.
/// Returns the text and the number of messages (for framing).
pub(crate) fn plain_text(body: &Value) -> (String, u64) {
    let mut out = String::new();
    let mut n = 0u64;
    for m in body
        .get("messages")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        n += 1;
        out.push_str(m.get("role").and_then(Value::as_str).unwrap_or(""));
        out.push('\n');
        match m.get("content") {
            Some(Value::String(s)) => out.push_str(s),
            Some(Value::Array(parts)) => {
                for p in parts {
                    if let Some(t) = p.get("text").and_then(Value::as_str) {
                        out.push_str(t);
                    }
                }
            }
            _ => {}
        }
        if let Some(calls) = m.get("tool_calls") {
            out.push('\n');
            out.push_str(&calls.to_string());
        }
        out.push('\n');
    }
    for t in body
        .get("tools")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        out.push_str(&t.to_string());
        out.push('\n');
    }
    (out, n)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn plain_text_keeps_contents_calls_and_tools() {
        let body = json!({"messages": [
            {"role": "system", "content": "SYS"},
            {"role": "user", "content": [{"type": "text", "text": "look"}, {"type": "image_url"}]},
            {"role": "assistant", "content": null, "tool_calls": [{"function": {"name": "todo"}}]}
        ], "tools": [{"type": "function", "function": {"name": "todo"}}]});
        let (text, n) = plain_text(&body);
        assert_eq!(n, 3);
        assert!(text.contains("SYS") && text.contains("look"));
        assert_eq!(text.matches("todo").count(), 2, "{text}");
        assert_eq!(token_count(&json!({"tokens": [1, 2, 3]})), Some(3));
        assert_eq!(token_count(&json!({"error": "x"})), None);
    }

    #[test]
    fn a_base_gets_a_probe_user_turn_and_is_cut_before_it() {
        let mut base = json!({"messages": [{"role": "system", "content": "SYS"}]});
        assert!(with_probe(&mut base));
        assert_eq!(base["messages"][1]["role"], json!("user"));
        let folded = format!("<bos><start_of_turn>user\nSYS\n\n{PROBE}<end_of_turn>\n");
        assert_eq!(before_probe(&folded), "<bos><start_of_turn>user\nSYS\n\n");
        assert_eq!(before_probe("no probe here"), "no probe here");
        let mut asked = json!({"messages": [{"role": "system", "content": "S"},
                                             {"role": "user", "content": "q"}]});
        assert!(!with_probe(&mut asked));
        assert_eq!(asked["messages"].as_array().unwrap().len(), 2);
    }
}
