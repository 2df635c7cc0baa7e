//! Strict-template mode: the fake server refuses a chat request the way a
//! llama-server running Gemma 3's chat template does. After an optional
//! leading system message, roles must be user, assistant, user, … (user at
//! every even position); there is no tool role and no tool calls; every
//! message's content must be text or a list of parts.
use serde_json::Value;

/// Gemma's own words (the template's `raise_exception`).
pub const ALTERNATE: &str = "Conversation roles must alternate user/assistant/user/assistant/...";

/// Why the template would raise on `body`'s messages, if it would.
pub fn refusal(body: &Value) -> Option<String> {
    let msgs = body.get("messages").and_then(Value::as_array)?;
    let start = usize::from(msgs.first().and_then(|m| m.get("role")) == Some(&"system".into()));
    for (i, m) in msgs[start..].iter().enumerate() {
        let role = m.get("role").and_then(Value::as_str).unwrap_or("");
        if (role == "user") != (i % 2 == 0) || !matches!(role, "user" | "assistant") {
            return Some(ALTERNATE.to_string());
        }
        if m.get("tool_calls").is_some_and(|c| !c.is_null()) {
            return Some(ALTERNATE.to_string());
        }
        match m.get("content") {
            Some(Value::String(_)) | Some(Value::Array(_)) => {}
            _ => return Some("Invalid content type".to_string()),
        }
    }
    None
}

/// The error body llama-server sends (HTTP 400) when the template raises.
pub fn error_body(message: &str) -> Value {
    serde_json::json!({"error": {
        "code": 400,
        "message": format!("Unable to generate parser for this template. Automatic parser \
            generation failed: \n------------\nError: Jinja Exception: {message}"),
        "type": "invalid_request_error",
    }})
}
