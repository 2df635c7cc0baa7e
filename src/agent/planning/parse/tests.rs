use super::*;

fn names(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| s.to_string()).collect()
}

fn valid(text: &str) -> ParsedPlan {
    match parse_plan(
        text,
        &names(&["filesystem", "terminal"]),
        &names(&["developer"]),
    ) {
        PlanCheck::Valid(p) => p,
        other => panic!("expected a plan from {text:?}, got {other:?}"),
    }
}

fn rejected(text: &str) -> String {
    match parse_plan(
        text,
        &names(&["filesystem", "terminal"]),
        &names(&["developer"]),
    ) {
        PlanCheck::Rejected(r) => r,
        other => panic!("expected a rejection of {text:?}, got {other:?}"),
    }
}

#[test]
fn executors_parsed_and_validated() {
    let plan = "Milestones: build\n1. Read the config — TOOL: filesystem\n2) Fix the parser — AGENT: developer\n3. Summarise SELF\n4. Deploy TOOL: rocket\n5. Celebrate — AGENT: nobody";
    let p = valid(plan);
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
    assert_eq!(p.warnings.len(), 2, "{:?}", p.warnings);
    assert!(p.warnings[0].contains("rocket") && p.warnings[1].contains("nobody"));
}

#[test]
fn the_stored_text_is_canonical_and_numbers_each_step_once() {
    let p = valid(
        "Milestones:\n1. Files known\n2. Answer given\n\nSteps:\n1. 1. List the files — TOOL: filesystem\n1. Read README.md — TOOL: filesystem\n**3.** Answer — SELF\nThat is all.",
    );
    assert_eq!(
        p.text,
        "Milestones:\n- Files known\n- Answer given\n1. List the files — TOOL: filesystem\n2. Read README.md — TOOL: filesystem\n3. Answer — SELF"
    );
    assert_eq!(crate::protocol::plan::step_count(&p.text), 3);
    // Every step line reads back as exactly one number and its own text.
    for l in crate::protocol::plan::read(&p.text) {
        if let crate::protocol::plan::PlanLine::Step { text, .. } = l {
            assert!(crate::protocol::plan::step_body(&text).is_none(), "{text}");
        }
    }
}

#[test]
fn numbers_that_belong_to_the_step_stay() {
    let p = valid("1. 3.5 kg of flour for the cake — SELF\n2. 2024 tax return — SELF");
    assert_eq!(p.steps[0].text, "3.5 kg of flour for the cake");
    assert_eq!(p.steps[1].text, "2024 tax return");
}

#[test]
fn direct_is_not_a_plan_and_not_a_rejection() {
    assert_eq!(parse_plan("DIRECT", &[], &[]), PlanCheck::Direct);
    assert_eq!(parse_plan("  DIRECT\n", &[], &[]), PlanCheck::Direct);
}

#[test]
fn prose_garbage_and_empty_answers_are_rejected() {
    for t in [
        "",
        "   ",
        "asdf qwer\n- bullet only",
        "The Rhine is a large river in Germany.",
        "I refuse to make numbered lists, sorry",
    ] {
        assert!(rejected(t).contains("no numbered steps"), "{t:?}");
    }
}

#[test]
fn a_step_without_an_executor_rejects_the_plan() {
    assert!(rejected("1. Read the file — TOOL: filesystem\n2. Fix it").contains("step 2"));
    // An answer in list form is not a plan.
    assert!(rejected("1. The Rhine\n2. The Elbe\n3. The Danube").contains("no executor"));
    assert!(rejected("1. Read it — TOOL:\n").contains("no executor"));
    assert!(rejected("1. Ask someone — AGENT:   \n").contains("no executor"));
}

#[test]
fn steps_without_an_action_reject_the_plan() {
    for t in [
        "1. SELF",
        "1. — TOOL: terminal",
        "1. 1.1.1.",
        "1. 1. — SELF",
        "1. ? SELF",
    ] {
        assert!(rejected(t).contains("no action"), "{t:?}");
    }
}

#[test]
fn smollm_style_number_loops_are_rejected_whole() {
    let fifty: String = (0..50).map(|_| "1. 1.1.1.\n").collect();
    assert!(rejected(&fifty).contains("50 steps"));
    let ten: String = (0..10).map(|_| "1. 1.1.1.\n").collect();
    assert!(rejected(&ten).contains("no action"));
    let repeat: String = (1..=5)
        .map(|i| format!("{i}. Read the file — SELF\n"))
        .collect();
    assert!(rejected(&repeat).contains("step 2 repeats step 1"));
    // Case, punctuation and executor do not make a step new.
    assert!(
        rejected("1. Read the file. — SELF\n2. read THE file — TOOL: filesystem")
            .contains("repeats")
    );
}

#[test]
fn more_than_fifteen_steps_is_no_plan_fifteen_is_fine() {
    let plan =
        |n: usize| -> String { (1..=n).map(|i| format!("{i}. step {i} — SELF\n")).collect() };
    assert_eq!(valid(&plan(15)).steps.len(), 15);
    assert_eq!(valid(&plan(1)).steps.len(), 1);
    let r = rejected(&plan(16));
    assert!(r.contains("16 steps") && r.contains("15"), "{r}");
    assert!(rejected(&plan(40)).contains("40 steps"));
}

#[test]
fn notes_are_capped_and_trailing_text_dropped() {
    let mut t: String = (0..10).map(|i| format!("Milestone note {i}\n")).collect();
    t.push_str("1. Do it — SELF\nTrailing chatter\n");
    let p = valid(&t);
    assert_eq!(p.text.lines().count(), MAX_NOTES + 1);
    assert!(!p.text.contains("Trailing"));
}

#[test]
fn steps_headers_are_recognised() {
    for h in [
        "Steps:",
        "**Steps:**",
        "## Steps",
        "Steps (numbered):",
        "steps",
    ] {
        assert!(is_steps_header(h), "{h}");
    }
    for h in ["Steps are below", "1. Steps: x", "Stepson"] {
        assert!(!is_steps_header(h), "{h}");
    }
}
