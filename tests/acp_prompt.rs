//! `navi acp` prompts with images and embedded files: refused for a
//! text-only model (nothing sent, nothing stored), sent to a vision model.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::acp_support::{Home, client_or_skip};
use crate::support::{FakeLlm, Reply};
use serde_json::json;

const PNG_1PX: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_image_and_embedded_file_prompts() {
    let Some(client) = client_or_skip("acp_image_and_embedded_file_prompts") else {
        return;
    };
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("a single pixel, and your notes"));
    let home = Home::new(&fake);
    let blocks = json!([
        {"type": "text", "text": "what is in these?"},
        {"type": "image", "data": PNG_1PX, "mimeType": "image/png"},
        {"type": "resource", "resource": {"uri": "file:///proj/notes.md", "text": "EMBEDDED-NOTES-TEXT"}}
    ]);
    let text_only = home
        .drive(
            &client,
            json!([
                {"op": "initialize"},
                {"op": "new", "as": "a"},
                {"op": "setMode", "session": "a", "mode": "tester"},
                {"op": "prompt", "session": "a", "blocks": blocks},
            ]),
            "allow_once",
        )
        .await;
    let dump = text_only.dump();
    let id = text_only.id("a");
    assert_eq!(
        text_only.results("prompt")[0]["result"]["stopReason"],
        "refusal",
        "{dump}"
    );
    let said = text_only.text(&id, "agent_message_chunk");
    assert!(said.contains("accepts only text"), "{said}");
    assert!(fake.chat_requests().is_empty(), "nothing sent");
    assert!(home.rows(&id).is_empty(), "nothing stored");

    fake.set_capabilities(&["completion", "tools", "vision"]);
    let vision = home
        .drive(
            &client,
            json!([
                {"op": "initialize"},
                {"op": "new", "as": "a"},
                {"op": "setMode", "session": "a", "mode": "tester"},
                {"op": "prompt", "session": "a", "blocks": blocks},
            ]),
            "allow_once",
        )
        .await;
    let dump = vision.dump();
    assert_eq!(
        vision.results("prompt")[0]["result"]["stopReason"],
        "end_turn",
        "{dump}"
    );
    let reqs = fake.chat_requests();
    assert_eq!(reqs.len(), 1);
    let body = reqs[0].to_string();
    assert!(
        body.contains("\"images\"") && body.contains(PNG_1PX),
        "image sent: {body}"
    );
    assert!(
        body.contains("EMBEDDED-NOTES-TEXT") && body.contains("notes.md"),
        "{body}"
    );
    assert!(body.contains("what is in these?"));
}
