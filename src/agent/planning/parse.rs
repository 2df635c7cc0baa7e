//! Reading a plan out of the planner's text, forgivingly.
//!
//! Numbered lines (`^\s*\d+[.)]`) are steps. Each step's executor is
//! `TOOL: name`, `AGENT: profile` or `SELF`; a missing executor means SELF; an
//! executor naming an unknown tool or profile is dropped (SELF) with a
//! warning. More than 15 steps are cut to 15 with a warning.

use super::MAX_STEPS;
use crate::protocol::plan::{Executor, split_executor, step_body};

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct PlanStep {
    pub(crate) text: String,
    /// `TOOL: x`, `AGENT: y` or `SELF`.
    pub(crate) executor: String,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ParsedPlan {
    pub(crate) steps: Vec<PlanStep>,
    /// The plan as it will be shown and stored (cut to MAX_STEPS steps).
    pub(crate) text: String,
    pub(crate) warnings: Vec<String>,
}

pub(crate) fn parse_plan(text: &str, tools: &[String], profiles: &[String]) -> ParsedPlan {
    let mut out = ParsedPlan::default();
    if text.trim_start().starts_with("DIRECT") {
        return out;
    }
    let mut kept_lines = Vec::new();
    let mut count = 0;
    for line in text.lines() {
        let Some((_, body)) = step_body(line) else {
            if count < MAX_STEPS {
                kept_lines.push(line.to_string());
            }
            continue;
        };
        count += 1;
        if count > MAX_STEPS {
            continue;
        }
        let (step_text, exec) = split_executor(body);
        let executor = match exec {
            Some(ref e @ Executor::Tool(ref name)) if tools.contains(name) => e.to_string(),
            Some(ref e @ Executor::Agent(ref name)) if profiles.contains(name) => e.to_string(),
            Some(Executor::Tool(name)) => {
                out.warnings.push(format!("step {count} names unknown tool '{name}'; it will be done by the agent itself (SELF)"));
                Executor::Itself.to_string()
            }
            Some(Executor::Agent(name)) => {
                out.warnings.push(format!("step {count} names unknown agent '{name}'; it will be done by the agent itself (SELF)"));
                Executor::Itself.to_string()
            }
            Some(Executor::Itself) | None => Executor::Itself.to_string(),
        };
        let step_text = if step_text.is_empty() {
            body.to_string()
        } else {
            step_text
        };
        out.steps.push(PlanStep {
            text: step_text,
            executor,
        });
        kept_lines.push(line.to_string());
    }
    if count > MAX_STEPS {
        out.warnings.push(format!(
            "the plan had {count} steps; only the first {MAX_STEPS} are kept"
        ));
    }
    out.text = kept_lines.join("\n").trim().to_string();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn executors_parsed_and_validated() {
        let plan = "Milestones: build\n1. Read the config — TOOL: filesystem\n2) Fix the parser — AGENT: developer\n3. Summarise SELF\n4. Deploy TOOL: rocket\n5. Celebrate";
        let p = parse_plan(plan, &names(&["filesystem"]), &names(&["developer"]));
        let ex: Vec<&str> = p.steps.iter().map(|s| s.executor.as_str()).collect();
        assert_eq!(
            ex,
            vec![
                "TOOL: filesystem",
                "AGENT: developer",
                "SELF",
                "SELF",
                "SELF"
            ]
        );
        assert_eq!(p.steps[0].text, "Read the config");
        assert_eq!(p.warnings.len(), 1, "{:?}", p.warnings);
        assert!(p.warnings[0].contains("rocket"));
    }

    #[test]
    fn garbage_and_empty_and_direct_give_no_steps() {
        assert!(parse_plan("", &[], &[]).steps.is_empty());
        assert!(
            parse_plan("asdf qwer\n- bullet only", &[], &[])
                .steps
                .is_empty()
        );
        assert!(parse_plan("DIRECT", &[], &[]).steps.is_empty());
    }

    #[test]
    fn forty_steps_cut_to_fifteen() {
        let plan: String = (1..=40).map(|i| format!("{i}. step {i}\n")).collect();
        let p = parse_plan(&plan, &[], &[]);
        assert_eq!(p.steps.len(), 15);
        assert!(p.text.contains("15. step 15") && !p.text.contains("16. step 16"));
        assert!(p.warnings.iter().any(|w| w.contains("40 steps")));
    }
}
