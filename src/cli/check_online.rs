//! `navi config check --online`: after the offline checks, ask every
//! provider in use (the default one, those configured in `[providers]`, and
//! hosted ones with a key) for its models, and say which answered, what
//! they serve and what failed. Any failure makes the exit code 1.
use crate::config::{Config, Paths};
use std::time::Duration;

/// How long all providers together may take to answer.
const DEADLINE: Duration = Duration::from_secs(20);

/// Lines to print (`backend: ok|error: …`) and whether any provider failed.
pub(crate) async fn check(config: &Config, paths: &Paths) -> (Vec<String>, bool) {
    let listed = match tokio::time::timeout(
        DEADLINE,
        crate::app::first_run::provider_models(config),
    )
    .await
    {
        Ok(Ok(l)) => l,
        Ok(Err(e)) => return (vec![format!("backend: error: {e}")], true),
        Err(_) => {
            return (
                vec![format!(
                    "backend: error: no provider answered within {} s",
                    DEADLINE.as_secs()
                )],
                true,
            );
        }
    };
    let mut lines = Vec::new();
    let mut failed = false;
    let default_model = &config.llm.default_model;
    for (provider, list) in listed {
        let url = config
            .provider(&provider)
            .map(|p| p.base_url)
            .unwrap_or_default();
        match list {
            Ok(names) => {
                let shown = if names.is_empty() {
                    "no models".to_string()
                } else if names.len() > 12 {
                    format!("{}, … ({} in all)", names[..12].join(", "), names.len())
                } else {
                    names.join(", ")
                };
                lines.push(format!(
                    "backend: ok: {provider} at {url} answers; {} model(s): {shown}",
                    names.len()
                ));
                if names.is_empty() && provider == "ollama" {
                    lines.push(format!(
                        "backend: warning: {provider} has no models: ollama pull {default_model}"
                    ));
                }
            }
            Err(e) => {
                failed = true;
                lines.push(format!("backend: error: {provider} at {url}: {e}"));
                if let Some(help) = crate::app::first_run::screen(config, paths, &[], &e) {
                    lines.extend(help.lines().map(|l| format!("  {l}")));
                }
            }
        }
    }
    (lines, failed)
}
