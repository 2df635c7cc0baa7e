//! Planning pipeline and thinking mechanics, asserted on the requests the
//! backend received.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::common;

use common::*;
use navi::config::ThinkSetting;
use navi::llm::Role;
use navi::protocol::AgentEvent;
use navi::session::MessageKind;
use serde_json::json;

fn planning(extra: serde_json::Value) -> Harness {
    let mut base = json!({"planning_phase1_enabled": true, "planning_phase3_enabled": true});
    if let (Some(b), Some(e)) = (base.as_object_mut(), extra.as_object()) {
        b.extend(e.clone());
    }
    harness(base)
}

#[tokio::test]
async fn direct_skips_phases_two_and_three() {
    let h = planning(json!({"planning_phase2_enabled": true}));
    h.backend.push_text("DIRECT");
    h.backend.push_text("Hi!");
    let s = h.store.create("p").unwrap();
    let (out, ev) = turn(&h, &s.id, "find the bug, then fix it").await;
    assert_eq!(out.unwrap().text, "Hi!");
    let reqs = h.backend.requests();
    assert_eq!(reqs.len(), 2, "one planning call, one answer");
    // The planner call is the main request plus an instruction at the end.
    assert_eq!(reqs[0].tools, reqs[1].tools);
    assert_eq!(reqs[0].messages[0], reqs[1].messages[0]);
    assert_eq!(reqs[0].temperature, Some(0.3));
    assert_eq!(reqs[0].think, Some(ThinkSetting::Bool(false)));
    assert!(reqs[0].messages.last().unwrap().text().contains("DIRECT"));
    assert!(!kinds(&ev).contains(&"plan_ready"));
    // The planning phase is announced and closed even without a plan.
    let phases: Vec<bool> = ev
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Planning { active } => Some(*active),
            _ => None,
        })
        .collect();
    assert_eq!(phases, vec![true, false]);
}

#[tokio::test]
async fn reflect_yes_runs_one_review_that_reaches_phase_three_and_plan_becomes_todo() {
    let h = planning(json!({"planning_phase2_enabled": true}));
    h.backend
        .push_text("Task: fix the bug\nSubtasks: read, fix\nREFLECT: yes");
    h.backend
        .push_text("Critic: REVIEW-MARKER check the tests\nPlan Adjustments: run tests");
    h.backend.push_text("Milestones: fixed\n1. Read the failing test — TOOL: echo\n2. Fix the code — AGENT: p\n3. Report — SELF");
    h.backend.push_text("All done.");
    let s = h.store.create("p").unwrap();
    let (out, ev) = turn(&h, &s.id, "fix the bug and run the tests").await;
    assert_eq!(out.unwrap().text, "All done.");
    let reqs = h.backend.requests();
    assert_eq!(reqs.len(), 4, "analysis, review, plan, answer");
    for r in &reqs[..3] {
        assert_eq!(
            r.tools, reqs[3].tools,
            "planning calls carry the main tools"
        );
        assert_eq!(r.messages[0], reqs[3].messages[0], "same system prompt");
        assert_eq!(r.temperature, Some(0.3));
    }
    assert!(reqs[1].messages.last().unwrap().text().contains("Critic"));
    assert!(
        reqs[2]
            .messages
            .last()
            .unwrap()
            .text()
            .contains("REVIEW-MARKER"),
        "review embedded in phase 3 input"
    );
    // The plan reaches the main call as navi's note on the user's message
    // (not as an assistant message: the answer would make two in a row).
    let main = &reqs[3].messages;
    assert!(
        !main.iter().any(|m| m.role == Role::Assistant),
        "no assistant message before the answer: {main:?}"
    );
    let plan_msg = main.last().expect("user message");
    assert_eq!(plan_msg.role, Role::User);
    assert!(plan_msg.text().contains("1. Read the failing test"));
    assert!(plan_msg.text().contains("3. Report"));
    assert!(plan_msg.text().contains("[navi] Plan for this request"));
    assert!(!reqs[3].tools.is_empty());
    let plan = ev
        .iter()
        .find_map(|e| match e {
            AgentEvent::PlanReady { plan } => Some(plan.clone()),
            _ => None,
        })
        .unwrap();
    assert!(plan.starts_with("Milestones"));
    let k = kinds(&ev);
    let at = |name: &str| k.iter().position(|x| *x == name).unwrap();
    let last_planning = k.iter().rposition(|x| *x == "planning").unwrap();
    assert!(at("planning") < at("plan_ready") && at("plan_ready") < last_planning);
    assert!(last_planning < at("stream_end"));
    let todo = ev
        .iter()
        .find_map(|e| match e {
            AgentEvent::TodoUpdated { items } => Some(items.clone()),
            _ => None,
        })
        .unwrap();
    let ex: Vec<_> = todo
        .iter()
        .map(|t| t.executor.clone().unwrap_or_default())
        .collect();
    assert_eq!(ex, vec!["TOOL: echo", "AGENT: p", "SELF"]);
    let stored = h.store.load(&s.id).unwrap().unwrap();
    assert!(stored.display.iter().any(|m| m.kind == MessageKind::Plan));
}

