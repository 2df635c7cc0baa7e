//! Whether the backend answers, and which model and window a profile gets:
//! what a front end shows on its status line before the first message.
use crate::agent::Agent;
use crate::profile::Profile;
use std::sync::Arc;
use std::time::Duration;

/// How the error of a server that answers but has no model of the profile
/// begins; the TUI's status line says "no model" for it, not "server down".
pub(crate) const NO_MODEL: &str = "the server answers, but no model of this profile is available: ";

/// The model a profile resolves to and its context window, or a message
/// saying why the backend cannot be used. Gives up after 10 s.
pub(crate) async fn check_backend(
    agent: Arc<Agent>,
    profile: Profile,
) -> Result<(String, u64), String> {
    // Building the HTTP client (TLS roots) costs tens of milliseconds of
    // CPU: never on the UI task.
    let (a, p) = (agent.clone(), profile.clone());
    let task = tokio::task::spawn_blocking(move || a.backend_for(&p));
    let backend = match task.await {
        Ok(Ok(b)) => b,
        Ok(Err(e)) => return Err(e.to_string()),
        Err(e) => return Err(format!("backend check failed: {e}")),
    };
    let url = backend.base_url().to_string();
    let (agent_config, agent_paths) = (agent.config.clone(), agent.env.paths.clone());
    let profile_models = profile.model.clone();
    let probe = tokio::spawn(async move {
        tokio::time::timeout(Duration::from_secs(10), async {
            // Only the providers the profile names: nothing else is asked
            // at start-up.
            backend.find_models(&profile.model).await?;
            let sel = agent
                .select_model(None, &*backend, &profile)
                .await
                .map_err(|e| e.to_string());
            let sel = match sel {
                Ok(s) => s,
                Err(e) => return Ok(Err(e)),
            };
            let window = agent.context_window(&*backend, &sel.model).await;
            Ok::<_, crate::llm::LlmError>(Ok((sel.model, window)))
        })
        .await
    });
    match probe.await {
        Ok(Ok(Ok(Ok(found)))) => Ok(found),
        // The server answered: what is missing is a model, not the server.
        Ok(Ok(Ok(Err(e)))) => Err(format!(
            "{NO_MODEL}{e}\nPick one with /model (it lists what {url} serves), or set [llm].default_model."
        )),
        Ok(Ok(Err(e))) => {
            let e = e.to_string();
            let first =
                crate::app::first_run::screen(&agent_config, &agent_paths, &profile_models, &e);
            Err(match first {
                Some(help) => format!("{e}\n\n{help}"),
                None => format!(
                    "{e}\nYou can still browse sessions (/session list, /session resume); messages fail until the backend is reachable."
                ),
            })
        }
        Ok(Err(_)) => Err(format!(
            "the backend at {url} did not answer within 10 s; check [llm] in the config"
        )),
        Err(e) => Err(format!("backend check failed: {e}")),
    }
}
