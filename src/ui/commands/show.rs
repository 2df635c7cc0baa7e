//! `/show [N]`: a tool result of this session in full, for front ends that
//! print only its summary (plain mode, `navi run`). `N` counts back from the
//! last result (1, the default, is the last); a subagent's calls count too.
use crate::app::SessionHandle;
use crate::protocol::AgentEvent;
use crate::ui::format::args_preview;

/// The lines `/show` prints: a heading naming the call, then its result as
/// stored (command output, notes), nothing cut.
pub(crate) fn lines(session: &SessionHandle, arg: Option<&str>) -> Result<Vec<String>, String> {
    let n = match arg {
        None => 1,
        Some(a) => a
            .parse::<usize>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("usage: /show [n] — n counts back from the last tool result (1 = the last), got '{a}'"))?,
    };
    let history = session.history()?;
    let results: Vec<&AgentEvent> = history
        .iter()
        .filter(|e| matches!(e, AgentEvent::ToolCall { .. }))
        .collect();
    if results.is_empty() {
        return Err("no tool results in this session yet".into());
    }
    let Some(AgentEvent::ToolCall {
        tool,
        args,
        result,
        success,
        ..
    }) = results.len().checked_sub(n).and_then(|i| results.get(i))
    else {
        return Err(format!(
            "this session has {} tool result(s); /show 1 is the last",
            results.len()
        ));
    };
    let mark = if *success { "✓" } else { "✗" };
    let mut out = vec![format!(
        "{mark} {tool}({}) — result {n} of {} counting back from the last:",
        args_preview(args, 200),
        results.len()
    )];
    if result.is_empty() {
        out.push("(empty)".into());
    } else {
        out.extend(result.lines().map(String::from));
    }
    Ok(out)
}
