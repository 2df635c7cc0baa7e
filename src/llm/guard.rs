//! The stream guard: wraps every chat stream with timeouts, cancellation and
//! retries.
//!
//! Invariants:
//! - The time from sending the request to the first chunk (headers and
//!   prefill included) is bounded by `first_chunk_timeout`; every later gap
//!   by `chunk_timeout`.
//! - Cancellation is honoured while connecting, waiting for headers, during
//!   prefill and between chunks, and while sleeping before a retry.
//! - On cancellation, timeout or error the inner stream (and with it the HTTP
//!   body) is dropped at once, so the server stops generating.
//! - Retries (exponential backoff) happen only for `LlmError::is_retryable`
//!   errors and only before any chunk arrived; a half-streamed answer is
//!   never replayed.
//! - After `Done` or an error, `next()` returns `None`.

use super::{ChatChunk, ChatRequest, ChunkStream, LlmBackend, LlmError};
use futures_util::StreamExt;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Longest `Retry-After` the guard is willing to wait for before a retry.
const MAX_RETRY_WAIT: Duration = Duration::from_secs(60);

#[derive(Clone, Debug, PartialEq)]
pub struct GuardConfig {
    pub first_chunk_timeout: Duration,
    pub chunk_timeout: Duration,
    pub retries: u32,
    pub retry_base: Duration,
}

impl Default for GuardConfig {
    fn default() -> Self {
        GuardConfig {
            first_chunk_timeout: Duration::from_secs(120),
            chunk_timeout: Duration::from_secs(60),
            retries: 2,
            retry_base: Duration::from_millis(500),
        }
    }
}

fn secs_or(s: f64, default: Duration) -> Duration {
    if s > 0.0 {
        Duration::try_from_secs_f64(s).unwrap_or(default)
    } else {
        default
    }
}

impl GuardConfig {
    /// Timeouts from the configuration (non-positive or absurd values fall
    /// back to the defaults), `retries = connect_retries`, 500 ms base delay.
    pub(crate) fn from_config(c: &crate::config::LlmConfig) -> Self {
        let d = GuardConfig::default();
        GuardConfig {
            first_chunk_timeout: secs_or(c.first_chunk_timeout_secs, d.first_chunk_timeout),
            chunk_timeout: secs_or(c.chunk_timeout_secs, d.chunk_timeout),
            retries: c.connect_retries,
            retry_base: d.retry_base,
        }
    }

    /// Delay before retry number `attempt` (0-based): base·2^attempt, or the
    /// server's `Retry-After` when that is longer.
    fn backoff(&self, attempt: u32, err: &LlmError) -> Duration {
        let exp = self
            .retry_base
            .saturating_mul(2u32.saturating_pow(attempt.min(16)));
        match err {
            LlmError::RateLimited {
                retry_after: Some(ra),
                ..
            }
            | LlmError::Overloaded {
                retry_after: Some(ra),
                ..
            } => exp.max(*ra),
            _ => exp,
        }
    }
}

/// Whole seconds for messages; rounds up so 300 ms reads "1s", not "0s".
fn whole_secs(d: Duration) -> u64 {
    d.as_secs() + u64::from(d.subsec_nanos() > 0)
}

/// A chat stream under guard. See the module docs.
pub struct GuardedStream {
    inner: Option<ChunkStream>,
    first: Option<ChatChunk>,
    chunk_timeout: Duration,
    cancel: CancellationToken,
    backend: &'static str,
}

impl GuardedStream {
    /// The next chunk; `None` after `Done` or after an error was returned.
    pub async fn next(&mut self) -> Option<Result<ChatChunk, LlmError>> {
        if let Some(first) = self.first.take() {
            if matches!(first, ChatChunk::Done { .. }) {
                self.inner = None;
            }
            return Some(Ok(first));
        }
        let inner = self.inner.as_mut()?;
        let result = tokio::select! {
            biased;
            _ = self.cancel.cancelled() => Some(Err(LlmError::Cancelled)),
            r = tokio::time::timeout(self.chunk_timeout, inner.next()) => match r {
                Ok(item) => item,
                Err(_) => Some(Err(LlmError::ChunkTimeout {
                    backend: self.backend.to_string(),
                    secs: whole_secs(self.chunk_timeout),
                })),
            },
        };
        let more = matches!(&result, Some(Ok(c)) if !matches!(c, ChatChunk::Done { .. }));
        if !more {
            // Done, error, cancellation, timeout or end: release the body now.
            self.inner = None;
        }
        result
    }
}

