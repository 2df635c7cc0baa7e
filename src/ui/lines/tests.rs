use super::*;
use crate::protocol::TodoItem;
use serde_json::json;
use std::time::Duration;

fn opts(color: bool, thinking: ThinkingView) -> LineOptions {
    LineOptions {
        color,
        thinking,
        live_answer: true,
        markdown: true,
        code: CodeStyle {
            depth: crate::ui::color_depth::ColorDepth::True,
            ..CodeStyle::default()
        },
    }
}

fn text(r: &mut LineRenderer, events: &[AgentEvent]) -> String {
    let mut s = String::new();
    for e in events {
        for p in r.event(e) {
            s.push_str(&p.text);
        }
    }
    for p in r.close() {
        s.push_str(&p.text);
    }
    s
}

fn delta(d: &str) -> AgentEvent {
    AgentEvent::StreamDelta {
        delta: d.into(),
        is_subagent: false,
        agent: None,
    }
}

fn think(d: &str) -> AgentEvent {
    AgentEvent::ThinkingDelta {
        delta: d.into(),
        is_subagent: false,
        agent: None,
    }
}

fn end(content: &str) -> AgentEvent {
    AgentEvent::StreamEnd {
        content: content.into(),
        context_tokens: 1200,
        max_context_tokens: 32768,
    }
}

fn thinking_end() -> AgentEvent {
    AgentEvent::ThinkingEnd {
        is_subagent: false,
        agent: None,
    }
}

#[test]
fn a_turn_with_a_tool_as_plain_lines() {
    let mut r = LineRenderer::new(opts(false, ThinkingView::Full));
    let out = text(
        &mut r,
        &[
            AgentEvent::StreamStart {
                session_id: "s".into(),
            },
            think("Let me"),
            think(" think.\nMore."),
            thinking_end(),
            delta("Checking"),
            AgentEvent::ToolStarted {
                id: "c1".into(),
                tool: "todo".into(),
                args: json!({"op": "add", "text": "x"}),
                is_subagent: false,
                agent: None,
                call: None,
            },
            AgentEvent::ToolCall {
                id: "c1".into(),
                tool: "todo".into(),
                args: json!({}),
                result: "added 1".into(),
                success: true,
                is_subagent: false,
                agent: None,
                display: None,
            },
            delta("Done **now**."),
            end("Done **now**."),
        ],
    );
    assert_eq!(
        out,
        "thinking:\n│ Let me think.\n│ More.\nChecking\n→ todo(op=\"add\", text=\"x\")\n✓ todo: added 1\nDone **now**.\n"
    );
}

#[test]
fn thinking_summary_is_one_line() {
    let mut r = LineRenderer::new(opts(false, ThinkingView::Summary));
    let out = text(
        &mut r,
        &[
            think("\n"),
            think("one two"),
            think(" three"),
            thinking_end(),
            delta("Hi"),
            end("Hi"),
        ],
    );
    assert_eq!(out, "thinking… 3 words: one two three\nHi\n");
}

#[test]
fn unstreamed_thinking_block_is_shown_once() {
    let mut r = LineRenderer::new(opts(false, ThinkingView::Full));
    let block = AgentEvent::TurnThinking {
        thinking: "pondering".into(),
        is_subagent: false,
        agent: None,
    };
    assert_eq!(
        text(&mut r, std::slice::from_ref(&block)),
        "thinking:\n│ pondering\n"
    );
    // After a streamed block, the whole-block event is not printed again.
    let out = text(&mut r, &[think("streamed"), thinking_end(), block]);
    assert_eq!(out, "thinking:\n│ streamed\n");
}

#[test]
fn subagent_events_are_indented() {
    let agent = Some(AgentOrigin {
        id: "subagent_1".into(),
        depth: 1,
        profile_id: "discuss".into(),
    });
    let mut r = LineRenderer::new(opts(false, ThinkingView::Full));
    let out = text(
        &mut r,
        &[
            AgentEvent::ToolStarted {
                id: "c".into(),
                tool: "web_search".into(),
                args: json!({"query": "q"}),
                is_subagent: true,
                agent: agent.clone(),
                call: None,
            },
            AgentEvent::StreamDelta {
                delta: "sub text\nline2".into(),
                is_subagent: true,
                agent: agent.clone(),
            },
            AgentEvent::ToolCall {
                id: "c".into(),
                tool: "web_search".into(),
                args: json!({}),
                result: "nothing found".into(),
                success: false,
                is_subagent: true,
                agent,
                display: None,
            },
        ],
    );
    assert_eq!(
        out,
        "  [discuss] → web_search(query=\"q\")\n    sub text\n    line2\n  ✗ web_search: nothing found\n"
    );
}

