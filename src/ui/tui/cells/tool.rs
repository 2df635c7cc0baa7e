//! Tool cards: pending (spinner) at `tool_started`, done/failed with a
//! one-line result preview at `tool_call`; expanded, the full arguments and
//! result. A `spawn_agent` card holds the subagent's cells as children.
//!
//! Invariant: a card is paired with its events by the tool call id only.
use super::tool_summary::{BodyLine, body, duration, summary};
use super::{Cell, RenderCtx, SPINNER};
use crate::protocol::ToolDisplay;
use crate::ui::format::args_preview;
use std::time::{Duration, Instant};

/// Finished cards show how long they took from this long on.
const SHOW_DURATION: Duration = Duration::from_millis(500);
use crate::ui::tui::wrap::{self, truncate, wrap};
use ratatui::text::{Line, Span};
use serde_json::Value;

/// Longest result shown when a card is expanded.
const MAX_RESULT_LINES: usize = 500;
/// Child lines shown under a running, collapsed `spawn_agent` card.
const LIVE_CHILD_LINES: usize = 10;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ToolStatus {
    Pending,
    Done,
    Failed,
}

#[derive(Clone, Debug)]
pub struct ToolCard {
    #[expect(dead_code, reason = "the call id of the card; nothing reads it yet")]
    pub(crate) id: String,
    pub tool: String,
    pub(crate) args: Value,
    pub status: ToolStatus,
    pub(crate) result: String,
    /// The result's typed display data, when the tool gave some.
    pub(crate) display: Option<Box<ToolDisplay>>,
    /// Cells of subagents started by this call.
    pub(crate) children: Vec<Cell>,
    /// When it started (live cards only; not known for loaded history).
    pub(crate) started: Option<Instant>,
    /// How long it ran, once finished.
    pub(crate) took: Option<Duration>,
    /// What the tool last reported while running (MCP progress).
    pub(crate) progress: Option<String>,
    /// Its approval question is open: no spinner, no clock (the time the
    /// user takes to answer is not the tool's).
    pub(crate) awaiting_approval: bool,
}

impl ToolCard {
    pub(crate) fn pending(id: &str, tool: &str, args: &Value) -> Self {
        ToolCard {
            id: id.to_string(),
            tool: tool.to_string(),
            args: args.clone(),
            status: ToolStatus::Pending,
            result: String::new(),
            display: None,
            children: Vec::new(),
            started: Some(Instant::now()),
            took: None,
            progress: None,
            awaiting_approval: false,
        }
    }

    pub(crate) fn finish(&mut self, result: &str, success: bool) {
        self.took = self.started.map(|s| s.elapsed());
        self.result = result.to_string();
        self.status = if success {
            ToolStatus::Done
        } else {
            ToolStatus::Failed
        };
    }

    pub(crate) fn animated(&self) -> bool {
        (self.status == ToolStatus::Pending && !self.awaiting_approval)
            || self.children.iter().any(Cell::animated)
    }

    /// The approval question for this call opened (`true`) or was answered:
    /// the clock starts again at the answer.
    pub(crate) fn set_awaiting_approval(&mut self, waiting: bool) {
        if self.awaiting_approval && !waiting && self.started.is_some() {
            self.started = Some(Instant::now());
        }
        self.awaiting_approval = waiting;
    }

