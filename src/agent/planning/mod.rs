//! The planning pipeline, run before the tool loop.
//!
//! Phase 1 (analysis) may answer DIRECT to skip planning; phase 2 (review)
//! runs only when enabled and phase 1 says `REFLECT: yes`; phase 3 writes the
//! plan. Greetings, short questions and short imperatives, small windows
//! and small models skip the pipeline (`gate.rs`, `skip.rs`).
//!
//! Every planning call is the main request of this turn — same system
//! prompt, same tools, same history — with the phase's instruction appended
//! to the end (thinking off, temperature 0.3, at most [`MAX_PLAN_TOKENS`]),
//! so the server's prompt cache serves the shared prefix. Tool calls in a
//! planner answer are ignored. The plan is checked (`parse.rs`); a valid
//! plan becomes an assistant message in the context (a plan card in the
//! display buffer), a `plan_ready` event, and the todo list. Garbage from the
//! planner never fails the turn: no plan is made, one warning says why, and
//! the loop goes on.
//!
//! Bounds: at most three planner calls per turn (analysis, one review, plan),
//! each capped in tokens and cut by the repetition guard; an answer that was
//! cut as a loop, or an analysis that is not one, ends planning at once.

pub(crate) mod gate;
mod parse;
pub(crate) mod prompts;
pub(crate) mod skip;

pub(crate) use parse::{PlanCheck, parse_plan};

use super::AgentError;
use super::turn::Run;
use crate::config::ThinkSetting;
use crate::llm::ChatMessage;
use crate::protocol::AgentEvent;
use crate::session::MessageKind;

pub(crate) const PLANNING_TEMPERATURE: f64 = 0.3;
pub(crate) const MAX_STEPS: usize = 15;
/// Cap on the tokens of the analysis and the review (a few short sections).
pub(crate) const MAX_ANALYSIS_TOKENS: u32 = 512;
/// Cap on the tokens of the plan (milestones and up to 15 one-line steps).
pub(crate) const MAX_PLAN_TOKENS: u32 = 768;

/// Whether planning runs for this message: always on a session's first
/// message, on every message with `planning_enabled`; and only when phase 1
/// or phase 3 is on.
pub(crate) fn should_plan(p: &crate::profile::Profile, first_message: bool) -> bool {
    (first_message || p.planning_enabled)
        && (p.planning_phase1_enabled || p.planning_phase3_enabled)
}

fn fill(template: &str, pairs: &[(&str, &str)]) -> String {
    pairs.iter().fold(template.to_string(), |t, (k, v)| {
        t.replace(&format!("{{{k}}}"), v)
    })
}

/// One planner answer.
struct Answer {
    text: String,
    /// The repetition guard cut it.
    looped: bool,
}

async fn ask(
    run: &mut Run<'_>,
    instruction: String,
    max_tokens: u32,
) -> Result<Option<Answer>, AgentError> {
    let mut req = run.request(run.messages(&[instruction]), true);
    run.check_room(&req)?;
    req.temperature = Some(PLANNING_TEMPERATURE);
    req.think = Some(ThinkSetting::Bool(false));
    let cap = req.max_tokens.unwrap_or(max_tokens);
    req.max_tokens = Some(cap.min(max_tokens));
    let mut repetition = super::repetition::RepetitionGuard::new();
    let mut stream =
        match crate::llm::guard::open(&*run.backend, &req, &run.agent.guard, run.cancel).await {
            Ok(s) => s,
            Err(crate::llm::LlmError::Cancelled) => return Ok(None),
            Err(e) => return Err(run.explain_rejection(e, &req)),
        };
    let mut text = String::new();
    let mut looped = false;
    while let Some(chunk) = stream.next().await {
        match chunk {
            Ok(crate::llm::ChatChunk::Text(t)) => {
                text.push_str(&t);
                if repetition.push(&t).is_some() {
                    tracing::info!("planner answer became a loop; cut");
                    looped = true;
                    break;
                }
            }
            Ok(crate::llm::ChatChunk::Done { .. }) => break,
            Ok(_) => {}
            Err(crate::llm::LlmError::Cancelled) => return Ok(None),
            Err(e) => return Err(e.into()),
        }
    }
    Ok(Some(Answer { text, looped }))
}

