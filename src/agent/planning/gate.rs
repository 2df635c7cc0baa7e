//! Whether this message gets planner calls at all, beyond the profile's own
//! switches (`should_plan`) and `--no-plan` (which clears them).
//!
//! In order:
//! 1. `[planning].enabled = false` — never.
//! 2. A `planning_mandatory` profile — always (the rules below are defaults,
//!    and such a profile has asked for a plan on every message).
//! 3. A short, single-step message (`skip.rs`) — no.
//! 4. A model window under `[planning].min_window` tokens (8192) — no: three
//!    planner calls and a plan in the history cost a small window most of
//!    what it has.
//! 5. A model whose name states fewer than `[planning].min_model_billions`
//!    parameters (4: `smollm2:135m`, `qwen2.5:1.5b`, `llama3.2:3b`) — no:
//!    such models rarely write a usable plan, and each call is slow on a CPU.

use super::skip;
use crate::config::PlanningConfig;
use crate::profile::Profile;

/// Why the planner is not called for this message.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Skip {
    /// `[planning].enabled = false`.
    Disabled,
    /// A greeting, short question or short imperative.
    Short,
    SmallWindow(u64),
    /// The parameter count (billions) read from the model's name.
    SmallModel(f64),
}

impl std::fmt::Display for Skip {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Skip::Disabled => f.write_str("[planning].enabled is false"),
            Skip::Short => f.write_str("a short single-step message"),
            Skip::SmallWindow(w) => write!(f, "a small context window ({w} tokens)"),
            Skip::SmallModel(b) => write!(f, "a small model ({b}B parameters)"),
        }
    }
}

pub(crate) fn skip_reason(
    p: &Profile,
    cfg: &PlanningConfig,
    message: &str,
    window: u64,
    model: &str,
) -> Option<Skip> {
    if !cfg.enabled {
        return Some(Skip::Disabled);
    }
    if p.planning_mandatory {
        return None;
    }
    if skip::skip_planner(message, cfg.skip_question_words) {
        return Some(Skip::Short);
    }
    if window > 0 && window < cfg.min_window {
        return Some(Skip::SmallWindow(window));
    }
    match model_billions(model) {
        Some(b) if cfg.min_model_billions > 0 && b < f64::from(cfg.min_model_billions) => {
            Some(Skip::SmallModel(b))
        }
        _ => None,
    }
}

/// The parameter count a model's name states, in billions: `135m`, `1.5b`,
/// `8b` as a whole part of the name (`qwen2.5-coder:1.5b`,
/// `SmolLM2-135M-Instruct`). The largest when there are several; `None`
/// when the name states none (`a4b` or `8x7b` do not count).
pub(crate) fn model_billions(model: &str) -> Option<f64> {
    model
        .to_lowercase()
        .split(|c: char| !(c.is_ascii_alphanumeric() || c == '.'))
        .filter_map(|part| {
            let (num, unit) = part.split_at(part.len().checked_sub(1)?);
            if num.is_empty() || !num.starts_with(|c: char| c.is_ascii_digit()) {
                return None;
            }
            let n: f64 = num.parse().ok()?;
            match unit {
                "b" => Some(n),
                "m" => Some(n / 1000.0),
                _ => None,
            }
        })
        .fold(None, |best: Option<f64>, n| {
            Some(best.map_or(n, |b| b.max(n)))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile(mandatory: bool) -> Profile {
        let mut p = crate::profile::parse(
            r#"{"id":"t","name":"T","description":"d","model":["m"],"enabled_tools":[]}"#,
            "prompt",
            None,
            "test",
            "t",
            "built-in",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        p.planning_mandatory = mandatory;
        p
    }

    const TASK: &str = "Read the config, then fix the parser and run the tests";

    #[test]
    fn names_state_sizes() {
        assert_eq!(
            model_billions("hf.co/bartowski/SmolLM2-135M-Instruct-GGUF:Q4_K_M"),
            Some(0.135)
        );
        assert_eq!(model_billions("qwen2.5-coder:1.5b"), Some(1.5));
        assert_eq!(model_billions("llama3.2:3b"), Some(3.0));
        assert_eq!(model_billions("llama3.1:8b-instruct-q4"), Some(8.0));
        assert_eq!(model_billions("gemma4:26b-a4b-it-q4_K_M"), Some(26.0));
        assert_eq!(model_billions("mixtral:8x7b"), None);
        assert_eq!(model_billions("gpt-4o-mini"), None);
        assert_eq!(model_billions("test-model"), None);
        assert_eq!(model_billions(""), None);
    }

    #[test]
    fn defaults_plan_a_task_on_a_big_model_and_window() {
        let cfg = PlanningConfig::default();
        assert_eq!(
            skip_reason(&profile(false), &cfg, TASK, 32768, "llama3.1:8b"),
            None
        );
        // An unknown window (0) or size does not turn planning off.
        assert_eq!(
            skip_reason(&profile(false), &cfg, TASK, 0, "test-model"),
            None
        );
        assert_eq!(
            skip_reason(&profile(false), &cfg, TASK, 8192, "gpt-4o"),
            None
        );
    }

    #[test]
    fn short_messages_small_windows_and_small_models_do_not_plan() {
        let cfg = PlanningConfig::default();
        let p = profile(false);
        assert_eq!(skip_reason(&p, &cfg, "hi", 32768, "m"), Some(Skip::Short));
        assert_eq!(
            skip_reason(&p, &cfg, TASK, 4096, "m"),
            Some(Skip::SmallWindow(4096))
        );
        assert_eq!(
            skip_reason(&p, &cfg, TASK, 32768, "smollm2:135m"),
            Some(Skip::SmallModel(0.135))
        );
        assert_eq!(
            skip_reason(&p, &cfg, TASK, 32768, "llama3.2:3b"),
            Some(Skip::SmallModel(3.0))
        );
    }

    #[test]
    fn limits_can_be_turned_off_and_mandatory_always_plans() {
        let cfg = PlanningConfig {
            min_window: 0,
            min_model_billions: 0,
            ..PlanningConfig::default()
        };
        assert_eq!(
            skip_reason(&profile(false), &cfg, TASK, 2048, "smollm2:135m"),
            None
        );
        let cfg = PlanningConfig::default();
        assert_eq!(
            skip_reason(&profile(true), &cfg, "hi", 2048, "smollm2:135m"),
            None
        );
    }

    #[test]
    fn disabled_wins_over_everything() {
        let cfg = PlanningConfig {
            enabled: false,
            ..PlanningConfig::default()
        };
        assert_eq!(
            skip_reason(&profile(true), &cfg, TASK, 32768, "llama3.1:70b"),
            Some(Skip::Disabled)
        );
    }
}
