//! Plan cards: the planner's numbered steps in a box; collapsed, one line.
//!
//! Invariant: numbered lines (`1.` / `1)`) are steps, their `TOOL:`, `AGENT:`
//! or `SELF` executor is shown dimmed; other non-empty lines are notes.
use super::RenderCtx;
use crate::ui::tui::wrap::{self, wrap};
use ratatui::text::{Line, Span};

fn step(line: &str) -> Option<(&str, &str)> {
    let t = line.trim_start();
    let digits = t.chars().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 || digits > 3 {
        return None;
    }
    let rest = &t[digits..];
    let body = rest.strip_prefix('.').or_else(|| rest.strip_prefix(')'))?;
    Some((&t[..digits], body.trim()))
}

fn split_executor(body: &str) -> (&str, &str) {
    for key in ["TOOL:", "AGENT:", "SELF"] {
        if let Some(pos) = body.rfind(key) {
            let text = body[..pos].trim_end_matches([' ', '—', '-', '–', '|', '(', '[', ':', ',']);
            return (text, body[pos..].trim_end_matches([')', ']']));
        }
    }
    (body, "")
}

/// Number of steps in a plan text.
pub(crate) fn step_count(text: &str) -> usize {
    text.lines().filter(|l| step(l).is_some()).count()
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
    for l in text.lines().filter(|l| !l.trim().is_empty()) {
        match step(l) {
            Some((num, b)) => {
                let (t, exec) = split_executor(b);
                let marker = format!("{num}. ");
                let mw = wrap::width(&marker);
                let mut spans = vec![
                    Span::styled(marker, th.plan_number),
                    Span::styled(t.to_string(), th.plan_text),
                ];
                if !exec.is_empty() {
                    spans.push(Span::styled(format!("  {exec}"), th.plan_executor));
                }
                body.extend(wrap(
                    &Line::from(spans),
                    inner,
                    &[Span::raw(" ".repeat(mw))],
                ));
            }
            None => body.extend(wrap(
                &Line::from(Span::styled(l.trim().to_string(), th.dim)),
                inner,
                &[],
            )),
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
        assert_eq!(step("  2) do it"), Some(("2", "do it")));
        assert_eq!(step("no"), None);
        assert_eq!(
            split_executor("Read the logs — TOOL: terminal"),
            ("Read the logs", "TOOL: terminal")
        );
        assert_eq!(step_count("Goal\n1. a\n2. b\n"), 2);
    }
}