/// The one visible note when planning gives up.
async fn give_up(run: &Run<'_>, reason: &str) {
    run.emit(AgentEvent::Warning {
        message: format!("planner: {reason}; continuing without a plan"),
    })
    .await;
}

/// Asks, and turns a looping answer into the note: `None` ends planning.
async fn ask_bounded(
    run: &mut Run<'_>,
    what: &str,
    instruction: String,
    max_tokens: u32,
) -> Result<Option<String>, AgentError> {
    match ask(run, instruction, max_tokens).await? {
        None => Ok(None),
        Some(a) if a.looped => {
            give_up(run, &format!("the {what} repeated itself and was cut")).await;
            Ok(None)
        }
        Some(a) => Ok(Some(a.text)),
    }
}

/// An analysis has at least one of its section labels (`Task:`, `REFLECT:` …);
/// anything else (an answer, a list of numbers) is not worth a plan call.
fn is_analysis(text: &str) -> bool {
    text.lines().any(|l| {
        let l = l
            .trim()
            .trim_start_matches(|c: char| matches!(c, '#' | '*' | '_' | '-') || c.is_whitespace())
            .to_ascii_lowercase();
        ["task", "subtasks", "unknowns", "risks", "reflect"]
            .iter()
            .any(|k| l.starts_with(k) && l[k.len()..].trim_start_matches('*').starts_with(':'))
    })
}

/// Adds the plan to the context copy of the turn's user message, as navi's
/// note (the display keeps the user's words). An assistant message of its
/// own would put two assistant messages in a row once the answer follows,
/// which strict chat templates refuse; a note that appears for one request
/// and then vanishes would break the server's prompt cache.
fn plan_into_context(run: &mut Run<'_>, plan: &str) -> Result<(), AgentError> {
    use crate::llm::Role;
    let Some(idx) = run
        .conv
        .context
        .iter()
        .rposition(|m| m.msg.role == Role::User)
    else {
        return Ok(());
    };
    let note = format!(
        "{} Plan for this request (carry it out step by step and keep the todo list up to date):\n{plan}",
        super::context::NOTE_PREFIX
    );
    run.conv.amend_context(idx, &note)?;
    Ok(())
}

/// Runs the pipeline. Returns without a plan when the planner says DIRECT,
/// answers garbage, or the run is stopped.
pub(super) async fn run(run: &mut Run<'_>) -> Result<(), AgentError> {
    // --no-plan: the main run's profile has planning cleared; its helpers
    // (run with their own profiles) are covered here.
    if run.agent.turn_tweaks(&run.session).no_plan {
        return Ok(());
    }
    // What the user typed for this turn: attached files and piped input do
    // not make a short request "complex". A subagent's task is its message.
    let request = run.typed.clone().unwrap_or_else(|| {
        run.conv
            .context
            .iter()
            .rev()
            .find(|m| m.msg.role == crate::llm::Role::User && m.kind == MessageKind::Message)
            .map(|m| m.msg.text().into_owned())
            .unwrap_or_default()
    });
    if let Some(why) = gate::skip_reason(
        &run.profile,
        &run.agent.config.planning,
        &request,
        run.tracker.window,
        &run.model,
    ) {
        tracing::debug!("planner skipped: {why}");
        return Ok(());
    }
    // The UI shows "planning" as its own phase, from here until the end.
    let top = !run.is_subagent();
    if top {
        run.emit(AgentEvent::Planning { active: true }).await;
    }
    let r = pipeline(run).await;
    if top {
        run.emit(AgentEvent::Planning { active: false }).await;
    }
    r
}

