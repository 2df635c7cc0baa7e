//! What Navi knows about a kind of backend beyond its wire protocol: its
//! name in messages, where its address is configured, how requests to it
//! are sized, and how to build it.
//!
//! Invariants:
//! - Each backend file (`ollama.rs`, `openai.rs`) defines one `DESCRIPTOR`.
//! - [`descriptor`] is the only place outside `config/` that matches on a
//!   [`BackendKind`]; everything else asks the descriptor (or the backend,
//!   through [`LlmBackend::descriptor`]), so a new backend is one new file,
//!   one `BackendKind` variant and one arm there.

use super::endpoint::Endpoint;
use super::{LlmBackend, LlmError, anthropic, ollama, openai, responses};
use crate::config::BackendKind;
use std::sync::Arc;

/// One kind of backend, as the rest of the crate sees it.
#[derive(Debug)]
pub struct BackendDescriptor {
    pub(crate) kind: BackendKind,
    /// Name in messages: "Ollama".
    pub(crate) display_name: &'static str,
    /// The environment variable that sets the server's address.
    pub(crate) url_env: &'static str,
    /// The `[llm]` key that sets the server's address.
    pub(crate) url_key: &'static str,
    /// The question to ask first when the server cannot be reached.
    pub(crate) unreachable_check: &'static str,
    /// What the address must point at ("the Ollama server").
    pub(crate) url_target: &'static str,
    /// The path this API's base URLs usually end in, and the note a 404 on
    /// a base URL without it adds.
    pub(crate) usual_base_suffix: Option<(&'static str, &'static str)>,
    /// How to get a model the server does not have.
    pub(crate) missing_model_hint: fn(&str) -> String,
    /// The server uses only as much context as each request asks for
    /// (`num_ctx`): the window the agent plans with is capped by
    /// `[llm].num_ctx` and sent with every request.
    pub(crate) window_set_per_request: bool,
    /// Builds the backend for one provider's endpoint. No network I/O.
    pub(crate) build: fn(&Endpoint) -> Result<Arc<dyn LlmBackend>, LlmError>,
}

impl BackendDescriptor {
    /// "set OLLAMA_HOST or [llm].ollama_host"
    pub(crate) fn set_url_hint(&self) -> String {
        if self.url_key.starts_with('[') {
            format!("set {} or {}", self.url_env, self.url_key)
        } else {
            format!("set {} or [llm].{}", self.url_env, self.url_key)
        }
    }

    /// What to do when the server cannot be reached.
    pub(crate) fn unreachable_hint(&self) -> String {
        format!("{} {}", self.unreachable_check, self.set_url_hint())
    }

    /// What to do when the address answers with something that is not the API.
    pub(crate) fn not_an_api_hint(&self) -> String {
        format!("{} to {}", self.set_url_hint(), self.url_target)
    }

    /// The window to plan with for a model whose full window is `window`.
    pub(crate) fn planned_window(&self, window: u64, num_ctx: u32) -> u64 {
        if self.window_set_per_request {
            window.min(u64::from(num_ctx))
        } else {
            window
        }
    }

    /// `num_ctx` to send: the planned window (capped by `[llm].num_ctx`)
    /// where the server sizes its context per request, else `[llm].num_ctx`.
    pub(crate) fn num_ctx(&self, planned_window: u64, num_ctx: u32) -> u32 {
        if self.window_set_per_request && planned_window > 0 {
            u32::try_from(planned_window)
                .unwrap_or(num_ctx)
                .min(num_ctx)
        } else {
            num_ctx
        }
    }
}

/// The descriptor of a backend kind: the one match a new backend adds.
pub(crate) fn descriptor(kind: BackendKind) -> &'static BackendDescriptor {
    match kind {
        BackendKind::Ollama => &ollama::DESCRIPTOR,
        BackendKind::Openai => &openai::DESCRIPTOR,
        BackendKind::Anthropic => &anthropic::DESCRIPTOR,
        BackendKind::Responses => &responses::DESCRIPTOR,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use clap::ValueEnum;

    /// Every kind maps to its own descriptor, and the backend built from it
    /// says it is of that kind and carries the same descriptor.
    #[test]
    fn every_kind_has_its_own_descriptor_and_builds() {
        for kind in BackendKind::value_variants() {
            let d = descriptor(*kind);
            assert_eq!(d.kind, *kind);
            let mut cfg = crate::config::Config::default();
            cfg.llm.backend = *kind;
            let b = super::super::build_backend(&cfg).unwrap();
            assert_eq!(b.kind(), *kind);
            assert!(std::ptr::eq(b.descriptor(), d), "{kind:?}");
            let direct = (d.build)(&Endpoint::plain("p", "http://127.0.0.1:1/v1", "")).unwrap();
            assert_eq!(direct.kind(), *kind);
            assert!(!d.display_name.is_empty() && !d.url_env.is_empty());
        }
    }

    #[test]
    fn hints_name_the_env_var_and_key() {
        let o = descriptor(BackendKind::Ollama);
        assert_eq!(
            o.unreachable_hint(),
            "is \"ollama serve\" running? set OLLAMA_HOST or [llm].ollama_host"
        );
        assert_eq!(
            (o.missing_model_hint)("m"),
            "pull it with \"ollama pull m\""
        );
        let a = descriptor(BackendKind::Openai);
        assert_eq!(
            a.not_an_api_hint(),
            "set OPENAI_BASE_URL or [llm].openai_base_url to the API's base URL"
        );
    }

    /// Only a backend that sizes its context per request has its window
    /// capped by `[llm].num_ctx` and sends it as `num_ctx`.
    #[test]
    fn window_sizing_follows_the_descriptor() {
        let o = descriptor(BackendKind::Ollama);
        assert_eq!(o.planned_window(131_072, 65_536), 65_536);
        assert_eq!(o.planned_window(8_192, 65_536), 8_192);
        assert_eq!(o.num_ctx(8_192, 65_536), 8_192);
        assert_eq!(o.num_ctx(0, 65_536), 65_536, "window unknown yet");
        assert_eq!(o.num_ctx(u64::MAX, 65_536), 65_536);
        let a = descriptor(BackendKind::Openai);
        assert_eq!(a.planned_window(131_072, 65_536), 131_072);
        assert_eq!(a.num_ctx(8_192, 65_536), 65_536);
    }
}
