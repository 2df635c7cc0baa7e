//! The request checker of issue 31: what navi sends for a session must keep
//! the conversation's shape, whatever the user did before.
//!
//! Rules checked on the JSON bodies the fake server recorded (OpenAI shape):
//! 1. one optional system message, first; then a user message; user and
//!    assistant alternate (tool results aside); tool results follow only the
//!    assistant message that asked for them, by id; after a batch of results
//!    comes the assistant (or a picture a tool returned, as a user message);
//!    nothing the user typed is folded into a tool result;
//! 2. the messages the user can still see are in it as user content, in order;
//! 3. a request repeats the previous one of its session byte for byte but for
//!    its last message (which carries per-call notes), unless a compaction,
//!    rewind or profile switch came between;
//! 4. (by the caller) an answer shown for message N came from a request
//!    holding N.
use serde_json::Value;

fn role(m: &Value) -> &str {
    m.get("role").and_then(Value::as_str).unwrap_or("")
}

/// The text of a message (string content or the text parts of a list).
pub fn text(m: &Value) -> String {
    match m.get("content") {
        Some(Value::String(s)) => s.clone(),
        Some(Value::Array(parts)) => parts
            .iter()
            .filter_map(|p| p.get("text").and_then(Value::as_str))
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

fn has_image(m: &Value) -> bool {
    m.get("content")
        .and_then(Value::as_array)
        .is_some_and(|ps| ps.iter().any(|p| p.get("type") != Some(&"text".into())))
}

fn call_ids(m: &Value) -> Vec<String> {
    m.get("tool_calls")
        .and_then(Value::as_array)
        .map(|cs| {
            cs.iter()
                .filter_map(|c| c.get("id").and_then(Value::as_str).map(String::from))
                .collect()
        })
        .unwrap_or_default()
}

/// Rule 1 on one request body.
pub fn shape(body: &Value) -> Result<(), String> {
    let msgs = body
        .get("messages")
        .and_then(Value::as_array)
        .ok_or("no messages")?;
    let mut last_turn = ""; // "user" or "assistant" (tool results aside)
    let mut open_calls: Vec<String> = Vec::new();
    let mut in_results = false;
    for (i, m) in msgs.iter().enumerate() {
        let r = role(m);
        let fail = |why: &str| Err(format!("message {i} ({r}): {why}"));
        match r {
            "system" if i == 0 => continue,
            "system" => return fail("a second system message"),
            "tool" => {
                let id = m.get("tool_call_id").and_then(Value::as_str).unwrap_or("");
                if !open_calls.iter().any(|c| c == id) {
                    return fail("a tool result no assistant call before it asked for");
                }
                open_calls.retain(|c| c != id);
                if text(m).contains("The user adds:") {
                    return fail("the user's words folded into a tool result");
                }
                in_results = true;
            }
            "user" => {
                if !open_calls.is_empty() {
                    return fail("a user message before every call has its result");
                }
                let tool_image = in_results && has_image(m);
                if in_results && !tool_image {
                    return fail("a user message right after tool results");
                }
                if last_turn == "user" && !tool_image {
                    return fail("two user messages in a row");
                }
                last_turn = "user";
                in_results = false;
            }
            "assistant" => {
                if !open_calls.is_empty() {
                    return fail("an assistant message before every call has its result");
                }
                if last_turn != "user" && !in_results {
                    return fail("an assistant message not answering a user message");
                }
                open_calls = call_ids(m);
                last_turn = "assistant";
                in_results = false;
            }
            other => return fail(&format!("unknown role {other}")),
        }
    }
    if msgs.iter().find(|m| role(m) != "system").map(role) != Some("user") {
        return Err("the first message after the system message is not the user's".into());
    }
    Ok(())
}

/// Rule 2: each of `sent` is in a user message of `body`, in this order.
pub fn holds_in_order(body: &Value, sent: &[String]) -> Result<(), String> {
    let users: Vec<String> = body
        .get("messages")
        .and_then(Value::as_array)
        .map(|ms| ms.iter().filter(|m| role(m) == "user").map(text).collect())
        .unwrap_or_default();
    let mut at = 0;
    for s in sent {
        match users[at..].iter().position(|u| u.contains(s.as_str())) {
            Some(p) => at += p, // the same message may hold two (a summary)
            None => return Err(format!("user message {s:?} is missing or out of order")),
        }
    }
    Ok(())
}

/// Rule 3: `cur` repeats `prev` but for `prev`'s last message.
pub fn extends(prev: &Value, cur: &Value) -> Result<(), String> {
    let (Some(p), Some(c)) = (
        prev.get("messages").and_then(Value::as_array),
        cur.get("messages").and_then(Value::as_array),
    ) else {
        return Err("no messages".into());
    };
    let keep = p.len().saturating_sub(1);
    if c.len() < keep {
        return Err(format!("{} messages after {}", c.len(), p.len()));
    }
    match (0..keep).find(|&i| p[i] != c[i]) {
        None => Ok(()),
        Some(i) => Err(format!(
            "message {i} changed:\n  before {}\n  after  {}",
            p[i], c[i]
        )),
    }
}

/// Rule 1 over every chat request of a test; the first failure, with the
/// request's index.
pub fn all_shaped(bodies: &[Value]) -> Result<(), String> {
    for (i, b) in bodies.iter().enumerate() {
        shape(b).map_err(|e| format!("request {i}: {e}\n{b:#}"))?;
    }
    Ok(())
}
