//! A plan as plain lines.

/// A plan's lines as shown: steps with their own number (once), notes as
/// they are; a plan with no numbered step at all is numbered line by line.
pub(super) fn plan_lines(plan: &str) -> Vec<String> {
    use crate::protocol::plan::{PlanLine, read};
    let lines = read(plan);
    let any_step = lines.iter().any(|l| matches!(l, PlanLine::Step { .. }));
    lines
        .into_iter()
        .enumerate()
        .map(|(i, l)| match l {
            PlanLine::Step {
                number,
                text,
                executor: Some(e),
            } => format!("{number}. {text} — {e}"),
            PlanLine::Step { number, text, .. } => format!("{number}. {text}"),
            PlanLine::Note(n) if !any_step => format!("{}. {n}", i + 1),
            PlanLine::Note(n) => n,
        })
        .collect()
}
