//! The JSON body of an OpenAI Responses request.
//!
//! Invariants:
//! - `store: false`: nothing depends on server-side state; the whole
//!   conversation is sent every time, reasoning included.
//! - Messages go through `roles::normalize` first. The system message is
//!   `instructions`; user text and images are `input_text` /
//!   `input_image`; an answer is its reasoning items, an assistant message
//!   and its `function_call` items; a tool result is a
//!   `function_call_output` (its images follow as a user message).
//! - A reasoning item goes back only with its id and `encrypted_content`
//!   (the only form a stateless request can use); other reasoning is not
//!   sent.
//! - Function tools say `strict: false` (the API's default is strict
//!   schemas, which navi's tool schemas are not written for).
//! - Optional fields a model refused once (`reasoning`, `temperature`,
//!   `include`) are left out for it (see [`Fields`]).
use crate::config::ThinkSetting;
use crate::llm::{ChatMessage, ChatRequest, Role};
use serde_json::{Map, Value, json};

/// Which optional fields to send.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Fields {
    pub(crate) reasoning: bool,
    pub(crate) temperature: bool,
    pub(crate) include: bool,
}

impl Default for Fields {
    fn default() -> Self {
        Fields {
            reasoning: true,
            temperature: true,
            include: true,
        }
    }
}

pub(crate) fn responses_body(req: &ChatRequest, fields: Fields) -> Value {
    let normal = crate::llm::roles::normalize(&req.messages);
    let instructions: Vec<String> = normal
        .iter()
        .filter(|m| m.role == Role::System)
        .map(|m| m.text().into_owned())
        .collect();
    let mut input = Vec::new();
    for m in normal.iter().filter(|m| m.role != Role::System) {
        items(m, &mut input);
    }
    let mut body = Map::new();
    body.insert("model".into(), json!(req.model));
    let instructions = instructions.join("\n\n");
    if !instructions.trim().is_empty() {
        body.insert("instructions".into(), json!(instructions));
    }
    body.insert("input".into(), Value::Array(input));
    if !req.tools.is_empty() {
        let tools = req
            .tools
            .iter()
            .map(|t| {
                json!({"type": "function", "name": t.name, "description": t.description,
                       "parameters": t.parameters, "strict": false})
            })
            .collect();
        body.insert("tools".into(), Value::Array(tools));
    }
    body.insert("stream".into(), json!(true));
    body.insert("store".into(), json!(false));
    if fields.include {
        body.insert("include".into(), json!(["reasoning.encrypted_content"]));
    }
    if fields.reasoning
        && let Some(effort) = effort(req.think.as_ref())
    {
        body.insert(
            "reasoning".into(),
            json!({"effort": effort, "summary": "auto"}),
        );
    }
    if fields.temperature
        && let Some(t) = req.temperature
    {
        body.insert("temperature".into(), json!(t));
    }
    if let Some(n) = req.max_tokens {
        body.insert("max_output_tokens".into(), json!(n));
    }
    Value::Object(body)
}

/// The reasoning effort `think` asks for; `None`: do not ask.
fn effort(think: Option<&ThinkSetting>) -> Option<&str> {
    match think? {
        ThinkSetting::Bool(false) => None,
        ThinkSetting::Bool(true) => Some("medium"),
        ThinkSetting::Level(l) => Some(l.as_str()),
    }
}

fn image_parts(m: &ChatMessage) -> impl Iterator<Item = Value> + '_ {
    m.images().map(|i| {
        json!({"type": "input_image", "image_url": format!("data:{};base64,{}", i.mime, i.base64)})
    })
}

/// The input items of one message, appended to `out`.
fn items(m: &ChatMessage, out: &mut Vec<Value>) {
    match m.role {
        Role::Assistant => {
            for t in m.thinking_blocks() {
                if let (Some(id), Some(enc)) = (&t.id, &t.encrypted) {
                    let summary: Vec<Value> = if t.text.is_empty() {
                        Vec::new()
                    } else {
                        vec![json!({"type": "summary_text", "text": t.text})]
                    };
                    out.push(json!({"type": "reasoning", "id": id, "summary": summary,
                                    "encrypted_content": enc}));
                }
            }
            let text = m.text();
            if !text.is_empty() {
                out.push(json!({"type": "message", "role": "assistant",
                                "content": [{"type": "output_text", "text": text}]}));
            }
            for c in m.tool_calls() {
                let arguments = match &c.arguments {
                    Value::String(raw) => raw.clone(),
                    other => other.to_string(),
                };
                out.push(
                    json!({"type": "function_call", "call_id": c.id, "name": c.name,
                                "arguments": arguments}),
                );
            }
        }
        Role::Tool => {
            out.push(json!({"type": "function_call_output",
                            "call_id": m.tool_call_id().unwrap_or_default(),
                            "output": m.text()}));
            let images: Vec<Value> = image_parts(m).collect();
            if !images.is_empty() {
                out.push(json!({"type": "message", "role": "user", "content": images}));
            }
        }
        Role::User | Role::System => {
            let mut content = Vec::new();
            let text = m.text();
            if !text.is_empty() || !m.has_images() {
                content.push(json!({"type": "input_text", "text": text}));
            }
            content.extend(image_parts(m));
            out.push(json!({"type": "message", "role": "user", "content": content}));
        }
    }
}

#[cfg(test)]
#[path = "body_tests.rs"]
mod tests;
