//! The planner's prompt texts. Plain strings, easy to read and to change.
//! `{…}` placeholders are filled in by `planning::run`.
//!
//! Each text is an instruction appended at the very end of the main
//! conversation's request (same system prompt, same tools), so a local
//! server reuses its cached prefix for the planner calls and the answer.

/// Phase 1: understand the task. `{direct}` is replaced by DIRECT_OPTION or "".
pub(crate) const ANALYSIS: &str = "Planning stage: do not answer the user yet and do not call any tool. Look at the user's latest request above and decide how much planning it needs.
{direct}
Otherwise write a short analysis with these parts:
Task: the request in your own words, including what a finished result looks like.
Subtasks: the distinct pieces of work, one per line.
Unknowns: facts you would have to find out first (files to read, versions, the user's preferences).
Risks: anything destructive or irreversible.
Finish with exactly one line: REFLECT: yes (when the task is complex, risky or ambiguous enough that a second opinion on the plan would help) or REFLECT: no.

Tools the assistant can use: {tools}
Profiles it can delegate to: {profiles}";

pub(crate) const DIRECT_OPTION: &str = "If the request is simple — a greeting, a question you can answer from knowledge, a single obvious tool call — reply with the single word DIRECT and nothing else.";

/// Phase 2: one call, four voices.
pub(crate) const REVIEW: &str = "Planning stage, review: do not answer the user yet and do not call any tool. Review the task analysis below before it becomes a plan. Write four short sections:
Critic: assumptions that may be wrong, contradictions, facts that must be verified, risks.
Pragmatist: a simpler path, steps that are not needed, better choices of tool or delegate.
Detailer: requirements that were missed, files, docs or tools to inspect first, how each result will be checked.
Plan Adjustments: concrete changes the plan must make, as a list.
Be specific to this task; no generic advice.";

/// Phase 3: the execution plan.
pub(crate) const EXECUTION: &str = "Planning stage, plan: do not do the work and do not call any tool; only plan it. Turn the user's latest request into an execution plan.

Write:
Milestones: 1 to 4 lines naming the intermediate results, as \"- \" lines (not numbered).
Steps: a numbered list (\"1. ...\"), one action per step, each step once, each ending with its executor:
  TOOL: <tool name>   — one call of that tool does the step
  AGENT: <profile id> — a bounded subtask of three or more tool calls, delegated to a helper with that profile
  SELF                — thinking, writing or combining results, without tools
Size the plan to the task: 1–3 steps for a simple task, 5–9 for a medium one, 8–15 for a complex or open-ended one. Never more than 15 steps.
The comma test: if a step lists several things joined by commas or \"and\", split it into one step per thing.
The last step delivers the result to the user.

Tools: {tools}
Profiles for AGENT: {profiles}";

/// The analysis/review context handed to phase 3.
pub(crate) const EXECUTION_INPUT: &str = "Analysis:\n{analysis}\n\nReview to apply:\n{review}";
