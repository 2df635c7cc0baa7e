//! Tools on demand: which tool schemas go with a request.
//!
//! Tool schemas are most of a request's fixed cost, and a small local model
//! with a 4k window cannot pay for fifteen of them on every call. So, with
//! `[tools].on_demand` (the default), a request carries:
//! 1. the profile's core tools (`core_tools`, else `profile::DEFAULT_CORE_TOOLS`),
//! 2. `load_tools`, whose description names every other tool the run may
//!    use with one line (MCP tools as one line per server),
//! 3. the tools loaded so far in this session, in the order they were
//!    loaded.
//!
//! When deferring would save little (at most [`MIN_SAVING`] tokens: a few
//! small tools beyond the core), everything is sent as before.
//!
//! A tool is loaded by a `load_tools` call, or simply by calling it: a
//! model that names a tool it has not loaded still gets the call run (the
//! registry checks its arguments as usual). Loaded names are kept in the
//! session's state, so they stay in every later request: the tools array
//! only ever grows at its end, and the server's prompt cache keeps the rest.
use super::AgentError;
use super::tokens::estimate_tools;
use super::turn::Run;
use crate::llm::ToolSchema;
use crate::profile::{DEFAULT_CORE_TOOLS, Profile};
use crate::tools::ToolRegistry;
use crate::tools::builtin::load_tools::NAME as LOAD_TOOLS;
use serde_json::json;

/// Session state key of the loaded tool names (a JSON list).
const STATE_KEY: &str = "loaded_tools";
/// Tools are deferred only when that saves more than this many (estimated)
/// tokens on the first request: below it, the extra call to load a tool
/// costs more than it saves.
pub(crate) const MIN_SAVING: u64 = 400;
/// After this many `load_tools` calls that loaded nothing new in one turn,
/// the user is told the model is looping (the iteration cap still ends it).
pub(crate) const REPEATED_LOADS: u32 = 3;
/// A deferred tool's line is cut to about this many characters.
const LINE_CHARS: usize = 48;

/// The schemas a request carries, given every tool the run may use (`all`,
/// in the profile's order), what is loaded, and the switch.
pub(crate) fn offered(
    registry: &ToolRegistry,
    profile: &Profile,
    all: &[String],
    loaded: &[String],
    on_demand: bool,
) -> Vec<ToolSchema> {
    let core = core_of(profile);
    let deferred: Vec<&String> = all
        .iter()
        .filter(|n| !core.contains(&n.as_str()) && n.as_str() != LOAD_TOOLS)
        .filter(|n| registry.get(n).is_some())
        .collect();
    if !on_demand || deferred.is_empty() {
        return registry.schemas_for(all);
    }
    let core_names: Vec<String> = all
        .iter()
        .filter(|n| core.contains(&n.as_str()))
        .cloned()
        .collect();
    let mut out = registry.schemas_for(&core_names);
    out.push(load_tools_schema(registry, &deferred));
    let every = registry.schemas_for(all);
    if estimate_tools(&every).saturating_sub(estimate_tools(&out)) <= MIN_SAVING {
        // A few small tools cost less than listing them would save.
        return every;
    }
    let loaded: Vec<String> = loaded.iter().filter(|n| all.contains(n)).cloned().collect();
    out.extend(registry.schemas_for(&loaded));
    out
}

/// The names whose full schema is always sent.
fn core_of(profile: &Profile) -> Vec<&str> {
    match &profile.core_tools {
        Some(list) => list.iter().map(String::as_str).collect(),
        None => DEFAULT_CORE_TOOLS.to_vec(),
    }
}

/// `load_tools` with the deferred tools listed in its description.
fn load_tools_schema(registry: &ToolRegistry, deferred: &[&String]) -> ToolSchema {
    let parameters = registry
        .get(LOAD_TOOLS)
        .map(|t| t.schema().parameters)
        .unwrap_or_else(|| {
            json!({"type": "object", "properties": {"names": {"type": "array", "items": {"type": "string"}}}, "required": ["names"]})
        });
    let mut lines = Vec::new();
    let mut servers: Vec<(String, Vec<String>)> = Vec::new();
    for name in deferred {
        if let Some((server, tool)) = name.split_once("__") {
            match servers.iter_mut().find(|(s, _)| s == server) {
                Some((_, tools)) => tools.push(tool.to_string()),
                None => servers.push((server.to_string(), vec![tool.to_string()])),
            }
            continue;
        }
        let desc = registry
            .get(name)
            .map(|t| one_line(&t.schema().description))
            .unwrap_or_default();
        lines.push(format!("{name}: {desc}"));
    }
    for (server, tools) in servers {
        lines.push(format!("{server} (MCP server): {}", tools.join(", ")));
    }
    ToolSchema {
        name: LOAD_TOOLS.to_string(),
        description: format!(
            "Load tools before using them (a server's name loads all its tools). Available:\n{}",
            lines.join("\n")
        ),
        parameters,
    }
}

