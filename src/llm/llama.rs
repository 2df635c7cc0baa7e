//! llama.cpp `llama-server` extras on top of the OpenAI-compatible API:
//! `GET /props` (the server's real window, slot count and input
//! modalities), `cache_prompt` and `id_slot` pinning.
//!
//! Invariants:
//! - `/props` is read at most once per backend, and only when the window is
//!   first needed (never at start-up). A server without it (vLLM, LM Studio,
//!   Ollama's `/v1`) is simply "not llama-server": no extra fields are sent.
//! - The window is the per-slot context from `/props`
//!   (`default_generation_settings.n_ctx`, else top-level `n_ctx`), never
//!   `/v1/models`' `n_ctx_train`, which is the training length.
//! - `modalities.vision` says whether the loaded model takes images (a
//!   model started without its `--mmproj` does not); absent means unknown.
//! - A session is pinned to slot `fnv1a(session) % total_slots` only when the
//!   server has two or more slots; the same session always gets the same slot.
use serde_json::{Map, Value, json};

/// What `GET /props` told about the server.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ServerProps {
    /// Tokens one slot can hold (the usable window per request).
    pub(crate) n_ctx: Option<u64>,
    pub(crate) total_slots: Option<u32>,
    /// `modalities.vision`: the loaded model takes images (`None`: not said).
    pub(crate) vision: Option<bool>,
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
        if n_ctx.is_none() && total_slots.is_none() && vision.is_none() {
            return None;
        }
        Some(ServerProps {
            n_ctx,
            total_slots,
            vision,
        })
    }

    /// The slot a session is pinned to, when the server has several.
    pub(crate) fn slot_for(&self, key: &str) -> Option<u32> {
        let slots = self.total_slots.filter(|n| *n >= 2)?;
        Some((fnv1a(key.as_bytes()) % u64::from(slots)) as u32)
    }
}

/// FNV-1a, 64 bit: stable across runs and Rust versions (unlike `DefaultHasher`).
pub(crate) fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

/// The server's root URL for `/props`: the base without a trailing `/v1`.
pub(crate) fn root_of(base: &str) -> &str {
    base.strip_suffix("/v1").unwrap_or(base)
}

/// Adds `cache_prompt: true` and, when pinned, `id_slot` to a chat body.
pub(crate) fn add_fields(
    body: &mut Value,
    props: &ServerProps,
    cache_key: Option<&str>,
    slot: bool,
) {
    let Some(obj) = body.as_object_mut() else {
        return;
    };
    let obj: &mut Map<String, Value> = obj;
    obj.insert("cache_prompt".into(), json!(true));
    if slot && let Some(id) = cache_key.and_then(|k| props.slot_for(k)) {
        obj.insert("id_slot".into(), json!(id));
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
        assert!(ServerProps::parse(&json!({"error": "nope"})).is_none());
        assert!(ServerProps::parse(&json!([1])).is_none());
    }

    #[test]
    fn a_session_keeps_its_slot() {
        let p = ServerProps {
            total_slots: Some(4),
            ..ServerProps::default()
        };
        let a = p.slot_for("session-a").unwrap();
        assert!(a < 4);
        assert_eq!(p.slot_for("session-a"), Some(a));
        let one = ServerProps {
            total_slots: Some(1),
            ..ServerProps::default()
        };
        assert_eq!(one.slot_for("session-a"), None);
        assert_eq!(root_of("http://h:8080/v1"), "http://h:8080");
    }
}
