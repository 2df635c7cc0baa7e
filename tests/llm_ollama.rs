//! Ollama backend against the fake server: decoded chunks, request bodies,
//! model endpoints, the "does not support" quirk, and every HTTP/stream fault.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use navi::config::ThinkSetting;
use navi::llm::ollama::OllamaBackend;
use navi::llm::{
    ChatChunk, ChatMessage, ChatRequest, ImageData, LlmBackend, LlmError, ToolCall, ToolSchema,
    Usage,
};
use serde_json::{Value, json};
use std::time::Duration;
use support::stream::{fault_with, req, run};
use support::{FakeLlm, Fault, Part, Reply};

async fn fault(fake: &FakeLlm, f: Fault) -> (Vec<ChatChunk>, LlmError) {
    fault_with(&OllamaBackend::new(&fake.ollama_url()).unwrap(), fake, f).await
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

fn closed_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

#[tokio::test]
async fn streams_thinking_text_usage_and_done() {
    let fake = FakeLlm::start().await;
    fake.push(
        Reply::thinking_text("let me think", "Hello there world")
            .with_usage(12, 5)
            .with_delay(2),
    );
    let b = OllamaBackend::new(&fake.ollama_url()).unwrap();
    let mut r = req();
    r.think = Some(ThinkSetting::Bool(true));
    let (chunks, err) = run(&b, &r).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(thinking_of(&chunks), "let me think");
    assert_eq!(text_of(&chunks), "Hello there world");
    let texts = chunks
        .iter()
        .filter(|c| matches!(c, ChatChunk::Text(_)))
        .count();
    assert_eq!(texts, 3, "streamed word by word: {chunks:?}");
    let n = chunks.len();
    assert_eq!(
        chunks[n - 2],
        ChatChunk::Usage(Usage {
            prompt_tokens: 12,
            completion_tokens: 5,
            ..Usage::default()
        })
    );
    assert_eq!(
        chunks[n - 1],
        ChatChunk::Done {
            finish_reason: Some("stop".into())
        }
    );
    let recorded = fake.requests();
    assert_eq!(
        (recorded[0].method.as_str(), recorded[0].path.as_str()),
        ("POST", "/api/chat")
    );
    assert_eq!(recorded[0].body["stream"], json!(true));
    assert_eq!(recorded[0].body["think"], json!(true));
}

#[tokio::test]
async fn request_body_has_tools_think_options_history_and_images() {
    let fake = FakeLlm::start().await;
    let b = OllamaBackend::new(&fake.ollama_url()).unwrap();
    let call = ToolCall {
        id: "c1".into(),
        name: "read_file".into(),
        arguments: json!({"path": "/tmp/x"}),
    };
    let mut user = ChatMessage::user("what is in this picture and file?");
    user.push_image(ImageData {
        mime: "image/png".into(),
        base64: "iVBORw0KGgo=".into(),
    });
    let mut asst = ChatMessage::assistant("");
    asst.set_thinking(Some("I should read it".into()));
    asst.set_tool_calls(vec![call.clone()]);
    let mut r = ChatRequest::new(
        "test-model",
        vec![
            ChatMessage::system("be brief"),
            user,
            asst,
            ChatMessage::tool_result(&call, "file contents"),
        ],
    );
    r.tools = vec![ToolSchema {
        name: "read_file".into(),
        description: "Reads a file".into(),
        parameters: json!({"type":"object","properties":{"path":{"type":"string"}}}),
    }];
    r.think = Some(ThinkSetting::Level("low".into()));
    r.num_ctx = Some(8192);
    r.temperature = Some(0.25);
    r.keep_alive = Some("10m".into());
    let (_, err) = run(&b, &r).await;
    assert!(err.is_none(), "{err:?}");
    let body = &fake.chat_requests()[0];
    assert_eq!(body["model"], json!("test-model"));
    assert_eq!(body["think"], json!("low"));
    assert_eq!(
        body["options"],
        json!({"num_ctx": 8192, "temperature": 0.25})
    );
    assert_eq!(body["keep_alive"], json!("10m"));
    assert_eq!(
        body["tools"],
        json!([{"type":"function","function":{"name":"read_file","description":"Reads a file",
            "parameters":{"type":"object","properties":{"path":{"type":"string"}}}}}])
    );
    let m = &body["messages"];
    assert_eq!(m[0], json!({"role":"system","content":"be brief"}));
    assert_eq!(m[1]["images"], json!(["iVBORw0KGgo="]));
    assert_eq!(
        m[2],
        json!({"role":"assistant","content":"","tool_calls":[
            {"id":"c1","function":{"name":"read_file","arguments":{"path":"/tmp/x"}}}]})
    );
    assert_eq!(
        m[3],
        json!({"role":"tool","content":"file contents","tool_name":"read_file","tool_call_id":"c1"})
    );
    let headers = &fake.requests()[0];
    assert!(
        headers
            .header("content-type")
            .unwrap()
            .starts_with("application/json")
    );
}

#[tokio::test]
async fn unset_fields_are_not_sent() {
    let fake = FakeLlm::start().await;
    let b = OllamaBackend::new(&fake.ollama_url()).unwrap();
    let (_, err) = run(&b, &req()).await;
    assert!(err.is_none());
    let body = fake.chat_requests()[0].clone();
    for key in ["tools", "think", "options", "keep_alive"] {
        assert!(body.get(key).is_none(), "{key} sent: {body}");
    }
}

#[tokio::test]
async fn tool_calls_arrive_whole_with_generated_ids_and_raw_invalid_arguments() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::parts(vec![
        Part::Text("Let me look.".into()),
        Part::ToolCall {
            name: "read_file".into(),
            args: json!({"path": "/etc/hosts"}),
        },
        Part::ToolCall {
            name: "broken".into(),
            args: Value::String("{\"path\": oops".into()),
        },
    ]));
    let b = OllamaBackend::new(&fake.ollama_url()).unwrap();
    let (chunks, err) = run(&b, &req()).await;
    assert!(err.is_none(), "{err:?}");
    let calls: Vec<ToolCall> = chunks
        .iter()
        .filter_map(|c| match c {
            ChatChunk::ToolCalls(v) => Some(v.clone()),
            _ => None,
        })
        .flatten()
        .collect();
    assert_eq!(calls.len(), 2, "{chunks:?}");
    assert_eq!(calls[0].name, "read_file");
    assert_eq!(calls[0].arguments, json!({"path": "/etc/hosts"}));
    assert_eq!(calls[1].arguments, Value::String("{\"path\": oops".into()));
    assert!(calls.iter().all(|c| c.id.starts_with("call_")));
    assert_ne!(calls[0].id, calls[1].id);
    assert!(matches!(chunks.last(), Some(ChatChunk::Done { .. })));
}

