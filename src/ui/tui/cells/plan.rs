//! Plan cards: the planner's numbered steps in a box; collapsed, one line.
//!
//! Invariant: numbered lines (`1.` / `1)`) are steps, their `TOOL:`, `AGENT:`
//! or `SELF` executor is shown dimmed; other non-empty lines are notes.
use super::RenderCtx;
use crate::protocol::plan::{self, PlanLine};
use crate::ui::tui::wrap::{self, wrap};
use ratatui::text::{Line, Span};

/// Number of steps in a plan text.
pub(crate) fn step_count(text: &str) -> usize {
    plan::step_count(text)
}

pub(crate) fn render(text: &str, expanded: bool, ctx: &RenderCtx<'_>) -> Vec<Line<'static>> {
    let th = &ctx.theme.s;
    let n = step_count(text);
    let title = format!("Plan · {n} step{}", if n == 1 { "" } else { "s" });
    if !expanded {
        return vec![Line::from(vec![
            Span::styled("▸ ", th.plan_title),
            Span::styled(title, th.plan_title),
            Span::styled("  (Ctrl-O to expand)", th.dim),
        ])];
    }
    let w = usize::from(ctx.width);
    let boxed = w >= 12;
    let inner = if boxed { w - 4 } else { w.max(1) };
    let mut body: Vec<Line<'static>> = Vec::new();
    for l in plan::read(text) {
        match l {
            PlanLine::Step {
                number,
                text: t,
                executor,
            } => {
                let marker = format!("{number}. ");
                let mw = wrap::width(&marker);
                let mut spans = vec![
                    Span::styled(marker, th.plan_number),
                    Span::styled(t, th.plan_text),
                ];
                if let Some(exec) = executor {
                    spans.push(Span::styled(format!("  {exec}"), th.plan_executor));
                }
                body.extend(wrap(
                    &Line::from(spans),
                    inner,
                    &[Span::raw(" ".repeat(mw))],
                ));
            }
            PlanLine::Note(note) => {
                body.extend(wrap(&Line::from(Span::styled(note, th.dim)), inner, &[]))
            }
        }
    }
    if !boxed {
        let mut out = vec![Line::from(Span::styled(title, th.plan_title))];
        out.extend(body);
        return out;
    }
    let b = th.border;
    let head = format!("╭─ {title} ");
    let fill = w.saturating_sub(wrap::width(&head) + 1);
    let mut out = vec![Line::from(vec![
        Span::styled("╭─ ", b),
        Span::styled(title, th.plan_title),
        Span::styled(format!(" {}╮", "─".repeat(fill)), b),
    ])];
    for l in body {
        let pad = inner.saturating_sub(wrap::line_width(&l));
        let mut spans = vec![Span::styled("│ ", b)];
        spans.extend(l.spans);
        spans.push(Span::raw(" ".repeat(pad)));
        spans.push(Span::styled(" │", b));
        out.push(Line::from(spans));
    }
    out.push(Line::from(Span::styled(
        format!("╰{}╯", "─".repeat(w - 2)),
        b,
    )));
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_and_executors() {
        assert_eq!(plan::step_body("  2) do it"), Some(("2", "do it")));
        assert_eq!(plan::step_body("no"), None);
        assert_eq!(
            plan::split_executor("Read the logs — TOOL: terminal"),
            (
                "Read the logs".to_string(),
                Some(plan::Executor::Tool("terminal".into()))
            )
        );
        assert_eq!(step_count("Goal\n1. a\n2. b\n"), 2);
    }
}
