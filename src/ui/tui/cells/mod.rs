//! Transcript cells: one item of the conversation and how it draws.
//!
//! Invariants:
//! - A cell renders to lines no wider than the width it is given; the result
//!   is cached per (width, render generation, spinner frame when animated)
//!   and recomputed only after the cell changed (`touch`).
//! - Only the open cell (the one receiving deltas) and animated cells (a
//!   pending tool, live thinking) are re-rendered while a turn streams.
//! - Subagent activity lives in the `children` of its `spawn_agent` card.
mod changes;
mod plan;
mod tool;
mod tool_summary;

pub(crate) use tool::{ToolCard, ToolStatus};

use super::stream_doc::StreamDoc;
use super::theme::Theme;
use super::wrap::{self, wrap};
use ratatui::style::Style;
use ratatui::text::{Line, Span};

pub(crate) const SPINNER: [&str; 10] = ["⠋", "⠙", "⠹", "⠸", "⠼", "⠴", "⠦", "⠧", "⠇", "⠏"];

/// What a cell shows.
#[derive(Clone, Debug)]
pub enum CellKind {
    User(String),
    Assistant(StreamDoc),
    /// `open` while thinking deltas still arrive.
    Thinking {
        text: String,
        open: bool,
    },
    Plan(String),
    Tool(ToolCard),
    Notice(String),
    Warning(String),
    Error(String),
    /// Command output and hints (not sent to the model).
    Info(Vec<String>),
    /// A turn changed files: the summary, and the diff once loaded.
    Changes {
        turn: usize,
        summary: String,
        diff: Vec<String>,
    },
}

/// Everything a cell needs to draw itself.
#[derive(Clone, Copy)]
pub(crate) struct RenderCtx<'a> {
    pub(crate) theme: &'a Theme,
    pub(crate) width: u16,
    pub(crate) spinner: usize,
    pub(crate) show_thinking: bool,
    pub(crate) thinking_expanded: bool,
    /// Bumped on theme or display-option changes: drops every cache.
    pub(crate) generation: u64,
}

impl RenderCtx<'_> {
    pub(crate) fn with_width(&self, width: u16) -> Self {
        RenderCtx { width, ..*self }
    }
}

type CacheKey = (u16, u64, usize);

#[derive(Clone, Debug)]
pub struct Cell {
    pub kind: CellKind,
    /// Per-cell expand state; `None` = the kind's default.
    pub(crate) expanded: Option<bool>,
    cache: Option<(CacheKey, Vec<Line<'static>>)>,
}

impl Cell {
    pub(crate) fn new(kind: CellKind) -> Self {
        Cell {
            kind,
            expanded: None,
            cache: None,
        }
    }

    /// Marks the cell changed: its lines are rebuilt at the next render.
    pub(crate) fn touch(&mut self) {
        self.cache = None;
    }

    /// Whether this cell can be expanded or collapsed.
    pub(crate) fn collapsible(&self) -> bool {
        matches!(
            self.kind,
            CellKind::Thinking { .. }
                | CellKind::Plan(_)
                | CellKind::Tool(_)
                | CellKind::Changes { .. }
        )
    }

    pub(crate) fn is_expanded(&self, ctx: &RenderCtx<'_>) -> bool {
        match &self.kind {
            CellKind::Thinking { .. } => self.expanded.unwrap_or(ctx.thinking_expanded),
            CellKind::Plan(_) => self.expanded.unwrap_or(true),
            _ => self.expanded.unwrap_or(false),
        }
    }

    pub(crate) fn toggle(&mut self, ctx: &RenderCtx<'_>) {
        self.expanded = Some(!self.is_expanded(ctx));
        self.touch();
    }

    /// Whether the cell changes on every spinner frame.
    pub(crate) fn animated(&self) -> bool {
        match &self.kind {
            CellKind::Thinking { open, .. } => *open,
            CellKind::Tool(t) => t.animated(),
            _ => false,
        }
    }

