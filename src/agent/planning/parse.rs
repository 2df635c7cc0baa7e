//! Checking the planner's text before it becomes a plan.
//!
//! Numbered lines (`1.` / `2)`, see `protocol::plan::step_body`) are steps;
//! when the text has a `Steps:` header, only the numbered lines after it are
//! (numbered milestones above it stay notes). A plan is accepted only when
//! it has 1 to [`MAX_STEPS`] steps and every step has an action (some words
//! once its number, any repeated numbering and its executor are taken off)
//! and an executor (`TOOL: name`, `AGENT: profile` or `SELF`), and no step
//! repeats another. Anything else — prose, an answer instead of a plan, a
//! model's `1. 1.1.1.` loop, 40 steps — is rejected whole with one reason:
//! a plan is never cut or patched into shape. The one repair: an executor
//! naming an unknown tool or profile becomes `SELF`, with a warning.
//!
//! An accepted plan is stored and shown in a canonical form: the notes that
//! come before the steps (milestones), then the steps numbered 1..n as
//! `N. action — EXECUTOR`, so every front end shows each step once with its
//! own number.

use super::MAX_STEPS;
use crate::protocol::plan::{Executor, split_executor, step_body};

/// Notes (milestones) kept above the steps at most.
const MAX_NOTES: usize = 6;

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PlanStep {
    pub(crate) text: String,
    /// `TOOL: x`, `AGENT: y` or `SELF`.
    pub(crate) executor: String,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ParsedPlan {
    pub(crate) steps: Vec<PlanStep>,
    /// The plan as it will be shown and stored (canonical form).
    pub(crate) text: String,
    pub(crate) warnings: Vec<String>,
}

/// What the planner's text turned out to be.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum PlanCheck {
    /// The planner said no plan is needed.
    Direct,
    Valid(ParsedPlan),
    /// Not a usable plan; the reason, for the user's note.
    Rejected(String),
}

pub(crate) fn parse_plan(text: &str, tools: &[String], profiles: &[String]) -> PlanCheck {
    let text = text.trim();
    if text.starts_with("DIRECT") {
        return PlanCheck::Direct;
    }
    let lines: Vec<String> = text.lines().map(unbold_number).collect();
    let header = lines.iter().position(|l| is_steps_header(l));
    let mut notes = Vec::new();
    let mut raw = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let in_steps = header.is_none_or(|h| i > h);
        match step_body(line) {
            Some((_, body)) if in_steps => raw.push(body.to_string()),
            Some((_, body)) if raw.is_empty() => notes.push(format!("- {body}")),
            None if raw.is_empty() && Some(i) != header && !line.trim().is_empty() => {
                notes.push(line.trim().to_string())
            }
            _ => {}
        }
    }
    if raw.is_empty() {
        return PlanCheck::Rejected("the answer has no numbered steps".into());
    }
    if raw.len() > MAX_STEPS {
        return PlanCheck::Rejected(format!(
            "the plan has {} steps, more than {MAX_STEPS}",
            raw.len()
        ));
    }
    let mut out = ParsedPlan::default();
    let mut seen: Vec<String> = Vec::new();
    for (i, body) in raw.iter().enumerate() {
        let n = i + 1;
        let body = strip_numbering(body);
        let (action, exec) = split_executor(&body);
        let action = action.trim_matches(|c: char| c == '*' || c.is_whitespace());
        if action.chars().filter(|c| c.is_alphabetic()).count() < 2 {
            return PlanCheck::Rejected(format!("step {n} has no action"));
        }
        if !has_name(&exec) {
            return PlanCheck::Rejected(format!(
                "step {n} names no executor (TOOL:, AGENT: or SELF)"
            ));
        }
        let executor = match exec {
            Some(ref e @ Executor::Tool(ref name)) if tools.contains(name) => e.to_string(),
            Some(ref e @ Executor::Agent(ref name)) if profiles.contains(name) => e.to_string(),
            Some(Executor::Tool(name)) => {
                out.warnings.push(format!("step {n} names unknown tool '{name}'; it will be done by the agent itself (SELF)"));
                Executor::Itself.to_string()
            }
            Some(Executor::Agent(name)) => {
                out.warnings.push(format!("step {n} names unknown agent '{name}'; it will be done by the agent itself (SELF)"));
                Executor::Itself.to_string()
            }
            _ => Executor::Itself.to_string(),
        };
        let key = normal(action);
        if let Some(j) = seen.iter().position(|k| *k == key) {
            return PlanCheck::Rejected(format!("step {n} repeats step {}", j + 1));
        }
        seen.push(key);
        out.steps.push(PlanStep {
            text: action.to_string(),
            executor,
        });
    }
    notes.truncate(MAX_NOTES);
    let steps = out
        .steps
        .iter()
        .enumerate()
        .map(|(i, s)| format!("{}. {} — {}", i + 1, s.text, s.executor));
    out.text = notes
        .into_iter()
        .chain(steps)
        .collect::<Vec<_>>()
        .join("\n");
    PlanCheck::Valid(out)
}

/// `Some` executor with a non-empty name (SELF has none and needs none).
fn has_name(exec: &Option<Executor>) -> bool {
    match exec {
        Some(Executor::Tool(n) | Executor::Agent(n)) => !n.is_empty(),
        Some(Executor::Itself) => true,
        None => false,
    }
}

/// `**1.** Read it` → `1. Read it` (Markdown bold around the number).
fn unbold_number(line: &str) -> String {
    let t = line.trim_start();
    match t.strip_prefix("**") {
        Some(rest) if rest.starts_with(|c: char| c.is_ascii_digit()) => rest.replacen("**", "", 1),
        _ => line.to_string(),
    }
}

/// `Steps:`, `**Steps:**`, `## Steps`, `Steps (numbered):`.
fn is_steps_header(line: &str) -> bool {
    let t = line
        .trim()
        .trim_matches(|c: char| matches!(c, '#' | '*' | '_') || c.is_whitespace())
        .to_lowercase();
    let Some(rest) = t.strip_prefix("steps") else {
        return false;
    };
    rest.is_empty() || rest.starts_with(':') || rest.starts_with(" (") || rest.starts_with('(')
}

/// Numbering the model repeated inside the step: `1. List` → `List`; a step
/// that is nothing but numbers and dots (`1.1.1.`) → empty.
fn strip_numbering(body: &str) -> String {
    if body
        .chars()
        .all(|c| c.is_ascii_digit() || matches!(c, '.' | ')' | '(') || c.is_whitespace())
    {
        return String::new();
    }
    let mut t = body.trim();
    loop {
        let digits = t.chars().take_while(char::is_ascii_digit).count();
        if digits == 0 || digits > 3 {
            break;
        }
        let rest = &t[digits..];
        let Some(after) = rest.strip_prefix('.').or_else(|| rest.strip_prefix(')')) else {
            break;
        };
        // Only a marker followed by a space: "3.5 kg" keeps its number.
        if !after.starts_with(char::is_whitespace) {
            break;
        }
        t = after.trim_start();
    }
    t.to_string()
}

/// A step's action for comparing: lower case, words only.
fn normal(action: &str) -> String {
    action
        .to_lowercase()
        .split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

#[cfg(test)]
mod tests;
