//! OpenAI-compatible backend against the fake server: SSE deltas (content,
//! `reasoning_content`, `reasoning`), tool-call fragment assembly, usage,
//! request bodies and headers, `/models`, and every HTTP/stream fault.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use navi::config::ThinkSetting;
use navi::llm::openai::OpenAiBackend;
use navi::llm::{
    ChatChunk, ChatMessage, ChatRequest, ImageData, LlmBackend, LlmError, ToolCall, ToolSchema,
    Usage,
};
use serde_json::{Value, json};
use support::stream::{fault_with, req, run};
use support::{FakeLlm, Fault, Part, Reply};

fn backend(fake: &FakeLlm) -> OpenAiBackend {
    OpenAiBackend::new(&fake.openai_url(), "").unwrap()
}

async fn fault(fake: &FakeLlm, f: Fault) -> (Vec<ChatChunk>, LlmError) {
    fault_with(&backend(fake), fake, f).await
}

fn text_of(chunks: &[ChatChunk]) -> String {
    chunks
        .iter()
        .filter_map(|c| match c {
            ChatChunk::Text(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

fn thinking_of(chunks: &[ChatChunk]) -> String {
    chunks
        .iter()
        .filter_map(|c| match c {
            ChatChunk::Thinking(t) => Some(t.as_str()),
            _ => None,
        })
        .collect()
}

fn calls_of(chunks: &[ChatChunk]) -> Vec<ToolCall> {
    chunks
        .iter()
        .filter_map(|c| match c {
            ChatChunk::ToolCalls(v) => Some(v.clone()),
            _ => None,
        })
        .flatten()
        .collect()
}

fn tool() -> ToolSchema {
    ToolSchema {
        name: "read_file".into(),
        description: "Reads a file".into(),
        parameters: json!({"type":"object","properties":{"path":{"type":"string"}}}),
    }
}

#[tokio::test]
async fn streams_text_after_null_content_with_usage_last() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("Hello there world").with_usage(20, 3));
    let (chunks, err) = run(&backend(&fake), &req()).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(text_of(&chunks), "Hello there world");
    assert_eq!(chunks.len(), 5, "3 words + usage + done: {chunks:?}");
    assert_eq!(
        chunks[3],
        ChatChunk::Usage(Usage {
            prompt_tokens: 20,
            completion_tokens: 3,
            ..Usage::default()
        })
    );
    assert_eq!(
        chunks[4],
        ChatChunk::Done {
            finish_reason: Some("stop".into())
        }
    );
    let r = &fake.requests()[0];
    assert_eq!(
        (r.method.as_str(), r.path.as_str()),
        ("POST", "/v1/chat/completions")
    );
    assert_eq!(r.body["stream"], json!(true));
    assert_eq!(r.body["stream_options"], json!({"include_usage": true}));
    assert_eq!(r.header("accept"), Some("text/event-stream"));
    assert_eq!(r.header("authorization"), None, "no key, no header");
}

#[tokio::test]
async fn reasoning_content_and_reasoning_are_both_thinking() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::thinking_text("llama cpp style", "answer one"));
    fake.push(Reply::thinking_text("vllm style", "answer two").with_reasoning_field("reasoning"));
    let b = backend(&fake);
    let (chunks, err) = run(&b, &req()).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(thinking_of(&chunks), "llama cpp style");
    assert_eq!(text_of(&chunks), "answer one");
    let (chunks, err) = run(&b, &req()).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(thinking_of(&chunks), "vllm style");
    assert_eq!(text_of(&chunks), "answer two");
    assert!(
        matches!(chunks[0], ChatChunk::Thinking(_)),
        "thinking first: {chunks:?}"
    );
}

