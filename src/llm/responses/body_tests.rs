#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;
use crate::llm::{ImageData, Thinking, ToolCall, ToolSchema};

fn call() -> ToolCall {
    ToolCall {
        id: "call_1".into(),
        name: "read".into(),
        arguments: json!({"path": "a"}),
    }
}

#[test]
fn a_stateless_request_carries_reasoning_items_and_calls() {
    let mut user = ChatMessage::user("look");
    user.push_image(ImageData {
        mime: "image/png".into(),
        base64: "AAA=".into(),
    });
    let mut asst = ChatMessage::assistant("");
    asst.set_thinking_blocks(vec![
        Thinking {
            text: "Need the file.".into(),
            encrypted: Some("gAAA".into()),
            id: Some("rs_1".into()),
            ..Thinking::default()
        },
        Thinking {
            text: "signed elsewhere".into(),
            signature: Some("SIG".into()),
            ..Thinking::default()
        },
    ]);
    asst.push_tool_call(call());
    let mut req = ChatRequest::new(
        "gpt-x",
        vec![
            ChatMessage::system("sys"),
            user,
            asst,
            ChatMessage::tool_result(&call(), "contents"),
        ],
    );
    req.tools = vec![ToolSchema {
        name: "read".into(),
        description: "reads".into(),
        parameters: json!({"type": "object"}),
    }];
    req.think = Some(ThinkSetting::Level("high".into()));
    req.temperature = Some(0.5);
    req.max_tokens = Some(2000);
    let b = responses_body(&req, Fields::default());
    assert_eq!(b["instructions"], json!("sys"));
    assert_eq!(
        (b["stream"].clone(), b["store"].clone()),
        (json!(true), json!(false))
    );
    assert_eq!(b["include"], json!(["reasoning.encrypted_content"]));
    assert_eq!(b["reasoning"], json!({"effort": "high", "summary": "auto"}));
    assert_eq!(b["temperature"], json!(0.5));
    assert_eq!(b["max_output_tokens"], json!(2000));
    assert_eq!(
        b["tools"],
        json!([{"type": "function", "name": "read", "description": "reads",
                "parameters": {"type": "object"}, "strict": false}])
    );
    assert_eq!(
        b["input"],
        json!([
            {"type": "message", "role": "user", "content": [
                {"type": "input_text", "text": "look"},
                {"type": "input_image", "image_url": "data:image/png;base64,AAA="}]},
            {"type": "reasoning", "id": "rs_1",
             "summary": [{"type": "summary_text", "text": "Need the file."}],
             "encrypted_content": "gAAA"},
            {"type": "function_call", "call_id": "call_1", "name": "read",
             "arguments": "{\"path\":\"a\"}"},
            {"type": "function_call_output", "call_id": "call_1", "output": "contents"}
        ])
    );
}

#[test]
fn refused_fields_are_left_out() {
    let mut req = ChatRequest::new("m", vec![ChatMessage::user("hi")]);
    req.think = Some(ThinkSetting::Bool(true));
    req.temperature = Some(0.2);
    let b = responses_body(
        &req,
        Fields {
            reasoning: false,
            temperature: false,
            include: false,
        },
    );
    for k in [
        "reasoning",
        "temperature",
        "include",
        "instructions",
        "tools",
    ] {
        assert!(b.get(k).is_none(), "{k}: {b}");
    }
    req.think = Some(ThinkSetting::Bool(false));
    assert!(
        responses_body(&req, Fields::default())
            .get("reasoning")
            .is_none()
    );
}