/// The first clause of a description (up to `. `, `; `, ` (` or `: `),
/// cut on a word to about [`LINE_CHARS`] characters.
fn one_line(desc: &str) -> String {
    let first = desc.trim().lines().next().unwrap_or_default();
    let end = [". ", "; ", " (", ": "]
        .iter()
        .filter_map(|p| first.find(p))
        .min()
        .unwrap_or(first.len());
    let first = first[..end].trim_end_matches('.');
    if first.chars().count() <= LINE_CHARS {
        return first.to_string();
    }
    let cut: String = first.chars().take(LINE_CHARS).collect();
    let cut = cut.rsplit_once(' ').map(|(a, _)| a).unwrap_or(&cut);
    format!("{}…", cut.trim_end_matches([',', ';', ':']))
}

impl Run<'_> {
    /// The tools loaded in this session so far (persisted sessions only).
    pub(super) fn read_loaded(&self) -> Vec<String> {
        if self.is_subagent() {
            return Vec::new();
        }
        self.conv
            .store()
            .and_then(|s| s.get_state(&self.conv.session_id, STATE_KEY).ok().flatten())
            .and_then(|v| serde_json::from_str(&v).ok())
            .unwrap_or_default()
    }

    /// The schemas this run's requests carry now.
    pub(super) fn offered_schemas(&self) -> Vec<ToolSchema> {
        let reg = self.agent.registry_for(&self.session);
        offered(
            &reg,
            &self.profile,
            &self.tool_names(),
            &self.loaded,
            self.agent.config.tools.on_demand,
        )
    }

    /// Every schema a call may use: all the run's tools plus `load_tools`.
    pub(super) fn callable_schemas(&self, reg: &ToolRegistry) -> Vec<ToolSchema> {
        let mut all = reg.schemas_for(&self.tool_names());
        if let Some(load) = self
            .offered_schemas()
            .into_iter()
            .find(|s| s.name == LOAD_TOOLS)
        {
            all.push(load);
        }
        all
    }

    /// [`note_call`](Self::note_call), and the warning when the model keeps
    /// loading what it has.
    pub(super) async fn after_call(
        &mut self,
        name: &str,
        metadata: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<(), AgentError> {
        let before = self.repeated_loads;
        self.note_call(name, metadata)?;
        if before < REPEATED_LOADS && self.repeated_loads == REPEATED_LOADS {
            self.emit(crate::protocol::AgentEvent::Warning {
                message: format!(
                    "the model keeps loading tools it already has ({REPEATED_LOADS} times this turn); the iteration limit ends the turn if it goes on"
                ),
            })
            .await;
        }
        Ok(())
    }

    /// After a call: a `load_tools` result, or a call to a tool that was
    /// not loaded yet, adds tools to every later request of the session.
    fn note_call(
        &mut self,
        name: &str,
        metadata: &serde_json::Map<String, serde_json::Value>,
    ) -> Result<(), AgentError> {
        let mut new: Vec<String> = if name == LOAD_TOOLS {
            metadata
                .get("loaded")
                .and_then(|v| serde_json::from_value(v.clone()).ok())
                .unwrap_or_default()
        } else {
            vec![name.to_string()]
        };
        let offered: Vec<String> = self.offered_schemas().into_iter().map(|s| s.name).collect();
        let all = self.tool_names();
        let asked = new.clone();
        new.retain(|n| all.contains(n) && !offered.contains(n) && !self.loaded.contains(n));
        if new.is_empty() {
            if name == LOAD_TOOLS && !asked.is_empty() {
                // Loading what is already there: say so, and count it (a
                // small model can loop on this; see `REPEATED_LOADS`).
                self.repeated_loads += 1;
                if let Some(idx) = self.conv.last_result_index() {
                    let note = format!(
                        "{} Already in your tool list: {}. Call it directly with its own arguments.",
                        super::context::NOTE_PREFIX,
                        asked.join(", ")
                    );
                    self.conv.amend_context(idx, &note)?;
                }
            }
            return Ok(());
        }
        self.loaded.extend(new);
        if !self.is_subagent()
            && let Some(store) = self.conv.store()
        {
            let json = serde_json::to_string(&self.loaded).unwrap_or_default();
            store.put_state(&self.conv.session_id, STATE_KEY, &json)?;
        }
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn one_line_takes_the_first_sentence_and_cuts_on_a_word() {
        assert_eq!(one_line("Search the web. Returns links."), "Search the web");
        assert_eq!(one_line("Run Python code.\nMore."), "Run Python code");
        assert_eq!(
            one_line("Run a command (sh -c); returns it"),
            "Run a command"
        );
        assert_eq!(one_line("Task checklist: set or add"), "Task checklist");
        let long =
            "Read, write, search and list files and directories under the allowed roots with care";
        let l = one_line(long);
        assert!(
            l.ends_with('…') && l.chars().count() <= LINE_CHARS + 1,
            "{l}"
        );
    }
}