#[tokio::test]
async fn tool_call_fragments_are_assembled_including_invalid_and_empty_arguments() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::parts(vec![
        Part::Text("Checking.".into()),
        Part::ToolCall {
            name: "read_file".into(),
            args: json!({"path": "/etc/hosts", "lines": [1, 2, 3], "note": "ünïcode"}),
        },
        Part::ToolCall {
            name: "broken".into(),
            args: Value::String("{\"path\": /tmp/x".into()),
        },
        Part::ToolCall {
            name: "no_args".into(),
            args: Value::String(String::new()),
        },
    ]));
    let mut r = req();
    r.tools = vec![tool()];
    let (chunks, err) = run(&backend(&fake), &r).await;
    assert!(err.is_none(), "{err:?}");
    let calls_chunks = chunks
        .iter()
        .filter(|c| matches!(c, ChatChunk::ToolCalls(_)))
        .count();
    assert_eq!(calls_chunks, 1, "emitted once, complete: {chunks:?}");
    let calls = calls_of(&chunks);
    assert_eq!(calls.len(), 3);
    assert_eq!(calls[0].id, "call_fake_0");
    assert_eq!(calls[0].name, "read_file");
    assert_eq!(
        calls[0].arguments,
        json!({"path": "/etc/hosts", "lines": [1, 2, 3], "note": "ünïcode"})
    );
    assert_eq!(
        calls[1].arguments,
        Value::String("{\"path\": /tmp/x".into())
    );
    assert_eq!(calls[2].arguments, json!({}));
    assert_eq!(
        chunks.last(),
        Some(&ChatChunk::Done {
            finish_reason: Some("tool_calls".into())
        })
    );
}

#[tokio::test]
async fn request_body_and_bearer_header() {
    let fake = FakeLlm::start().await;
    let b = OpenAiBackend::new(&fake.openai_url(), "sk-test-123").unwrap();
    let call = ToolCall {
        id: "call_7".into(),
        name: "read_file".into(),
        arguments: json!({"path": "/tmp/x"}),
    };
    let mut user = ChatMessage::user("look");
    user.push_image(ImageData {
        mime: "image/jpeg".into(),
        base64: "/9j/4AAQ".into(),
    });
    let mut asst = ChatMessage::assistant("");
    asst.set_thinking(Some("private".into()));
    asst.set_tool_calls(vec![call.clone()]);
    let mut r = ChatRequest::new(
        "test-model",
        vec![
            ChatMessage::system("sys"),
            user,
            asst,
            ChatMessage::tool_result(&call, "contents"),
        ],
    );
    r.tools = vec![tool()];
    r.temperature = Some(0.5);
    r.think = Some(ThinkSetting::Bool(true));
    r.num_ctx = Some(8192);
    r.keep_alive = Some("5m".into());
    let (_, err) = run(&b, &r).await;
    assert!(err.is_none(), "{err:?}");
    let rec = &fake.requests()[0];
    assert_eq!(rec.header("authorization"), Some("Bearer sk-test-123"));
    let body = &rec.body;
    assert_eq!(body["temperature"], json!(0.5));
    for key in ["think", "options", "num_ctx", "keep_alive"] {
        assert!(body.get(key).is_none(), "{key} must not be sent: {body}");
    }
    assert_eq!(
        body["tools"],
        json!([{"type":"function","function":{"name":"read_file","description":"Reads a file",
            "parameters":{"type":"object","properties":{"path":{"type":"string"}}}}}])
    );
    let m = &body["messages"];
    assert_eq!(m[0], json!({"role":"system","content":"sys"}));
    assert_eq!(
        m[1]["content"],
        json!([{"type":"text","text":"look"},
               {"type":"image_url","image_url":{"url":"data:image/jpeg;base64,/9j/4AAQ"}}])
    );
    assert_eq!(
        m[2],
        json!({"role":"assistant","content":"","tool_calls":[{"id":"call_7","type":"function",
            "function":{"name":"read_file","arguments":"{\"path\":\"/tmp/x\"}"}}]})
    );
    assert_eq!(
        m[3],
        json!({"role":"tool","tool_call_id":"call_7","content":"contents"})
    );
}

#[tokio::test]
async fn rejected_stream_options_is_dropped_once_and_remembered() {
    let fake = FakeLlm::start().await;
    let msg = "Unrecognized request argument supplied: stream_options";
    fake.push(Reply::fault(Fault::Status(400, msg.into())));
    fake.push(Reply::text("first"));
    fake.push(Reply::text("second"));
    let b = backend(&fake);
    assert_eq!(text_of(&run(&b, &req()).await.0), "first");
    assert_eq!(text_of(&run(&b, &req()).await.0), "second");
    let bodies = fake.chat_requests();
    assert_eq!(bodies.len(), 3);
    assert!(bodies[0].get("stream_options").is_some());
    assert!(bodies[1].get("stream_options").is_none());
    assert!(bodies[2].get("stream_options").is_none(), "remembered");
}

