//! What the agent keeps for one open session beyond its stored rows: the
//! turn adjustments it runs with, the model chosen for it, and a previewed
//! compaction waiting for `/compact apply`. One entry per session, so two
//! sessions in one process (an editor's threads) never share a choice, and
//! one call forgets all of it when the session is closed.
use super::compact_run::CompactionPlan;
use super::tweaks::TurnTweaks;
use super::{Agent, Selection};
use std::collections::HashMap;
use std::sync::Mutex;

/// The model a session was told to use (`/model`, an editor's picker).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum ModelChoice {
    Named(String),
    /// `/model default`: the profile's priority list, even over `--model`.
    ProfileList,
}

#[derive(Default)]
struct Entry {
    tweaks: Option<TurnTweaks>,
    model: Option<ModelChoice>,
    compaction: Option<CompactionPlan>,
}

#[derive(Default)]
pub(crate) struct PerSession {
    map: Mutex<HashMap<String, Entry>>,
}

impl PerSession {
    fn with<T>(&self, id: &str, f: impl FnOnce(&mut Entry) -> T) -> Option<T> {
        let mut m = self.map.lock().ok()?;
        Some(f(m.entry(id.to_string()).or_default()))
    }

    fn read<T>(&self, id: &str, f: impl FnOnce(&Entry) -> Option<T>) -> Option<T> {
        self.map.lock().ok()?.get(id).and_then(f)
    }
}

impl Agent {
    /// The adjustments turns of `session` run with: its own, else the
    /// process's (`--no-plan`).
    pub(crate) fn turn_tweaks(&self, session: &str) -> TurnTweaks {
        self.per_session
            .read(session, |e| e.tweaks.clone())
            .unwrap_or_else(|| self.tweaks.read().map(|t| t.clone()).unwrap_or_default())
    }

    /// Sets the adjustments of every following turn of `session`.
    pub(crate) fn set_session_tweaks(&self, session: &str, t: TurnTweaks) {
        self.per_session.with(session, |e| e.tweaks = Some(t));
    }

    /// The model chosen for `session`, if any.
    pub(crate) fn model_choice(&self, session: &str) -> Option<ModelChoice> {
        self.per_session.read(session, |e| e.model.clone())
    }

    /// Chooses (or with `None` forgets) the model of `session`.
    pub(crate) fn set_model_choice(&self, session: &str, choice: Option<ModelChoice>) {
        self.per_session.with(session, |e| e.model = choice);
    }

    /// Keeps a previewed compaction for `/compact apply`.
    pub(crate) fn keep_compaction(&self, session: &str, plan: CompactionPlan) {
        self.per_session
            .with(session, |e| e.compaction = Some(plan));
    }

    pub(crate) fn take_compaction(&self, session: &str) -> Option<CompactionPlan> {
        self.per_session
            .with(session, |e| e.compaction.take())
            .flatten()
    }

    /// Forgets everything kept for `session` outside the database: its
    /// settings, a previewed compaction, queued steers, its todo list and
    /// scratchpad, and approvals given "for the session".
    pub(crate) fn forget_session(&self, session: &str) {
        if let Ok(mut m) = self.per_session.map.lock() {
            m.remove(session);
        }
        self.steers.take(session);
        self.env.forget_session(session);
        self.gate.forget_session(session);
    }

    /// The selection a named choice makes (no server call).
    pub(super) fn chosen(choice: &ModelChoice) -> Option<Selection> {
        match choice {
            ModelChoice::Named(m) => Some(Selection {
                model: m.clone(),
                reason: format!(
                    "using {m} (chosen with /model; \"/model default\" goes back to the profile's list)"
                ),
            }),
            ModelChoice::ProfileList => None,
        }
    }
}
