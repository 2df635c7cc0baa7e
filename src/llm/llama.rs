//! llama.cpp `llama-server` extras on top of the OpenAI-compatible API:
//! `GET /props` (the server's real window, slot count and input
//! modalities) and `cache_prompt`.
//!
//! Invariants:
//! - `/props` is read at most once per backend, and only when the window is
//!   first needed (never at start-up). A server without it (vLLM, LM Studio,
//!   Ollama's `/v1`) is simply "not llama-server": no extra fields are sent.
//! - The window is the per-slot context from `/props`
//!   (`default_generation_settings.n_ctx`, else top-level `n_ctx`), never
//!   `/v1/models`' `n_ctx_train`, which is the training length.
//! - No `id_slot` is sent: the server picks the idle slot whose cached
//!   prompt shares the longest prefix with the request, and keeps evicted
//!   prompts in its RAM prompt cache, so a new session on a warm server
//!   evaluates only what is new and two sessions used in turn both keep
//!   their cache. Pinning a session to a slot (tried before) made a new
//!   session land on an empty slot and evaluate everything again; see
//!   docs/performance.md for the measurements.
//! - `modalities.vision` says whether the loaded model takes images (a
//!   model started without its `--mmproj` does not); absent means unknown.
use serde_json::{Value, json};

/// What `GET /props` told about the server.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ServerProps {
    /// Tokens one slot can hold (the usable window per request).
    pub(crate) n_ctx: Option<u64>,
    pub(crate) total_slots: Option<u32>,
    /// `modalities.vision`: the loaded model takes images (`None`: not said).
    pub(crate) vision: Option<bool>,
    /// `chat_template_caps.supports_tools`: the chat template renders tool
    /// calls and results (`Some(false)`: earlier tool turns go as plain
    /// text, see `roles::tools_as_text`).
    pub(crate) tools: Option<bool>,
}

impl ServerProps {
    /// Reads a `/props` answer; `None` when it does not look like one.
    pub(crate) fn parse(v: &Value) -> Option<ServerProps> {
        let obj = v.as_object()?;
        let n_ctx = obj
            .get("default_generation_settings")
            .and_then(|d| d.get("n_ctx"))
            .and_then(Value::as_u64)
            .or_else(|| obj.get("n_ctx").and_then(Value::as_u64))
            .filter(|n| *n > 0);
        let total_slots = obj
            .get("total_slots")
            .and_then(Value::as_u64)
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| *n > 0);
        let vision = obj
            .get("modalities")
            .and_then(|m| m.get("vision"))
            .and_then(Value::as_bool);
        let tools = obj
            .get("chat_template_caps")
            .and_then(|m| m.get("supports_tools"))
            .and_then(Value::as_bool);
        if n_ctx.is_none() && total_slots.is_none() && vision.is_none() && tools.is_none() {
            return None;
        }
        Some(ServerProps {
            n_ctx,
            total_slots,
            vision,
            tools,
        })
    }
}

/// The server's root URL for `/props`: the base without a trailing `/v1`.
pub(crate) fn root_of(base: &str) -> &str {
    base.strip_suffix("/v1").unwrap_or(base)
}

/// Adds `cache_prompt: true` to a chat body (the server reuses the KV
/// cache of the longest matching prefix), and `id_slot` when the request
/// must go to one slot.
pub(crate) fn add_fields(body: &mut Value, slot: Option<u32>) {
    if let Some(obj) = body.as_object_mut() {
        obj.insert("cache_prompt".into(), json!(true));
        if let Some(id) = slot {
            obj.insert("id_slot".into(), json!(id));
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn props_prefer_the_slot_window() {
        let p = ServerProps::parse(&json!({
            "default_generation_settings": {"n_ctx": 4096}, "n_ctx": 16384, "total_slots": 4
        }))
        .unwrap();
        assert_eq!(p.n_ctx, Some(4096));
        assert_eq!(p.total_slots, Some(4));
        assert_eq!(p.vision, None);
        let p = ServerProps::parse(&json!({"n_ctx": 8192})).unwrap();
        assert_eq!(p.n_ctx, Some(8192));
        let p = ServerProps::parse(&json!({"n_ctx": 8192,
            "modalities": {"vision": false, "audio": false}}))
        .unwrap();
        assert_eq!(p.vision, Some(false));
        let p = ServerProps::parse(&json!({"modalities": {"vision": true}})).unwrap();
        assert_eq!(p.vision, Some(true));
        let p =
            ServerProps::parse(&json!({"chat_template_caps": {"supports_tools": false}})).unwrap();
        assert_eq!(p.tools, Some(false));
        assert!(ServerProps::parse(&json!({"error": "nope"})).is_none());
        assert!(ServerProps::parse(&json!([1])).is_none());
    }

    #[test]
    fn the_root_drops_v1_and_no_slot_is_chosen() {
        assert_eq!(root_of("http://h:8080/v1"), "http://h:8080");
        let mut body = json!({"model": "m"});
        add_fields(&mut body, None);
        assert_eq!(body, json!({"model": "m", "cache_prompt": true}));
    }
}
