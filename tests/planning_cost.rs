//! A planner that pays for itself: which messages get planner calls, what
//! happens to a plan that is not one, and how a looping planner is bounded —
//! asserted on the requests the backend received and the events emitted.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::common;

use common::*;
use navi::llm::scripted::ScriptedBackend;
use navi::protocol::AgentEvent;
use navi::session::MessageKind;
use serde_json::json;

/// A profile that plans every message (phases 1 and 3).
fn planner() -> Harness {
    planner_on(ScriptedBackend::new(), json!({}))
}

fn planner_on(backend: ScriptedBackend, extra: serde_json::Value) -> Harness {
    let mut cfg = json!({
        "planning_enabled": true, "planning_phase1_enabled": true, "planning_phase3_enabled": true
    });
    if let (Some(b), Some(e)) = (cfg.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    harness_with(&[("p", profile_json("p", cfg))], backend)
}

fn warnings(ev: &[AgentEvent]) -> Vec<String> {
    ev.iter()
        .filter_map(|e| match e {
            AgentEvent::Warning { message } => Some(message.clone()),
            _ => None,
        })
        .collect()
}

fn planner_calls(h: &Harness) -> usize {
    h.backend
        .requests()
        .iter()
        .filter(|r| {
            r.messages
                .last()
                .is_some_and(|m| m.text().contains("Planning stage"))
        })
        .count()
}

const TASK: &str = "Read the config, then fix the parser and run the tests";

#[tokio::test]
async fn greetings_short_questions_and_short_imperatives_get_no_planner_call() {
    for msg in [
        "hi",
        "Hello!",
        "thanks",
        "Thank you very much!",
        "What is the capital of France?",
        "what is the capital of france",
        "why is the sky blue",
        "Name a large river in Germany.",
        "name a large river in germany",
        "list the files here",
        "Tell me a joke.",
        "What is in src/main.rs?",
    ] {
        let h = planner();
        h.backend.push_text("the answer");
        let s = h.store.create("p").unwrap();
        let (out, ev) = turn(&h, &s.id, msg).await;
        assert_eq!(out.unwrap().text, "the answer", "{msg}");
        assert_eq!(
            h.backend.requests().len(),
            1,
            "{msg}: one request, no planner"
        );
        assert_eq!(planner_calls(&h), 0, "{msg}");
        assert!(
            !kinds(&ev).contains(&"planning"),
            "{msg}: no planning phase"
        );
        assert!(warnings(&ev).is_empty(), "{msg}: {:?}", warnings(&ev));
    }
}

#[tokio::test]
async fn a_multi_step_task_gets_the_planner() {
    for msg in [
        TASK,
        "fix the bug and run the tests",
        "1. read notes.txt 2. summarise it",
        "Clone the repo. Build it. Run the tests.",
        "Please look at the failing build on the server and work out why the deploy step broke last night",
    ] {
        let h = planner();
        h.backend.push_text("Task: the task\nREFLECT: no");
        h.backend
            .push_text("Milestones: done\n1. Read the config — TOOL: echo\n2. Report — SELF");
        h.backend.push_text("done");
        let s = h.store.create("p").unwrap();
        let (out, ev) = turn(&h, &s.id, msg).await;
        assert_eq!(out.unwrap().text, "done", "{msg}");
        assert_eq!(h.backend.requests().len(), 3, "{msg}");
        assert_eq!(planner_calls(&h), 2, "{msg}");
        let k = kinds(&ev);
        assert!(
            k.contains(&"plan_ready") && k.contains(&"todo_updated"),
            "{msg}: {k:?}"
        );
        let plan = ev
            .iter()
            .find_map(|e| match e {
                AgentEvent::PlanReady { plan } => Some(plan.clone()),
                _ => None,
            })
            .unwrap();
        assert_eq!(
            plan,
            "Milestones: done\n1. Read the config — TOOL: echo\n2. Report — SELF"
        );
    }
}

/// Planner answers that are no plan: no plan_ready, no todo, no plan in the
/// context, exactly one warning, and the answer still comes.
#[tokio::test]
async fn junk_plans_give_no_plan_and_one_warning() {
    let smol: String = (0..50).map(|_| "1. 1.1.1.\n").collect();
    let short_smol: String = (0..8).map(|_| "1. 1.1.1.\n").collect();
    let sixteen: String = (1..=16)
        .map(|i| format!("{i}. Step {i} — SELF\n"))
        .collect();
    let cases = [
        (smol.as_str(), "50 steps"),
        (short_smol.as_str(), "no action"),
        (sixteen.as_str(), "16 steps"),
        (
            "The Rhine is a large river in Germany.",
            "no numbered steps",
        ),
        ("1. The Rhine\n2. The Elbe", "no executor"),
        (
            "1. Read the file — TOOL: echo\n2. Read the file — TOOL: echo",
            "repeats step 1",
        ),
        ("1. — SELF\n2. SELF", "no action"),
    ];
    for (plan, why) in cases {
        let h = planner();
        h.backend.push_text("Task: a task\nREFLECT: no");
        h.backend.push_text(plan);
        h.backend.push_text("answer anyway");
        let s = h.store.create("p").unwrap();
        let (out, ev) = turn(&h, &s.id, TASK).await;
        assert_eq!(out.unwrap().text, "answer anyway", "{why}");
        let k = kinds(&ev);
        assert!(!k.contains(&"plan_ready"), "{why}: {k:?}");
        assert!(!k.contains(&"todo_updated"), "{why}: {k:?}");
        let w = warnings(&ev);
        assert_eq!(w.len(), 1, "{why}: {w:?}");
        assert!(
            w[0].starts_with("planner: ")
                && w[0].contains(why)
                && w[0].ends_with("; continuing without a plan"),
            "{why}: {w:?}"
        );
        assert!(h.open(&s.id).todos().is_empty(), "{why}");
        let stored = h.store.load(&s.id).unwrap().unwrap();
        assert!(
            stored
                .context
                .iter()
                .chain(stored.display.iter())
                .all(|m| m.kind != MessageKind::Plan),
            "{why}"
        );
        // The answer call carries no plan either.
        let last = h.backend.requests().pop().unwrap();
        assert!(
            last.messages.iter().all(|m| !m.text().contains("1.1.1.")
                && !m.text().contains("Step 16")
                && !m.text().contains("The Elbe")),
            "{why}"
        );
    }
}

#[tokio::test]
async fn a_looping_or_non_analysis_phase_one_ends_planning_after_one_call() {
    // A runaway loop (cut by the repetition guard) and an answer instead of
    // an analysis: one planner call, one warning, then the answer.
    let looping = "1.1.1. ".repeat(600);
    for (analysis, why) in [
        (looping.as_str(), "repeated itself"),
        ("The Rhine.", "analysis was not one"),
        ("1. 1.1.1.\n1. 1.1.1.\n1. 1.1.1.", "analysis was not one"),
    ] {
        let h = planner_on(
            ScriptedBackend::new(),
            json!({"planning_phase2_enabled": true}),
        );
        h.backend.push_text(analysis);
        h.backend.push_text("the answer");
        let s = h.store.create("p").unwrap();
        let (out, ev) = turn(&h, &s.id, TASK).await;
        assert_eq!(out.unwrap().text, "the answer", "{why}");
        assert_eq!(h.backend.requests().len(), 2, "{why}");
        assert_eq!(planner_calls(&h), 1, "{why}");
        let w = warnings(&ev);
        assert_eq!(w.len(), 1, "{why}: {w:?}");
        assert!(w[0].contains(why), "{why}: {w:?}");
        assert!(!kinds(&ev).contains(&"plan_ready"));
    }
}

#[tokio::test]
async fn at_most_three_planner_calls_per_turn() {
    let h = planner_on(
        ScriptedBackend::new(),
        json!({"planning_phase2_enabled": true}),
    );
    h.backend.push_text("Task: t\nREFLECT: yes");
    h.backend.push_text("Critic: fine");
    h.backend.push_text("1. Do it — SELF");
    h.backend.push_text("done");
    let s = h.store.create("p").unwrap();
    let _ = turn(&h, &s.id, TASK).await;
    let reqs = h.backend.requests();
    assert_eq!(reqs.len(), 4, "analysis, review, plan, answer: no more");
    assert_eq!(planner_calls(&h), 3);
}

#[tokio::test]
async fn a_small_window_turns_planning_off_unless_mandatory() {
    let h = planner_on(ScriptedBackend::new().with_context(4096), json!({}));
    h.backend.push_text("answered directly");
    let s = h.store.create("p").unwrap();
    let (out, ev) = turn(&h, &s.id, TASK).await;
    assert_eq!(out.unwrap().text, "answered directly");
    assert_eq!(h.backend.requests().len(), 1);
    assert!(!kinds(&ev).contains(&"planning"));

    let h = planner_on(
        ScriptedBackend::new().with_context(4096),
        json!({"planning_mandatory": true}),
    );
    h.backend.push_text("Task: t\nREFLECT: no");
    h.backend.push_text("1. Do it — SELF");
    h.backend.push_text("planned");
    let s = h.store.create("p").unwrap();
    let (out, ev) = turn(&h, &s.id, "hi").await;
    assert_eq!(out.unwrap().text, "planned");
    assert_eq!(planner_calls(&h), 2, "mandatory plans even a greeting");
    assert!(kinds(&ev).contains(&"plan_ready"));
}

#[tokio::test]
async fn a_window_of_eight_k_still_plans() {
    let h = planner_on(ScriptedBackend::new().with_context(8192), json!({}));
    h.backend.push_text("DIRECT");
    h.backend.push_text("ok");
    let s = h.store.create("p").unwrap();
    let _ = turn(&h, &s.id, TASK).await;
    assert_eq!(planner_calls(&h), 1);
}
