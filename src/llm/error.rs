//! Typed, actionable LLM errors.
use std::time::Duration;

#[derive(Debug, Clone, thiserror::Error)]
pub enum LlmError {
    /// Connection refused / DNS / TLS / reset before any response.
    #[error("cannot reach {backend} at {url} ({reason}): {hint}")]
    Unreachable {
        backend: String,
        url: String,
        reason: String,
        hint: String,
    },
    #[error("model {model} not found on {backend}: {hint}")]
    ModelNotFound {
        backend: String,
        model: String,
        hint: String,
    },
    #[error(
        "{backend} at {url} refused the credentials (HTTP {status}): {}",
        if hint.is_empty() { credentials_hint(backend).to_string() } else { hint.clone() }
    )]
    Unauthorized {
        backend: String,
        url: String,
        status: u16,
        /// What to do: names the key's variable and `navi keys set`.
        hint: String,
    },
    /// The provider needs an API key and none was found; nothing was sent.
    #[error("no API key for {provider}: {hint}")]
    NoKey { provider: String, hint: String },
    /// `provider/model` with a provider nobody defined.
    #[error(
        "unknown provider '{provider}' in '{model}': use one of {known}, or [providers.{provider}] in the config; `navi models` lists the models of every provider{note}"
    )]
    UnknownProvider {
        provider: String,
        model: String,
        known: String,
        /// Why the default provider could not say whether it has a model
        /// of that name (empty: it answered that it has none).
        note: String,
    },
    /// The server answered, but not in the protocol the provider is set to.
    #[error(
        "the server at {url} does not answer like the {expected} ({detail}); check the provider's base URL and protocol (docs/providers.md)"
    )]
    WrongProtocol {
        url: String,
        expected: String,
        detail: String,
    },
    #[error("{backend} is rate limiting requests (HTTP 429){}: wait and try again", retry_after.map(|d| format!(", retry after {}s", d.as_secs())).unwrap_or_default())]
    RateLimited {
        backend: String,
        retry_after: Option<Duration>,
    },
    /// The server is overloaded (HTTP 529, Anthropic `overloaded_error`).
    #[error("{backend} is overloaded{}: wait and try again", retry_after.map(|d| format!(", retry after {}s", d.as_secs())).unwrap_or_default())]
    Overloaded {
        backend: String,
        retry_after: Option<Duration>,
    },
    #[error("{backend} server error (HTTP {status}): {body}")]
    Server {
        backend: String,
        status: u16,
        body: String,
    },
    /// 4xx other than 401/404/429: the request was rejected.
    #[error("{backend} rejected the request (HTTP {status}): {message}")]
    Rejected {
        backend: String,
        status: u16,
        message: String,
    },
    /// The server reported an error inside an HTTP 200 stream.
    #[error("{backend} reported an error mid-stream: {message}")]
    StreamError { backend: String, message: String },
    /// A line or event that is not what the protocol allows.
    #[error("malformed response from {backend}: {message}")]
    Protocol { backend: String, message: String },
    /// The connection dropped before the stream finished.
    #[error("{backend} closed the connection before the answer was complete: {reason}")]
    Disconnected { backend: String, reason: String },
    #[error(
        "no first token from {backend} after {secs}s (prefill timeout; raise LLM_STREAM_FIRST_CHUNK_TIMEOUT for big prompts on slow hardware)"
    )]
    FirstChunkTimeout { backend: String, secs: u64 },
    #[error(
        "{backend} stalled: nothing received for {secs}s mid-stream (LLM_STREAM_CHUNK_TIMEOUT)"
    )]
    ChunkTimeout { backend: String, secs: u64 },
    #[error("none of the models {wanted:?} is available on {backend}; it has: {}; pick one with --model NAME, /model NAME in a session, or [llm].default_model in the config", if available.is_empty() { "no models".to_string() } else { available.join(", ") })]
    NoModelAvailable {
        backend: String,
        wanted: Vec<String>,
        available: Vec<String>,
    },
    /// The server answered, but not as the API would (an HTML page, a proxy
    /// or another web server on that port). Never retried.
    #[error(
        "got HTTP {status} {content_type} from {url} — is this {}? Check the address: {hint}",
        expected_server(backend)
    )]
    NotAnApi {
        backend: String,
        url: String,
        status: u16,
        content_type: String,
        hint: String,
    },
    #[error("operation cancelled by user")]
    Cancelled,
    #[error("invalid backend URL {url}: {reason}")]
    BadUrl { url: String, reason: String },
}

fn expected_server(backend: &str) -> &'static str {
    if backend.starts_with("Ollama") || backend == "ollama" {
        "an Ollama server"
    } else {
        "an OpenAI-compatible server"
    }
}

/// What to do about a 401/403: Ollama itself has no API key (a proxy in front
/// of it, or a cloud model, wants credentials); other servers take a key.
fn credentials_hint(backend: &str) -> &'static str {
    if backend.starts_with("Ollama") || backend == "ollama" {
        "Ollama takes no API key; check the proxy in front of it, or run \"ollama signin\" for cloud models"
    } else {
        "set OPENAI_API_KEY or [llm].openai_api_key"
    }
}

