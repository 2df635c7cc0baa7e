//! Listings a front end shows for an open session (`/pin`, `/tools`,
//! `/mcp`, `/context`, `/approvals`, `/model`): reads, as lines, worded once
//! for every front end.
use super::handle::SessionHandle;
use crate::agent::session::ModelChoice;
use crate::session::pins::Entry as PinEntry;
pub(crate) use crate::util::text::preview;

/// `role: text…` of a pinnable message (an image-only one shows as `(image)`).
pub(crate) fn pin_preview(e: &PinEntry) -> String {
    let text = e.text.split_whitespace().collect::<Vec<_>>().join(" ");
    let text = if text.is_empty() {
        "(image)".to_string()
    } else {
        text
    };
    format!("{}: {}", e.role, preview(&text, 70))
}

impl SessionHandle {
    /// `/pin` alone: the pinnable messages, numbered, pins marked.
    pub fn pin_list(&self) -> Result<Vec<String>, String> {
        let list = crate::session::pins::entries(&self.store, self.session.id())
            .map_err(|e| e.to_string())?;
        if list.is_empty() {
            return Ok(vec![
                "nothing to pin yet: no messages in this session".into(),
            ]);
        }
        let mut out: Vec<String> = list
            .iter()
            .map(|e| {
                let mark = if e.pinned { "📌" } else { "  " };
                format!("{mark}{:>4}  {}", e.n, pin_preview(e))
            })
            .collect();
        out.push("/pin N keeps message N verbatim through compaction; /unpin N undoes it".into());
        Ok(out)
    }

    /// `/model` alone: the model in use over the profile's list.
    pub fn model_line(&self) -> String {
        let chosen = match self.session.model_choice() {
            Some(ModelChoice::Named(m)) => Some(m),
            Some(ModelChoice::ProfileList) => None,
            None => self.agent.model_override(),
        };
        match chosen {
            Some(m) => format!(
                "model: {m} (set with /model; \"/model default\" goes back to the profile's list)"
            ),
            None => {
                let profile = self.info().map(|m| m.profile_id).unwrap_or_default();
                let list = self
                    .agent
                    .profiles
                    .get(&profile)
                    .map(|p| p.model.join(" → "))
                    .unwrap_or_default();
                format!("model: the profile's priority list ({list})")
            }
        }
    }

    /// `/tools`: what the model is offered with the session's profile, one
    /// line each (the session's own MCP tools included).
    pub fn tool_lines(&self) -> Vec<String> {
        let profile = self.info().map(|m| m.profile_id).unwrap_or_default();
        let reg = self.agent.registry_for(&self.session);
        let mut names = self
            .agent
            .profiles
            .get(&profile)
            .map(|p| p.enabled_tools.clone())
            .unwrap_or_default();
        let mcp = self.agent.mcp_ready(&self.session);
        names.extend(crate::mcp::tool::select_for_profile(&names, &mcp));
        reg.schemas_for(&names)
            .into_iter()
            .map(|s| format!("{:<14} {}", s.name, preview(&s.description, 90)))
            .collect()
    }

    /// `/mcp`: the MCP servers this session's turns use (state, tools,
    /// stderr tail).
    pub fn mcp_lines(&self) -> Vec<String> {
        let mut status = self.agent.mcp.status();
        if let Some(m) = self.session.mcp() {
            status.extend(m.hub.status());
        }
        crate::mcp::report::status_lines(&status, true)
    }

    /// `/context`: the token account, where the tokens go, and the fixed
    /// cost of the profile — the figures the status bar and the trigger use.
    pub fn context_lines(&self) -> Result<Vec<String>, String> {
        let id = self.session.id();
        let profile = self.info().map(|m| m.profile_id).unwrap_or_default();
        let b = if self.session.is_pending() {
            self.agent.breakdown(id, &profile, &[], 0)
        } else {
            match self.session.load() {
                Ok(Some(s)) => self.agent.breakdown(
                    id,
                    &s.meta.profile_id,
                    &s.context,
                    s.meta.context_token_count,
                ),
                Ok(None) => Ok(Default::default()),
                Err(e) => Err(e),
            }
        }
        .map_err(|e| e.to_string())?;
        let c = &self.agent.config.context;
        let mut lines = b.render(c.compression_threshold, c.compression_target);
        if let Ok(mut cost) = self.agent.base_cost(&profile) {
            cost.counted = self.agent.stored_base_count(id, cost.total);
            lines.extend(crate::agent::budget::render(&cost));
        }
        lines.extend(self.agent.instructions(&self.session).lines());
        Ok(lines)
    }

    /// `/approvals`: the approval mode, the sandbox, and what this session
    /// allowed for itself.
    pub fn approval_lines(&self) -> Vec<String> {
        let mut lines = self.agent.gate.report(self.session.tools());
        lines.insert(
            1,
            format!(
                "sandbox: {}",
                crate::sandbox::describe(&self.agent.config.sandbox)
            ),
        );
        lines
    }
}