    fn header(&self, ctx: &RenderCtx<'_>) -> Line<'static> {
        let th = &ctx.theme.s;
        let (icon, st) = match self.status {
            ToolStatus::Pending if self.awaiting_approval => ("?", th.tool_pending),
            ToolStatus::Pending => (SPINNER[ctx.spinner % SPINNER.len()], th.tool_pending),
            ToolStatus::Done => ("✓", th.tool_ok),
            ToolStatus::Failed => ("✗", th.tool_failed),
        };
        let w = usize::from(ctx.width);
        // Durations under half a second are noise; a live card counts seconds.
        let time = match (self.took, self.started) {
            _ if self.status == ToolStatus::Pending && self.awaiting_approval => {
                " · waiting for approval".to_string()
            }
            (Some(d), _) if d >= SHOW_DURATION => format!(" · {}", duration(d)),
            (None, Some(s)) if self.status == ToolStatus::Pending => {
                let d = s.elapsed();
                if d >= Duration::from_secs(1) {
                    format!(" · {}s", d.as_secs())
                } else {
                    String::new()
                }
            }
            _ => String::new(),
        };
        let time = match (&self.progress, self.status) {
            (Some(p), ToolStatus::Pending) => format!("{time} · {p}"),
            _ => time,
        };
        let used = 2 + wrap::width(&self.tool) + 2 + wrap::width(&time);
        let mut spans = vec![
            Span::styled(format!("{icon} "), st),
            Span::styled(self.tool.clone(), th.tool_name),
        ];
        if !time.is_empty() {
            spans.push(Span::styled(time, th.dim));
        }
        if w > used + 3 {
            let args = args_preview(&self.args, 400);
            if !args.is_empty() {
                spans.push(Span::raw("  "));
                spans.push(Span::styled(truncate(&args, w - used), th.tool_args));
            }
        }
        Line::from(spans)
    }

    pub(crate) fn render(&mut self, expanded: bool, ctx: &RenderCtx<'_>) -> Vec<Line<'static>> {
        let th = ctx.theme.s.clone();
        let w = usize::from(ctx.width);
        let mut out = vec![self.header(ctx)];
        let bar = |st| Span::styled("  │ ", st);
        if expanded && !self.args.is_null() {
            out.push(Line::from(vec![
                Span::styled("  ├ ", th.tool_args),
                Span::styled("arguments", th.dim),
            ]));
            let args = serde_json::to_string_pretty(&self.args).unwrap_or_default();
            for l in args.lines() {
                let line = Line::from(vec![
                    bar(th.tool_args),
                    Span::styled(l.to_string(), th.tool_args),
                ]);
                out.extend(wrap(&line, w, &[bar(th.tool_args)]));
            }
        }
        if !self.children.is_empty() {
            let child_ctx = ctx.with_width(ctx.width.saturating_sub(4));
            let mut lines: Vec<Line<'static>> = Vec::new();
            for c in &mut self.children {
                lines.extend(c.lines(&child_ctx).iter().cloned());
            }
            let show_all = expanded;
            let live = self.status == ToolStatus::Pending;
            if show_all || live {
                let skip = if show_all {
                    0
                } else {
                    lines.len().saturating_sub(LIVE_CHILD_LINES)
                };
                if skip > 0 {
                    out.push(Line::from(vec![
                        bar(th.subagent),
                        Span::styled(format!("… {skip} earlier lines (Ctrl-O to expand)"), th.dim),
                    ]));
                }
                for l in lines.into_iter().skip(skip) {
                    let mut spans = vec![bar(th.subagent)];
                    spans.extend(l.spans);
                    out.push(Line::from(spans));
                }
            } else {
                let calls = self
                    .children
                    .iter()
                    .filter(|c| matches!(c.kind, super::CellKind::Tool(_)))
                    .count();
                let plural = if calls == 1 { "" } else { "s" };
                out.push(Line::from(vec![
                    bar(th.subagent),
                    Span::styled(
                        format!(
                            "subagent work hidden: {calls} tool call{plural}, {} lines (Ctrl-O to expand)",
                            lines.len()
                        ),
                        th.dim,
                    ),
                ]));
            }
        }
        if self.status == ToolStatus::Pending {
            return out;
        }
        let rst = if self.status == ToolStatus::Failed {
            th.tool_failed
        } else {
            th.tool_result
        };
        if !expanded {
            let p = summary(self.display.as_deref(), &self.result);
            let p = if p.is_empty() {
                "(no output)".to_string()
            } else {
                p
            };
            out.push(Line::from(vec![
                Span::styled("  └ ", rst),
                Span::styled(truncate(&p, w.saturating_sub(4).max(1)), rst),
            ]));
            return out;
        }
        let lines = body(self.display.as_deref(), &self.result);
        let total = lines.len();
        out.push(Line::from(vec![
            Span::styled("  ├ ", rst),
            Span::styled("result", th.dim),
        ]));
        for l in lines.into_iter().take(MAX_RESULT_LINES) {
            let (text, st) = match l {
                BodyLine::Text(t) => (t, rst),
                BodyLine::Label(t) => (t, th.dim),
                BodyLine::Added(t) => (format!("+{t}"), th.tool_ok),
                BodyLine::Removed(t) => (format!("-{t}"), th.tool_failed),
            };
            let line = Line::from(vec![bar(rst), Span::styled(text.replace('\t', "    "), st)]);
            out.extend(wrap(&line, w, &[bar(rst)]));
        }
        let tail = if total > MAX_RESULT_LINES {
            format!("… {} more lines", total - MAX_RESULT_LINES)
        } else if total == 0 {
            "(no output)".to_string()
        } else {
            "end of result".to_string()
        };
        out.push(Line::from(vec![
            Span::styled("  └ ", rst),
            Span::styled(tail, th.dim),
        ]));
        out
    }
}
