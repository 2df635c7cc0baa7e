//! The card a turn that changed files ends with: the summary, and (expanded
//! with Ctrl+O / Enter when selected) the diff, drawn like the approval
//! overlay's diff (`+` added, `-` removed, headers in the accent colour).
use super::{RenderCtx, marked};
use crate::ui::tui::wrap::wrap;
use ratatui::text::{Line, Span};

pub(crate) fn render(
    summary: &str,
    diff: &[String],
    expanded: bool,
    ctx: &RenderCtx<'_>,
) -> Vec<Line<'static>> {
    let th = &ctx.theme.s;
    let w = ctx.width;
    let mut out = marked("± ", summary, th.accent, w);
    if !expanded {
        let hint = if diff.is_empty() {
            "  /diff shows the changes, /undo restores the files"
        } else {
            "  Ctrl+O (or select and Enter) shows the diff · /undo restores the files"
        };
        out.push(Line::from(Span::styled(hint.to_string(), th.hint)));
        return out;
    }
    for l in diff {
        let style = match l.chars().next() {
            Some('+') => th.tool_ok,
            Some('-') => th.tool_failed,
            Some(' ') => th.dim,
            _ => th.accent,
        };
        out.extend(wrap(
            &Line::from(Span::styled(format!("  {l}"), style)),
            usize::from(w),
            &[Span::raw("   ")],
        ));
    }
    out
}
