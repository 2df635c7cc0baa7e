//! Profiles: the agent's identity, tools and behaviour for one domain.
//!
//! Loaded from `profiles/<id>/config.json` + `system_prompt.txt` (+ optional
//! `subagent_system_prompt.txt`). Built-ins are compiled in; a profile dir in
//! the user's config dir adds or overrides by id. A broken profile is reported
//! (file, key, why) and skipped; the others still load.

mod raw;

pub use raw::parse;

use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

/// The core of a profile that names none: the tools almost every task
/// starts with (those of them the profile enables).
pub(crate) const DEFAULT_CORE_TOOLS: &[&str] = &["filesystem", "terminal"];

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Profile {
    pub(crate) id: String,
    pub(crate) name: String,
    pub(crate) description: String,
    pub(crate) short_description: String,
    pub(crate) full_description: Map<String, Value>,
    pub(crate) llm_backend: String,
    /// Priority list: the first model the server has wins.
    pub(crate) model: Vec<String>,
    pub(crate) temperature: f64,
    pub(crate) max_iterations: u32,
    pub(crate) enabled_tools: Vec<String>,
    pub(crate) subagent_tools: Vec<String>,
    /// The tools sent with their full schemas on every request when tools
    /// are loaded on demand (`[tools].on_demand`); the others are offered by
    /// name through `load_tools`. `None`: [`DEFAULT_CORE_TOOLS`].
    pub(crate) core_tools: Option<Vec<String>>,
    pub(crate) think_enabled: bool,
    pub(crate) iteration_budget_enabled: bool,
    pub(crate) goal_anchoring_enabled: bool,
    pub(crate) goal_anchoring_interval: u32,
    pub(crate) anti_stall_enabled: bool,
    pub(crate) anti_stall_threshold: u32,
    pub(crate) step_validation_enabled: bool,
    pub(crate) adaptive_replan_enabled: bool,
    pub(crate) planning_enabled: bool,
    pub(crate) planning_mandatory: bool,
    pub(crate) planning_phase1_enabled: bool,
    pub(crate) planning_phase2_enabled: bool,
    pub(crate) planning_phase3_enabled: bool,
    pub(crate) subagent_planning_enabled: bool,
    #[serde(skip)]
    pub(crate) system_prompt: String,
    #[serde(skip)]
    pub(crate) subagent_system_prompt: String,
    /// Where it came from: `built-in` or a directory path.
    pub(crate) source: String,
}

/// A profile that could not be loaded.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("profile {file}: {key}: {why}")]
pub struct ProfileError {
    pub(crate) file: String,
    pub(crate) key: String,
    pub(crate) why: String,
}

/// A profile id that names no profile: the one wording of this refusal,
/// whoever meets it (a front end, a session operation, a tool, the command
/// line).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown profile '{id}'; available: {available}")]
pub struct UnknownProfile {
    pub(crate) id: String,
    pub(crate) available: String,
}

/// All loaded profiles plus the problems met while loading.
#[derive(Clone, Debug, Default)]
pub struct ProfileRegistry {
    profiles: BTreeMap<String, Profile>,
    pub errors: Vec<ProfileError>,
}

impl ProfileRegistry {
    /// Built-in profiles, then those in `user_dir` (which override by id).
    pub(crate) fn load(user_dir: Option<&Path>) -> Self {
        let mut reg = ProfileRegistry::default();
        let mut ids: Vec<&str> = crate::embedded::under("profiles/")
            .filter_map(|(p, _)| p.strip_prefix("profiles/")?.split('/').next())
            .collect();
        ids.dedup();
        for id in ids {
            let get = |f: &str| crate::embedded::get(&format!("profiles/{id}/{f}"));
            let file = format!("profiles/{id}/config.json (built-in)");
            reg.add(parse(
                get("config.json").unwrap_or(""),
                get("system_prompt.txt").unwrap_or(""),
                get("subagent_system_prompt.txt"),
                &file,
                id,
                "built-in",
            ));
        }
        if let Some(dir) = user_dir {
            reg.load_dir(dir);
        }
        reg
    }