#[tokio::test]
async fn list_models_and_model_info() {
    let fake = FakeLlm::start().await;
    fake.set_models(vec![
        ("llama3:latest".into(), Some(8192)),
        ("qwen3:8b".into(), None),
    ]);
    let b = OllamaBackend::new(&fake.ollama_url()).unwrap();
    let names: Vec<String> = b
        .list_models()
        .await
        .unwrap()
        .into_iter()
        .map(|m| m.name)
        .collect();
    assert_eq!(names, ["llama3:latest", "qwen3:8b"]);
    let info = b.model_info("llama3:latest").await.unwrap();
    assert_eq!(info.context_length, Some(8192));
    assert!(info.capabilities.iter().any(|c| c == "tools"), "{info:?}");
    assert!(
        info.capabilities.iter().any(|c| c == "thinking"),
        "{info:?}"
    );
    assert_eq!(b.model_info("qwen3:8b").await.unwrap().context_length, None);
    let err = b.model_info("missing:1b").await.unwrap_err();
    assert!(matches!(err, LlmError::ModelNotFound { .. }), "{err}");
    assert!(err.to_string().contains("ollama pull missing:1b"), "{err}");
    let recorded = fake.requests();
    assert_eq!(
        (recorded[0].method.as_str(), recorded[0].path.as_str()),
        ("GET", "/api/tags")
    );
    assert_eq!(recorded[1].path, "/api/show");
    assert_eq!(recorded[1].body, json!({"model": "llama3:latest"}));
}

