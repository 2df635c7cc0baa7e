//! A session's selectors: the profiles as ACP modes and as the `mode`
//! config option, and the `model` config option built from what the
//! server(s) serve.
//!
//! Invariants: the model option offers the server's models, the profile's
//! preferred ones first (the profile's own list only while the server's is
//! unknown); a value that is not offered is refused with the list of those
//! that are; the choice is kept with the session (a stored session reopens
//! with it).

use super::session::{Cx, Open, notify};
use crate::protocol::Op;
use agent_client_protocol::Error;
use agent_client_protocol::v1::schema::{
    ConfigOptionUpdate, SessionConfigOption, SessionConfigOptionCategory, SessionConfigOptionValue,
    SessionConfigSelectOption, SessionMode, SessionModeState, SessionUpdate,
    SetSessionConfigOptionRequest,
};
use std::sync::Arc;
use std::time::Duration;

/// The config option that chooses the model.
pub(crate) const MODEL_OPTION: &str = "model";
/// The config option that chooses the profile (the same as the ACP mode).
pub(crate) const MODE_OPTION: &str = "mode";
/// The model option's value for "the profile's own priority list".
pub(crate) const DEFAULT_MODEL: &str = "default";
/// How long `session/new` and `session/load` wait for the server's model
/// list; a later list is sent as a `config_option_update`.
const LIST_WAIT: Duration = Duration::from_secs(3);

fn invalid(msg: impl Into<String>) -> Error {
    super::server::error(-32602, msg)
}

/// The profiles as ACP modes, the session's own as the current one.
pub(crate) fn modes(open: &Open) -> Option<SessionModeState> {
    let list: Vec<SessionMode> = open
        .app
        .profile_list()
        .into_iter()
        .map(|p| {
            let desc = (!p.description.trim().is_empty()).then_some(p.description);
            SessionMode::new(p.id, p.name).description(desc)
        })
        .collect();
    if list.is_empty() {
        return None;
    }
    Some(SessionModeState::new(open.profile_id(), list))
}

/// The model names the option offers, in order (without `default`).
pub(crate) fn offered_models(open: &Open) -> Vec<String> {
    let profile = open.profile_id();
    let wished = open.app.profile_models(&profile);
    let server = open.server_models();
    let mut names: Vec<String> = match server {
        // The profile's preferences the server has, in the profile's
        // order, then the rest of the server's.
        Some(server) => {
            let mut first: Vec<String> = wished
                .iter()
                .filter_map(|w| server.iter().find(|s| same_model(w, s)).cloned())
                .collect();
            first.dedup();
            for s in server {
                if !first.contains(&s) {
                    first.push(s);
                }
            }
            first
        }
        // Not known yet (or the server could not say): the profile's list,
        // then what any provider served when last asked.
        None => {
            let mut names = wished;
            for m in open.app.kept_models() {
                if !names.contains(&m) {
                    names.push(m);
                }
            }
            names
        }
    };
    if let Some(m) = open.model()
        && !names.contains(&m)
    {
        names.push(m);
    }
    names.retain(|n| n != DEFAULT_MODEL);
    names
}

/// Whether the profile's `wished` name is the server's `served` one
/// (Ollama adds `:latest`; a router prefixes its providers' names).
fn same_model(wished: &str, served: &str) -> bool {
    wished == served
        || served.strip_suffix(":latest") == Some(wished)
        || served
            .rsplit_once('/')
            .is_some_and(|(_, tail)| tail == wished && !wished.contains('/'))
}

/// The `model` option (first) and the `mode` option.
pub(crate) fn config_options(open: &Open) -> Vec<SessionConfigOption> {
    let mut models = vec![
        SessionConfigSelectOption::new(DEFAULT_MODEL, "Profile default")
            .description("the first model of the profile's list the server has".to_string()),
    ];
    models.extend(
        offered_models(open)
            .into_iter()
            .map(|n| SessionConfigSelectOption::new(n.clone(), n)),
    );
    let mut out = vec![
        SessionConfigOption::select(
            MODEL_OPTION,
            "Model",
            open.model().unwrap_or_else(|| DEFAULT_MODEL.to_string()),
            models,
        )
        .category(SessionConfigOptionCategory::Model),
    ];
    let profiles: Vec<SessionConfigSelectOption> = open
        .app
        .profile_list()
        .into_iter()
        .map(|p| {
            let desc = (!p.description.trim().is_empty()).then_some(p.description);
            SessionConfigSelectOption::new(p.id, p.name).description(desc)
        })
        .collect();
    if !profiles.is_empty() {
        out.push(
            SessionConfigOption::select(MODE_OPTION, "Mode", open.profile_id(), profiles)
                .description("navi's profile: its prompt, tools and models".to_string())
                .category(SessionConfigOptionCategory::Mode),
        );
    }
    out
}

