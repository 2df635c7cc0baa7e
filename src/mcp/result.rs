//! Mapping a `tools/call` result onto a [`ToolResult`]: text blocks are
//! joined, the first image (inline or as an image resource) goes to the
//! multimodal path `image_view` uses (the result's typed `image`),
//! other binary content is described, not pasted. The text is capped.
use crate::protocol::ToolDisplay;
use crate::tools::{ToolResult, truncate_output};
use serde_json::Value;

/// Limits that apply to one result.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ResultLimits {
    /// Most bytes of text the model gets.
    pub(crate) text_bytes: usize,
    /// Largest decoded image passed to the model.
    pub(crate) image_bytes: usize,
}

fn str_of<'a>(v: &'a Value, key: &str) -> &'a str {
    v.get(key).and_then(Value::as_str).unwrap_or("")
}

/// Approximate decoded size of base64 text.
fn b64_len(data: &str) -> usize {
    data.len() / 4 * 3
}

struct Mapper {
    parts: Vec<String>,
    image: Option<(String, String)>,
    limits: ResultLimits,
}

impl Mapper {
    fn image(&mut self, mime: &str, data: &str, what: &str) {
        let size = b64_len(data);
        if self.image.is_some() {
            self.parts.push(format!(
                "[{what} {mime}, {size} bytes: not shown, only the first image of a result is passed on]"
            ));
        } else if size > self.limits.image_bytes {
            self.parts.push(format!(
                "[{what} {mime}, {size} bytes: too large to show (limit {} bytes, [tools].image_max_bytes)]",
                self.limits.image_bytes
            ));
        } else {
            self.parts.push(format!(
                "[{what} {mime}, {size} bytes: attached for you to look at]"
            ));
            let mime = if mime.is_empty() { "image/png" } else { mime };
            self.image = Some((mime.to_string(), data.to_string()));
        }
    }

    fn block(&mut self, block: &Value) {
        match str_of(block, "type") {
            "text" => self.parts.push(str_of(block, "text").to_string()),
            "image" => {
                let (mime, data) = (str_of(block, "mimeType"), str_of(block, "data"));
                self.image(mime, data, "image");
            }
            "audio" => self.parts.push(format!(
                "[audio {}, {} bytes: not shown, audio is not passed to the model]",
                str_of(block, "mimeType"),
                b64_len(str_of(block, "data"))
            )),
            "resource" => {
                let r = block.get("resource").unwrap_or(&Value::Null);
                let (uri, mime) = (str_of(r, "uri"), str_of(r, "mimeType"));
                if let Some(text) = r.get("text").and_then(Value::as_str) {
                    self.parts.push(format!("[resource {uri}]\n{text}"));
                } else {
                    let blob = str_of(r, "blob");
                    if mime.starts_with("image/") {
                        self.image(mime, blob, &format!("resource {uri}:"));
                    } else {
                        self.parts.push(format!(
                            "[binary resource {uri} ({}, {} bytes): not shown]",
                            if mime.is_empty() {
                                "unknown type"
                            } else {
                                mime
                            },
                            b64_len(blob)
                        ));
                    }
                }
            }
            "resource_link" => self.parts.push(format!(
                "[resource link {} ({})]",
                str_of(block, "uri"),
                str_of(block, "name")
            )),
            other => self
                .parts
                .push(format!("[content of type {other:?} not shown]")),
        }
    }
}

/// Maps the JSON form of a `CallToolResult`.
pub(crate) fn map_result(result: &Value, limits: ResultLimits) -> ToolResult {
    let mut m = Mapper {
        parts: Vec::new(),
        image: None,
        limits,
    };
    if let Some(blocks) = result.get("content").and_then(Value::as_array) {
        for b in blocks {
            m.block(b);
        }
    }
    if m.parts.is_empty()
        && let Some(s) = result.get("structuredContent").filter(|v| !v.is_null())
    {
        m.parts.push(s.to_string());
    }
    let text = truncate_output(&m.parts.join("\n"), limits.text_bytes);
    let is_error = result.get("isError").and_then(Value::as_bool) == Some(true);
    let mut out = if is_error {
        let msg = if text.trim().is_empty() {
            "the tool reported an error without a message".to_string()
        } else {
            text
        };
        ToolResult::err(msg)
    } else if text.is_empty() {
        ToolResult::ok("(the tool returned no content)")
    } else {
        ToolResult::ok(text)
    };
    if let Some((mime, data)) = m.image {
        out = out.with_image(mime, data);
    }
    // Every image block the server sent, for the card (the model gets the first).
    let images: Vec<String> = result
        .get("content")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter(|b| b.get("type").and_then(Value::as_str) == Some("image"))
        .map(|b| str_of(b, "mimeType").to_string())
        .collect();
    if !images.is_empty() {
        out = out.with_display(ToolDisplay::Images {
            count: images.len(),
            mime: images,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const L: ResultLimits = ResultLimits {
        text_bytes: 100,
        image_bytes: 1000,
    };

    #[test]
    fn text_blocks_are_joined_and_capped() {
        let r = map_result(
            &json!({"content":[{"type":"text","text":"a"},{"type":"text","text":"x".repeat(500)}]}),
            L,
        );
        assert!(r.success);
        assert!(r.output.starts_with("a\nxxx"));
        assert!(r.output.contains("output truncated"), "{}", r.output);
    }

    #[test]
    fn first_image_goes_to_the_multimodal_path() {
        let r = map_result(
            &json!({"content":[
                {"type":"image","mimeType":"image/jpeg","data":"QUJD"},
                {"type":"image","mimeType":"image/png","data":"REVG"},
                {"type":"resource","resource":{"uri":"file:///a.txt","text":"hello"}},
                {"type":"resource","resource":{"uri":"file:///b.bin","mimeType":"application/zip","blob":"AAAA"}}
            ]}),
            ResultLimits {
                text_bytes: 10_000,
                ..L
            },
        );
        let img = r.image.as_ref().unwrap();
        assert_eq!(
            (img.mime.as_str(), img.base64.as_str()),
            ("image/jpeg", "QUJD")
        );
        assert_eq!(
            r.display,
            Some(ToolDisplay::Images {
                count: 2,
                mime: vec!["image/jpeg".into(), "image/png".into()],
            })
        );
        assert!(r.output.contains("only the first image"));
        assert!(r.output.contains("[resource file:///a.txt]\nhello"));
        assert!(
            r.output
                .contains("binary resource file:///b.bin (application/zip")
        );
    }

    #[test]
    fn errors_and_structured_content() {
        let e = map_result(
            &json!({"content":[{"type":"text","text":"no such file"}],"isError":true}),
            L,
        );
        assert!(!e.success);
        assert_eq!(e.display, None);
        assert_eq!(e.to_model_content(), "Error: no such file");
        let s = map_result(&json!({"content":[],"structuredContent":{"n":1}}), L);
        assert_eq!(s.output, r#"{"n":1}"#);
        let big = map_result(
            &json!({"content":[{"type":"image","mimeType":"image/png","data":"A".repeat(4000)}]}),
            L,
        );
        assert!(big.image.is_none());
        assert!(big.output.contains("too large"));
    }
}