    fn add(&mut self, r: Result<Profile, ProfileError>) {
        match r {
            Ok(p) => {
                self.profiles.insert(p.id.clone(), p);
            }
            Err(e) => {
                tracing::warn!("skipping profile: {e}");
                self.errors.push(e);
            }
        }
    }

    /// Loads every `<dir>/<id>/config.json`.
    pub(crate) fn load_dir(&mut self, dir: &Path) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        let mut dirs: Vec<_> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        for d in dirs {
            let Some(id) = d.file_name().and_then(|n| n.to_str()).map(String::from) else {
                continue;
            };
            let cfg = d.join("config.json");
            if !cfg.is_file() {
                continue;
            }
            let file = cfg.display().to_string();
            let read = |p: &Path| std::fs::read_to_string(p).ok();
            let Some(json) = read(&cfg) else {
                self.add(Err(ProfileError {
                    file,
                    key: "(file)".into(),
                    why: "cannot be read".into(),
                }));
                continue;
            };
            let prompt = read(&d.join("system_prompt.txt")).unwrap_or_default();
            let sub = read(&d.join("subagent_system_prompt.txt"));
            self.add(parse(
                &json,
                &prompt,
                sub.as_deref(),
                &file,
                &id,
                &d.display().to_string(),
            ));
        }
    }

    pub(crate) fn get(&self, id: &str) -> Option<&Profile> {
        self.profiles.get(id)
    }

    /// The profile `id`, or why there is none.
    pub(crate) fn find(&self, id: &str) -> Result<&Profile, UnknownProfile> {
        self.profiles.get(id).ok_or_else(|| self.unknown(id))
    }

    /// `Ok` when `id` names a profile.
    pub(crate) fn check(&self, id: &str) -> Result<(), UnknownProfile> {
        self.find(id).map(|_| ())
    }

    /// The refusal for `id`, listing the ids there are.
    pub(crate) fn unknown(&self, id: &str) -> UnknownProfile {
        UnknownProfile {
            id: id.to_string(),
            available: self.ids().join(", "),
        }
    }

    /// The refusal for `id` with what each profile is for (for the model,
    /// which picks one by it).
    pub(crate) fn unknown_described(&self, id: &str) -> UnknownProfile {
        let list: Vec<String> = self
            .all()
            .map(|p| format!("{} ({})", p.id, p.short_description))
            .collect();
        UnknownProfile {
            id: id.to_string(),
            available: list.join(", "),
        }
    }

    pub(crate) fn all(&self) -> impl Iterator<Item = &Profile> {
        self.profiles.values()
    }

    pub fn ids(&self) -> Vec<String> {
        self.profiles.keys().cloned().collect()
    }

    /// The profile new sessions start with.
    pub(crate) fn default_id(&self) -> String {
        ["developer", "secretary"]
            .iter()
            .find(|id| self.profiles.contains_key(**id))
            .map(|s| s.to_string())
            .or_else(|| self.profiles.keys().next().cloned())
            .unwrap_or_else(|| "developer".into())
    }

    /// One warning per tool a user profile enables (`enabled_tools`,
    /// `subagent_tools`) that `is_known` does not know. Built-in profiles are
    /// ours and not checked; MCP names (`server__tool`, `server__*`) are
    /// resolved later, when their servers start, and are skipped here.
    pub(crate) fn unknown_tool_warnings(&self, is_known: &dyn Fn(&str) -> bool) -> Vec<String> {
        let mut out = Vec::new();
        for p in self.profiles.values().filter(|p| p.source != "built-in") {
            let file = Path::new(&p.source).join("config.json");
            for (key, list) in [
                ("enabled_tools", &p.enabled_tools),
                ("subagent_tools", &p.subagent_tools),
            ] {
                for name in list.iter().filter(|n| !n.contains("__") && !is_known(n)) {
                    out.push(format!(
                        "profile {}: {key}: unknown tool \"{name}\" is ignored; check the spelling (list_tools or /tools shows the tools there are)",
                        file.display()
                    ));
                }
            }
        }
        out
    }

    /// Inserts a profile directly (tests, generated profiles).
    pub fn insert(&mut self, p: Profile) {
        self.profiles.insert(p.id.clone(), p);
    }
}

#[cfg(test)]
mod tests;
