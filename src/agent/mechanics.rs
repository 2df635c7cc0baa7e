//! Thinking mechanics: navi's notes that keep long runs on track. They are
//! never sent with the first call of a turn; later ones join the last tool
//! result in the stored context (`Run::notes_into_history`).
//!
//! - iteration budget: the last calls of a long run are told to finish
//!   (a count on every call costs tokens and small models repeat it);
//! - goal anchoring: every N iterations, the user's goal and open todo items;
//! - anti-stall: N iterations in a row without todo progress → a hard warning;
//! - adaptive replan: a step newly marked `failed` → a re-plan prompt next call.
//!
//! Step validation lives in the `todo` tool (it refuses `done` without evidence).
use crate::profile::Profile;
use crate::protocol::{TodoItem, TodoStatus};
use std::collections::HashSet;

/// The budget note appears once this few iterations (or fewer) are left.
pub(crate) const BUDGET_WARN_LEFT: u32 = 2;

#[derive(Clone, Debug, Default)]
pub(crate) struct Mechanics {
    budget: bool,
    anchor_every: Option<u32>,
    stall_after: Option<u32>,
    replan: bool,
    without_progress: u32,
    last_snapshot: Vec<(u32, TodoStatus)>,
    seen_failed: HashSet<u32>,
    replan_queue: Vec<u32>,
}

/// What to inject into the next call.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct Injection {
    pub(crate) notes: Vec<String>,
    /// A stall warning also goes to the user as a `warning` event.
    pub(crate) stall_warning: Option<String>,
}

fn open_items(todos: &[TodoItem]) -> Vec<String> {
    todos
        .iter()
        .filter(|t| !t.status.is_finished())
        .map(|t| format!("{}. {} ({})", t.id, t.text, t.status))
        .collect()
}

impl Mechanics {
    pub(crate) fn new(p: &Profile) -> Self {
        Mechanics {
            budget: p.iteration_budget_enabled,
            anchor_every: p
                .goal_anchoring_enabled
                .then_some(p.goal_anchoring_interval.max(1)),
            stall_after: p
                .anti_stall_enabled
                .then_some(p.anti_stall_threshold.max(1)),
            replan: p.adaptive_replan_enabled,
            ..Default::default()
        }
    }

    /// Starts tracking from the todo list as it is when the loop begins.
    pub(crate) fn start(&mut self, todos: &[TodoItem]) {
        self.last_snapshot = todos.iter().map(|t| (t.id, t.status)).collect();
        self.seen_failed = todos
            .iter()
            .filter(|t| t.status == TodoStatus::Failed)
            .map(|t| t.id)
            .collect();
    }

    /// Notes for the call of 1-based `iteration` out of `max`.
    pub(crate) fn before_call(
        &mut self,
        iteration: u32,
        max: u32,
        goal: Option<&str>,
        todos: &[TodoItem],
    ) -> Injection {
        let mut inj = Injection::default();
        if self.budget {
            let left = max.saturating_sub(iteration);
            if left <= BUDGET_WARN_LEFT {
                inj.notes.push(format!(
                    "Only {left} tool round(s) left after this one. Finish now: give the user your answer with what you have, and say what is left undone."
                ));
            }
        }
        if let Some(n) = self.anchor_every
            && iteration.is_multiple_of(n)
        {
            {
                let goal = goal
                    .map(|g| g.trim())
                    .filter(|g| !g.is_empty())
                    .unwrap_or("(no goal recorded)");
                let mut note = format!("Goal reminder. The user asked: \"{goal}\".");
                let open = open_items(todos);
                if !open.is_empty() {
                    note.push_str(&format!(" Open todo items: {}.", open.join("; ")));
                }
                note.push_str(" Keep working toward this goal; do not drift.");
                inj.notes.push(note);
            }
        }
        if let Some(n) = self.stall_after
            && self.without_progress >= n
        {
            {
                let w = format!(
                    "WARNING: {} iterations in a row without progress on the todo list. Stop repeating what has not worked: change approach, mark blocked steps failed or skipped, or give the user your answer now.",
                    self.without_progress
                );
                inj.notes.push(w.clone());
                inj.stall_warning = Some(format!(
                    "no todo progress for {} iterations; the agent was told to change approach",
                    self.without_progress
                ));
                self.without_progress = 0;
            }
        }
        if !self.replan_queue.is_empty() {
            let ids: Vec<String> = self.replan_queue.drain(..).map(|i| i.to_string()).collect();
            inj.notes.push(format!(
                "Step {} failed. Re-plan before going on: look at why it failed, then rewrite the remaining steps with the todo tool (action=set or add) using a different approach.",
                ids.join(", ")
            ));
        }
        inj
    }