#[tokio::test]
async fn image_input_follows_the_vision_capability() {
    for (caps, want) in [
        (vec!["completion", "tools", "thinking"], Some(false)),
        (vec!["completion", "vision"], Some(true)),
        // A list that says nothing about inputs: the server decides.
        (vec!["tools"], None),
    ] {
        let fake = FakeLlm::start().await;
        fake.set_capabilities(&caps);
        let b = OllamaBackend::new(&fake.ollama_url()).unwrap();
        let got = b.image_input("test-model").await;
        assert_eq!(got.as_ref().map(|i| i.accepted), want, "{caps:?}");
        if let Some(i) = got {
            assert!(i.evidence.contains(&caps.join(", ")), "{}", i.evidence);
        }
        // A model the server does not know: not a refusal.
        assert_eq!(b.image_input("other-model").await, None);
        assert!(fake.chat_requests().is_empty());
    }
}

#[tokio::test]
async fn unsupported_thinking_is_dropped_once_and_remembered() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::fault(Fault::Status(
        400,
        "\"test-model\" does not support thinking".into(),
    )));
    fake.push(Reply::text("first"));
    fake.push(Reply::text("second"));
    let b = OllamaBackend::new(&fake.ollama_url()).unwrap();
    let mut r = req();
    r.think = Some(ThinkSetting::Bool(true));
    r.tools = vec![ToolSchema {
        name: "t".into(),
        description: "d".into(),
        parameters: json!({"type":"object"}),
    }];
    let (chunks, err) = run(&b, &r).await;
    assert!(err.is_none(), "{err:?}");
    assert_eq!(text_of(&chunks), "first");
    let (chunks, _) = run(&b, &r).await;
    assert_eq!(text_of(&chunks), "second");
    let bodies = fake.chat_requests();
    assert_eq!(bodies.len(), 3);
    assert_eq!(bodies[0]["think"], json!(true));
    assert!(bodies[1].get("think").is_none() && bodies[1].get("tools").is_some());
    assert!(
        bodies[2].get("think").is_none(),
        "remembered: {}",
        bodies[2]
    );
}

#[tokio::test]
async fn unsupported_tools_is_dropped_once_and_a_second_400_is_reported() {
    let fake = FakeLlm::start().await;
    let no_tools = "registry.ollama.ai/library/test-model:latest does not support tools";
    fake.push(Reply::fault(Fault::Status(400, no_tools.into())));
    fake.push(Reply::fault(Fault::Status(400, no_tools.into())));
    let b = OllamaBackend::new(&fake.ollama_url()).unwrap();
    let mut r = req();
    r.tools = vec![ToolSchema {
        name: "t".into(),
        description: "d".into(),
        parameters: json!({"type":"object"}),
    }];
    let (_, err) = run(&b, &r).await;
    let err = err.unwrap();
    assert!(
        matches!(err, LlmError::Rejected { status: 400, .. }),
        "{err}"
    );
    assert!(err.to_string().contains("does not support tools"), "{err}");
    let bodies = fake.chat_requests();
    assert_eq!(bodies.len(), 2, "retried exactly once");
    assert!(bodies[0].get("tools").is_some() && bodies[1].get("tools").is_none());
}

#[tokio::test]
async fn refused_connection_is_unreachable_with_a_hint() {
    let port = closed_port();
    let b = OllamaBackend::new(&format!("http://127.0.0.1:{port}")).unwrap();
    let (_, err) = run(&b, &req()).await;
    let err = err.unwrap();
    assert!(matches!(err, LlmError::Unreachable { .. }), "{err}");
    assert!(err.is_retryable());
    let msg = err.to_string();
    assert!(
        msg.contains(&format!("cannot reach Ollama at http://127.0.0.1:{port}")),
        "{msg}"
    );
    assert!(msg.contains("connection refused"), "{msg}");
    assert!(
        msg.contains("ollama serve") && msg.contains("OLLAMA_HOST"),
        "{msg}"
    );
    let err = b.list_models().await.unwrap_err();
    assert!(matches!(err, LlmError::Unreachable { .. }), "{err}");
}

