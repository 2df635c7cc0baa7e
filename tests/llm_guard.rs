//! The stream guard over all four real backends and the fake server: first-chunk
//! and mid-stream timeouts, cancellation (prefill, mid-stream), retries only
//! before the first chunk, and that the HTTP connection is closed each time
//! the guard gives up on a stream.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::support;

use navi::config::BackendKind;
use navi::llm::anthropic::AnthropicBackend;
use navi::llm::guard::{self, GuardConfig, GuardedStream};
use navi::llm::ollama::OllamaBackend;
use navi::llm::openai::OpenAiBackend;
use navi::llm::responses::ResponsesBackend;
use navi::llm::{
    ChatChunk, ChatMessage, ChatRequest, ChunkStream, LlmBackend, LlmError, ModelInfo,
};
use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};
use support::{FakeLlm, Fault, Reply};
use tokio_util::sync::CancellationToken;

/// Generous bound for "quickly": far above the configured timeouts.
const QUICK: Duration = Duration::from_secs(5);

const KINDS: [BackendKind; 4] = [
    BackendKind::Ollama,
    BackendKind::Openai,
    BackendKind::Anthropic,
    BackendKind::Responses,
];

fn backend(kind: BackendKind, fake: &FakeLlm) -> Box<dyn LlmBackend> {
    match kind {
        BackendKind::Ollama => Box::new(OllamaBackend::new(&fake.ollama_url()).unwrap()),
        BackendKind::Openai => Box::new(OpenAiBackend::new(&fake.openai_url(), "").unwrap()),
        BackendKind::Anthropic => Box::new(AnthropicBackend::new(&fake.base_url, "").unwrap()),
        BackendKind::Responses => Box::new(ResponsesBackend::new(&fake.openai_url(), "").unwrap()),
    }
}

fn cfg() -> GuardConfig {
    GuardConfig {
        first_chunk_timeout: Duration::from_millis(300),
        chunk_timeout: Duration::from_millis(300),
        retries: 2,
        retry_base: Duration::from_millis(10),
    }
}

fn req() -> ChatRequest {
    ChatRequest::new("test-model", vec![ChatMessage::user("hi")])
}

async fn open(
    b: &dyn LlmBackend,
    cfg: &GuardConfig,
    cancel: &CancellationToken,
) -> Result<GuardedStream, LlmError> {
    tokio::time::timeout(QUICK, guard::open(b, &req(), cfg, cancel))
        .await
        .expect("open did not return in time")
}

/// Reads the rest of the stream: chunks, and the error that ended it.
async fn drain(s: &mut GuardedStream) -> (Vec<ChatChunk>, Option<LlmError>) {
    let mut chunks = Vec::new();
    loop {
        let next = tokio::time::timeout(QUICK, s.next())
            .await
            .expect("next() hung");
        match next {
            None => return (chunks, None),
            Some(Ok(c)) => chunks.push(c),
            Some(Err(e)) => {
                assert!(s.next().await.is_none(), "nothing after an error");
                return (chunks, Some(e));
            }
        }
    }
}

/// Waits until the fake server saw the client close request `i`'s connection.
async fn server_saw_disconnect(fake: &FakeLlm, i: usize) -> bool {
    let deadline = Instant::now() + QUICK;
    while Instant::now() < deadline {
        if fake
            .requests()
            .get(i)
            .is_some_and(|r| r.client_disconnected)
        {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    false
}

#[tokio::test]
async fn passes_a_whole_answer_through_and_ends_after_done() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        fake.push(
            Reply::thinking_text("hm", "all good here")
                .with_usage(3, 4)
                .with_delay(5),
        );
        let b = backend(kind, &fake);
        let mut s = open(b.as_ref(), &cfg(), &CancellationToken::new())
            .await
            .unwrap();
        let (chunks, err) = drain(&mut s).await;
        assert!(err.is_none(), "{kind:?}: {err:?}");
        assert_eq!(chunks[0], ChatChunk::Thinking("hm".into()), "{kind:?}");
        assert!(
            matches!(chunks.last(), Some(ChatChunk::Done { .. })),
            "{kind:?}"
        );
        assert!(
            chunks.iter().any(|c| matches!(c, ChatChunk::Usage(_))),
            "{kind:?}"
        );
        assert!(!fake.requests()[0].client_disconnected, "{kind:?}");
    }
}

#[tokio::test]
async fn stall_before_first_chunk_times_out_and_closes_the_connection() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        fake.push(Reply::fault(Fault::StallBeforeFirstChunk));
        let b = backend(kind, &fake);
        let err = open(b.as_ref(), &cfg(), &CancellationToken::new())
            .await
            .err()
            .unwrap();
        assert!(
            matches!(err, LlmError::FirstChunkTimeout { secs: 1, .. }),
            "{kind:?}: {err}"
        );
        assert!(err.to_string().starts_with("no first token from "), "{err}");
        assert!(
            err.to_string().contains("LLM_STREAM_FIRST_CHUNK_TIMEOUT"),
            "{err}"
        );
        assert_eq!(fake.chat_requests().len(), 1, "timeouts are not retried");
        assert!(
            server_saw_disconnect(&fake, 0).await,
            "{kind:?}: body dropped"
        );
    }
}

