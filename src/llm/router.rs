//! One backend over every provider: a model named `provider/model` goes to
//! that provider's backend (with `model` as the server knows it), a bare
//! name to the default provider. The rest of Navi holds one
//! [`LlmBackend`] and never asks which provider is behind a model.
//!
//! Invariants:
//! - Nothing is built or asked at construction: a provider's backend (its
//!   HTTP clients) is built the first time a model of it is used, and kept.
//! - A provider that needs a key and has none fails with
//!   [`LlmError::NoKey`] before anything is sent.
//! - `x/y` where `x` is no provider is a model name of the default provider
//!   only when that provider lists it (Ollama's `hf.co/…`); otherwise it is
//!   [`LlmError::UnknownProvider`].
//! - Model lists (the picker) are asked of every provider in use at once,
//!   each with [`LIST_TIMEOUT`], and kept for [`LIST_TTL`]; the default
//!   provider's models keep their bare names, the others' are
//!   `provider/model`.
use super::descriptor::{BackendDescriptor, descriptor};
use super::endpoint::Endpoint;
use super::{ChatRequest, ChunkStream, ImageInput, LlmBackend, LlmError, ModelInfo};
use crate::config::{BackendKind, Config, Provider};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long one provider may take to list its models.
pub(crate) const LIST_TIMEOUT: Duration = Duration::from_secs(5);
/// How long a model list is reused.
pub(crate) const LIST_TTL: Duration = Duration::from_secs(120);
/// How long a failure to list is remembered (the server may come up).
const FAILED_TTL: Duration = Duration::from_secs(10);

type Listed = Result<Vec<ModelInfo>, LlmError>;

pub struct Router {
    /// The provider bare names go to, and the protocol spoken to it.
    default: String,
    default_kind: BackendKind,
    default_base: String,
    providers: Vec<(Provider, Endpoint)>,
    built: Mutex<HashMap<String, Arc<dyn LlmBackend>>>,
    lists: Mutex<HashMap<String, (Instant, Listed)>>,
}

impl Router {
    /// The providers of `config`; no I/O.
    pub(crate) fn new(config: &Config) -> Self {
        let (default, default_kind) = config.default_provider();
        let providers: Vec<(Provider, Endpoint)> = config
            .providers()
            .into_iter()
            .map(|p| {
                let e = Endpoint::of(&p, config);
                (p, e)
            })
            .collect();
        let default_base = providers
            .iter()
            .find(|(p, _)| p.name == default)
            .map(|(_, e)| {
                super::http::normalise_base(&e.base_url).unwrap_or_else(|_| e.base_url.clone())
            })
            .unwrap_or_default();
        Router {
            default,
            default_kind,
            default_base,
            providers,
            built: Mutex::new(HashMap::new()),
            lists: Mutex::new(HashMap::new()),
        }
    }

    fn find(&self, name: &str) -> Option<&(Provider, Endpoint)> {
        let canonical = crate::config::providers::preset(name).map_or(name, |p| p.name);
        self.providers.iter().find(|(p, _)| p.name == canonical)
    }