#[tokio::test]
async fn http_statuses_map_to_typed_errors() {
    let fake = FakeLlm::start().await;
    let (_, e) = fault(
        &fake,
        Fault::Status(
            404,
            "model \"test-model\" not found, try pulling it first".into(),
        ),
    )
    .await;
    assert!(matches!(e, LlmError::ModelNotFound { .. }), "{e}");
    assert!(
        e.to_string()
            .contains("model test-model not found on Ollama"),
        "{e}"
    );
    assert!(e.to_string().contains("ollama pull test-model"), "{e}");

    let (_, e) = fault(&fake, Fault::Status(401, "unauthorized".into())).await;
    assert!(
        matches!(e, LlmError::Unauthorized { status: 401, .. }),
        "{e}"
    );
    assert!(e.to_string().contains("HTTP 401"), "{e}");
    assert!(e.to_string().contains("ollama signin"), "{e}");

    let (_, e) = fault(&fake, Fault::Status(429, "slow down".into())).await;
    assert!(
        matches!(e, LlmError::RateLimited { retry_after: Some(d), .. } if d == Duration::from_secs(1)),
        "{e}"
    );
    assert!(e.to_string().contains("retry after 1s"), "{e}");

    let (_, e) = fault(
        &fake,
        Fault::Status(500, "llama runner process has terminated".into()),
    )
    .await;
    assert!(matches!(e, LlmError::Server { status: 500, .. }), "{e}");
    assert!(
        e.to_string()
            .contains("HTTP 500): llama runner process has terminated"),
        "{e}"
    );

    let (_, e) = fault(&fake, Fault::Status(500, "x".repeat(5000))).await;
    assert!(
        e.to_string().len() < 500,
        "server text is truncated: {}",
        e.to_string().len()
    );

    let (_, e) = fault(&fake, Fault::Status(400, "invalid options".into())).await;
    assert!(matches!(e, LlmError::Rejected { status: 400, .. }), "{e}");
    assert!(
        e.to_string()
            .contains("rejected the request (HTTP 400): invalid options"),
        "{e}"
    );
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
    assert!(
        e.to_string().contains("Ollama closed the connection"),
        "{e}"
    );
    assert!(e.to_string().contains("no response at all"), "{e}");
}

#[tokio::test]
async fn disconnect_mid_stream_keeps_the_chunks_and_reports() {
    let fake = FakeLlm::start().await;
    let (chunks, e) = fault(&fake, Fault::DisconnectMidStream).await;
    assert!(
        !text_of(&chunks).is_empty(),
        "chunks before the drop arrive"
    );
    assert!(!chunks.iter().any(|c| matches!(c, ChatChunk::Done { .. })));
    assert!(matches!(e, LlmError::Disconnected { .. }), "{e}");
    assert!(
        e.to_string().contains("before the answer was complete"),
        "{e}"
    );
}

#[tokio::test]
async fn garbage_line_is_a_protocol_error() {
    let fake = FakeLlm::start().await;
    let (chunks, e) = fault(&fake, Fault::GarbageLine).await;
    assert!(!text_of(&chunks).is_empty());
    assert!(matches!(e, LlmError::Protocol { .. }), "{e}");
    assert!(
        e.to_string().contains("malformed response from Ollama"),
        "{e}"
    );
    assert!(e.to_string().contains("this is not json"), "{e}");
}

#[tokio::test]
async fn error_line_is_a_stream_error() {
    let fake = FakeLlm::start().await;
    let (chunks, e) = fault(&fake, Fault::ErrorLine("model runner crashed".into())).await;
    assert!(!text_of(&chunks).is_empty());
    assert!(matches!(e, LlmError::StreamError { .. }), "{e}");
    assert_eq!(
        e.to_string(),
        "Ollama reported an error mid-stream: model runner crashed"
    );
}