#[test]
fn plan_is_numbered_and_todos_show_changes_only() {
    let mut r = LineRenderer::new(opts(false, ThinkingView::Full));
    let item = |id, status: &str| TodoItem {
        id,
        text: format!("step {id}"),
        status: crate::protocol::TodoStatus::parse(status).unwrap(),
        executor: None,
        validation: None,
    };
    let out = text(
        &mut r,
        &[
            AgentEvent::PlanReady {
                plan: "Read it\nFix it".into(),
            },
            AgentEvent::TodoUpdated {
                items: vec![item(1, "pending"), item(2, "pending")],
            },
            AgentEvent::TodoUpdated {
                items: vec![item(1, "done"), item(2, "pending")],
            },
        ],
    );
    assert_eq!(
        out,
        "plan:\n  1. Read it\n  2. Fix it\n  [ ] 1. step 1\n  [ ] 2. step 2\n  [x] 1. step 1\n"
    );
}

#[test]
fn non_live_answer_prints_at_the_end() {
    let mut o = opts(false, ThinkingView::Summary);
    o.live_answer = false;
    let mut r = LineRenderer::new(o);
    let out = text(&mut r, &[delta("partial"), end("the whole answer")]);
    assert_eq!(out, "the whole answer\n");
}

#[test]
fn coloured_answer_is_markdown_and_lines_close() {
    let mut r = LineRenderer::new(opts(true, ThinkingView::Full));
    let out = text(&mut r, &[delta("# Hi\nsome `x`"), end("")]);
    assert_eq!(out, "\x1b[1;4;35mHi\x1b[0m\nsome \x1b[33mx\x1b[0m\n");
    let mut r = LineRenderer::new(opts(false, ThinkingView::Full));
    let out = text(
        &mut r,
        &[
            delta("x"),
            AgentEvent::Warning {
                message: "careful".into(),
            },
            AgentEvent::StreamStopped,
        ],
    );
    assert_eq!(out, "x\nwarning: careful\nstopped\n");
    assert!(r.saw_stop());
}

#[test]
fn status_line_sums_the_turn() {
    let mut r = LineRenderer::new(opts(false, ThinkingView::Full));
    let usage = AgentEvent::TokenUsage {
        prompt_tokens: 100,
        completion_tokens: 20,
        context_tokens: 1200,
        max_context_tokens: 32768,
    };
    let model = AgentEvent::ModelSelected {
        model: "m1".into(),
        reason: "using m1".into(),
    };
    let out = text(&mut r, &[model.clone(), usage.clone(), usage, model]);
    assert_eq!(out, "model: using m1\n");
    assert_eq!(
        r.status_line(Duration::from_millis(1500)),
        "── context 1.2k/32k (3%) · 40 tokens out · 1.5s · m1 ──"
    );
}

#[test]
fn code_style_follows_the_colour_theme() {
    let dir = std::path::Path::new("/nonexistent-navi-config");
    let light = code_style_for("light", dir).unwrap();
    assert_eq!(light.syntax_theme.as_deref(), Some("InspiredGitHub"));
    let dark = code_style_for("dark", dir).unwrap();
    assert_eq!(dark.syntax_theme.as_deref(), Some("base16-ocean.dark"));
    // The default theme name works in line mode too (no "unknown theme").
    assert!(code_style_for("auto", dir).is_ok());
    let err = code_style_for("no-such-theme", dir).unwrap_err();
    assert!(err.contains("unknown theme"), "{err}");
}

#[test]
fn plan_steps_keep_their_own_number_and_notes_get_none() {
    let mut r = LineRenderer::new(opts(false, ThinkingView::Full));
    let out = text(
        &mut r,
        &[AgentEvent::PlanReady {
            plan: "Milestones:\n- listed\n1. List the files — TOOL: filesystem\n2. Answer — SELF"
                .into(),
        }],
    );
    assert_eq!(
        out,
        "plan:\n  Milestones:\n  - listed\n  1. List the files — TOOL: filesystem\n  2. Answer — SELF\n"
    );
    assert!(!out.contains("3. 1.") && !out.contains("4. 2."));
}

#[test]
fn planning_shows_a_progress_line_that_closes_with_the_time() {
    let mut r = LineRenderer::new(opts(false, ThinkingView::Summary));
    let on = AgentEvent::Planning { active: true };
    let off = AgentEvent::Planning { active: false };
    let out = text(&mut r, &[on.clone(), off.clone(), delta("Berlin")]);
    assert!(out.starts_with("planning… done ("), "{out:?}");
    assert!(out.contains(" s)\nBerlin"), "{out:?}");
    // Something printed in between closes the line; the end gets its own.
    let out = text(
        &mut r,
        &[
            on,
            AgentEvent::Warning {
                message: "planner: junk; continuing without a plan".into(),
            },
            off,
        ],
    );
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(lines[0], "planning… ", "{out:?}");
    assert!(lines[1].contains("continuing without a plan"), "{out:?}");
    assert!(lines[2].starts_with("planning done ("), "{out:?}");
}
