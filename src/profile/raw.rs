//! Reading one profile's `config.json`.
//!
//! serde does the types, the defaults and the unknown keys
//! (`deny_unknown_fields`); this file adds what serde cannot say: the
//! required keys, the ranges, the id/directory match, and error messages that
//! name the file, the line, the key, the value and what to do.
//!
//! Invariant: every error is a [`ProfileError`] whose `key` is the JSON key
//! at fault (or `line N` for a syntax error, `(root)` / `(file)` for the
//! document as a whole); parsing never panics on any input.

use super::{Profile, ProfileError};
use serde::Deserialize;
use serde::de::{self, Deserializer, SeqAccess, Visitor};
use serde_json::{Map, Value};

/// Where to look up the keys and their types.
const DOCS: &str = "see docs/profiles.md for the keys and their types";
/// Upper bound of the whole-number keys.
const MAX_COUNT: u32 = 10_000;

/// `config.json` as written; `None` = a required key that is absent.
#[derive(Deserialize)]
#[serde(default, deny_unknown_fields)]
struct RawProfile {
    id: Option<String>,
    name: Option<String>,
    description: Option<String>,
    short_description: String,
    full_description: Map<String, Value>,
    llm_backend: String,
    #[serde(deserialize_with = "one_or_many")]
    model: Vec<String>,
    temperature: f64,
    max_iterations: u32,
    enabled_tools: Option<Vec<String>>,
    subagent_tools: Vec<String>,
    core_tools: Option<Vec<String>>,
    think_enabled: bool,
    iteration_budget_enabled: bool,
    goal_anchoring_enabled: bool,
    goal_anchoring_interval: u32,
    anti_stall_enabled: bool,
    anti_stall_threshold: u32,
    step_validation_enabled: bool,
    adaptive_replan_enabled: bool,
    planning_enabled: bool,
    planning_mandatory: bool,
    planning_phase1_enabled: bool,
    planning_phase2_enabled: bool,
    planning_phase3_enabled: bool,
    subagent_planning_enabled: bool,
}

/// The defaults of the optional keys (docs/profiles.md lists the same).
impl Default for RawProfile {
    fn default() -> Self {
        RawProfile {
            id: None,
            name: None,
            description: None,
            short_description: String::new(),
            full_description: Map::new(),
            llm_backend: "ollama".into(),
            model: vec!["gemma4:31b-cloud".into()],
            temperature: 0.7,
            max_iterations: 20,
            enabled_tools: None,
            subagent_tools: Vec::new(),
            core_tools: None,
            think_enabled: true,
            iteration_budget_enabled: true,
            goal_anchoring_enabled: true,
            goal_anchoring_interval: 5,
            anti_stall_enabled: true,
            anti_stall_threshold: 8,
            step_validation_enabled: false,
            adaptive_replan_enabled: false,
            planning_enabled: false,
            planning_mandatory: false,
            planning_phase1_enabled: true,
            planning_phase2_enabled: false,
            planning_phase3_enabled: true,
            subagent_planning_enabled: false,
        }
    }
}

/// `model`: one name or a priority list of names.
fn one_or_many<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    struct Names;
    impl<'de> Visitor<'de> for Names {
        type Value = Vec<String>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("a model name or a list of model names")
        }
        fn visit_str<E: de::Error>(self, v: &str) -> Result<Self::Value, E> {
            Ok(vec![v.to_string()])
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Self::Value, A::Error> {
            let mut out = Vec::new();
            while let Some(s) = seq.next_element::<String>()? {
                out.push(s);
            }
            Ok(out)
        }
    }
    d.deserialize_any(Names)
}

/// Errors about one file.
struct Errors<'a> {
    file: &'a str,
    json: &'a str,
}