    /// The cell's lines at `ctx.width` (cached).
    pub(crate) fn lines(&mut self, ctx: &RenderCtx<'_>) -> &[Line<'static>] {
        let key = (
            ctx.width,
            ctx.generation,
            if self.animated() { ctx.spinner } else { 0 },
        );
        let fresh = matches!(&self.cache, Some((k, _)) if *k == key);
        if !fresh {
            let lines = self.build(ctx);
            self.cache = Some((key, lines));
        }
        match &self.cache {
            Some((_, l)) => l,
            None => &[],
        }
    }

    fn build(&mut self, ctx: &RenderCtx<'_>) -> Vec<Line<'static>> {
        let expanded = self.is_expanded(ctx);
        let th = &ctx.theme.s;
        let w = ctx.width;
        match &mut self.kind {
            CellKind::User(text) => {
                let body = verbatim(text, th.user_text, w.saturating_sub(2));
                gutter(body, Span::styled("› ", th.user_label), Span::raw("  "))
            }
            CellKind::Assistant(doc) => {
                let body = doc.render(ctx.theme, w.saturating_sub(2));
                gutter(
                    body,
                    Span::styled("• ", th.assistant_label),
                    Span::raw("  "),
                )
            }
            CellKind::Thinking { text, open } => thinking(text, *open, expanded, ctx),
            CellKind::Plan(text) => plan::render(text, expanded, ctx),
            CellKind::Tool(card) => card.render(expanded, ctx),
            CellKind::Notice(t) => marked("· ", t, th.notice, w),
            CellKind::Warning(t) => marked("⚠ ", t, th.warning, w),
            CellKind::Error(t) => marked("✗ ", t, th.error, w),
            CellKind::Changes { summary, diff, .. } => {
                changes::render(summary, diff, expanded, ctx)
            }
            CellKind::Info(lines) => lines
                .iter()
                .flat_map(|l| {
                    let indent = hanging_indent(l, usize::from(w));
                    wrap(
                        &Line::from(Span::styled(l.clone(), th.hint)),
                        usize::from(w),
                        &[Span::raw(" ".repeat(indent))],
                    )
                })
                .collect(),
        }
    }
}

/// Where the wrapped rows of a command-output line start: under its
/// description column when it is laid out as `usage   description` (`/help`,
/// key lists), else two past its own indent; never past half the width.
pub(crate) fn hanging_indent(line: &str, width: usize) -> usize {
    let lead = line.chars().take_while(|c| *c == ' ').count();
    let body = &line[lead..];
    let column = body.find("  ").and_then(|gap| {
        let after = &body[gap..];
        let spaces = after.chars().take_while(|c| *c == ' ').count();
        (spaces < after.chars().count()).then(|| lead + wrap::width(&body[..gap]) + spaces)
    });
    let want = column.unwrap_or(lead + 2);
    if want * 2 <= width {
        want
    } else {
        2.min(width / 2)
    }
}

/// Prefixes the first line with `first` and the others with `rest`.
pub(crate) fn gutter(
    body: Vec<Line<'static>>,
    first: Span<'static>,
    rest: Span<'static>,
) -> Vec<Line<'static>> {
    let mut out = Vec::with_capacity(body.len().max(1));
    if body.is_empty() {
        out.push(Line::from(first));
        return out;
    }
    for (i, l) in body.into_iter().enumerate() {
        let mut spans = Vec::with_capacity(l.spans.len() + 1);
        spans.push(if i == 0 { first.clone() } else { rest.clone() });
        spans.extend(l.spans);
        out.push(Line::from(spans).style(l.style));
    }
    out
}

/// The user's own text exactly as typed: every newline kept (blank lines
/// too), tabs as spaces, nothing parsed as Markdown; long lines wrap at word
/// boundaries.
pub(crate) fn verbatim(text: &str, style: Style, width: u16) -> Vec<Line<'static>> {
    let text = text.trim_end_matches(['\n', '\r']);
    text.split('\n')
        .flat_map(|l| {
            let l = l.trim_end_matches('\r').replace('\t', "    ");
            wrap(&Line::from(Span::styled(l, style)), usize::from(width), &[])
        })
        .collect()
}