async fn pipeline(run: &mut Run<'_>) -> Result<(), AgentError> {
    let p = run.profile.clone();
    let tool_names = run.tool_names();
    let registry = run
        .agent
        .tools
        .read()
        .map(|r| r.clone())
        .unwrap_or_default();
    let known_tools: Vec<String> = registry
        .schemas_for(&tool_names)
        .into_iter()
        .map(|s| s.name)
        .collect();
    let known_profiles = run.agent.profiles.ids();
    let tools_line = if known_tools.is_empty() {
        "none".to_string()
    } else {
        known_tools.join(", ")
    };
    let profiles_line = run
        .agent
        .profiles
        .all()
        .map(|q| {
            if q.short_description.is_empty() {
                q.id.clone()
            } else {
                format!("{} ({})", q.id, q.short_description)
            }
        })
        .collect::<Vec<_>>()
        .join("; ");
    let mut analysis = String::new();
    if p.planning_phase1_enabled {
        let direct = if p.planning_mandatory {
            ""
        } else {
            prompts::DIRECT_OPTION
        };
        let system = fill(
            prompts::ANALYSIS,
            &[
                ("direct", direct),
                ("tools", &tools_line),
                ("profiles", &profiles_line),
            ],
        );
        let Some(a) = ask_bounded(run, "analysis", system, MAX_ANALYSIS_TOKENS).await? else {
            return Ok(());
        };
        if !p.planning_mandatory && a.trim_start().starts_with("DIRECT") {
            tracing::debug!("planner: DIRECT, no plan");
            return Ok(());
        }
        if !is_analysis(&a) {
            give_up(run, "the analysis was not one (no Task: or REFLECT: line)").await;
            return Ok(());
        }
        analysis = a;
    }
    let mut review = String::new();
    let reflect = analysis.lines().any(|l| {
        let l = l.trim().to_ascii_lowercase();
        l.starts_with("reflect:") && l.contains("yes")
    });
    if p.planning_phase2_enabled && reflect {
        let input = format!("{}\n\nAnalysis:\n{analysis}", prompts::REVIEW);
        let Some(r) = ask_bounded(run, "review", input, MAX_ANALYSIS_TOKENS).await? else {
            return Ok(());
        };
        review = r;
    }
    let plan_text = if p.planning_phase3_enabled {
        let system = fill(
            prompts::EXECUTION,
            &[("tools", &tools_line), ("profiles", &profiles_line)],
        );
        let none = "(none)";
        let input = fill(
            prompts::EXECUTION_INPUT,
            &[
                (
                    "analysis",
                    if analysis.is_empty() { none } else { &analysis },
                ),
                ("review", if review.is_empty() { none } else { &review }),
            ],
        );
        let instruction = format!("{system}\n\n{input}");
        let Some(t) = ask_bounded(run, "plan", instruction, MAX_PLAN_TOKENS).await? else {
            return Ok(());
        };
        t
    } else {
        analysis
    };
    let parsed = match parse_plan(&plan_text, &known_tools, &known_profiles) {
        PlanCheck::Valid(plan) => plan,
        PlanCheck::Direct => return Ok(()),
        // Without phase 3 the analysis is only a plan when it happens to be one.
        PlanCheck::Rejected(why) if !p.planning_phase3_enabled => {
            tracing::debug!("analysis is no plan: {why}");
            return Ok(());
        }
        PlanCheck::Rejected(why) => {
            tracing::info!("planner answer rejected: {why}");
            give_up(run, &why).await;
            return Ok(());
        }
    };
    for w in &parsed.warnings {
        run.emit(AgentEvent::Warning {
            message: format!("planner: {w}"),
        })
        .await;
    }
    let plan = parsed.text;
    // The plan card is for the user; the model gets the plan with the
    // request it answers (see `plan_into_context`).
    run.conv
        .push_display_only(ChatMessage::assistant(plan.clone()), MessageKind::Plan)?;
    plan_into_context(run, &plan)?;
    if !run.is_subagent() {
        run.emit(AgentEvent::PlanReady { plan }).await;
    }
    if run.is_subagent() {
        // A helper's plan guides the helper only; the user's todo list is the parent's.
        return Ok(());
    }
    let items = run.session.tools().set_todo_texts(
        parsed
            .steps
            .into_iter()
            .map(|s| (s.text, Some(s.executor)))
            .collect(),
    );
    run.emit(AgentEvent::TodoUpdated { items }).await;
    Ok(())
}