/// Sends `req` and waits for the first chunk, retrying transient failures.
/// See the module docs for the rules.
pub async fn open(
    backend: &dyn LlmBackend,
    req: &ChatRequest,
    cfg: &GuardConfig,
    cancel: &CancellationToken,
) -> Result<GuardedStream, LlmError> {
    let name = backend.descriptor().display_name;
    let mut attempt = 0u32;
    loop {
        if cancel.is_cancelled() {
            return Err(LlmError::Cancelled);
        }
        let first = async {
            let mut stream = backend.stream_chat(req).await?;
            match stream.next().await {
                Some(Ok(chunk)) => Ok((stream, chunk)),
                Some(Err(e)) => Err(e),
                None => Err(LlmError::Disconnected {
                    backend: name.to_string(),
                    reason: "the stream ended before any data".into(),
                }),
            }
        };
        let outcome = tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(LlmError::Cancelled),
            r = tokio::time::timeout(cfg.first_chunk_timeout, first) => r,
        };
        let err = match outcome {
            Ok(Ok((stream, chunk))) => {
                return Ok(GuardedStream {
                    inner: Some(stream),
                    first: Some(chunk),
                    chunk_timeout: cfg.chunk_timeout,
                    cancel: cancel.clone(),
                    backend: name,
                });
            }
            Ok(Err(e)) => e,
            Err(_) => {
                return Err(LlmError::FirstChunkTimeout {
                    backend: name.to_string(),
                    secs: whole_secs(cfg.first_chunk_timeout),
                });
            }
        };
        if !err.is_retryable() || attempt >= cfg.retries {
            return Err(err);
        }
        let delay = cfg.backoff(attempt, &err);
        if delay > MAX_RETRY_WAIT {
            return Err(err);
        }
        attempt += 1;
        tracing::warn!(
            "{err}; retrying in {:.1}s (attempt {attempt} of {})",
            delay.as_secs_f64(),
            cfg.retries
        );
        tokio::select! {
            biased;
            _ = cancel.cancelled() => return Err(LlmError::Cancelled),
            _ = tokio::time::sleep(delay) => {}
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use crate::config::LlmConfig;

    #[test]
    fn config_mapping_and_fallbacks() {
        let c = LlmConfig {
            first_chunk_timeout_secs: 0.3,
            chunk_timeout_secs: -1.0,
            connect_retries: 5,
            ..LlmConfig::default()
        };
        let g = GuardConfig::from_config(&c);
        assert_eq!(g.first_chunk_timeout, Duration::from_millis(300));
        assert_eq!(g.chunk_timeout, Duration::from_secs(60));
        assert_eq!(g.retries, 5);
        assert_eq!(g.retry_base, Duration::from_millis(500));
        let g = GuardConfig::from_config(&LlmConfig {
            first_chunk_timeout_secs: f64::NAN,
            ..LlmConfig::default()
        });
        assert_eq!(g.first_chunk_timeout, Duration::from_secs(120));
    }

    #[test]
    fn backoff_doubles_and_honours_retry_after() {
        let g = GuardConfig::default();
        let server = LlmError::Server {
            backend: "x".into(),
            status: 500,
            body: String::new(),
        };
        assert_eq!(g.backoff(0, &server), Duration::from_millis(500));
        assert_eq!(g.backoff(2, &server), Duration::from_secs(2));
        let limited = LlmError::RateLimited {
            backend: "x".into(),
            retry_after: Some(Duration::from_secs(7)),
        };
        assert_eq!(g.backoff(0, &limited), Duration::from_secs(7));
        assert_eq!(whole_secs(Duration::from_millis(300)), 1);
        assert_eq!(whole_secs(Duration::from_secs(60)), 60);
    }
}