/// `mark` + text, every line wrapped and aligned under the text.
pub(crate) fn marked(mark: &str, text: &str, style: Style, width: u16) -> Vec<Line<'static>> {
    let indent = " ".repeat(wrap::width(mark));
    let mut out = Vec::new();
    for (i, l) in text.lines().enumerate() {
        let head = if i == 0 { mark } else { indent.as_str() };
        let line = Line::from(vec![
            Span::styled(head.to_string(), style),
            Span::styled(l.to_string(), style),
        ]);
        out.extend(wrap(
            &line,
            usize::from(width),
            &[Span::raw(indent.clone())],
        ));
    }
    if out.is_empty() {
        out.push(Line::from(Span::styled(mark.to_string(), style)));
    }
    out
}

const THINKING_TAIL: usize = 8;

fn thinking(text: &str, open: bool, expanded: bool, ctx: &RenderCtx<'_>) -> Vec<Line<'static>> {
    let th = &ctx.theme.s;
    let w = ctx.width;
    let body_w = usize::from(w.saturating_sub(4));
    let body: Vec<Line<'static>> = text
        .trim()
        .lines()
        .flat_map(|l| {
            wrap(
                &Line::from(Span::styled(l.to_string(), th.thinking)),
                body_w,
                &[],
            )
        })
        .collect();
    let n = body.len();
    let bar = Span::styled("│ ", th.thinking);
    if open {
        let spin = SPINNER[ctx.spinner % SPINNER.len()];
        let mut out = vec![Line::from(vec![
            Span::styled(format!("{spin} "), th.thinking_label),
            Span::styled("Thinking…", th.thinking_label),
        ])];
        if ctx.show_thinking {
            let skip = if expanded {
                0
            } else {
                n.saturating_sub(THINKING_TAIL)
            };
            if skip > 0 {
                out.push(Line::from(vec![
                    Span::raw("  "),
                    bar.clone(),
                    Span::styled(format!("… {skip} earlier lines"), th.dim),
                ]));
            }
            for l in body.into_iter().skip(skip) {
                let mut spans = vec![Span::raw("  "), bar.clone()];
                spans.extend(l.spans);
                out.push(Line::from(spans));
            }
        }
        return out;
    }
    if !ctx.show_thinking {
        return Vec::new();
    }
    let plural = if n == 1 { "line" } else { "lines" };
    if !expanded {
        return vec![Line::from(vec![
            Span::styled("▸ ", th.thinking_label),
            Span::styled("Thought", th.thinking_label),
            Span::styled(format!(" · {n} {plural}  (Ctrl-T to expand)"), th.dim),
        ])];
    }
    let mut out = vec![Line::from(vec![
        Span::styled("▾ ", th.thinking_label),
        Span::styled("Thought", th.thinking_label),
        Span::styled(format!(" · {n} {plural}"), th.dim),
    ])];
    for l in body {
        let mut spans = vec![Span::raw("  "), bar.clone()];
        spans.extend(l.spans);
        out.push(Line::from(spans));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cache_is_reused_until_touched() {
        let theme = Theme::load("dark", None, false).unwrap();
        let ctx = RenderCtx {
            theme: &theme,
            width: 30,
            spinner: 0,
            show_thinking: true,
            thinking_expanded: false,
            generation: 0,
        };
        let mut c = Cell::new(CellKind::Assistant(StreamDoc::default()));
        if let CellKind::Assistant(d) = &mut c.kind {
            d.push("hello");
        }
        assert_eq!(c.lines(&ctx)[0].to_string(), "• hello");
        if let CellKind::Assistant(d) = &mut c.kind {
            d.push(" world");
        }
        // Not touched: the cached lines stay.
        assert_eq!(c.lines(&ctx)[0].to_string(), "• hello");
        c.touch();
        assert_eq!(c.lines(&ctx)[0].to_string(), "• hello world");
        assert_eq!(c.lines(&ctx.with_width(8)).len(), 2);
    }
}
