//! Keeping llama-server's prompt cache warm for models that lose the
//! previous answer (issue 36 item 4).
//!
//! llama-server cannot roll a sliding-window (or recurrent) model's cache
//! back to an arbitrary point: it keeps checkpoints made while it read a
//! prompt and restores the last one the next prompt shares. The answer it
//! generated is never read as a prompt, so the next call re-reads that
//! whole answer (with `--swa-full` it does not). Re-sending the
//! conversation right after the answer, with an empty user message, makes
//! the server read the answer then and checkpoint at the start of the
//! user's turn; the next real message is then all that is new.
//!
//! Invariants:
//! - Only servers with llama-server's `/props` are ever warmed: a hosted
//!   API's cache works differently and a warm call would be billed.
//! - What was seen is kept per model, in memory and in the server cache
//!   (`server_cache.rs`, dropped with the server's identity).
//! - A warm call generates one token at most and its answer is dropped;
//!   a failure is only logged.
use super::OpenAiBackend;
use crate::llm::{ChatChunk, ChatRequest, LlmBackend, server_cache};
use futures_util::StreamExt;

impl OpenAiBackend {
    /// Records whether the server kept the previous answer for `model`.
    pub(super) async fn note_reuse(&self, model: &str, reused: bool) {
        if self.server_props().await.is_none() {
            return;
        }
        let changed = match self.rereads.lock() {
            Ok(mut set) if reused => set.remove(model),
            Ok(mut set) => set.insert(model.to_string()),
            Err(_) => false,
        };
        let kept = self
            .kept()
            .is_some_and(|e| e.rereads_answers.contains(model));
        if changed || kept == reused {
            tracing::info!(
                "{} {} the previous answer of {model} on the next call",
                self.target.base,
                if reused { "keeps" } else { "re-reads" }
            );
            if let Some(c) = server_cache::get() {
                c.update(&self.target.base, |e| {
                    if reused {
                        e.rereads_answers.remove(model);
                    } else {
                        e.rereads_answers.insert(model.to_string());
                    }
                });
            }
        }
    }

    /// Whether `model` was seen to lose the previous answer here.
    pub(super) fn rereads(&self, model: &str) -> bool {
        let mem = self.rereads.lock().is_ok_and(|s| s.contains(model));
        mem || self
            .kept()
            .is_some_and(|e| e.rereads_answers.contains(model))
    }

    /// Sends `req` capped at one token and drains the answer.
    pub(super) async fn warm_cache(&self, req: &ChatRequest) {
        let mut req = req.clone();
        req.max_tokens = Some(1);
        match self.stream_chat(&req).await {
            Ok(mut stream) => {
                while let Some(item) = stream.next().await {
                    match item {
                        Ok(ChatChunk::Done { .. }) => break,
                        Ok(_) => {}
                        Err(e) => {
                            tracing::info!("warming the prompt cache failed: {e}");
                            break;
                        }
                    }
                }
            }
            Err(e) => tracing::info!("warming the prompt cache failed: {e}"),
        }
    }
}