#[tokio::test]
async fn reflect_no_or_phase2_off_makes_no_review_call() {
    let h = planning(json!({"planning_phase2_enabled": true}));
    h.backend.push_text("Task: x\nREFLECT: no");
    h.backend.push_text("1. Do it — SELF");
    h.backend.push_text("ok");
    let s = h.store.create("p").unwrap();
    let _ = turn(&h, &s.id, "do x, then do y").await;
    assert_eq!(h.backend.requests().len(), 3);
}

#[tokio::test]
async fn garbage_plan_degrades_gracefully() {
    let h = planning(json!({}));
    h.backend.push_text("Task: y\nREFLECT: no");
    h.backend
        .push_text("I refuse to make numbered lists, sorry");
    h.backend.push_text("answer anyway");
    let s = h.store.create("p").unwrap();
    let (out, ev) = turn(&h, &s.id, "do y, then do z").await;
    assert_eq!(out.unwrap().text, "answer anyway");
    assert!(!kinds(&ev).contains(&"plan_ready"));
    assert!(!kinds(&ev).contains(&"todo_updated"));
    let notes: Vec<_> = ev
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Warning { message } => Some(message.clone()),
            _ => None,
        })
        .collect();
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert!(
        notes[0].starts_with("planner: ") && notes[0].ends_with("; continuing without a plan"),
        "{notes:?}"
    );
}

#[tokio::test]
async fn unknown_executors_are_tamed_and_forty_steps_are_no_plan() {
    let h = planning(json!({}));
    h.backend.push_text("REFLECT: no");
    let steps: String = (1..=15)
        .map(|i| format!("{i}. step {i} — TOOL: warp_drive\n"))
        .collect();
    h.backend.push_text(&steps);
    h.backend.push_text("fine");
    let s = h.store.create("p").unwrap();
    let (out, ev) = turn(&h, &s.id, "big job: first plan it, then do it").await;
    assert_eq!(out.unwrap().text, "fine");
    let todo = ev
        .iter()
        .find_map(|e| match e {
            AgentEvent::TodoUpdated { items } => Some(items.clone()),
            _ => None,
        })
        .unwrap();
    assert_eq!(todo.len(), 15);
    assert!(todo.iter().all(|t| t.executor.as_deref() == Some("SELF")));
    assert!(
        ev.iter().any(
            |e| matches!(e, AgentEvent::Warning { message } if message.contains("warp_drive"))
        )
    );
    // Forty steps: no plan at all (never the first fifteen), one note.
    let h = planning(json!({}));
    h.backend.push_text("REFLECT: no");
    let steps: String = (1..=40)
        .map(|i| format!("{i}. step {i} — SELF\n"))
        .collect();
    h.backend.push_text(&steps);
    h.backend.push_text("fine");
    let s = h.store.create("p").unwrap();
    let (out, ev) = turn(&h, &s.id, "big job: first plan it, then do it").await;
    assert_eq!(out.unwrap().text, "fine");
    let k = kinds(&ev);
    assert!(
        !k.contains(&"plan_ready") && !k.contains(&"todo_updated"),
        "{k:?}"
    );
    let warnings: Vec<_> = ev
        .iter()
        .filter_map(|e| match e {
            AgentEvent::Warning { message } => Some(message.as_str()),
            _ => None,
        })
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("40 steps"), "{warnings:?}");
    assert!(h.open(&s.id).todos().is_empty());
}

#[tokio::test]
async fn planning_runs_on_first_message_only_unless_enabled() {
    let h = planning(json!({}));
    h.backend.push_text("DIRECT");
    h.backend.push_text("one");
    let s = h.store.create("p").unwrap();
    let _ = turn(&h, &s.id, "first read it, then fix it").await;
    h.backend.push_text("two");
    let _ = turn(&h, &s.id, "second: read it, then fix it").await;
    assert_eq!(
        h.backend.requests().len(),
        3,
        "no planning on the second message"
    );
    let h = planning(json!({"planning_enabled": true, "planning_mandatory": true}));
    h.backend
        .push_text("Task: analysis without a DIRECT option\nREFLECT: no");
    h.backend.push_text("1. Do a — SELF");
    h.backend.push_text("x");
    let s = h.store.create("p").unwrap();
    let _ = turn(&h, &s.id, "first").await;
    assert!(
        !h.backend.requests()[0]
            .messages
            .last()
            .unwrap()
            .text()
            .contains("DIRECT"),
        "mandatory planning offers no DIRECT"
    );
}

