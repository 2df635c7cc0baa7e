//! What an OpenAI-compatible server said, asked once and kept
//! (`server_cache.rs`): the model list, llama-server's `/props`, and the
//! server's token counts (`/apply-template` + `/tokenize`).
//!
//! Invariants:
//! - On the path of a turn a kept answer is used as is; a missing one is
//!   asked for and kept. `list_models` (the picker, `navi models`) always
//!   asks, and keeps what it got.
//! - A `/props` that fails to arrive (timeout, refused connection) is not
//!   kept as "not llama-server"; an HTTP error or a body that is no
//!   `/props` answer is.
//! - Only what parsing and the identity need of `/props` is kept (the chat
//!   template as a hash).
use super::OpenAiBackend;
use crate::llm::llama::{self, ServerProps};
use crate::llm::server_cache::{self, Entry};
use crate::llm::tokenize::{
    FRAMING_TOKENS, before_probe, plain_text, post_json, token_count, tokenize_body, with_probe,
};
use crate::llm::{ChatRequest, LlmError};
use serde_json::{Map, Value, json};
use std::sync::atomic::Ordering;

/// The parts of a `/props` answer that are kept.
fn trim_props(v: &Value) -> Value {
    let mut out = Map::new();
    for k in [
        "n_ctx",
        "total_slots",
        "modalities",
        "chat_template_caps",
        "build_info",
        "model_path",
        "model_alias",
    ] {
        if let Some(x) = v.get(k) {
            out.insert(k.into(), x.clone());
        }
    }
    if let Some(n) = v.pointer("/default_generation_settings/n_ctx") {
        out.insert("default_generation_settings".into(), json!({"n_ctx": n}));
    }
    if let Some(t) = v.get("chat_template").and_then(Value::as_str) {
        out.insert("chat_template_hash".into(), json!(server_cache::hash(t)));
    }
    Value::Object(out)
}

/// The server's identity: its model entries without the fields that change
/// per request (`created`), and the kept `/props`.
pub(super) fn identity(models: Option<&[Value]>, props: Option<&Value>) -> String {
    let models: Vec<Value> = models
        .unwrap_or_default()
        .iter()
        .map(|m| {
            let mut m = m.clone();
            if let Some(o) = m.as_object_mut() {
                o.remove("created");
            }
            m
        })
        .collect();
    server_cache::hash(&json!({"models": models, "props": props}).to_string())
}

fn renew_identity(e: &mut Entry) {
    e.identity = identity(e.models.as_deref(), e.props.as_ref());
}

impl OpenAiBackend {
    pub(super) fn kept(&self) -> Option<Entry> {
        server_cache::get()?.entry(&self.target.base)
    }

    fn keep(&self, change: impl FnOnce(&mut Entry)) {
        if let Some(c) = server_cache::get() {
            c.update(&self.target.base, |e| {
                let before = e.identity.clone();
                change(e);
                renew_identity(e);
                if e.identity != before {
                    // Counts of another server (or model file) are no use.
                    e.counts.clear();
                    e.rereads_answers.clear();
                }
            });
        }
    }

    /// `/props` as kept (`Value::Null`: the server has none), else asked.
    /// `Err` when the server could not be reached.
    async fn fetch_props(&self) -> Result<Value, ()> {
        let rb = self.root_request(reqwest::Method::GET, "/props");
        let resp = rb.send().await.map_err(|_| ())?;
        if !resp.status().is_success() {
            return Ok(Value::Null);
        }
        let v: Value = resp.json().await.unwrap_or(Value::Null);
        Ok(match ServerProps::parse(&v) {
            Some(_) => trim_props(&v),
            None => Value::Null,
        })
    }

    /// llama-server's `/props`, from the cache or asked on first use and
    /// remembered; `None` for servers that do not have it.
    pub(crate) async fn server_props(&self) -> Option<ServerProps> {
        self.props
            .get_or_init(|| async {
                if let Some(p) = self.kept().and_then(|e| e.props) {
                    return ServerProps::parse(&p);
                }
                let p = self.fetch_props().await.ok()?;
                let parsed = ServerProps::parse(&p);
                self.keep(|e| e.props = Some(p));
                parsed
            })
            .await
            .clone()
    }

    /// `/props` asked now (and kept); `None`: not llama-server or not
    /// reachable.
    pub(super) async fn fresh_props(&self) -> Option<ServerProps> {
        let p = self.fetch_props().await.ok()?;
        let parsed = ServerProps::parse(&p);
        self.keep(|e| e.props = Some(p));
        parsed
    }

    /// The model list, from the cache or asked (and kept).
    pub(super) async fn known_models_json(&self) -> Result<Vec<Value>, LlmError> {
        if let Some(m) = self.kept().and_then(|e| e.models) {
            return Ok(m);
        }
        self.models_json().await
    }

    /// The model list, asked now and kept.
    pub(super) async fn models_json(&self) -> Result<Vec<Value>, LlmError> {
        let data = self.fetch_models_json().await?;
        let kept = data.clone();
        self.keep(|e| e.models = Some(kept));
        Ok(data)
    }

    /// The server's count of `req`, kept by the request's hash.
    pub(super) async fn counted(&self, req: &ChatRequest) -> Option<u64> {
        let text_tools = self.server_props().await?.tools == Some(false);
        let body = super::chat_body(req, false, text_tools);
        let key = server_cache::hash(&body.to_string());
        if let Some(n) = self.kept().and_then(|e| e.count(&key)) {
            return Some(n);
        }
        let n = self.count_with_server(&body).await?;
        if let Some(c) = server_cache::get() {
            c.put_count(&self.target.base, key, n);
        }
        Some(n)
    }

    /// llama-server's count of a chat body's prompt (see `tokenize.rs`).
    async fn count_with_server(&self, body: &Value) -> Option<u64> {
        if self.no_tokenize.load(Ordering::Relaxed) {
            return None;
        }
        let root = llama::root_of(&self.target.base).to_string();
        let mut probed = body.clone();
        let probe = with_probe(&mut probed);
        let url = format!("{root}/apply-template");
        let templated = post_json(&self.client, url, &self.api_key, &probed)
            .await
            .and_then(|v| v.get("prompt").and_then(Value::as_str).map(String::from));
        let (text, framing) = match templated {
            Some(p) if probe => (before_probe(&p).to_string(), 0),
            Some(p) => (p, 0),
            None => {
                let (t, n) = plain_text(body);
                (t, n * FRAMING_TOKENS)
            }
        };
        let url = format!("{root}/tokenize");
        let counted = post_json(&self.client, url, &self.api_key, &tokenize_body(&text))
            .await
            .as_ref()
            .and_then(token_count);
        if counted.is_none() {
            tracing::warn!("{root}/tokenize gave no count; token figures are estimated");
            self.no_tokenize.store(true, Ordering::Relaxed);
        }
        counted.map(|n| n + framing)
    }

    /// Checks a kept entry that is due: the same identity renews it,
    /// another replaces it. Nothing happens without an entry or when the
    /// server cannot be reached.
    pub(super) async fn check_kept(&self) {
        let Some(cache) = server_cache::get() else {
            return;
        };
        let Some(old) = cache.entry(&self.target.base).filter(Entry::due) else {
            return;
        };
        let Ok(models) = self.fetch_models_json().await else {
            return;
        };
        let props = match old.props {
            Some(_) => match self.fetch_props().await {
                Ok(p) => Some(p),
                Err(()) => return,
            },
            None => None,
        };
        let id = identity(Some(&models), props.as_ref());
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
                    models: Some(models),
                    props,
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
