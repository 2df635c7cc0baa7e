//! What an Ollama server said, asked once and kept (`server_cache.rs`):
//! `/api/tags` and the parts of `/api/show` navi reads. The server's
//! identity is its tags: every model's name, digest and `modified_at`, so
//! a pulled, removed or changed model renews everything kept.
use super::OllamaBackend;
use crate::llm::server_cache::{self, Entry};
use crate::llm::{LlmError, http};
use serde_json::{Map, Value, json};

/// The server's identity from its `/api/tags` entries.
pub(super) fn identity(tags: &[Value]) -> String {
    let parts: Vec<Value> = tags
        .iter()
        .map(|m| {
            json!([
                m.get("name").or_else(|| m.get("model")),
                m.get("digest"),
                m.get("modified_at"),
                m.get("size")
            ])
        })
        .collect();
    server_cache::hash(&Value::Array(parts).to_string())
}

/// The parts of an `/api/show` answer navi reads (its template, license and
/// modelfile are large and unused).
fn trim_show(v: &Value) -> Value {
    let mut out = Map::new();
    for k in ["capabilities", "details"] {
        if let Some(x) = v.get(k) {
            out.insert(k.into(), x.clone());
        }
    }
    if let Some(info) = v.get("model_info").and_then(Value::as_object) {
        let kept: Map<String, Value> = info
            .iter()
            .filter(|(k, _)| k.ends_with(".context_length") || *k == "general.parameter_count")
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect();
        out.insert("model_info".into(), Value::Object(kept));
    }
    Value::Object(out)
}

impl OllamaBackend {
    fn kept(&self) -> Option<Entry> {
        server_cache::get()?.entry(&self.target.base)
    }

    async fn fetch_tags(&self) -> Result<Vec<Value>, LlmError> {
        let req = self.client.get(self.url("/api/tags"));
        let v = http::metadata_json(&self.target, req, "/api/tags", None).await?;
        v.get("models")
            .and_then(Value::as_array)
            .cloned()
            .ok_or_else(|| self.target.protocol("/api/tags has no \"models\" list"))
    }

    /// `/api/tags`, asked now and kept (a changed list drops kept shows).
    pub(super) async fn tags(&self) -> Result<Vec<Value>, LlmError> {
        let tags = self.fetch_tags().await?;
        if let Some(c) = server_cache::get() {
            let id = identity(&tags);
            let kept = tags.clone();
            c.update(&self.target.base, |e| {
                if e.identity != id {
                    e.shows.clear();
                    e.identity = id;
                }
                e.models = Some(kept);
            });
        }
        Ok(tags)
    }

    /// `/api/tags` as kept, else asked.
    pub(super) async fn known_tags(&self) -> Result<Vec<Value>, LlmError> {
        match self.kept().and_then(|e| e.models) {
            Some(t) => Ok(t),
            None => self.tags().await,
        }
    }

    /// `/api/show` for `model` as kept, else asked (and kept); `fresh`:
    /// asked in any case (images about to be sent: a refusal must not rest
    /// on an old answer).
    pub(super) async fn show(&self, model: &str, fresh: bool) -> Result<Value, LlmError> {
        if !fresh && let Some(v) = self.kept().and_then(|mut e| e.shows.remove(model)) {
            return Ok(v);
        }
        let req = self
            .client
            .post(self.url("/api/show"))
            .json(&json!({ "model": model }));
        let v = trim_show(&http::metadata_json(&self.target, req, "/api/show", Some(model)).await?);
        if let Some(c) = server_cache::get() {
            let kept = v.clone();
            c.update(&self.target.base, |e| {
                e.shows.insert(model.to_string(), kept);
            });
        }
        Ok(v)
    }

    /// Checks a kept entry that is due (see `server_cache.rs`).
    pub(super) async fn check_kept(&self) {
        let Some(cache) = server_cache::get() else {
            return;
        };
        if !cache.entry(&self.target.base).is_some_and(|e| e.due()) {
            return;
        }
        let Ok(tags) = self.fetch_tags().await else {
            return;
        };
        let id = identity(&tags);
        cache.update(&self.target.base, |e| {
            e.checked_at = crate::llm::server_cache::now_ms();
            if e.identity != id {
                tracing::info!(
                    "{} changed; what was kept about it is renewed",
                    self.target.base
                );
                *e = Entry {
                    identity: id,
                    checked_at: e.checked_at,
                    models: Some(tags),
                    ..Entry::default()
                };
            }
        });
    }

    /// A chat request the server refused: what was kept may be stale.
    pub(super) fn forget_kept(&self) {
        if let Some(c) = server_cache::get() {
            c.forget(&self.target.base);
        }
    }
}
