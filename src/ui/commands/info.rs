//! `/tools` and `/context`: what the current profile offers and where the
//! context's tokens go. Both front ends.
use crate::app::App;

/// The tools the model is offered with `profile`, one line each.
pub(crate) fn tools(app: &App, profile: &str) -> Vec<String> {
    let reg = app
        .agent
        .tools
        .read()
        .map(|r| r.clone())
        .unwrap_or_default();
    let mut names = app
        .profiles
        .get(profile)
        .map(|p| p.enabled_tools.clone())
        .unwrap_or_default();
    let mcp = app.agent.env.mcp.ready_tool_names();
    names.extend(crate::mcp::tool::select_for_profile(&names, &mcp));
    reg.schemas_for(&names)
        .into_iter()
        .map(|s| {
            format!(
                "{:<14} {}",
                s.name,
                crate::ui::format::preview(&s.description, 90)
            )
        })
        .collect()
}

/// The session's token account, where the tokens go, and the fixed cost of
/// its profile — the same figures the status bar and the trigger use.
pub(crate) fn context(app: &App, session: &str) -> Result<Vec<String>, String> {
    let meta = app.store.resolve(session).map_err(|e| e.to_string())?;
    let b = app
        .agent
        .context_breakdown(&meta.id)
        .map_err(|e| e.to_string())?;
    let c = &app.config.context;
    let mut lines = b.render(c.compression_threshold, c.compression_target);
    if let Ok(mut cost) = app.agent.base_cost(&meta.profile_id) {
        cost.counted = app.agent.stored_base_count(&meta.id, cost.total);
        lines.extend(crate::agent::budget::render(&cost));
    }
    Ok(lines)
}
