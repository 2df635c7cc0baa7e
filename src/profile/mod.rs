//! Profiles: the agent's identity, tools and behaviour for one domain.
//!
//! Loaded from `profiles/<id>/config.json` + `system_prompt.txt` (+ optional
//! `subagent_system_prompt.txt`). Built-ins are compiled in; a profile dir in
//! the user's config dir adds or overrides by id. A broken profile is reported
//! (file, key, why) and skipped; the others still load.

use serde::Serialize;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Profile {
    pub id: String,
    pub name: String,
    pub description: String,
    pub short_description: String,
    pub full_description: Map<String, Value>,
    pub llm_backend: String,
    /// Priority list: the first model the server has wins.
    pub model: Vec<String>,
    pub temperature: f64,
    pub max_iterations: u32,
    pub enabled_tools: Vec<String>,
    pub subagent_tools: Vec<String>,
    pub think_enabled: bool,
    pub iteration_budget_enabled: bool,
    pub goal_anchoring_enabled: bool,
    pub goal_anchoring_interval: u32,
    pub anti_stall_enabled: bool,
    pub anti_stall_threshold: u32,
    pub step_validation_enabled: bool,
    pub adaptive_replan_enabled: bool,
    pub planning_enabled: bool,
    pub planning_mandatory: bool,
    pub planning_phase1_enabled: bool,
    pub planning_phase2_enabled: bool,
    pub planning_phase3_enabled: bool,
    pub subagent_planning_enabled: bool,
    #[serde(skip)]
    pub system_prompt: String,
    #[serde(skip)]
    pub subagent_system_prompt: String,
    /// Where it came from: `built-in` or a directory path.
    pub source: String,
}

/// A profile that could not be loaded.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
#[error("profile {file}: {key}: {why}")]
pub struct ProfileError {
    pub file: String,
    pub key: String,
    pub why: String,
}

const KNOWN_KEYS: &[&str] = &[
    "id",
    "name",
    "description",
    "short_description",
    "full_description",
    "llm_backend",
    "model",
    "temperature",
    "max_iterations",
    "enabled_tools",
    "subagent_tools",
    "think_enabled",
    "iteration_budget_enabled",
    "goal_anchoring_enabled",
    "goal_anchoring_interval",
    "anti_stall_enabled",
    "anti_stall_threshold",
    "step_validation_enabled",
    "adaptive_replan_enabled",
    "planning_enabled",
    "planning_mandatory",
    "planning_phase1_enabled",
    "planning_phase2_enabled",
    "planning_phase3_enabled",
    "subagent_planning_enabled",
];

struct Reader<'a> {
    obj: &'a Map<String, Value>,
    file: &'a str,
}

impl Reader<'_> {
    fn err(&self, key: &str, why: impl Into<String>) -> ProfileError {
        ProfileError {
            file: self.file.to_string(),
            key: key.to_string(),
            why: why.into(),
        }
    }

    fn string(&self, key: &str, default: Option<&str>) -> Result<String, ProfileError> {
        match (self.obj.get(key), default) {
            (Some(Value::String(s)), _) => Ok(s.clone()),
            (Some(v), _) => Err(self.err(key, format!("must be a string, got {v}"))),
            (None, Some(d)) => Ok(d.to_string()),
            (None, None) => Err(self.err(key, "is required")),
        }
    }

    fn boolean(&self, key: &str, default: bool) -> Result<bool, ProfileError> {
        match self.obj.get(key) {
            None => Ok(default),
            Some(Value::Bool(b)) => Ok(*b),
            Some(v) => Err(self.err(key, format!("must be true or false, got {v}"))),
        }
    }

    fn uint(&self, key: &str, default: u32, min: u32) -> Result<u32, ProfileError> {
        match self.obj.get(key) {
            None => Ok(default),
            Some(v) => match v.as_u64() {
                Some(n) if n >= u64::from(min) && n <= 10_000 => Ok(n as u32),
                _ => Err(self.err(
                    key,
                    format!("must be a whole number from {min} to 10000, got {v}"),
                )),
            },
        }
    }

    fn list(&self, key: &str, required: bool) -> Result<Vec<String>, ProfileError> {
        match self.obj.get(key) {
            None if required => Err(self.err(key, "is required (a list of tool names)")),
            None => Ok(Vec::new()),
            Some(Value::Array(a)) => a
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(String::from)
                        .ok_or_else(|| self.err(key, format!("items must be strings, got {v}")))
                })
                .collect(),
            Some(v) => Err(self.err(key, format!("must be a list of strings, got {v}"))),
        }
    }
}

