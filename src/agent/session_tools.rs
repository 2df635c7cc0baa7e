//! The tools a session's turns see: the process's registry (built-ins,
//! user tools, the configured MCP servers) plus the tools of the session's
//! own MCP servers (an editor may bring servers for one session).
use super::session::SessionMcp;
use super::{Agent, Session};
use crate::protocol::AgentEvent;
use crate::tools::ToolRegistry;

impl Agent {
    /// The registry a turn of `session` runs its calls through.
    pub(crate) fn registry_for(&self, session: &Session) -> ToolRegistry {
        let mut reg = self.tools.read().map(|r| r.clone()).unwrap_or_default();
        if let Some(SessionMcp { tools, .. }) = session.mcp()
            && let Ok(own) = tools.read()
        {
            for name in own.names() {
                if let Some(t) = own.get(&name)
                    && let Err(e) = reg.register_mcp(t.clone())
                {
                    tracing::warn!("the session's MCP tool {name} is left out: {e}");
                }
            }
        }
        reg
    }

    /// Gives each replayed `tool_started` of `session` its typed call data,
    /// described from the stored arguments (an edit's old text is not kept).
    pub(crate) fn describe_replayed(&self, session: &Session, events: &mut [AgentEvent]) {
        let reg = self.registry_for(session);
        for e in events.iter_mut() {
            if let AgentEvent::ToolStarted {
                tool, args, call, ..
            } = e
                && call.is_none()
            {
                let info = reg.describe_stored(tool, args, session.work_dir());
                *call = Some(Box::new(info));
            }
        }
    }

    /// Names of the MCP tools ready now, the session's own included.
    pub(crate) fn mcp_ready(&self, session: &Session) -> Vec<String> {
        let mut names = self.mcp.ready_tool_names();
        if let Some(m) = session.mcp() {
            names.extend(m.hub.ready_tool_names());
        }
        names
    }

    /// MCP start-up warnings not shown yet, the session's own included.
    pub(crate) fn mcp_warnings(&self, session: &Session) -> Vec<String> {
        let mut out = self.mcp.take_warnings();
        if let Some(m) = session.mcp() {
            out.extend(m.hub.take_warnings());
        }
        out
    }
}
