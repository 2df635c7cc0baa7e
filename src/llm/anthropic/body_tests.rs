#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;
use crate::llm::{ImageData, Thinking, ToolCall, ToolSchema};

fn call(id: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: "read".into(),
        arguments: json!({"path": "a"}),
    }
}

fn signed_asst(id: &str) -> ChatMessage {
    let mut a = ChatMessage::assistant("");
    a.set_thinking_blocks(vec![
        Thinking {
            text: "plan".into(),
            signature: Some("SIG".into()),
            ..Thinking::default()
        },
        Thinking {
            encrypted: Some("RED".into()),
            ..Thinking::default()
        },
        Thinking::text("unsigned, from elsewhere"),
    ]);
    a.push_tool_call(call(id));
    a
}

#[test]
fn a_tool_loop_with_thinking_goes_back_signed() {
    let mut user = ChatMessage::user("look at a");
    user.push_image(ImageData {
        mime: "image/png".into(),
        base64: "AAA=".into(),
    });
    let mut req = ChatRequest::new(
        "claude-x",
        vec![
            ChatMessage::system("be brief"),
            ChatMessage::system("memory"),
            user,
            signed_asst("toolu_1"),
            ChatMessage::tool_result(&call("toolu_1"), "contents"),
        ],
    );
    req.tools = vec![ToolSchema {
        name: "read".into(),
        description: "reads".into(),
        parameters: json!({"type": "object"}),
    }];
    req.think = Some(ThinkSetting::Bool(true));
    req.temperature = Some(0.7);
    req.max_tokens = Some(16000);
    let b = messages_body(&req);
    assert_eq!(b["max_tokens"], json!(16000));
    assert_eq!(b["stream"], json!(true));
    assert_eq!(
        b["thinking"],
        json!({"type": "enabled", "budget_tokens": 4096})
    );
    assert!(
        b.get("temperature").is_none(),
        "no temperature with thinking"
    );
    assert_eq!(
        b["system"],
        json!([{"type": "text", "text": "be brief\n\nmemory", "cache_control": {"type": "ephemeral"}}])
    );
    assert_eq!(
        b["tools"],
        json!([{"name": "read", "description": "reads", "input_schema": {"type": "object"},
                "cache_control": {"type": "ephemeral"}}])
    );
    let m = b["messages"].as_array().unwrap();
    assert_eq!(m.len(), 3);
    assert_eq!(
        m[0]["content"],
        json!([{"type": "text", "text": "look at a"},
               {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AAA="}}])
    );
    assert_eq!(
        m[1],
        json!({"role": "assistant", "content": [
            {"type": "thinking", "thinking": "plan", "signature": "SIG"},
            {"type": "redacted_thinking", "data": "RED"},
            {"type": "tool_use", "id": "toolu_1", "name": "read", "input": {"path": "a"}}]})
    );
    assert_eq!(
        m[2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "toolu_1", "content": "contents",
             "cache_control": {"type": "ephemeral"}}]})
    );
}

#[test]
fn roles_alternate_and_nothing_empty_is_sent() {
    let mut unsigned = ChatMessage::assistant("");
    unsigned.set_thinking(Some("only thoughts".into()));
    let mut req = ChatRequest::new(
        "m",
        vec![
            ChatMessage::assistant("hello first"),
            ChatMessage::user("q"),
            unsigned,
            ChatMessage::user("   "),
            ChatMessage::user("again"),
        ],
    );
    req.temperature = Some(1.7);
    req.think = Some(ThinkSetting::Bool(false));
    let b = messages_body(&req);
    assert_eq!(b["temperature"], json!(1.0), "clamped to the API's range");
    assert!(b.get("thinking").is_none() && b.get("system").is_none());
    assert_eq!(b["max_tokens"], json!(DEFAULT_MAX_TOKENS));
    let roles: Vec<&str> = b["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["role"].as_str().unwrap())
        .collect();
    assert_eq!(roles, ["user", "assistant", "user"]);
    let text = b["messages"].to_string();
    assert!(
        !text.contains("only thoughts"),
        "unsigned thinking stays home"
    );
    assert!(!text.contains("\"text\":\"   \""), "{text}");
}

#[test]
fn results_of_several_calls_share_one_user_message() {
    let mut a = ChatMessage::assistant("two reads");
    a.set_tool_calls(vec![call("t1"), call("t2")]);
    let mut bad = call("t3");
    bad.arguments = json!("{oops");
    a.push_tool_call(bad.clone());
    let req = ChatRequest::new(
        "m",
        vec![
            ChatMessage::user("go"),
            a,
            ChatMessage::tool_result(&call("t1"), "one"),
            ChatMessage::tool_result(&call("t2"), ""),
            ChatMessage::tool_result(&bad, "Error: not JSON"),
            ChatMessage::user("and hurry"),
        ],
    );
    let b = messages_body(&req);
    let m = b["messages"].as_array().unwrap();
    // The user's next message stays its own, after a short assistant note.
    assert_eq!(m.len(), 5);
    assert_eq!(
        m[1]["content"][3]["input"],
        json!({}),
        "bad JSON goes as {{}}"
    );
    let results = m[2]["content"].as_array().unwrap();
    assert_eq!(results.len(), 3);
    assert_eq!(
        results[1],
        json!({"type": "tool_result", "tool_use_id": "t2"})
    );
    assert_eq!(results[2]["content"], "Error: not JSON");
    assert_eq!(m[3]["role"], "assistant");
    assert_eq!(m[4]["role"], "user");
    assert!(m[4].to_string().contains("and hurry"), "{}", m[4]);
}

/// A tool loop whose last call came without a signed thinking block (a
/// stopped turn, another server) is continued without thinking.
#[test]
fn thinking_is_left_out_when_the_loop_has_no_signed_block() {
    let mut a = ChatMessage::assistant("");
    a.push_tool_call(call("t1"));
    let mut req = ChatRequest::new(
        "m",
        vec![
            ChatMessage::user("go"),
            a,
            ChatMessage::tool_result(&call("t1"), "ok"),
        ],
    );
    req.think = Some(ThinkSetting::Level("high".into()));
    assert!(messages_body(&req).get("thinking").is_none());
    req.messages[1] = signed_asst("t1");
    assert_eq!(
        messages_body(&req)["thinking"]["budget_tokens"],
        json!(7168)
    );
    req.messages.push(ChatMessage::assistant("done"));
    req.messages.push(ChatMessage::user("next"));
    req.messages[1].set_thinking(None);
    assert!(messages_body(&req).get("thinking").is_some(), "a new turn");
}

#[test]
fn budgets_stay_below_max_tokens() {
    let t = |s: ThinkSetting, max| thinking_budget(Some(&s), max);
    assert_eq!(t(ThinkSetting::Bool(true), 8192), Some(4096));
    assert_eq!(t(ThinkSetting::Level("high".into()), 8192), Some(7168));
    assert_eq!(t(ThinkSetting::Level("low".into()), 8192), Some(1024));
    assert_eq!(t(ThinkSetting::Bool(true), 1500), None, "no room to think");
    assert_eq!(t(ThinkSetting::Bool(false), 8192), None);
    assert_eq!(thinking_budget(None, 8192), None);
}