#[tokio::test]
async fn slow_prefill_before_headers_is_bounded_too() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        fake.push(Reply::text("late").with_prefill(60_000));
        let b = backend(kind, &fake);
        let err = open(b.as_ref(), &cfg(), &CancellationToken::new())
            .await
            .err()
            .unwrap();
        assert!(
            matches!(err, LlmError::FirstChunkTimeout { .. }),
            "{kind:?}: {err}"
        );
        assert!(server_saw_disconnect(&fake, 0).await, "{kind:?}");
    }
}

#[tokio::test]
async fn stall_mid_stream_hits_the_chunk_timeout_and_closes_the_connection() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        fake.push(Reply::fault(Fault::StallMidStream));
        let b = backend(kind, &fake);
        let mut s = open(b.as_ref(), &cfg(), &CancellationToken::new())
            .await
            .unwrap();
        let (chunks, err) = drain(&mut s).await;
        assert!(!chunks.is_empty(), "{kind:?}: chunks before the stall");
        let err = err.unwrap();
        assert!(
            matches!(err, LlmError::ChunkTimeout { secs: 1, .. }),
            "{kind:?}: {err}"
        );
        assert!(
            err.to_string().contains("stalled: nothing received"),
            "{err}"
        );
        assert!(server_saw_disconnect(&fake, 0).await, "{kind:?}");
        assert_eq!(fake.chat_requests().len(), 1, "never replayed");
    }
}

#[tokio::test]
async fn cancel_during_prefill_returns_quickly_and_closes_the_connection() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        fake.push(Reply::text("never").with_prefill(60_000));
        let b = backend(kind, &fake);
        let cancel = CancellationToken::new();
        let trigger = cancel.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(150)).await;
            trigger.cancel();
        });
        let slow = GuardConfig {
            first_chunk_timeout: Duration::from_secs(120),
            ..cfg()
        };
        let err = open(b.as_ref(), &slow, &cancel).await.err().unwrap();
        assert!(matches!(err, LlmError::Cancelled), "{kind:?}: {err}");
        assert_eq!(err.to_string(), "operation cancelled by user");
        assert!(server_saw_disconnect(&fake, 0).await, "{kind:?}");
    }
}

#[tokio::test]
async fn cancel_mid_stream_stops_reading_and_closes_the_connection() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        let long = "word ".repeat(200);
        fake.push(Reply::text(long).with_delay(50));
        let b = backend(kind, &fake);
        let cancel = CancellationToken::new();
        let slow = GuardConfig {
            chunk_timeout: Duration::from_secs(60),
            ..cfg()
        };
        let mut s = open(b.as_ref(), &slow, &cancel).await.unwrap();
        assert!(
            matches!(s.next().await, Some(Ok(ChatChunk::Text(_)))),
            "{kind:?}"
        );
        cancel.cancel();
        let (_, err) = drain(&mut s).await;
        assert!(
            matches!(err, Some(LlmError::Cancelled)),
            "{kind:?}: {err:?}"
        );
        assert!(server_saw_disconnect(&fake, 0).await, "{kind:?}");
    }
}

#[tokio::test]
async fn already_cancelled_sends_nothing() {
    let fake = FakeLlm::start().await;
    let b = backend(BackendKind::Ollama, &fake);
    let cancel = CancellationToken::new();
    cancel.cancel();
    let err = open(b.as_ref(), &cfg(), &cancel).await.err().unwrap();
    assert!(matches!(err, LlmError::Cancelled));
    assert!(fake.requests().is_empty());
}

#[tokio::test]
async fn dropping_a_plain_stream_closes_the_connection() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        fake.push(Reply::text("word ".repeat(100)).with_delay(50));
        let b = backend(kind, &fake);
        let mut s = b.stream_chat(&req()).await.unwrap();
        let first = futures_util::StreamExt::next(&mut s).await;
        assert!(matches!(first, Some(Ok(ChatChunk::Text(_)))), "{kind:?}");
        drop(s);
        assert!(server_saw_disconnect(&fake, 0).await, "{kind:?}");
    }
}

#[tokio::test]
async fn a_500_then_success_is_retried() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        fake.push(Reply::fault(Fault::Status(500, "busy".into())));
        fake.push(Reply::text("recovered fine"));
        let b = backend(kind, &fake);
        let mut s = open(b.as_ref(), &cfg(), &CancellationToken::new())
            .await
            .unwrap();
        let (chunks, err) = drain(&mut s).await;
        assert!(err.is_none(), "{kind:?}: {err:?}");
        assert!(
            chunks.contains(&ChatChunk::Text("recovered ".into())),
            "{kind:?}: {chunks:?}"
        );
        assert_eq!(fake.chat_requests().len(), 2, "{kind:?}");
    }
}