    /// `provider/model` → (that provider, `model`); anything else →
    /// (`None`, the whole name).
    fn split<'a>(&self, model: &'a str) -> (Option<&(Provider, Endpoint)>, &'a str) {
        match model.split_once('/') {
            Some((p, rest)) if !rest.is_empty() => match self.find(p) {
                Some(found) => (Some(found), rest),
                None => (None, model),
            },
            _ => (None, model),
        }
    }

    fn kind_of(&self, p: &Provider) -> BackendKind {
        if p.name == self.default {
            self.default_kind
        } else {
            p.protocol
        }
    }

    /// The backend of provider `name`, built on first use.
    fn backend(&self, name: &str) -> Result<Arc<dyn LlmBackend>, LlmError> {
        let Some((p, e)) = self.find(name) else {
            return Err(self.unknown(name, name));
        };
        if let Some(b) = self.built.lock().ok().and_then(|m| m.get(&p.name).cloned()) {
            return Ok(b);
        }
        let b = (descriptor(self.kind_of(p)).build)(e)?;
        if let Ok(mut m) = self.built.lock() {
            m.insert(p.name.clone(), b.clone());
        }
        Ok(b)
    }

    fn unknown(&self, provider: &str, model: &str) -> LlmError {
        LlmError::UnknownProvider {
            note: String::new(),
            provider: provider.to_string(),
            model: model.to_string(),
            known: self
                .providers
                .iter()
                .map(|(p, _)| p.name.as_str())
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    /// The provider and the name its server knows for `model`.
    async fn route(&self, model: &str) -> Result<(String, String), LlmError> {
        if let (Some((p, e)), rest) = self.split(model) {
            e.check_key()?;
            return Ok((p.name.clone(), rest.to_string()));
        }
        if let Some((prefix, _)) = model.split_once('/') {
            // Not a provider: a model of the default one, if it has it.
            match self.listed(&self.default, false).await {
                Ok(list)
                    if list
                        .iter()
                        .any(|m| super::select::same_model(model, &m.name)) => {}
                Ok(_) => return Err(self.unknown(prefix, model)),
                Err(e) => {
                    let mut err = self.unknown(prefix, model);
                    if let LlmError::UnknownProvider { note, .. } = &mut err {
                        *note = format!(
                            " (nor could {} say whether it has a model of that name: {e})",
                            self.default
                        );
                    }
                    return Err(err);
                }
            }
        }
        if let Some((_, e)) = self.find(&self.default) {
            e.check_key()?;
        }
        Ok((self.default.clone(), model.to_string()))
    }

    /// The full name of `model` of `provider` (bare for the default one).
    fn full_name(&self, provider: &str, model: &str) -> String {
        if provider == self.default {
            model.to_string()
        } else {
            format!("{provider}/{model}")
        }
    }

    /// Provider `name`'s models (as its server names them), cached in the
    /// process; `fresh`: asked of the server (the picker), else as the
    /// backend keeps them across runs (a turn).
    async fn listed(&self, name: &str, fresh: bool) -> Listed {
        let recent = self.lists.lock().ok().and_then(|m| {
            m.get(name)
                .filter(|(at, l)| at.elapsed() < if l.is_ok() { LIST_TTL } else { FAILED_TTL })
                .map(|(_, l)| l.clone())
        });
        if let Some(l) = recent {
            return l;
        }
        let result = match self.find(name).map(|(_, e)| e.check_key()) {
            Some(Err(e)) => Err(e),
            _ => match self.backend(name) {
                Err(e) => Err(e),
                Ok(b) => match tokio::time::timeout(LIST_TIMEOUT, async {
                    if fresh {
                        b.list_models().await
                    } else {
                        b.find_models(&[]).await
                    }
                })
                .await
                {
                    Ok(r) => r,
                    Err(_) => Err(LlmError::Disconnected {
                        backend: name.to_string(),
                        reason: format!(
                            "no model list within {}s from {}",
                            LIST_TIMEOUT.as_secs(),
                            b.base_url()
                        ),
                    }),
                },
            },
        };
        if let Ok(mut m) = self.lists.lock() {
            m.insert(name.to_string(), (Instant::now(), result.clone()));
        }
        result
    }

    /// Each of `providers`' models, listed at once, with full names.
    async fn each(&self, providers: &[String], fresh: bool) -> Vec<(String, Listed)> {
        let lists =
            futures_util::future::join_all(providers.iter().map(|p| self.listed(p, fresh))).await;
        providers
            .iter()
            .zip(lists)
            .map(|(p, l)| {
                let full = l.map(|models| {
                    models
                        .into_iter()
                        .map(|m| ModelInfo {
                            name: self.full_name(p, &m.name),
                            ..m
                        })
                        .collect()
                });
                (p.clone(), full)
            })
            .collect()
    }

    /// The models of `providers` together. Fails only when every one of
    /// them failed (with the first one's error).
    async fn list_of(
        &self,
        providers: Vec<String>,
        fresh: bool,
    ) -> Result<Vec<ModelInfo>, LlmError> {
        let mut out = Vec::new();
        let mut first_err = None;
        let mut any_ok = false;
        for (p, l) in self.each(&providers, fresh).await {
            match l {
                Ok(models) => {
                    any_ok = true;
                    out.extend(models);
                }
                Err(e) => {
                    tracing::warn!("models of {p}: {e}");
                    first_err.get_or_insert(e);
                }
            }
        }
        match first_err {
            Some(e) if !any_ok => Err(e),
            _ => Ok(out),
        }
    }

    /// The providers the picker asks: the default one, those with a
    /// `[providers]` table, and hosted ones with a key.
    fn in_use(&self) -> Vec<String> {
        self.providers
            .iter()
            .filter(|(p, e)| {
                p.name == self.default || p.configured || (!p.local && e.key().is_some())
            })
            .map(|(p, _)| p.name.clone())
            .collect()
    }

    fn with_model(req: &ChatRequest, model: String) -> ChatRequest {
        ChatRequest {
            model,
            ..req.clone()
        }
    }
}

#[async_trait::async_trait]
impl LlmBackend for Router {
    fn kind(&self) -> BackendKind {
        self.default_kind
    }

    fn descriptor(&self) -> &'static BackendDescriptor {
        descriptor(self.default_kind)
    }

    fn descriptor_for(&self, model: &str) -> &'static BackendDescriptor {
        match self.split(model) {
            (Some((p, _)), _) => descriptor(self.kind_of(p)),
            _ => self.descriptor(),
        }
    }

    fn provider_of(&self, model: &str) -> String {
        match self.split(model) {
            (Some((p, _)), _) if p.name != self.default => p.name.clone(),
            _ => self.default_kind.as_str().to_string(),
        }
    }

    fn base_url(&self) -> &str {
        &self.default_base
    }

    async fn stream_chat(&self, req: &ChatRequest) -> Result<ChunkStream, LlmError> {
        let (p, model) = self.route(&req.model).await?;
        let b = self.backend(&p)?;
        if model == req.model {
            b.stream_chat(req).await
        } else {
            b.stream_chat(&Self::with_model(req, model)).await
        }
    }

    async fn list_models(&self) -> Result<Vec<ModelInfo>, LlmError> {
        self.list_of(self.in_use(), true).await
    }

    async fn list_by_provider(&self) -> Vec<(String, Listed)> {
        self.each(&self.in_use(), true).await
    }

    async fn find_models(&self, wanted: &[String]) -> Result<Vec<ModelInfo>, LlmError> {
        let mut providers: Vec<String> = Vec::new();
        for w in wanted {
            let p = match self.split(w) {
                (Some((p, _)), _) => p.name.clone(),
                _ => self.default.clone(),
            };
            if !providers.contains(&p) {
                providers.push(p);
            }
        }
        if providers.is_empty() {
            providers.push(self.default.clone());
        }
        self.list_of(providers, false).await
    }

    async fn model_info(&self, model: &str) -> Result<ModelInfo, LlmError> {
        let (p, name) = self.route(model).await?;
        let info = self.backend(&p)?.model_info(&name).await?;
        Ok(ModelInfo {
            name: model.to_string(),
            ..info
        })
    }

    async fn image_input(&self, model: &str) -> Option<ImageInput> {
        let (p, name) = self.route(model).await.ok()?;
        self.backend(&p).ok()?.image_input(&name).await
    }

    async fn model_traits(&self, model: &str) -> super::size::ModelTraits {
        let routed = self.route(model).await.ok();
        match routed.and_then(|(p, name)| Some((self.backend(&p).ok()?, name))) {
            Some((b, name)) => b.model_traits(&name).await,
            None => super::size::ModelTraits {
                params: super::size::params_from_name(model),
                template_tools: None,
            },
        }
    }

    async fn revalidate(&self, model: &str) {
        if let Ok((p, name)) = self.route(model).await
            && let Ok(b) = self.backend(&p)
        {
            b.revalidate(&name).await;
        }
    }

    async fn note_answer_reuse(&self, model: &str, reused: bool) {
        if let Ok((p, name)) = self.route(model).await
            && let Ok(b) = self.backend(&p)
        {
            b.note_answer_reuse(&name, reused).await;
        }
    }

    async fn rereads_answers(&self, model: &str) -> bool {
        match self.route(model).await {
            Ok((p, name)) => match self.backend(&p) {
                Ok(b) => b.rereads_answers(&name).await,
                Err(_) => false,
            },
            Err(_) => false,
        }
    }

    async fn warm(&self, req: &ChatRequest) {
        if let Ok((p, model)) = self.route(&req.model).await
            && let Ok(b) = self.backend(&p)
        {
            b.warm(&Self::with_model(req, model)).await;
        }
    }

    async fn save_slot(&self, model: &str, name: &str) {
        if let Ok((p, m)) = self.route(model).await
            && let Ok(b) = self.backend(&p)
        {
            b.save_slot(&m, name).await;
        }
    }

    async fn restore_slot(&self, model: &str, name: &str) -> Option<u32> {
        let (p, m) = self.route(model).await.ok()?;
        self.backend(&p).ok()?.restore_slot(&m, name).await
    }

    async fn count_prompt(&self, req: &ChatRequest) -> Option<u64> {
        let (p, model) = self.route(&req.model).await.ok()?;
        self.backend(&p)
            .ok()?
            .count_prompt(&Self::with_model(req, model))
            .await
    }
}

#[cfg(test)]
#[path = "router_tests.rs"]
mod tests;
