//! Context-window catalog (`models.toml`, compiled in): used when the server
//! does not report a model's context length. Exact name, then the longest
//! matching prefix, then the longest substring; else the 8192 fallback.
use std::collections::BTreeMap;

pub(crate) const FALLBACK_CONTEXT: u64 = 8192;

#[derive(serde::Deserialize, Default)]
struct Catalog {
    #[serde(default)]
    models: BTreeMap<String, u64>,
}

fn catalog() -> Catalog {
    crate::embedded::get("models.toml")
        .and_then(|t| toml::from_str(t).ok())
        .unwrap_or_default()
}

/// The catalog's context length for `model`, if it knows one.
pub(crate) fn lookup(model: &str) -> Option<u64> {
    let cat = catalog();
    let name = model.to_ascii_lowercase();
    // Ollama tags: "qwen3:8b" → base "qwen3"; OpenAI ids may carry an org prefix.
    let base = name.rsplit('/').next().unwrap_or(&name);
    if let Some(v) = cat.models.get(base) {
        return Some(*v);
    }
    let best_prefix = cat
        .models
        .iter()
        .filter(|(k, _)| base.starts_with(k.as_str()))
        .max_by_key(|(k, _)| k.len());
    if let Some((_, v)) = best_prefix {
        return Some(*v);
    }
    cat.models
        .iter()
        .filter(|(k, _)| base.contains(k.as_str()))
        .max_by_key(|(k, _)| k.len())
        .map(|(_, v)| *v)
}

/// Context window: the server's figure, else the catalog, else 8192.
pub(crate) fn context_window(model: &str, from_server: Option<u64>) -> u64 {
    from_server
        .filter(|n| *n > 0)
        .or_else(|| lookup(model))
        .unwrap_or(FALLBACK_CONTEXT)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exact_prefix_substring_and_fallback() {
        assert_eq!(lookup("gemma2"), Some(8192));
        assert_eq!(lookup("qwen2.5-coder:7b"), Some(32768));
        assert_eq!(lookup("llama3.1:8b-instruct-q4"), Some(131072));
        assert_eq!(lookup("hf.co/bartowski/SmolLM2-135M"), Some(8192));
        assert_eq!(lookup("my-custom-qwen3-finetune"), Some(40960));
        assert_eq!(context_window("totally-unknown", None), FALLBACK_CONTEXT);
        assert_eq!(context_window("gemma2", Some(4096)), 4096);
    }
}