#[tokio::test]
async fn base_without_v1_also_works() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("ok"));
    let b = OpenAiBackend::new(&fake.base_url, "").unwrap();
    let (chunks, err) = run(&b, &req()).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(text_of(&chunks), "ok");
    assert_eq!(fake.requests()[0].path, "/chat/completions");
}

#[tokio::test]
async fn list_models_and_model_info() {
    let fake = FakeLlm::start().await;
    fake.set_models(vec![
        ("qwen3-8b.gguf".into(), Some(40960)),
        ("other".into(), None),
    ]);
    let b = OpenAiBackend::new(&fake.openai_url(), "k").unwrap();
    let models = b.list_models().await.unwrap();
    assert_eq!(models.len(), 2);
    assert_eq!(models[0].name, "qwen3-8b.gguf");
    assert_eq!(models[0].context_length, Some(40960));
    assert_eq!(models[1].context_length, None);
    assert_eq!(
        b.model_info("qwen3-8b.gguf").await.unwrap().context_length,
        Some(40960)
    );
    let err = b.model_info("nope").await.unwrap_err();
    assert!(matches!(err, LlmError::ModelNotFound { .. }), "{err}");
    assert!(err.to_string().contains("navi models"), "{err}");
    let r = &fake.requests()[0];
    assert_eq!((r.method.as_str(), r.path.as_str()), ("GET", "/v1/models"));
    assert_eq!(r.header("authorization"), Some("Bearer k"));
}

#[tokio::test]
async fn what_the_server_says_about_images() {
    // (/v1/models fields, /props, images taken?, words in the evidence)
    let cases = [
        (
            json!({"input_modalities": ["text"]}),
            None,
            Some(false),
            "input_modalities: text",
        ),
        (
            json!({"input_modalities": ["text", "image"]}),
            None,
            Some(true),
            "image",
        ),
        (
            json!({"capabilities": ["completion"]}),
            None,
            Some(false),
            "completion",
        ),
        (
            json!({"capabilities": ["completion", "multimodal"]}),
            None,
            Some(true),
            "multimodal",
        ),
        (json!({"type": "vlm"}), None, Some(true), "vlm"),
        (
            json!({"input_modalities": ["text", "image"]}),
            Some(json!({"n_ctx": 4096, "modalities": {"vision": false, "audio": false}})),
            Some(false),
            "modalities.vision: false",
        ),
        (
            json!({}),
            Some(json!({"modalities": {"vision": true}})),
            Some(true),
            "vision: true",
        ),
        // vLLM and friends say nothing: unknown, the request goes.
        (json!({"max_model_len": 4096}), None, None, ""),
        (
            json!({"capabilities": ["tools"]}),
            Some(json!({"n_ctx": 4096})),
            None,
            "",
        ),
    ];
    for (fields, props, want, words) in cases {
        let fake = FakeLlm::start().await;
        fake.set_model_fields(fields.clone());
        fake.set_props(props.clone());
        let b = backend(&fake);
        let got = b.image_input("test-model").await;
        assert_eq!(got.as_ref().map(|i| i.accepted), want, "{fields} {props:?}");
        if let Some(i) = got {
            assert!(i.evidence.contains(words), "{fields}: {}", i.evidence);
        }
        // model_info says the same, as Ollama lists it ("vision").
        let caps = b.model_info("test-model").await.unwrap().capabilities;
        match want {
            Some(true) => assert!(caps.contains(&"vision".to_string()), "{caps:?}"),
            Some(false) => assert_eq!(caps.first().map(String::as_str), Some("completion")),
            None => assert!(!caps.iter().any(|c| c == "vision" || c == "completion")),
        }
        assert!(fake.chat_requests().is_empty());
    }
}

#[tokio::test]
async fn refused_connection_is_unreachable_with_a_hint() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let b = OpenAiBackend::new(&format!("http://127.0.0.1:{port}/v1"), "").unwrap();
    let (_, err) = run(&b, &req()).await;
    let err = err.unwrap();
    assert!(matches!(err, LlmError::Unreachable { .. }), "{err}");
    let msg = err.to_string();
    assert!(
        msg.contains(&format!(
            "at http://127.0.0.1:{port}/v1 (connection refused)"
        )),
        "{msg}"
    );
    assert!(
        msg.contains("OPENAI_BASE_URL") && msg.contains("[llm].openai_base_url"),
        "{msg}"
    );
    assert!(matches!(
        b.list_models().await,
        Err(LlmError::Unreachable { .. })
    ));
}

