//! What OpenAI-compatible servers say about a model's inputs (images or
//! text only), under the names each of them uses:
//! - `input_modalities` on a `/v1/models` entry (llama-server, and
//!   OpenRouter's `architecture.input_modalities`), e.g. `["text"]` or
//!   `["text", "image"]`;
//! - llama-server's second list in the same answer (`models`, Ollama style)
//!   with `capabilities: ["completion"]` or `["completion", "multimodal"]`;
//! - llama-server `GET /props` `modalities.vision` (see `llama.rs`);
//! - LM Studio `GET /api/v0/models`: `"type": "vlm"` / `"llm"`.
//!
//! vLLM says nothing: unknown means the request goes and the server decides.
//!
//! Invariant: only what a server states is used; a list that says nothing
//! about inputs (OpenRouter's `supported_parameters`, a `capabilities` list
//! of only "tools") leaves the answer unknown.
use serde_json::Value;

/// A list of names: an array of strings, or an object whose `true` keys
/// are the names (`{"vision": false, "completion": true}`).
fn strings(v: Option<&Value>) -> Option<Vec<String>> {
    match v? {
        Value::Array(a) => Some(
            a.iter()
                .filter_map(Value::as_str)
                .map(|s| s.to_ascii_lowercase())
                .collect(),
        ),
        Value::Object(o) => Some(
            o.iter()
                .filter(|(_, v)| v.as_bool() == Some(true))
                .map(|(k, _)| k.to_ascii_lowercase())
                .collect(),
        ),
        _ => None,
    }
}

/// `{"vision": bool}` as `/props` has it, on an entry or its `meta`.
fn vision_flag(entry: &Value) -> Option<(bool, String)> {
    for (name, m) in [
        ("modalities", entry.get("modalities")),
        (
            "meta.modalities",
            entry.get("meta").and_then(|m| m.get("modalities")),
        ),
    ] {
        if let Some(v) = m.and_then(|m| m.get("vision")).and_then(Value::as_bool) {
            return Some((v, format!("its model list says {name}.vision: {v}")));
        }
    }
    None
}

/// Whether a `/models` entry says the model takes images, and in which
/// words (for messages): `None` when it does not say.
pub(crate) fn entry_images(entry: &Value) -> Option<(bool, String)> {
    let listed = [
        ("input_modalities", entry.get("input_modalities")),
        (
            "architecture.input_modalities",
            entry
                .get("architecture")
                .and_then(|a| a.get("input_modalities")),
        ),
        (
            "meta.input_modalities",
            entry.get("meta").and_then(|m| m.get("input_modalities")),
        ),
        (
            "modalities.input",
            entry.get("modalities").and_then(|m| m.get("input")),
        ),
    ];
    for (name, v) in listed {
        if let Some(m) = strings(v).filter(|m| !m.is_empty()) {
            let takes = m.iter().any(|x| x == "image" || x == "vision");
            return Some((
                takes,
                format!("its model list says {name}: {}", m.join(", ")),
            ));
        }
    }
    if let Some(said) = vision_flag(entry) {
        return Some(said);
    }
    if let Some(t) = entry.get("type").and_then(Value::as_str) {
        match t {
            "vlm" => return Some((true, "LM Studio lists it as type \"vlm\"".into())),
            "llm" => return Some((false, "LM Studio lists it as type \"llm\"".into())),
            _ => {}
        }
    }
    let caps = strings(entry.get("capabilities"))
        .or_else(|| strings(entry.get("meta").and_then(|m| m.get("capabilities"))))?;
    if caps
        .iter()
        .any(|c| c == "multimodal" || c == "vision" || c == "image")
    {
        return Some((true, format!("it lists capabilities: {}", caps.join(", "))));
    }
    caps.iter()
        .any(|c| c == "completion")
        .then(|| (false, format!("it lists capabilities: {}", caps.join(", "))))
}