/// `session/set_config_option`: the model or the mode, each checked
/// against what is offered.
pub(crate) fn set_option(
    open: &Open,
    req: &SetSessionConfigOptionRequest,
) -> Result<Vec<SessionConfigOption>, Error> {
    let id = &*req.config_id.0;
    if id != MODEL_OPTION && id != MODE_OPTION {
        return Err(invalid(format!(
            "unknown config option '{id}'; navi has '{MODEL_OPTION}' and '{MODE_OPTION}'"
        )));
    }
    let value = match &req.value {
        SessionConfigOptionValue::ValueId { value } => value.0.trim().to_string(),
        _ => return Err(invalid(format!("the {id} option takes one of its values"))),
    };
    if id == MODE_OPTION {
        switch_profile(open, &value)?;
        return Ok(config_options(open));
    }
    let offered = offered_models(open);
    if value != DEFAULT_MODEL && !offered.contains(&value) {
        let mut all = vec![DEFAULT_MODEL.to_string()];
        all.extend(offered);
        return Err(invalid(format!(
            "'{value}' is not a model this session offers; choose one of: {}",
            all.join(", ")
        )));
    }
    let model = (value != DEFAULT_MODEL).then_some(value);
    open.submit(Op::SwitchModel { model })
        .map_err(|e| invalid(e.to_string()))?;
    Ok(config_options(open))
}

/// Switches the session's profile (`session/set_mode` and the `mode`
/// option); an unknown profile is refused with the list.
pub(crate) fn switch_profile(open: &Open, profile: &str) -> Result<(), Error> {
    let ids: Vec<String> = open.app.profile_list().into_iter().map(|p| p.id).collect();
    if !ids.iter().any(|p| p == profile) {
        return Err(invalid(format!(
            "'{profile}' is not a mode of this agent; choose one of: {}",
            ids.join(", ")
        )));
    }
    open.submit(Op::SwitchProfile {
        profile: profile.to_string(),
    })
    .map_err(|e| invalid(e.to_string()))?;
    open.set_profile_id(profile);
    Ok(())
}

/// Tells the client the options changed (a command switched the model, a
/// turn switched the profile, the server's list arrived).
pub(crate) fn announce(open: &Open, cx: &Cx) {
    notify(
        cx,
        &open.id,
        SessionUpdate::ConfigOptionUpdate(ConfigOptionUpdate::new(config_options(open))),
    );
}

/// Asks the session's server for its models, waiting at most
/// [`LIST_WAIT`]; a list that comes later is announced when it comes. A
/// failed listing leaves the option as it was (the profile's list).
pub(crate) async fn learn_models(open: &Arc<Open>, cx: &Cx) {
    let Some(listing) = open.app.server_model_names(&open.profile_id()) else {
        return;
    };
    let mut task = tokio::spawn(listing);
    let done = tokio::time::timeout(LIST_WAIT, &mut task).await;
    match done {
        Ok(Ok(Ok(names))) => open.set_server_models(names),
        Ok(Ok(Err(e))) => tracing::info!("the server's models are not known: {e}"),
        Ok(Err(e)) => tracing::info!("listing the server's models failed: {e}"),
        Err(_) => {
            let (open, cx) = (open.clone(), cx.clone());
            tokio::spawn(async move {
                if let Ok(Ok(names)) = task.await {
                    open.set_server_models(names);
                    announce(&open, &cx);
                }
            });
        }
    }
}

/// Asks the session's server for its models in the background and
/// announces them when they come (`session/load`, which answers at once).
pub(crate) fn learn_later(open: &Arc<Open>, cx: &Cx) {
    let Some(listing) = open.app.server_model_names(&open.profile_id()) else {
        return;
    };
    let (open, cx) = (open.clone(), cx.clone());
    tokio::spawn(async move {
        match listing.await {
            Ok(names) => {
                open.set_server_models(names);
                announce(&open, &cx);
            }
            Err(e) => tracing::info!("the server's models are not known: {e}"),
        }
    });
}

#[cfg(test)]
mod tests {
    use super::same_model;

    #[test]
    fn a_wished_model_matches_the_servers_spelling() {
        assert!(same_model("qwen3", "qwen3"));
        assert!(same_model("qwen3", "qwen3:latest"));
        assert!(same_model("claude-x", "anthropic/claude-x"));
        assert!(!same_model("qwen3", "qwen3:8b"));
        assert!(!same_model("a/claude-x", "b/claude-x"));
        assert!(!same_model("gemma", "gemma3"));
    }
}