#[tokio::test]
async fn http_statuses_map_to_typed_errors() {
    let fake = FakeLlm::start().await;
    let (_, e) = fault(
        &fake,
        Fault::Status(404, "The model `test-model` does not exist.".into()),
    )
    .await;
    assert!(matches!(e, LlmError::ModelNotFound { .. }), "{e}");
    assert!(
        e.to_string()
            .contains("check the model id with `navi models`"),
        "{e}"
    );

    let (_, e) = fault(&fake, Fault::Status(404, "no route".into())).await;
    assert!(matches!(e, LlmError::Rejected { status: 404, .. }), "{e}");
    assert!(e.to_string().contains("the right base URL?"), "{e}");

    let (_, e) = fault(&fake, Fault::Status(401, "Invalid API key".into())).await;
    assert!(
        matches!(e, LlmError::Unauthorized { status: 401, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("OPENAI_API_KEY"), "{e}");

    let (_, e) = fault(&fake, Fault::Status(403, "forbidden".into())).await;
    assert!(
        matches!(e, LlmError::Unauthorized { status: 403, .. }),
        "{e}"
    );

    let (_, e) = fault(&fake, Fault::Status(429, "quota".into())).await;
    assert!(
        matches!(
            e,
            LlmError::RateLimited {
                retry_after: Some(_),
                ..
            }
        ),
        "{e}"
    );
    assert!(e.to_string().contains("HTTP 429), retry after 1s"), "{e}");

    let (_, e) = fault(&fake, Fault::Status(503, "Loading model".into())).await;
    assert!(matches!(e, LlmError::Server { status: 503, .. }), "{e}");
    assert!(e.to_string().ends_with("(HTTP 503): Loading model"), "{e}");

    let (_, e) = fault(&fake, Fault::Status(400, "messages: field required".into())).await;
    assert!(matches!(e, LlmError::Rejected { status: 400, .. }), "{e}");
}

#[tokio::test]
async fn close_before_headers_is_a_clear_disconnect() {
    let fake = FakeLlm::start().await;
    // The first failure is retried once on a fresh connection; the second is reported.
    fake.push(Reply::fault(Fault::CloseBeforeHeaders));
    let (chunks, e) = fault(&fake, Fault::CloseBeforeHeaders).await;
    assert_eq!(
        fake.chat_requests().len(),
        2,
        "one retry on a fresh connection"
    );
    assert!(chunks.is_empty());
    assert!(matches!(e, LlmError::Disconnected { .. }), "{e}");
    assert!(e.to_string().contains("no response at all"), "{e}");
}

#[tokio::test]
async fn disconnect_mid_stream_keeps_the_chunks_and_reports() {
    let fake = FakeLlm::start().await;
    let (chunks, e) = fault(&fake, Fault::DisconnectMidStream).await;
    assert!(!text_of(&chunks).is_empty());
    assert!(matches!(e, LlmError::Disconnected { .. }), "{e}");
    assert!(e.to_string().contains("the stream broke off"), "{e}");
}

#[tokio::test]
async fn garbage_event_is_a_protocol_error() {
    let fake = FakeLlm::start().await;
    let (chunks, e) = fault(&fake, Fault::GarbageLine).await;
    assert!(!text_of(&chunks).is_empty());
    assert!(matches!(e, LlmError::Protocol { .. }), "{e}");
    assert!(
        e.to_string()
            .contains("malformed response from OpenAI-compatible API"),
        "{e}"
    );
}

#[tokio::test]
async fn error_event_on_a_200_stream_is_a_stream_error() {
    let fake = FakeLlm::start().await;
    let (chunks, e) = fault(
        &fake,
        Fault::ErrorLine("the request exceeds the context size".into()),
    )
    .await;
    assert!(!text_of(&chunks).is_empty());
    assert!(matches!(e, LlmError::StreamError { .. }), "{e}");
    assert_eq!(
        e.to_string(),
        "OpenAI-compatible API reported an error mid-stream: the request exceeds the context size"
    );
}
