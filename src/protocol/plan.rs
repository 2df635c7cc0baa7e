//! Reading plan text: the one parser the planner and every front end use.
//!
//! A plan is free text. Numbered lines (`1.` / `2)`, up to three digits) are
//! steps; a step may end with its executor, `TOOL: name`, `AGENT: profile`
//! or `SELF`. Every other non-empty line is a note.

/// Who carries out a step.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Executor {
    Tool(String),
    Agent(String),
    /// The agent itself.
    Itself,
}

impl std::fmt::Display for Executor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Executor::Tool(n) => write!(f, "TOOL: {n}"),
            Executor::Agent(n) => write!(f, "AGENT: {n}"),
            Executor::Itself => f.write_str("SELF"),
        }
    }
}

/// One non-empty line of a plan.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PlanLine {
    Step {
        /// The number as written.
        number: String,
        /// The step without its number and executor (the whole body when
        /// taking the executor off would leave nothing).
        text: String,
        executor: Option<Executor>,
    },
    Note(String),
}

/// The number and body of a step line; `None` for any other line.
pub fn step_body(line: &str) -> Option<(&str, &str)> {
    let t = line.trim_start();
    let digits = t.chars().take_while(|c| c.is_ascii_digit()).count();
    if digits == 0 || digits > 3 {
        return None;
    }
    let rest = &t[digits..];
    let body = rest.strip_prefix('.').or_else(|| rest.strip_prefix(')'))?;
    Some((&t[..digits], body.trim()))
}

/// A step body's text and executor.
pub fn split_executor(body: &str) -> (String, Option<Executor>) {
    for key in ["TOOL:", "AGENT:"] {
        if let Some(pos) = body.rfind(key) {
            let name = body[pos + key.len()..]
                .trim()
                .trim_matches(|c: char| matches!(c, '`' | '*' | ')' | ']' | '.'))
                .split_whitespace()
                .next()
                .unwrap_or("")
                .trim_matches(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-'))
                .to_string();
            let exec = if key == "TOOL:" {
                Executor::Tool(name)
            } else {
                Executor::Agent(name)
            };
            return (clean(&body[..pos]), Some(exec));
        }
    }
    if let Some(pos) = body.rfind("SELF") {
        return (clean(&body[..pos]), Some(Executor::Itself));
    }
    (clean(body), None)
}

fn clean(s: &str) -> String {
    s.trim()
        .trim_end_matches(|c: char| {
            matches!(c, '—' | '-' | '–' | '|' | '(' | '[' | ':' | ',' | '*' | '`')
                || c.is_whitespace()
        })
        .trim_start_matches("**")
        .trim()
        .to_string()
}

/// The non-empty lines of a plan, read.
pub fn read(text: &str) -> Vec<PlanLine> {
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| match step_body(l) {
            Some((number, body)) => {
                let (text, executor) = split_executor(body);
                let text = without_repeated_number(&text).to_string();
                PlanLine::Step {
                    number: number.to_string(),
                    text: if text.is_empty() {
                        body.to_string()
                    } else {
                        text
                    },
                    executor,
                }
            }
            None => PlanLine::Note(l.trim().to_string()),
        })
        .collect()
}

/// `1. List the files` → `List the files`: a number the model wrote again
/// inside a step (older plans were stored so). "3.5 kg" keeps its number.
fn without_repeated_number(text: &str) -> &str {
    let mut t = text;
    while let Some((_, body)) = step_body(t) {
        let digits = t
            .trim_start()
            .chars()
            .take_while(char::is_ascii_digit)
            .count();
        let spaced = t.trim_start()[digits + 1..].starts_with(char::is_whitespace);
        if !spaced || body.is_empty() {
            break;
        }
        t = body;
    }
    t
}

/// How many steps a plan has.
pub fn step_count(text: &str) -> usize {
    text.lines().filter(|l| step_body(l).is_some()).count()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn steps_notes_and_executors() {
        let plan = "Milestones: build\n1. Read the config — TOOL: `filesystem`\n2) Fix it (AGENT: developer)\n3. Summarise SELF\n\n4. Deploy\n1000. not a step";
        let lines = read(plan);
        assert_eq!(lines.len(), 6);
        assert_eq!(lines[0], PlanLine::Note("Milestones: build".into()));
        assert_eq!(
            lines[1],
            PlanLine::Step {
                number: "1".into(),
                text: "Read the config".into(),
                executor: Some(Executor::Tool("filesystem".into())),
            }
        );
        assert!(
            matches!(&lines[2], PlanLine::Step { text, executor: Some(Executor::Agent(a)), .. } if text == "Fix it" && a == "developer")
        );
        assert!(matches!(
            &lines[3],
            PlanLine::Step {
                executor: Some(Executor::Itself),
                ..
            }
        ));
        assert!(matches!(&lines[4], PlanLine::Step { executor: None, .. }));
        assert!(matches!(&lines[5], PlanLine::Note(_)));
        assert_eq!(step_count(plan), 4);
        assert_eq!(Executor::Tool("x".into()).to_string(), "TOOL: x");
    }

    #[test]
    fn a_number_repeated_inside_a_step_is_shown_once() {
        let l = read("4. 1. List the files — TOOL: filesystem\n5. 3.5 kg of flour");
        assert!(
            matches!(&l[0], PlanLine::Step { number, text, .. } if number == "4" && text == "List the files")
        );
        assert!(matches!(&l[1], PlanLine::Step { text, .. } if text == "3.5 kg of flour"));
    }

    #[test]
    fn a_step_that_is_only_an_executor_keeps_its_body() {
        assert!(matches!(&read("1. SELF")[0], PlanLine::Step { text, .. } if text == "SELF"));
    }
}
