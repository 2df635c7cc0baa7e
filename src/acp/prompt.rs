//! An ACP prompt (content blocks) as navi's user message: text and
//! attachments. Pure; the handle checks and stores the attachments.

use crate::protocol::InputAttachment;
use agent_client_protocol::v1::schema::{ContentBlock, EmbeddedResourceResource};

/// The message text and its attachments, or why the prompt cannot be taken.
pub(crate) fn to_message(
    blocks: &[ContentBlock],
) -> Result<(String, Vec<InputAttachment>), String> {
    let mut text = String::new();
    let mut attachments = Vec::new();
    let push_text = |s: &str, text: &mut String| {
        if !text.is_empty() && !text.ends_with('\n') && !s.starts_with('\n') {
            text.push('\n');
        }
        text.push_str(s);
    };
    for block in blocks {
        match block {
            ContentBlock::Text(t) => push_text(&t.text, &mut text),
            ContentBlock::Image(i) => attachments.push(InputAttachment::Image {
                mime: i.mime_type.clone(),
                data_base64: i.data.clone(),
                name: i.uri.as_deref().map(file_name),
            }),
            ContentBlock::Resource(r) => match &r.resource {
                EmbeddedResourceResource::TextResourceContents(t) => {
                    attachments.push(InputAttachment::Text {
                        name: display_uri(&t.uri),
                        text: t.text.clone(),
                    })
                }
                EmbeddedResourceResource::BlobResourceContents(b) => {
                    let name = file_name(&b.uri);
                    match b.mime_type.as_deref() {
                        Some(m) if m.starts_with("image/") => {
                            attachments.push(InputAttachment::Image {
                                mime: m.to_string(),
                                data_base64: b.blob.clone(),
                                name: Some(name),
                            })
                        }
                        _ => attachments.push(InputAttachment::Bytes {
                            name,
                            data_base64: b.blob.clone(),
                        }),
                    }
                }
                _ => return Err("an embedded resource of an unknown kind".into()),
            },
            ContentBlock::ResourceLink(l) => {
                // A reference the client did not embed: the model sees the
                // link and can read it with its own tools.
                push_text(&format!("[{}]({})", l.name, l.uri), &mut text)
            }
            ContentBlock::Audio(_) => {
                return Err(
                    "audio prompts are not supported (promptCapabilities.audio is false)".into(),
                );
            }
            _ => return Err("a content block of an unknown type".into()),
        }
    }
    if text.trim().is_empty() && attachments.is_empty() {
        return Err("the prompt is empty".into());
    }
    Ok((text, attachments))
}

/// A `file://` URI as its path; other URIs as they are.
fn display_uri(uri: &str) -> String {
    uri.strip_prefix("file://").unwrap_or(uri).to_string()
}

/// The last path segment of a URI (the whole URI when it has none).
fn file_name(uri: &str) -> String {
    let path = display_uri(uri);
    path.rsplit('/')
        .find(|s| !s.is_empty())
        .unwrap_or(&path)
        .to_string()
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use serde_json::json;

    fn blocks(v: serde_json::Value) -> Vec<ContentBlock> {
        serde_json::from_value(v).unwrap()
    }

    #[test]
    fn text_images_and_embedded_files() {
        let (text, att) = to_message(&blocks(json!([
            {"type":"text","text":"look at"},
            {"type":"resource_link","name":"main.rs","uri":"file:///p/main.rs"},
            {"type":"image","data":"iVBORw0KGgo=","mimeType":"image/png"},
            {"type":"resource","resource":{"uri":"file:///p/lib.rs","text":"fn x() {}"}},
            {"type":"resource","resource":{"uri":"file:///p/a.bin","blob":"AAE=","mimeType":"application/octet-stream"}},
            {"type":"resource","resource":{"uri":"file:///p/shot.png","blob":"iVBO","mimeType":"image/png"}}
        ])))
        .unwrap();
        assert_eq!(text, "look at\n[main.rs](file:///p/main.rs)");
        assert_eq!(
            att,
            vec![
                InputAttachment::Image {
                    mime: "image/png".into(),
                    data_base64: "iVBORw0KGgo=".into(),
                    name: None
                },
                InputAttachment::Text {
                    name: "/p/lib.rs".into(),
                    text: "fn x() {}".into()
                },
                InputAttachment::Bytes {
                    name: "a.bin".into(),
                    data_base64: "AAE=".into()
                },
                InputAttachment::Image {
                    mime: "image/png".into(),
                    data_base64: "iVBO".into(),
                    name: Some("shot.png".into())
                },
            ]
        );
    }

    #[test]
    fn empty_and_audio_prompts_are_refused() {
        assert!(to_message(&[]).unwrap_err().contains("empty"));
        assert!(
            to_message(&blocks(json!([{"type":"text","text":"  "}])))
                .unwrap_err()
                .contains("empty")
        );
        let audio = blocks(json!([{"type":"audio","data":"AA==","mimeType":"audio/wav"}]));
        assert!(to_message(&audio).unwrap_err().contains("audio"));
    }
}
