//! Model priority lists: the first model the server lists wins.
use super::{LlmError, ModelInfo};

/// The outcome of resolving a priority list.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Selection {
    pub(crate) model: String,
    /// Human-readable: which model was chosen and why the others were skipped.
    pub(crate) reason: String,
}

/// Whether `listed` (a name the server reports) is the model `wanted`.
/// Ollama reports `name:tag`; `llama3` means `llama3:latest`.
pub(crate) fn same_model(wanted: &str, listed: &str) -> bool {
    let norm = |s: &str| {
        let s = s.trim();
        if s.contains(':') || s.contains('/') {
            s.to_string()
        } else {
            format!("{s}:latest")
        }
    };
    wanted == listed || norm(wanted) == norm(listed)
}

/// Picks the first of `wanted` that appears in `available`; `place` names
/// where a model is, for messages ("ollama", "anthropic").
pub(crate) fn choose(
    wanted: &[String],
    available: &[ModelInfo],
    place: &dyn Fn(&str) -> String,
) -> Result<Selection, LlmError> {
    let mut skipped = Vec::new();
    for w in wanted {
        if let Some(m) = available.iter().find(|m| same_model(w, &m.name)) {
            let backend = place(w);
            let reason = if skipped.is_empty() {
                format!("using {} (first choice, available on {backend})", m.name)
            } else {
                format!(
                    "using {} because {} not available on {backend}",
                    m.name,
                    join_skipped(&skipped)
                )
            };
            return Ok(Selection {
                model: w.clone(),
                reason,
            });
        }
        skipped.push(w.clone());
    }
    let mut places: Vec<String> = Vec::new();
    for w in wanted {
        let p = place(w);
        if !places.contains(&p) {
            places.push(p);
        }
    }
    Err(LlmError::NoModelAvailable {
        backend: places.join(", "),
        wanted: wanted.to_vec(),
        available: available.iter().map(|m| m.name.clone()).collect(),
    })
}

fn join_skipped(s: &[String]) -> String {
    match s {
        [one] => format!("{one} is"),
        many => format!("{} are", many.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn models(names: &[&str]) -> Vec<ModelInfo> {
        names
            .iter()
            .map(|n| ModelInfo {
                name: n.to_string(),
                ..Default::default()
            })
            .collect()
    }

    #[test]
    fn first_available_wins_and_says_why() {
        let wanted = vec!["big:31b".to_string(), "small:2b".to_string()];
        let s = choose(&wanted, &models(&["small:2b", "other:1b"]), &|_: &str| {
            "ollama".to_string()
        })
        .unwrap();
        assert_eq!(s.model, "small:2b");
        assert!(
            s.reason.contains("big:31b is not available"),
            "{}",
            s.reason
        );
        let s = choose(&wanted, &models(&["big:31b", "small:2b"]), &|_: &str| {
            "ollama".to_string()
        })
        .unwrap();
        assert_eq!(s.model, "big:31b");
        assert!(s.reason.contains("first choice"));
    }

    #[test]
    fn latest_tag_is_implied() {
        let s = choose(
            &["llama3".to_string()],
            &models(&["llama3:latest"]),
            &|_: &str| "ollama".to_string(),
        )
        .unwrap();
        assert_eq!(s.model, "llama3");
    }

    #[test]
    fn none_available_lists_what_the_server_has() {
        let e = choose(&["a".to_string()], &models(&["x:1", "y:2"]), &|_: &str| {
            "ollama".to_string()
        })
        .unwrap_err();
        let msg = e.to_string();
        assert!(msg.contains("x:1, y:2") && msg.contains("[\"a\"]"), "{msg}");
    }
}
