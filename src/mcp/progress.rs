//! Progress of long MCP calls: rmcp puts a progress token on every request;
//! the client handler routes the server's `notifications/progress` to the
//! call waiting on that token, which reports them (and the elapsed time
//! every few seconds) as `tool_progress` events.
use crate::protocol::{AgentEvent, EventSink};
use rmcp::handler::client::progress::ProgressDispatcher;
use rmcp::model::ProgressNotificationParam;
use rmcp::service::NotificationContext;
use rmcp::{ClientHandler, RoleClient};
use std::time::{Duration, Instant};

/// How often a running call reports its elapsed time without progress.
pub(crate) const HEARTBEAT: Duration = Duration::from_secs(5);

/// navi's MCP client: the default behaviour plus progress routing.
#[derive(Clone, Default)]
pub(crate) struct NaviClient {
    pub(crate) progress: ProgressDispatcher,
}

impl ClientHandler for NaviClient {
    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        self.progress.handle_notification(params).await;
    }
}

/// Where one call's progress goes: the turn's events, under its call id.
#[derive(Clone)]
pub(crate) struct ProgressSink {
    pub(crate) events: EventSink,
    pub(crate) id: String,
    pub(crate) tool: String,
}

impl ProgressSink {
    pub(crate) async fn report(&self, started: Instant, p: Option<&ProgressNotificationParam>) {
        let ev = AgentEvent::ToolProgress {
            id: self.id.clone(),
            tool: self.tool.clone(),
            elapsed_ms: u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX),
            progress: p.map(|p| p.progress),
            total: p.and_then(|p| p.total),
            message: p.and_then(|p| p.message.clone()),
        };
        self.events.emit(ev).await;
    }
}

/// One line for a progress report: `step 2 of 3 · 2/3 (67%) · 12s` (the
/// time only when `elapsed_ms` is given).
pub(crate) fn describe(
    elapsed_ms: Option<u64>,
    progress: Option<f64>,
    total: Option<f64>,
    message: Option<&str>,
) -> String {
    let mut parts: Vec<String> = Vec::new();
    if let Some(m) = message.filter(|m| !m.trim().is_empty()) {
        parts.push(crate::util::text::preview(m.trim(), 80));
    }
    match (progress, total) {
        (Some(p), Some(t)) if t > 0.0 => parts.push(format!(
            "{}/{} ({:.0}%)",
            num(p),
            num(t),
            (p / t * 100.0).min(100.0)
        )),
        (Some(p), _) => parts.push(num(p)),
        _ => {}
    }
    if let Some(ms) = elapsed_ms {
        parts.push(format!("{}s", ms / 1000));
    }
    parts.join(" · ")
}

fn num(v: f64) -> String {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        format!("{}", v as i64)
    } else {
        format!("{v:.1}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describes_progress() {
        assert_eq!(
            describe(Some(2_400), Some(1.0), Some(3.0), Some("step 1 of 3")),
            "step 1 of 3 · 1/3 (33%) · 2s"
        );
        assert_eq!(describe(Some(12_000), None, None, None), "12s");
        assert_eq!(describe(Some(500), Some(0.5), None, Some(" ")), "0.5 · 0s");
        assert_eq!(describe(None, Some(2.0), Some(4.0), None), "2/4 (50%)");
    }
}