impl Errors<'_> {
    fn err(&self, key: &str, why: impl Into<String>) -> ProfileError {
        ProfileError {
            file: self.file.to_string(),
            key: key.to_string(),
            why: why.into(),
        }
    }

    /// An error about the value of `key`, with the line it is on.
    fn at(&self, key: &str, why: impl std::fmt::Display) -> ProfileError {
        match line_of(self.json, key) {
            Some(line) => self.err(key, format!("{why} (line {line})")),
            None => self.err(key, why.to_string()),
        }
    }

    fn required<T>(&self, v: Option<T>, key: &str, what: &str) -> Result<T, ProfileError> {
        v.ok_or_else(|| self.err(key, format!("is required ({what})")))
    }

    /// A whole number from `min` to [`MAX_COUNT`].
    fn count(&self, key: &str, v: u32, min: u32) -> Result<u32, ProfileError> {
        if (min..=MAX_COUNT).contains(&v) {
            Ok(v)
        } else {
            Err(self.at(
                key,
                format!("must be a whole number from {min} to {MAX_COUNT}, got {v}"),
            ))
        }
    }

    /// Turns serde's error into one that names the key, the value and the fix.
    fn serde_error(&self, e: &serde_json::Error, obj: &Map<String, Value>) -> ProfileError {
        let line = e.line();
        let bare = without_position(&e.to_string());
        let names = backticked(&bare);
        if let (Some(key), true) = (names.first(), bare.starts_with("unknown field")) {
            // serde lists the keys it expected after the unknown one.
            let hint = crate::config::suggest_name(key, &names[1..]);
            return self.err(
                key,
                format!("unknown key at line {line}{hint} (see docs/profiles.md for the keys)"),
            );
        }
        if let (Some(key), true) = (names.first(), bare.starts_with("duplicate field")) {
            return self.err(
                key,
                format!("is given twice (line {line}); keep one of them"),
            );
        }
        let key = culprit(obj, &bare).unwrap_or_else(|| "(root)".into());
        self.err(&key, format!("{} (line {line}); {DOCS}", plain(&bare)))
    }
}

/// The key whose value serde rejected: serde_json's message has the line
/// but not the key, so each entry is checked on its own and the one that
/// fails with the same message is it.
fn culprit(obj: &Map<String, Value>, message: &str) -> Option<String> {
    let fails = |k: &String, v: &Value| {
        let one = Map::from_iter([(k.clone(), v.clone())]);
        serde_json::from_value::<RawProfile>(Value::Object(one))
            .err()
            .map(|e| without_position(&e.to_string()))
    };
    let failing: Vec<(&String, String)> = obj
        .iter()
        .filter_map(|(k, v)| fails(k, v).map(|m| (k, m)))
        .collect();
    failing
        .iter()
        .find(|(_, m)| m == message)
        .or(failing.first())
        .map(|(k, _)| (*k).clone())
}

/// serde_json's message without its ` at line L column C` tail.
fn without_position(msg: &str) -> String {
    match msg.rfind(" at line ") {
        Some(i) => msg[..i].to_string(),
        None => msg.to_string(),
    }
}

/// The `` `name` ``s in a serde message, in order.
fn backticked(msg: &str) -> Vec<String> {
    msg.split('`')
        .skip(1)
        .step_by(2)
        .map(String::from)
        .collect()
}

/// serde's type names in words a profile author knows.
fn plain(msg: &str) -> String {
    [
        ("expected u32", "expected a whole number"),
        ("expected f64", "expected a number"),
        ("expected a sequence", "expected a list of strings"),
        ("expected a map", "expected an object"),
        ("expected a boolean", "expected true or false"),
    ]
    .iter()
    .fold(msg.to_string(), |m, (from, to)| m.replace(from, to))
}