/// Parses one profile from its files' contents.
pub fn parse(
    config_json: &str,
    system_prompt: &str,
    subagent_prompt: Option<&str>,
    file: &str,
    dir_id: &str,
    source: &str,
) -> Result<Profile, ProfileError> {
    let root: Value = serde_json::from_str(config_json).map_err(|e| ProfileError {
        file: file.to_string(),
        key: format!("line {}", e.line()),
        why: format!("invalid JSON: {e}"),
    })?;
    let Value::Object(obj) = &root else {
        return Err(ProfileError {
            file: file.into(),
            key: "(root)".into(),
            why: "must be a JSON object".into(),
        });
    };
    let r = Reader { obj, file };
    if let Some(unknown) = obj.keys().find(|k| !KNOWN_KEYS.contains(&k.as_str())) {
        return Err(r.err(
            unknown,
            "unknown key (typo?); see docs/profiles.md for the keys",
        ));
    }
    let id = r.string("id", None)?;
    if id != dir_id {
        return Err(r.err(
            "id",
            format!("is {id:?} but the directory is {dir_id:?}; they must match"),
        ));
    }
    let model = match obj.get("model") {
        None => vec!["gemma4:31b-cloud".to_string()],
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(_)) => r.list("model", false)?,
        Some(v) => {
            return Err(r.err(
                "model",
                format!("must be a string or a list of strings, got {v}"),
            ));
        }
    };
    if model.is_empty() || model.iter().any(|m| m.trim().is_empty()) {
        return Err(r.err("model", "must name at least one model"));
    }
    let temperature = match obj.get("temperature") {
        None => 0.7,
        Some(v) => match v.as_f64() {
            Some(t) if (0.0..=2.0).contains(&t) => t,
            _ => {
                return Err(r.err(
                    "temperature",
                    format!("must be a number from 0 to 2, got {v}"),
                ));
            }
        },
    };
    let full_description = match obj.get("full_description") {
        None => Map::new(),
        Some(Value::Object(m)) => m.clone(),
        Some(v) => return Err(r.err("full_description", format!("must be an object, got {v}"))),
    };
    let llm_backend = r.string("llm_backend", Some("ollama"))?;
    if crate::config::BackendKind::parse(&llm_backend).is_none() {
        return Err(r.err(
            "llm_backend",
            format!("unknown backend {llm_backend:?}; use \"ollama\" or \"openai\""),
        ));
    }
    if system_prompt.trim().is_empty() {
        return Err(ProfileError {
            file: file.replace("config.json", "system_prompt.txt"),
            key: "(file)".into(),
            why: "is missing or empty".into(),
        });
    }
    Ok(Profile {
        name: r.string("name", None)?,
        description: r.string("description", None)?,
        short_description: r.string("short_description", Some(""))?,
        full_description,
        llm_backend,
        model,
        temperature,
        max_iterations: r.uint("max_iterations", 20, 1)?,
        enabled_tools: r.list("enabled_tools", true)?,
        subagent_tools: r.list("subagent_tools", false)?,
        think_enabled: r.boolean("think_enabled", true)?,
        iteration_budget_enabled: r.boolean("iteration_budget_enabled", true)?,
        goal_anchoring_enabled: r.boolean("goal_anchoring_enabled", true)?,
        goal_anchoring_interval: r.uint("goal_anchoring_interval", 5, 1)?,
        anti_stall_enabled: r.boolean("anti_stall_enabled", true)?,
        anti_stall_threshold: r.uint("anti_stall_threshold", 8, 1)?,
        step_validation_enabled: r.boolean("step_validation_enabled", false)?,
        adaptive_replan_enabled: r.boolean("adaptive_replan_enabled", false)?,
        planning_enabled: r.boolean("planning_enabled", false)?,
        planning_mandatory: r.boolean("planning_mandatory", false)?,
        planning_phase1_enabled: r.boolean("planning_phase1_enabled", true)?,
        planning_phase2_enabled: r.boolean("planning_phase2_enabled", false)?,
        planning_phase3_enabled: r.boolean("planning_phase3_enabled", true)?,
        subagent_planning_enabled: r.boolean("subagent_planning_enabled", false)?,
        system_prompt: system_prompt.trim().to_string(),
        subagent_system_prompt: subagent_prompt
            .map(|s| s.trim().to_string())
            .unwrap_or_default(),
        id,
        source: source.to_string(),
    })
}

/// All loaded profiles plus the problems met while loading.
#[derive(Clone, Debug, Default)]
pub struct ProfileRegistry {
    profiles: BTreeMap<String, Profile>,
    pub errors: Vec<ProfileError>,
}

impl ProfileRegistry {
    /// Built-in profiles, then those in `user_dir` (which override by id).
    pub fn load(user_dir: Option<&Path>) -> Self {
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
    pub fn load_dir(&mut self, dir: &Path) {
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

    pub fn get(&self, id: &str) -> Option<&Profile> {
        self.profiles.get(id)
    }

    pub fn all(&self) -> impl Iterator<Item = &Profile> {
        self.profiles.values()
    }

    pub fn ids(&self) -> Vec<String> {
        self.profiles.keys().cloned().collect()
    }

    /// The profile new sessions start with.
    pub fn default_id(&self) -> String {
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
    pub fn unknown_tool_warnings(&self, is_known: &dyn Fn(&str) -> bool) -> Vec<String> {
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