    /// Updates progress tracking after a batch of tool calls.
    pub(crate) fn after_tools(&mut self, todos: &[TodoItem]) {
        let snapshot: Vec<(u32, TodoStatus)> = todos.iter().map(|t| (t.id, t.status)).collect();
        if snapshot == self.last_snapshot {
            self.without_progress += 1;
        } else {
            self.without_progress = 0;
        }
        self.last_snapshot = snapshot;
        for t in todos.iter().filter(|t| t.status == TodoStatus::Failed) {
            if self.seen_failed.insert(t.id) && self.replan {
                self.replan_queue.push(t.id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn profile() -> Profile {
        let json = r#"{"id":"p","name":"P","description":"d","enabled_tools":[],"goal_anchoring_interval":3,"anti_stall_threshold":2,"adaptive_replan_enabled":true}"#;
        crate::profile::parse(json, "x", None, "f", "p", "t").unwrap()
    }

    fn item(id: u32, status: &str) -> TodoItem {
        TodoItem {
            id,
            text: format!("step {id}"),
            status: TodoStatus::parse(status).unwrap_or_default(),
            executor: None,
            validation: None,
        }
    }

    #[test]
    fn budget_speaks_only_near_the_end() {
        let mut m = Mechanics::new(&profile());
        for i in 1..=7 {
            let n = m.before_call(i, 10, Some("g"), &[]);
            assert!(!n.notes.iter().any(|n| n.contains("tool round")), "{i}");
        }
        let n = m.before_call(8, 10, Some("g"), &[]);
        assert!(n.notes[0].contains("Only 2 tool round(s) left"), "{n:?}");
        let n = m.before_call(10, 10, Some("g"), &[]);
        assert!(n.notes[0].contains("Only 0 tool round(s) left"), "{n:?}");
    }

    #[test]
    fn anchor_at_n_and_2n_only() {
        let mut m = Mechanics::new(&profile());
        let hits: Vec<u32> = (1..=7)
            .filter(|i| {
                m.before_call(*i, 20, Some("build it"), &[item(1, "pending")])
                    .notes
                    .iter()
                    .any(|n| n.contains("Goal reminder"))
            })
            .collect();
        assert_eq!(hits, vec![3, 6]);
    }

    #[test]
    fn stall_warning_after_threshold_and_replan_on_failure() {
        let mut m = Mechanics::new(&profile());
        let todos = vec![item(1, "pending")];
        m.start(&todos);
        m.after_tools(&todos);
        assert!(m.before_call(1, 20, None, &todos).stall_warning.is_none());
        m.after_tools(&todos);
        let inj = m.before_call(2, 20, None, &todos);
        assert!(inj.stall_warning.is_some());
        let failed = vec![item(1, "failed")];
        m.after_tools(&failed);
        let inj = m.before_call(3, 20, None, &failed);
        assert!(inj.notes.iter().any(|n| n.contains("Step 1 failed")));
        let inj = m.before_call(4, 20, None, &failed);
        assert!(
            !inj.notes.iter().any(|n| n.contains("failed. Re-plan")),
            "replan fires once"
        );
    }
}