/// The line (1-based) of `key` among the top-level keys of the (already
/// parsed, so well-formed) object: keys inside nested values and text inside
/// strings are skipped. Keys with escapes are compared as written.
pub(super) fn line_of(json: &str, key: &str) -> Option<usize> {
    let (mut depth, mut line) = (0usize, 1usize);
    let mut chars = json.char_indices();
    while let Some((i, c)) = chars.next() {
        match c {
            '\n' => line += 1,
            '{' | '[' => depth += 1,
            '}' | ']' => depth = depth.saturating_sub(1),
            '"' => {
                let start = i + 1;
                let mut end = start;
                let mut escaped = false;
                for (j, c) in chars.by_ref() {
                    match c {
                        '\n' => line += 1,
                        '\\' if !escaped => escaped = true,
                        '"' if !escaped => {
                            end = j;
                            break;
                        }
                        _ => escaped = false,
                    }
                }
                let rest = json.get(end + 1..).unwrap_or_default();
                let is_key = rest.trim_start().starts_with(':');
                if depth == 1 && is_key && json.get(start..end) == Some(key) {
                    return Some(line);
                }
            }
            _ => {}
        }
    }
    None
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
    let errs = Errors {
        file,
        json: config_json,
    };
    let obj: Map<String, Value> = match serde_json::from_str::<Value>(config_json) {
        Ok(Value::Object(m)) => m,
        Ok(_) => return Err(errs.err("(root)", "must be a JSON object")),
        Err(e) => {
            return Err(errs.err(&format!("line {}", e.line()), format!("invalid JSON: {e}")));
        }
    };
    let raw: RawProfile =
        serde_json::from_str(config_json).map_err(|e| errs.serde_error(&e, &obj))?;

    let id = errs.required(raw.id, "id", "the directory's name")?;
    if id != dir_id {
        return Err(errs.at(
            "id",
            format!("is {id:?} but the directory is {dir_id:?}; they must match"),
        ));
    }
    if raw.model.is_empty() || raw.model.iter().any(|m| m.trim().is_empty()) {
        return Err(errs.at("model", "must name at least one model"));
    }
    if !(0.0..=2.0).contains(&raw.temperature) {
        return Err(errs.at(
            "temperature",
            format!("must be a number from 0 to 2, got {}", raw.temperature),
        ));
    }
    if crate::config::BackendKind::parse(&raw.llm_backend).is_none() {
        return Err(errs.at(
            "llm_backend",
            format!(
                "unknown backend {:?}; use {}",
                raw.llm_backend,
                crate::config::BackendKind::choices()
            ),
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
        name: errs.required(raw.name, "name", "a display name")?,
        description: errs.required(raw.description, "description", "a few sentences")?,
        short_description: raw.short_description,
        full_description: raw.full_description,
        llm_backend: raw.llm_backend,
        model: raw.model,
        temperature: raw.temperature,
        max_iterations: errs.count("max_iterations", raw.max_iterations, 1)?,
        enabled_tools: errs.required(raw.enabled_tools, "enabled_tools", "a list of tool names")?,
        subagent_tools: raw.subagent_tools,
        core_tools: raw.core_tools,
        think_enabled: raw.think_enabled,
        iteration_budget_enabled: raw.iteration_budget_enabled,
        goal_anchoring_enabled: raw.goal_anchoring_enabled,
        goal_anchoring_interval: errs.count(
            "goal_anchoring_interval",
            raw.goal_anchoring_interval,
            1,
        )?,
        anti_stall_enabled: raw.anti_stall_enabled,
        anti_stall_threshold: errs.count("anti_stall_threshold", raw.anti_stall_threshold, 1)?,
        step_validation_enabled: raw.step_validation_enabled,
        adaptive_replan_enabled: raw.adaptive_replan_enabled,
        planning_enabled: raw.planning_enabled,
        planning_mandatory: raw.planning_mandatory,
        planning_phase1_enabled: raw.planning_phase1_enabled,
        planning_phase2_enabled: raw.planning_phase2_enabled,
        planning_phase3_enabled: raw.planning_phase3_enabled,
        subagent_planning_enabled: raw.subagent_planning_enabled,
        system_prompt: system_prompt.trim().to_string(),
        subagent_system_prompt: subagent_prompt
            .map(|s| s.trim().to_string())
            .unwrap_or_default(),
        id,
        source: source.to_string(),
    })
}