impl LlmError {
    /// The server refused the request because it does not fit its context
    /// window (llama-server "exceeds the available context size", vLLM
    /// "maximum context length", OpenAI "context_length_exceeded", …).
    pub(crate) fn is_context_overflow(&self) -> bool {
        let text = match self {
            LlmError::Rejected { message, .. } => message,
            LlmError::Server { body, .. } => body,
            LlmError::StreamError { message, .. } => message,
            _ => return false,
        }
        .to_ascii_lowercase();
        text.contains("context_length_exceeded")
            || text.contains("exceed_context_size")
            || (text.contains("context")
                && [
                    "exceed",
                    "too long",
                    "maximum",
                    "overflow",
                    "too many tokens",
                ]
                .iter()
                .any(|w| text.contains(w)))
    }

    /// The server refused the request because of an image the model cannot
    /// take (llama-server "image input is not supported", vLLM "not a
    /// multimodal model" / "At most 0 image(s)", LM Studio "does not support
    /// images", Ollama "missing data required for image input", OpenAI
    /// "image_url is only supported by certain models", …): a word for
    /// images together with a word for refusing them.
    pub(crate) fn is_image_refusal(&self) -> bool {
        let text = match self {
            LlmError::Rejected { message, .. } => message,
            LlmError::Server { body, .. } => body,
            LlmError::StreamError { message, .. } => message,
            _ => return false,
        }
        .to_ascii_lowercase();
        let about_images = ["image", "multimodal", "multi-modal", "vision", "mmproj"]
            .iter()
            .any(|w| text.contains(w));
        let refused = [
            "not supported",
            "unsupported",
            "not support",
            "doesn't support",
            "does not accept",
            "not accept",
            "not a multimodal",
            "not multimodal",
            "only supported by",
            "no endpoints found that support",
            "at most 0 image",
            "missing data required",
            "not enabled",
            "not allowed",
            "unknown content type",
            "invalid content type",
            "cannot process image",
            "can't process image",
            "not loaded",
        ]
        .iter()
        .any(|w| text.contains(w));
        about_images && refused && !self.is_context_overflow()
    }

    /// Errors worth retrying (with backoff) when no chunk has arrived yet.
    /// An image the model cannot take is refused again every time.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            LlmError::Unreachable { .. }
                | LlmError::RateLimited { .. }
                | LlmError::Overloaded { .. }
                | LlmError::Server { .. }
        ) && !self.is_image_refusal()
    }
}

/// A coded failure a stream reported (an `error` event): rate-limited and
/// overloaded codes are retryable like their HTTP statuses; anything else
/// is the server's word, prefixed by its code.
pub(crate) fn coded_stream_error(
    backend: &str,
    code: &str,
    message: String,
    rate_limited: &[&str],
    overloaded: &[&str],
) -> LlmError {
    if rate_limited.contains(&code) {
        return LlmError::RateLimited {
            backend: backend.into(),
            retry_after: None,
        };
    }
    if overloaded.contains(&code) {
        return LlmError::Overloaded {
            backend: backend.into(),
            retry_after: None,
        };
    }
    LlmError::StreamError {
        backend: backend.into(),
        message: if code.is_empty() {
            message
        } else {
            format!("{code}: {message}")
        },
    }
}

#[cfg(test)]
mod image_tests {
    use super::*;

    fn server(body: &str) -> LlmError {
        LlmError::Server {
            backend: "llama-server".into(),
            status: 500,
            body: body.into(),
        }
    }

    fn rejected(message: &str) -> LlmError {
        LlmError::Rejected {
            backend: "x".into(),
            status: 400,
            message: message.into(),
        }
    }

    #[test]
    fn image_refusals_from_many_servers_are_one_class() {
        let refusals = [
            server(
                "image input is not supported - hint: if this is unexpected, you may need to provide the mmproj",
            ),
            server(
                "{\"error\":{\"code\":500,\"message\":\"Image input is not supported by this server\",\"type\":\"server_error\"}}",
            ),
            server("multimodal is not supported by this model"),
            server("this model is missing data required for image input"),
            rejected("Invalid content type. image_url is only supported by certain models."),
            rejected("At most 0 image(s) may be provided in one request."),
            rejected("Qwen/Qwen2.5-0.5B-Instruct is not a multimodal model"),
            rejected("Model does not support images. Please use a model that does."),
            rejected("vision is not supported by this model"),
            server("this server does not support multimodal input"),
            server("mmproj not loaded: the model cannot read images"),
            rejected("Model does not support multimodal inputs"),
            rejected("images are not supported"),
            LlmError::StreamError {
                backend: "x".into(),
                message: "the model does not support image input".into(),
            },
        ];
        for e in &refusals {
            assert!(e.is_image_refusal(), "{e}");
            assert!(!e.is_retryable(), "{e}");
        }
        for e in [
            server("out of memory"),
            server("failed to load model"),
            rejected("the request exceeds the available context size; image tokens count too"),
            rejected("unsupported parameter: id_slot"),
            LlmError::Cancelled,
        ] {
            assert!(!e.is_image_refusal(), "{e}");
        }
        assert!(server("out of memory").is_retryable());
    }
}
