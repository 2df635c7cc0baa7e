//! The last model list every provider gave, kept in `<data dir>/models.json`
//! so that shell completion of `--model` can offer it without asking the
//! network on every TAB. Written by `navi models` and by completion itself
//! when the file is missing or old.
//!
//! Invariants: the file holds model names only (never a key or a URL); a
//! file that cannot be read or parsed counts as missing.
use crate::llm::ModelInfo;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// How old a list may be before completion asks the providers again.
pub(crate) const MAX_AGE: Duration = Duration::from_secs(600);

#[derive(serde::Serialize, serde::Deserialize)]
struct Cached {
    /// Unix milliseconds.
    written_at: i64,
    models: Vec<String>,
}

fn path(data_dir: &Path) -> PathBuf {
    data_dir.join("models.json")
}

/// Keeps the names of `models` (a failure to write is only logged).
pub(crate) fn write(data_dir: &Path, models: &[ModelInfo]) {
    let c = Cached {
        written_at: crate::session::now_ms(),
        models: models.iter().map(|m| m.name.clone()).collect(),
    };
    let Ok(text) = serde_json::to_string(&c) else {
        return;
    };
    if let Err(e) = crate::private_fs::create_dir_all(data_dir)
        .and_then(|()| std::fs::write(path(data_dir), text))
    {
        tracing::debug!("cannot keep the model list: {e}");
    }
}

/// The kept names when they are at most `max_age` old.
pub(crate) fn read(data_dir: &Path, max_age: Duration) -> Option<Vec<String>> {
    let text = std::fs::read_to_string(path(data_dir)).ok()?;
    let c: Cached = serde_json::from_str(&text).ok()?;
    let age = crate::session::now_ms().saturating_sub(c.written_at);
    (u128::try_from(age).ok()? <= max_age.as_millis()).then_some(c.models)
}

/// The providers' models, asked now (and kept); none when they take longer
/// than `wait` in all (shell completion, which has no list yet).
pub(crate) async fn refresh(
    config: &crate::config::Config,
    data_dir: &Path,
    wait: Duration,
) -> Vec<String> {
    let Ok(backend) = crate::llm::build_backend(config) else {
        return Vec::new();
    };
    match tokio::time::timeout(wait, backend.list_models()).await {
        Ok(Ok(models)) => {
            write(data_dir, &models);
            models.into_iter().map(|m| m.name).collect()
        }
        _ => Vec::new(),
    }
}

impl super::App {
    /// Every provider's models as last listed (kept on disk), without
    /// asking anyone now; when that list is missing or old, it is asked for
    /// in the background (what it finds shows the next time). For front ends
    /// whose model choice is built on the spot (`navi acp`'s model option).
    pub fn known_models(&self, profile_id: &str) -> Vec<String> {
        let data_dir = self.paths.data_dir.clone();
        if read(&data_dir, MAX_AGE).is_none()
            && let Ok(rt) = tokio::runtime::Handle::try_current()
            && let Some(listing) = self.list_models(profile_id)
        {
            let dir = data_dir.clone();
            rt.spawn(async move {
                if let Ok(models) = listing.await {
                    write(&dir, &models);
                }
            });
        }
        read(&data_dir, Duration::MAX).unwrap_or_default()
    }
}

impl super::App {
    /// The models the profile's server(s) serve, asked now: one listing per
    /// provider, no details (what `navi acp`'s model option offers); the
    /// names are kept like `navi models` keeps them. `None` when the
    /// profile is unknown.
    pub fn server_model_names(
        &self,
        profile_id: &str,
    ) -> Option<impl std::future::Future<Output = Result<Vec<String>, String>> + Send + 'static>
    {
        let agent = self.agent.clone();
        let profile = agent.profile(profile_id).ok()?.clone();
        let data_dir = self.paths.data_dir.clone();
        let task = tokio::task::spawn_blocking(move || agent.backend_for(&profile));
        Some(async move {
            let backend = match task.await {
                Ok(Ok(b)) => b,
                Ok(Err(e)) => return Err(e.to_string()),
                Err(e) => return Err(format!("cannot list the models: {e}")),
            };
            let models = backend.list_models().await.map_err(|e| e.to_string())?;
            write(&data_dir, &models);
            Ok(models.into_iter().map(|m| m.name).collect())
        })
    }

    /// Every provider's models as last listed (kept on disk, however old),
    /// asking no one.
    pub fn kept_models(&self) -> Vec<String> {
        read(&self.paths.data_dir, Duration::MAX).unwrap_or_default()
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn names_are_kept_and_expire() {
        let d = tempfile::tempdir().unwrap();
        assert!(read(d.path(), MAX_AGE).is_none());
        let m = ModelInfo {
            name: "anthropic/claude-x".into(),
            ..Default::default()
        };
        write(d.path(), &[m]);
        assert_eq!(read(d.path(), MAX_AGE).unwrap(), ["anthropic/claude-x"]);
        std::fs::write(path(d.path()), "{\"written_at\":0,\"models\":[\"old\"]}").unwrap();
        assert!(read(d.path(), MAX_AGE).is_none());
    }
}