#[tokio::test]
async fn budget_anchor_stall_validation_and_replan_reach_the_requests() {
    let h = harness(json!({
        "iteration_budget_enabled": true, "goal_anchoring_enabled": true, "goal_anchoring_interval": 2,
        "anti_stall_enabled": true, "anti_stall_threshold": 2, "step_validation_enabled": true,
        "adaptive_replan_enabled": true, "max_iterations": 8
    }));
    let s = h.store.create("p").unwrap();
    h.backend
        .push_tool_calls(&[("todo", json!({"action": "set", "items": ["alpha", "beta"]}))]);
    h.backend.push_tool_calls(&[(
        "todo",
        json!({"action": "update", "id": 1, "status": "done"}),
    )]);
    h.backend.push_tool_calls(&[("echo", json!({"text": "a"}))]);
    h.backend.push_tool_calls(&[("echo", json!({"text": "b"}))]);
    h.backend.push_tool_calls(&[(
        "todo",
        json!({"action": "update", "id": 2, "status": "failed"}),
    )]);
    h.backend.push_text("stopping here");
    let (out, ev) = turn(&h, &s.id, "GOAL-XYZ").await;
    assert_eq!(out.unwrap().text, "stopping here");
    let reqs = h.backend.requests();
    assert_eq!(reqs.len(), 6);
    let tail = |i: usize| reqs[i].messages.last().unwrap().text().into_owned();
    // The first call carries no note at all; the budget speaks only when
    // two rounds or fewer are left (the 6th call of 8).
    assert_eq!(reqs[0].messages.last().unwrap().text(), "GOAL-XYZ");
    for (i, r) in reqs.iter().enumerate() {
        let t = r.messages.last().unwrap().text().into_owned();
        assert_eq!(t.contains("tool round(s) left"), i == 5, "call {i}: {t}");
    }
    // Notes stay in the history: each request is the previous one plus new
    // messages, byte for byte (the server's prompt cache keeps the prefix).
    for w in reqs.windows(2) {
        assert_eq!(
            &w[1].messages[..w[0].messages.len()],
            &w[0].messages[..],
            "a later request rewrote an earlier message"
        );
    }
    // Anchor at iterations 2 and 4 (1-based), not 1, 3.
    let anchored: Vec<usize> = (0..6)
        .filter(|i| tail(*i).contains("Goal reminder"))
        .map(|i| i + 1)
        .collect();
    assert_eq!(anchored, vec![2, 4, 6]);
    assert!(tail(1).contains("GOAL-XYZ"));
    // `done` without validation was refused.
    let refused = ev.iter().any(|e| matches!(e, AgentEvent::ToolCall { tool, success: false, result, .. } if tool == "todo" && result.contains("step validation")));
    assert!(refused);
    // Two iterations without todo progress (the refused update and one echo) → stall warning.
    assert!(ev.iter().any(
        |e| matches!(e, AgentEvent::Warning { message } if message.contains("no todo progress"))
    ));
    assert!(reqs.iter().any(|r| {
        r.messages
            .last()
            .unwrap()
            .text()
            .contains("without progress on the todo list")
    }));
    // The failed step triggers the replan note on the next call only.
    assert!(tail(5).contains("Step 2 failed"), "{}", tail(5));
    assert!(!tail(4).contains("Step 2 failed"));
    // Notes are stored with the tool results of the context only: never in
    // what the user sees, never in a user message.
    let stored = h.store.load(&s.id).unwrap().unwrap();
    assert!(
        stored
            .display
            .iter()
            .all(|m| !m.msg.text().contains("[navi]"))
    );
    assert!(
        stored
            .context
            .iter()
            .any(|m| m.msg.text().contains("[navi]"))
    );
    assert!(
        stored
            .context
            .iter()
            .filter(|m| m.msg.text().contains("[navi]"))
            .all(|m| m.msg.role == Role::Tool)
    );
}

#[tokio::test]
async fn compaction_replaces_old_turns_with_a_summary() {
    let h = harness(json!({}));
    let s = h.store.create("p").unwrap();
    for i in 0..4 {
        h.backend.push_text(&format!("answer {i}"));
        let _ = turn(&h, &s.id, &format!("question {i}")).await;
    }
    h.backend.push_text("- the user asked four questions");
    let (sink, mut rx) = navi::protocol::EventSink::channel(10);
    let (before, after) = h
        .agent
        .compact(
            &h.open(&s.id),
            &sink,
            &tokio_util::sync::CancellationToken::new(),
        )
        .await
        .unwrap();
    assert_eq!((before, after), (8, 5));
    assert!(matches!(
        rx.recv().await,
        Some(AgentEvent::ContextCompressed {
            messages_before: 8,
            messages_after: 5,
            ..
        })
    ));
    // The summary call is the session's own prefix (cache reuse): the
    // replaced turns as they were sent, then the instruction.
    let req = h.backend.requests().pop().unwrap();
    let last = &req.messages.last().unwrap().text();
    assert!(last.starts_with("[navi: compaction]"), "{last}");
    assert!(req.messages.iter().any(|m| m.text() == "question 0"));
    assert!(!req.messages.iter().any(|m| m.text().contains("question 3")));
    let stored = h.store.load(&s.id).unwrap().unwrap();
    assert_eq!(stored.display.len(), 8, "display history untouched");
    assert_eq!(stored.context[0].kind, MessageKind::Summary);
    assert_eq!(stored.context[1].msg.text(), "question 2");
}
