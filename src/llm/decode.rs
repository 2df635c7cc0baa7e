//! Turns a stream of wire frames (byte pieces for NDJSON, SSE events for
//! OpenAI) into a stream of [`ChatChunk`]s through a pure [`FrameDecoder`].
//!
//! Invariants:
//! - The stream ends right after it yielded `Done` or an error; the inner
//!   stream (the HTTP body) is dropped at that moment, not later.
//! - Chunks decoded before an error are yielded before the error.
//! - Transport failures arrive already mapped to [`LlmError`] by the caller
//!   (usually `Disconnected`) and are passed through as the final item.

use super::{ChatChunk, LlmError};
use futures_util::Stream;
use std::collections::VecDeque;
use std::pin::Pin;
use std::task::{Context, Poll};

/// A push decoder: frames in, chunks out. Pure, no I/O.
pub(crate) trait FrameDecoder<F> {
    /// Decodes one frame, appending complete chunks to `out`. On error, the
    /// chunks decoded before the failure are already in `out`.
    fn feed(&mut self, frame: F, out: &mut Vec<ChatChunk>) -> Result<(), LlmError>;
    /// The input ended: flush what is pending or report truncation.
    fn finish(&mut self, out: &mut Vec<ChatChunk>) -> Result<(), LlmError>;
}

/// A unique id for a tool call the server sent without one. Random, not a
/// counter: a session is continued by many navi processes, and ids from two
/// of them must never collide in its history.
pub(crate) fn generated_call_id() -> String {
    format!("call_{}", &uuid::Uuid::new_v4().simple().to_string()[..16])
}

/// Stream adapter: see the module docs.
pub struct DecodeStream<S, D> {
    inner: Option<Pin<Box<S>>>,
    decoder: D,
    scratch: Vec<ChatChunk>,
    pending: VecDeque<Result<ChatChunk, LlmError>>,
    ended: bool,
}

impl<S, D> DecodeStream<S, D> {
    pub(crate) fn new(inner: S, decoder: D) -> Self {
        DecodeStream {
            inner: Some(Box::pin(inner)),
            decoder,
            scratch: Vec::new(),
            pending: VecDeque::new(),
            ended: false,
        }
    }

    fn queue(&mut self, result: Result<(), LlmError>) {
        self.pending.extend(self.scratch.drain(..).map(Ok));
        if let Err(e) = result {
            self.pending.push_back(Err(e));
        }
    }
}

impl<S, D, F> Stream for DecodeStream<S, D>
where
    S: Stream<Item = Result<F, LlmError>>,
    D: FrameDecoder<F> + Unpin,
{
    type Item = Result<ChatChunk, LlmError>;

    fn poll_next(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        let this = self.get_mut();
        loop {
            if let Some(item) = this.pending.pop_front() {
                if matches!(item, Err(_) | Ok(ChatChunk::Done { .. })) {
                    // Terminal: drop the body now so the server stops.
                    this.inner = None;
                    this.pending.clear();
                    this.ended = true;
                }
                return Poll::Ready(Some(item));
            }
            if this.ended {
                this.inner = None;
                return Poll::Ready(None);
            }
            let Some(inner) = this.inner.as_mut() else {
                this.ended = true;
                continue;
            };
            match inner.as_mut().poll_next(cx) {
                Poll::Pending => return Poll::Pending,
                Poll::Ready(Some(Ok(frame))) => {
                    let r = this.decoder.feed(frame, &mut this.scratch);
                    this.queue(r);
                }
                Poll::Ready(Some(Err(e))) => {
                    this.inner = None;
                    this.pending.push_back(Err(e));
                }
                Poll::Ready(None) => {
                    // Drained by the next turns of the loop; the stream ends
                    // when a terminal item is returned or the queue runs dry.
                    this.inner = None;
                    let r = this.decoder.finish(&mut this.scratch);
                    this.queue(r);
                }
            }
        }
    }
}
