//! The first run: nothing configured, no server answering. Instead of one
//! error line, a newcomer gets one screen that says what to do — start
//! Ollama and pull a model that fits this machine, point `OPENAI_BASE_URL`
//! at a server, or set a hosted provider's key — in every front end (the
//! TUI's start-up check, a plain-mode turn, `navi run`).
//!
//! It applies only when no config file was read and the error says the
//! default server could not be reached; any other failure keeps its own
//! message.
use crate::config::{Config, Paths};

/// The screen for `error`, when this is a first run that reached no server.
pub(crate) fn screen(
    config: &Config,
    paths: &Paths,
    wanted: &[String],
    error: &str,
) -> Option<String> {
    if paths.config_file.is_some() || !error.contains("cannot reach") {
        return None;
    }
    let ram = ram_gib();
    let model = pick_model(config, wanted, ram);
    let fits = match ram {
        Some(g) => format!(" (it fits this machine's {g} GiB of RAM)"),
        None => String::new(),
    };
    let config_file = paths.config_dir.join("config.toml");
    Some(format!(
        "No model server answered, and navi has no configuration yet. Pick one way:\n\
         \n\
         1. Ollama on this machine: start it (`ollama serve`, or the Ollama app), then\n\
         \x20     ollama pull {model}{fits}\n\
         \x20  navi finds it at http://localhost:11434 (elsewhere: export OLLAMA_HOST=http://HOST:11434).\n\
         2. A server with the OpenAI API (llama-server, vLLM, LM Studio):\n\
         \x20     export OPENAI_BASE_URL=http://HOST:PORT/v1\n\
         \x20  (the URL alone makes navi use it; add OPENAI_API_KEY if the server wants one).\n\
         3. A hosted model: set its key (ANTHROPIC_API_KEY, OPENAI_API_KEY, OPENROUTER_API_KEY, …,\n\
         \x20  or `navi keys set anthropic`), then e.g. navi -m anthropic/claude-sonnet-4-5.\n\
         \n\
         Then run navi again; `navi config check --online` says whether the server answers.\n\
         Settings that last go in {} (see docs/config.md).",
        config_file.display()
    ))
}

/// The model to pull: the profile's first local model when the machine has
/// room for it (24 GiB or more), else `[llm].default_model`, which navi
/// falls back to by itself.
fn pick_model(config: &Config, wanted: &[String], ram: Option<u64>) -> String {
    let local = wanted
        .iter()
        .find(|m| !m.contains("cloud") && !m.contains('/'));
    match (local, ram) {
        (Some(m), Some(g)) if g >= 24 => m.clone(),
        _ => config.llm.default_model.clone(),
    }
}

/// Total memory in GiB (Linux `/proc/meminfo`); `None` elsewhere.
fn ram_gib() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let kb: u64 = text
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))?
        .split_whitespace()
        .next()?
        .parse()
        .ok()?;
    Some((kb + 512 * 1024) / (1024 * 1024))
}

/// Each provider in use (the default one, configured ones, hosted ones
/// with a key) and its model names or why it could not list them, for
/// `navi config check --online`.
pub(crate) async fn provider_models(
    config: &Config,
) -> Result<Vec<(String, Result<Vec<String>, String>)>, String> {
    let backend = crate::llm::build_backend(config).map_err(|e| e.to_string())?;
    Ok(backend
        .list_by_provider()
        .await
        .into_iter()
        .map(|(p, l)| {
            let l = l
                .map(|models| models.into_iter().map(|m| m.name).collect())
                .map_err(|e| e.to_string());
            (p, l)
        })
        .collect())
}

impl super::App {
    /// [`screen`] for a session of profile `profile_id`.
    pub(crate) fn first_run_help(&self, profile_id: &str, error: &str) -> Option<String> {
        let wanted = self
            .agent
            .profile(profile_id)
            .map(|p| p.model.clone())
            .unwrap_or_default();
        screen(&self.config, &self.paths, &wanted, error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_first_run_that_reached_nothing_gets_the_screen() {
        let config = Config::default();
        let t = tempfile::tempdir().unwrap();
        let mut paths = Paths {
            config_file: None,
            config_dir: t.path().join("cfg"),
            data_dir: t.path().to_path_buf(),
            db_path: t.path().join("db"),
            log_dir: t.path().to_path_buf(),
        };
        let e = "cannot reach Ollama at http://localhost:11434 (connection refused)";
        let s = screen(&config, &paths, &[], e).unwrap();
        assert!(s.contains("ollama pull "), "{s}");
        assert!(s.contains("OPENAI_BASE_URL"), "{s}");
        assert!(s.contains("ANTHROPIC_API_KEY"), "{s}");
        assert!(screen(&config, &paths, &[], "HTTP 500 from the server").is_none());
        paths.config_file = Some(t.path().join("config.toml"));
        assert!(screen(&config, &paths, &[], e).is_none());
        let wanted = ["x:31b-cloud".to_string(), "big:26b".to_string()];
        assert_eq!(pick_model(&config, &wanted, Some(64)), "big:26b");
        assert_eq!(
            pick_model(&config, &wanted, Some(8)),
            config.llm.default_model
        );
    }
}