/// llama-server answers `/v1/models` with two lists: OpenAI's `data` and an
/// Ollama-style `models` whose entries carry `capabilities`. Copies those
/// capabilities onto the `data` entry of the same model (by `model`/`name`)
/// when it has none.
pub(crate) fn merge_llama_models(doc: &Value, data: &mut [Value]) {
    let Some(extra) = doc.get("models").and_then(Value::as_array) else {
        return;
    };
    for entry in data.iter_mut() {
        if entry.get("capabilities").is_some() {
            continue;
        }
        let Some(id) = entry.get("id").and_then(Value::as_str).map(String::from) else {
            continue;
        };
        let same = extra.iter().find(|m| {
            ["model", "name"]
                .iter()
                .any(|k| m.get(*k).and_then(Value::as_str) == Some(id.as_str()))
        });
        if let (Some(caps), Some(obj)) = (
            same.and_then(|m| m.get("capabilities")).cloned(),
            entry.as_object_mut(),
        ) {
            obj.insert("capabilities".into(), caps);
        }
    }
}

/// Puts what is known about images into a capability list, the way Ollama
/// lists them: "completion" (text in), plus "vision" when images are taken.
pub(crate) fn apply_images(caps: &mut Vec<String>, takes: bool) {
    if !caps.iter().any(|c| c == "completion") {
        caps.insert(0, "completion".into());
    }
    caps.retain(|c| c != "vision");
    if takes {
        caps.push("vision".into());
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn every_way_a_server_says_text_only() {
        for e in [
            json!({"id":"m","input_modalities":["text"]}),
            json!({"id":"m","input_modalities":["TEXT"]}),
            json!({"id":"m","architecture":{"input_modalities":["text"]}}),
            json!({"id":"m","meta":{"input_modalities":["text"]}}),
            json!({"id":"m","modalities":{"input":["text"],"output":["text"]}}),
            json!({"id":"m","type":"llm"}),
            json!({"id":"m","capabilities":["completion"]}),
            json!({"id":"m","capabilities":{"completion":true,"vision":false}}),
            json!({"id":"m","meta":{"capabilities":["completion"]}}),
            json!({"id":"m","modalities":{"vision":false,"audio":false}}),
            json!({"id":"m","meta":{"modalities":{"vision":false}}}),
        ] {
            let (takes, why) = entry_images(&e).unwrap_or_else(|| panic!("{e}"));
            assert!(!takes, "{e}");
            assert!(!why.is_empty());
        }
    }

    #[test]
    fn every_way_a_server_says_images() {
        for e in [
            json!({"id":"m","input_modalities":["text","image"]}),
            json!({"id":"m","architecture":{"input_modalities":["image","text"]}}),
            json!({"id":"m","type":"vlm"}),
            json!({"id":"m","capabilities":["completion","multimodal"]}),
            json!({"id":"m","capabilities":["vision"]}),
            json!({"id":"m","capabilities":{"completion":true,"vision":true}}),
            json!({"id":"m","meta":{"modalities":{"vision":true}}}),
        ] {
            assert_eq!(entry_images(&e).map(|x| x.0), Some(true), "{e}");
        }
    }

    #[test]
    fn silence_is_unknown() {
        for e in [
            json!({"id":"m"}),
            json!({"id":"m","max_model_len":4096}),
            json!({"id":"m","capabilities":["tools"]}),
            json!({"id":"m","supported_parameters":["tools"]}),
            json!({"id":"m","input_modalities":[]}),
            json!({"id":"m","type":"embeddings"}),
        ] {
            assert_eq!(entry_images(&e), None, "{e}");
        }
    }

    #[test]
    fn llama_servers_second_list_is_merged_by_name() {
        let doc = json!({
            "models": [{"name":"a.gguf","model":"a.gguf","capabilities":["completion"]}],
            "data": [{"id":"a.gguf"},{"id":"b.gguf"}]
        });
        let mut data = doc["data"].as_array().unwrap().clone();
        merge_llama_models(&doc, &mut data);
        assert_eq!(data[0]["capabilities"], json!(["completion"]));
        assert!(data[1].get("capabilities").is_none());
        assert_eq!(entry_images(&data[0]).map(|x| x.0), Some(false));
    }

    #[test]
    fn images_go_into_capabilities_like_ollama_lists_them() {
        let mut caps = vec!["tools".to_string(), "vision".to_string()];
        apply_images(&mut caps, false);
        assert_eq!(caps, vec!["completion", "tools"]);
        apply_images(&mut caps, true);
        assert_eq!(caps, vec!["completion", "tools", "vision"]);
    }
}
