#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;
use serde_json::json;

fn call(id: &str) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: "terminal".into(),
        arguments: json!({"command": "ls"}),
    }
}

fn png() -> ImageData {
    ImageData {
        mime: "image/png".into(),
        base64: "AAA=".into(),
    }
}

/// Messages as earlier releases built them: flat, and back to flat.
fn flat_shapes() -> Vec<ChatMessage> {
    let mut user = ChatMessage::user("look");
    user.push_image(png());
    let mut asst = ChatMessage::assistant("");
    asst.set_thinking(Some("hmm".into()));
    asst.set_tool_calls(vec![call("c1"), call("c2")]);
    let mut bad = ChatMessage::assistant("text");
    bad.push_tool_call(ToolCall {
        id: "c3".into(),
        name: "x".into(),
        arguments: json!("{oops"),
    });
    let mut empty_thinking = ChatMessage::assistant("a");
    empty_thinking.set_thinking(Some(String::new()));
    let mut result_with_image = ChatMessage::tool_result(&call("c1"), "ok");
    result_with_image.push_image(png());
    vec![
        ChatMessage::system("s"),
        ChatMessage::user(""),
        user,
        asst,
        bad,
        empty_thinking,
        ChatMessage::tool_result(&call("c1"), ""),
        result_with_image,
    ]
}

#[test]
fn flat_messages_need_no_blocks_and_come_back_equal() {
    for m in flat_shapes() {
        let (flat, blocks) = m.to_flat();
        assert!(blocks.is_none(), "{m:?}");
        assert_eq!(ChatMessage::from_flat(flat), m);
    }
}

#[test]
fn what_the_flat_form_cannot_hold_is_kept_in_blocks() {
    let mut signed = ChatMessage::assistant("answer");
    signed.set_thinking_blocks(vec![
        Thinking {
            text: "first".into(),
            signature: Some("sig==".into()),
            ..Thinking::default()
        },
        Thinking {
            encrypted: Some("opaque".into()),
            ..Thinking::default()
        },
    ]);
    signed.push_tool_call(call("c1"));
    let mut two_texts = ChatMessage::assistant("a");
    two_texts.push_tool_call(call("c1"));
    two_texts.blocks.push(Block::Text { text: "b".into() });
    let mut reasoning = ChatMessage::assistant("x");
    reasoning.set_thinking_blocks(vec![Thinking {
        text: "summary".into(),
        id: Some("rs_1".into()),
        encrypted: Some("enc".into()),
        ..Thinking::default()
    }]);
    for m in [signed, two_texts, reasoning] {
        let (flat, blocks) = m.to_flat();
        assert!(blocks.is_some(), "{m:?}");
        assert_ne!(ChatMessage::from_flat(flat.clone()), m);
        assert_eq!(ChatMessage::from_parts(flat, blocks), m);
    }
}

#[test]
fn accessors_read_what_the_flat_fields_held() {
    let mut m = ChatMessage::assistant("");
    m.set_thinking_blocks(vec![
        Thinking::text("one"),
        Thinking {
            text: "two".into(),
            signature: Some("s".into()),
            ..Thinking::default()
        },
    ]);
    m.push_text("hello ");
    m.push_text("world");
    m.push_tool_call(call("c1"));
    assert_eq!(m.text(), "hello world");
    assert_eq!(m.thinking().unwrap(), "one\n\ntwo");
    assert_eq!(m.tool_calls().count(), 1);
    assert!(matches!(m.blocks[0], Block::Thinking(_)));
    assert!(matches!(m.blocks[2], Block::Text { .. }));
    assert!(matches!(m.blocks[3], Block::ToolCall(_)));
    m.set_text("");
    assert_eq!(m.text(), "");
    assert!(!m.blocks.iter().any(|b| matches!(b, Block::Text { .. })));
    m.set_thinking(None);
    assert!(m.thinking().is_none());
    let r = ChatMessage::tool_result(&call("c9"), "out");
    assert_eq!(
        (r.tool_call_id(), r.tool_name(), r.text().as_ref()),
        (Some("c9"), Some("terminal"), "out")
    );
    assert_eq!(ChatMessage::user("u").tool_call_id(), None);
}

#[test]
fn images_are_taken_out_and_counted() {
    let mut m = ChatMessage::user("see");
    m.push_image(png());
    m.push_image(png());
    assert_eq!(m.image_count(), 2);
    assert_eq!(m.take_images().len(), 2);
    assert!(!m.has_images());
    assert_eq!(m.text(), "see");
}

/// The JSON form is the flat one earlier releases printed (`navi sessions
/// show --json`), with `blocks` only when needed; both read back.
#[test]
fn json_keeps_the_flat_shape_and_adds_blocks_when_needed() {
    let mut asst = ChatMessage::assistant("");
    asst.set_thinking(Some("hmm".into()));
    asst.push_tool_call(call("c1"));
    let v = serde_json::to_value(&asst).unwrap();
    assert_eq!(
        v,
        json!({"role":"assistant","content":"","thinking":"hmm",
               "tool_calls":[{"id":"c1","name":"terminal","arguments":{"command":"ls"}}]})
    );
    assert_eq!(serde_json::from_value::<ChatMessage>(v).unwrap(), asst);
    asst.set_thinking_blocks(vec![Thinking {
        text: "hmm".into(),
        signature: Some("sig".into()),
        ..Thinking::default()
    }]);
    let v = serde_json::to_value(&asst).unwrap();
    assert_eq!(v["thinking"], json!("hmm"));
    assert_eq!(
        v["blocks"][0],
        json!({"type":"thinking","text":"hmm","signature":"sig"})
    );
    assert_eq!(
        v["blocks"][1],
        json!({"type":"tool_call","id":"c1","name":"terminal","arguments":{"command":"ls"}})
    );
    assert_eq!(serde_json::from_value::<ChatMessage>(v).unwrap(), asst);
    let old = json!({"role":"tool","content":"x","tool_call_id":"c1","tool_name":"t"});
    let m: ChatMessage = serde_json::from_value(old).unwrap();
    assert_eq!((m.tool_call_id(), m.text().as_ref()), (Some("c1"), "x"));
}