#[tokio::test]
async fn a_429_is_retried_after_retry_after() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::fault(Fault::Status(429, "slow down".into())));
    fake.push(Reply::text("ok"));
    let b = backend(BackendKind::Openai, &fake);
    let mut s = open(b.as_ref(), &cfg(), &CancellationToken::new())
        .await
        .unwrap();
    assert!(drain(&mut s).await.1.is_none());
    assert_eq!(fake.chat_requests().len(), 2);
}

#[tokio::test]
async fn retries_stop_after_the_configured_count() {
    let fake = FakeLlm::start().await;
    for _ in 0..5 {
        fake.push(Reply::fault(Fault::Status(502, "bad gateway".into())));
    }
    let b = backend(BackendKind::Ollama, &fake);
    let err = open(b.as_ref(), &cfg(), &CancellationToken::new())
        .await
        .err()
        .unwrap();
    assert!(matches!(err, LlmError::Server { status: 502, .. }), "{err}");
    assert_eq!(fake.chat_requests().len(), 3, "1 try + 2 retries");
}

#[tokio::test]
async fn refused_is_retried_then_reported() {
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let b = OllamaBackend::new(&format!("http://127.0.0.1:{port}")).unwrap();
    let err = open(&b, &cfg(), &CancellationToken::new())
        .await
        .err()
        .unwrap();
    assert!(matches!(err, LlmError::Unreachable { .. }), "{err}");
    assert!(err.to_string().contains("connection refused"), "{err}");
}

#[tokio::test]
async fn non_retryable_errors_are_not_retried() {
    for (fault, name) in [
        (
            Fault::Status(404, "model \"test-model\" not found".into()),
            "404",
        ),
        (Fault::Status(401, "no".into()), "401"),
    ] {
        let fake = FakeLlm::start().await;
        fake.push(Reply::fault(fault));
        fake.push(Reply::text("must not be reached"));
        let b = backend(BackendKind::Ollama, &fake);
        assert!(
            open(b.as_ref(), &cfg(), &CancellationToken::new())
                .await
                .is_err(),
            "{name}"
        );
        assert_eq!(fake.chat_requests().len(), 1, "{name}");
    }
}

#[tokio::test]
async fn errors_after_a_chunk_are_never_retried() {
    for kind in KINDS {
        let fake = FakeLlm::start().await;
        fake.push(Reply::fault(Fault::ErrorLine("internal error".into())));
        fake.push(Reply::text("must not be replayed"));
        let b = backend(kind, &fake);
        let mut s = open(b.as_ref(), &cfg(), &CancellationToken::new())
            .await
            .unwrap();
        let (chunks, err) = drain(&mut s).await;
        assert!(!chunks.is_empty());
        assert!(
            matches!(err, Some(LlmError::StreamError { .. })),
            "{kind:?}: {err:?}"
        );
        assert_eq!(fake.chat_requests().len(), 1, "{kind:?}");
    }
}

/// A backend whose stream yields one chunk and then a *retryable* error.
struct ChunkThenServerError {
    calls: Arc<AtomicU32>,
}

#[async_trait::async_trait]
impl LlmBackend for ChunkThenServerError {
    fn kind(&self) -> BackendKind {
        BackendKind::Openai
    }
    fn base_url(&self) -> &str {
        "http://test"
    }
    async fn stream_chat(&self, _req: &ChatRequest) -> Result<ChunkStream, LlmError> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        let items = vec![
            Ok(ChatChunk::Text("half an answer".into())),
            Err(LlmError::Server {
                backend: "test".into(),
                status: 500,
                body: "exploded".into(),
            }),
        ];
        Ok(Box::pin(futures_util::stream::iter(items)))
    }
    async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        Ok(Vec::new())
    }
    async fn model_info(&self, model: &str) -> Result<ModelInfo, LlmError> {
        Ok(ModelInfo {
            name: model.into(),
            ..Default::default()
        })
    }
}

#[tokio::test]
async fn a_retryable_error_after_a_chunk_is_passed_on_not_retried() {
    let calls = Arc::new(AtomicU32::new(0));
    let b = ChunkThenServerError {
        calls: calls.clone(),
    };
    let mut s = open(&b, &cfg(), &CancellationToken::new()).await.unwrap();
    let (chunks, err) = drain(&mut s).await;
    assert_eq!(chunks, vec![ChatChunk::Text("half an answer".into())]);
    assert!(
        matches!(err, Some(LlmError::Server { status: 500, .. })),
        "{err:?}"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn cancel_during_retry_backoff_is_honoured() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::fault(Fault::Status(500, "busy".into())));
    let b = backend(BackendKind::Ollama, &fake);
    let long_backoff = GuardConfig {
        retry_base: Duration::from_secs(60),
        ..cfg()
    };
    let cancel = CancellationToken::new();
    let trigger = cancel.clone();
    tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(200)).await;
        trigger.cancel();
    });
    let err = open(b.as_ref(), &long_backoff, &cancel)
        .await
        .err()
        .unwrap();
    assert!(matches!(err, LlmError::Cancelled), "{err}");
    assert_eq!(fake.chat_requests().len(), 1);
}
