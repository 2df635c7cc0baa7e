//! Per-invocation adjustments of the main run (`navi run --system …
//! --temperature … --no-plan --no-tools --max-tokens …`). They change the
//! profile a persistent turn runs with, never the stored profile, and do not
//! reach subagents.
use crate::profile::Profile;

#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct TurnTweaks {
    /// Extra system text, appended to the profile's prompt.
    pub(crate) system: Option<String>,
    pub(crate) temperature: Option<f64>,
    /// Skip the planning phases.
    pub(crate) no_plan: bool,
    /// Offer the model no tools at all.
    pub(crate) no_tools: bool,
    /// Cap on generated tokens per model call.
    pub(crate) max_tokens: Option<u32>,
}

impl TurnTweaks {
    /// The profile this turn runs with.
    pub(crate) fn apply(&self, mut p: Profile) -> Profile {
        if let Some(s) = self.system.as_deref().filter(|s| !s.trim().is_empty()) {
            if p.system_prompt.trim().is_empty() {
                p.system_prompt = s.to_string();
            } else {
                p.system_prompt = format!("{}\n\n{s}", p.system_prompt.trim_end());
            }
        }
        if let Some(t) = self.temperature {
            p.temperature = t;
        }
        if self.no_plan {
            p.planning_enabled = false;
            p.planning_mandatory = false;
            p.planning_phase1_enabled = false;
            p.planning_phase3_enabled = false;
        }
        if self.no_tools {
            p.enabled_tools.clear();
            p.subagent_tools.clear();
        }
        p
    }
}
