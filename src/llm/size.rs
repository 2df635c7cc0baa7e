//! What decides the small-model path: how many parameters a model has and
//! whether the server's chat template can render tool schemas.
//!
//! Invariants:
//! - A size in the model's name ("SmolLM2-135M", "qwen2.5:0.5b") is taken
//!   without asking; otherwise the server's own figure (llama-server's
//!   `meta.n_params`, Ollama's `general.parameter_count` /
//!   `details.parameter_size`).
//! - `template_tools` is `None` when the server does not say.
use serde_json::Value;

/// What a server says about a model for the small-model path.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ModelTraits {
    /// Parameters, where known.
    pub params: Option<u64>,
    /// The chat template renders tool schemas and calls (`Some(false)`:
    /// llama-server's `/props` says it does not).
    pub template_tools: Option<bool>,
}

/// A parameter count written in a model name or a size label: "135M",
/// "270m", "0.5b", "1.5B", "7b" (the last such part wins over none; a
/// quantisation tag like "q4_k_m" or an "e2b"-style label is not a size).
pub fn params_from_name(name: &str) -> Option<u64> {
    let name = name.rsplit('/').next().unwrap_or(name);
    name.split(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
        .filter_map(size_label)
        .next_back()
}

fn size_label(part: &str) -> Option<u64> {
    let lower = part.to_ascii_lowercase();
    let (num, unit) = lower.split_at(lower.len().checked_sub(1)?);
    let scale = match unit {
        "m" => 1e6,
        "b" => 1e9,
        "t" => 1e12,
        _ => return None,
    };
    if num.is_empty() || !num.chars().all(|c| c.is_ascii_digit() || c == '.') {
        return None;
    }
    let n: f64 = num.parse().ok()?;
    (n > 0.0).then_some((n * scale) as u64)
}

/// A parameter count from Ollama's `/api/show` answer.
pub(crate) fn params_from_ollama_show(v: &Value) -> Option<u64> {
    v.get("model_info")
        .and_then(|m| m.get("general.parameter_count"))
        .and_then(Value::as_u64)
        .or_else(|| {
            v.get("details")
                .and_then(|d| d.get("parameter_size"))
                .and_then(Value::as_str)
                .and_then(size_label)
        })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sizes_from_names() {
        assert_eq!(
            params_from_name("/work/llama/SmolLM2-135M-Instruct.Q4_1.gguf"),
            Some(135_000_000)
        );
        assert_eq!(
            params_from_name("gemma-3-270m-q4_k_m.gguf"),
            Some(270_000_000)
        );
        assert_eq!(params_from_name("qwen2.5:0.5b"), Some(500_000_000));
        assert_eq!(params_from_name("llama3.1:8B"), Some(8_000_000_000));
        assert_eq!(params_from_name("gemma4:e2b-it-q8_0"), None);
        assert_eq!(params_from_name("gpt-4o"), None);
        assert_eq!(params_from_name("m"), None);
        assert_eq!(params_from_name(""), None);
    }

    #[test]
    fn sizes_from_ollama_show() {
        let v = json!({"model_info": {"general.parameter_count": 135_000_123u64}});
        assert_eq!(params_from_ollama_show(&v), Some(135_000_123));
        let v = json!({"details": {"parameter_size": "3.2B"}});
        assert_eq!(params_from_ollama_show(&v), Some(3_200_000_000));
        assert_eq!(params_from_ollama_show(&json!({})), None);
    }
}
