//! `TuiState::apply`: one `AgentEvent` → changes to the cells, the side pane
//! and the status.
//!
//! Invariants:
//! - Tool cards pair with `tool_call` by id only; a `tool_call` without a
//!   card (history repair, missed start) adds a finished card.
//! - Subagent events (`agent`/`is_subagent`) never reach the top level: they
//!   nest under the pending `spawn_agent` card of the agent one level up.
//! - Only the cell receiving deltas is touched; the others keep their cache.
use super::approval::ApprovalPrompt;
use super::cells::{Cell, CellKind, ToolCard};
use super::state::{RunState, TuiState};
use super::stream_doc::StreamDoc;
use crate::protocol::{
    AgentEvent, AgentOrigin, PINNED_NOTE, SPAWN_AGENT_TOOL as SPAWN, ToolDisplay,
};
use crate::ui::format::args_preview;
use serde_json::{Value, json};

fn origin_of(is_subagent: bool, agent: &Option<AgentOrigin>) -> Option<AgentOrigin> {
    match agent {
        Some(a) => Some(a.clone()),
        None if is_subagent => Some(AgentOrigin {
            id: "subagent".into(),
            depth: 1,
            profile_id: String::new(),
        }),
        None => None,
    }
}

fn short(id: &str) -> String {
    id.strip_prefix("subagent_")
        .unwrap_or(id)
        .chars()
        .take(6)
        .collect()
}

impl TuiState {
    pub fn apply(&mut self, ev: &AgentEvent) {
        use AgentEvent::*;
        match ev {
            StreamStart { .. } => {
                if self.run != RunState::Stopping {
                    self.run = RunState::Waiting;
                }
            }
            ThinkingDelta {
                delta,
                is_subagent,
                agent,
            } => match origin_of(*is_subagent, agent) {
                Some(o) => {
                    self.container_for(&o);
                }
                None => self.thinking_delta(delta),
            },
            ThinkingEnd { is_subagent, agent } => {
                if origin_of(*is_subagent, agent).is_none()
                    && let Some(i) = self.open_thinking.take()
                    && let Some(c) = self.transcript.cells.get_mut(i)
                {
                    if let CellKind::Thinking { open, .. } = &mut c.kind {
                        *open = false;
                    }
                    c.touch();
                }
            }
            TurnThinking {
                thinking,
                is_subagent,
                agent,
            } => {
                if origin_of(*is_subagent, agent).is_none() {
                    if !self.thinking_streamed && !thinking.trim().is_empty() {
                        self.push(CellKind::Thinking {
                            text: thinking.clone(),
                            open: false,
                        });
                    }
                    self.thinking_streamed = false;
                }
            }
            Planning { active } => {
                if self.run != RunState::Stopping {
                    self.run = if *active {
                        RunState::Planning
                    } else {
                        RunState::Waiting
                    };
                }
            }
            PlanReady { plan } => {
                self.close_open();
                self.push(CellKind::Plan(plan.clone()));
            }
            TodoUpdated { items } => self.side.todos = items.clone(),
            ToolStarted {
                id,
                tool,
                args,
                is_subagent,
                agent,
                ..
            } => self.tool_started(id, tool, args, origin_of(*is_subagent, agent)),
            ToolCall {
                id,
                tool,
                args,
                result,
                success,
                is_subagent,
                agent,
                display,
            } => self.tool_call(
                id,
                tool,
                args,
                result,
                *success,
                display.as_ref(),
                origin_of(*is_subagent, agent),
            ),
            ToolProgress {
                id,
                progress,
                total,
                message,
                ..
            } => {
                if let Some(path) = self.tools.get(id).cloned()
                    && let Some(Cell {
                        kind: CellKind::Tool(card),
                        ..
                    }) = self.transcript.cell_mut(&path)
                {
                    // The card counts the seconds itself.
                    let what =
                        crate::mcp::progress::describe(None, *progress, *total, message.as_deref());
                    card.progress = (!what.is_empty()).then_some(what);
                    self.transcript.touch(&path);
                }
            }
            ApprovalRequest {
                id,
                tool,
                summary,
                args,
                call,
            } => {
                if self.approvals.is_empty() {
                    self.approval_shown = false;
                }
                let mut prompt = ApprovalPrompt::new(id, tool, summary, args, call.as_deref());
                prompt.note = crate::ui::sandbox_words::for_call(&self.sandbox, tool, args);
                self.approvals.push_back(prompt);
                self.card_awaiting(id, true);
                if self.run != RunState::Stopping {
                    self.run = RunState::Approval;
                }
            }
            StreamDelta {
                delta,
                is_subagent,
                agent,
            } => match origin_of(*is_subagent, agent) {
                Some(o) => self.sub_delta(&o, delta),
                None => self.text_delta(delta),
            },
            StreamEnd {
                content,
                context_tokens,
                max_context_tokens,
            } => {
                self.close_open();
                let shown = self
                    .turn_text
                    .and_then(|i| self.transcript.cells.get(i))
                    .and_then(|c| match &c.kind {
                        CellKind::Assistant(d) => Some(d.text.trim() == content.trim()),
                        _ => None,
                    })
                    .unwrap_or(false);
                if !shown && !content.trim().is_empty() {
                    self.push(CellKind::Assistant(StreamDoc::finished(content.clone())));
                }
                self.last_answer = content.clone();
                self.status.ctx_used = *context_tokens;
                self.status.ctx_max = *max_context_tokens;
            }
            StreamStopped => {
                self.close_open();
                self.notice("stopped by user");
                self.stop_shown = true;
            }
            TokenUsage {
                context_tokens,
                max_context_tokens,
                ..
            } => {
                self.status.ctx_used = *context_tokens;
                self.status.ctx_max = *max_context_tokens;
            }
            ContextCompressed {
                messages_before,
                messages_after,
                ..
            } if messages_before == messages_after => self.notice(format!(
                "nothing to compact: the context ({messages_before} messages) holds only recent turns"
            )),
            ContextCompressed {
                messages_before,
                messages_after,
                tokens_before,
                tokens_after,
                max_context_tokens,
            } => {
                self.status.ctx_used = *tokens_after;
                if *max_context_tokens > 0 {
                    self.status.ctx_max = *max_context_tokens;
                }
                self.notice(crate::ui::wording::compacted(
                    *messages_before,
                    *messages_after,
                    *tokens_before,
                    *tokens_after,
                ))
            }
            CompactionPlanned {
                summary,
                messages_replaced,
                turns_kept,
                pinned_kept,
                tokens_before,
                tokens_after,
            } => self.notice(
                crate::app::words::preview_lines(
                    summary,
                    *messages_replaced,
                    *turns_kept,
                    *pinned_kept,
                    *tokens_before,
                    *tokens_after,
                )
                .join("\n"),
            ),
            ProfileSwitched {
                profile_id,
                profile_name,
            } => {
                self.status.profile = profile_id.clone();
                self.notice(format!("profile switched to {profile_name} ({profile_id})"));
            }
            ModelSelected { model, reason } => {
                self.status.model = model.clone();
                self.status.model_note.clear();
                self.status.lean = reason.contains(crate::protocol::LEAN_NOTE);
            }
            FilesChanged { turn, files } => {
                self.close_open();
                self.push(CellKind::Changes {
                    turn: *turn,
                    summary: crate::app::words::files_line(*turn, files),
                    diff: Vec::new(),
                });
                self.diff_wanted = Some(*turn);
            }
            Warning { message } => {
                self.push(CellKind::Warning(message.clone()));
            }
            Error { message } => {
                self.close_open();
                self.push(CellKind::Error(message.clone()));
            }
            InputReturned => self.input_returned(),
            UserSteer { message } => {
                self.close_open();
                self.steer_applied(message);
            }
            UserMessage {
                message, pinned, ..
            } => {
                self.close_open();
                self.push(CellKind::User(message.clone()));
                if *pinned {
                    self.notice(PINNED_NOTE);
                }
            }
            AgentMessage { content, pinned } => {
                self.close_open();
                if !content.trim().is_empty() {
                    self.push(CellKind::Assistant(StreamDoc::finished(content.clone())));
                    self.last_answer = content.clone();
                }
                if *pinned {
                    self.notice(PINNED_NOTE);
                }
            }
            Notice { message } => self.notice(message.clone()),
            ContextSummary { summary } => self.notice(format!(
                "summary of earlier conversation: {}",
                crate::ui::format::preview(summary, 200)
            )),
            SubagentStarted { agent } => {
                self.container_for(agent);
            }
        }
    }

    fn thinking_delta(&mut self, delta: &str) {
        if self.run != RunState::Stopping {
            self.run = RunState::Thinking;
        }
        self.thinking_streamed = true;
        let i = match self.open_thinking {
            Some(i) => i,
            None => {
                let i = self.push(CellKind::Thinking {
                    text: String::new(),
                    open: true,
                });
                self.open_thinking = Some(i);
                i
            }
        };
        if let Some(c) = self.transcript.cells.get_mut(i) {
            if let CellKind::Thinking { text, .. } = &mut c.kind {
                text.push_str(delta);
            }
            c.touch();
        }
    }

    fn text_delta(&mut self, delta: &str) {
        if self.run != RunState::Stopping {
            self.run = RunState::Responding;
        }
        if let Some(i) = self.open_thinking.take()
            && let Some(c) = self.transcript.cells.get_mut(i)
        {
            if let CellKind::Thinking { open, .. } = &mut c.kind {
                *open = false;
            }
            c.touch();
        }
        let i = match self.open_assistant {
            Some(i) => i,
            None => {
                let i = self.push(CellKind::Assistant(StreamDoc::default()));
                self.open_assistant = Some(i);
                self.turn_text = Some(i);
                i
            }
        };
        if let Some(c) = self.transcript.cells.get_mut(i) {
            if let CellKind::Assistant(d) = &mut c.kind {
                d.push(delta);
            }
            c.touch();
        }
        if !self.transcript.following() {
            self.transcript.unseen = true;
        }
    }

    /// The card path a subagent's cells go under (found or created).
    fn container_for(&mut self, o: &AgentOrigin) -> Vec<usize> {
        if let Some(p) = self.agents.get(&o.id) {
            return p.clone();
        }
        let want = o.depth.saturating_sub(1);
        let found = self
            .spawns
            .iter()
            .rev()
            .find(|(_, d)| *d == want)
            .map(|(p, _)| p.clone());
        let path = match found {
            Some(p) => p,
            None => {
                let card = ToolCard::pending(&o.id, "subagent", &json!({"profile": o.profile_id}));
                vec![self.push(CellKind::Tool(card))]
            }
        };
        let label = if o.profile_id.is_empty() {
            format!("subagent {}", short(&o.id))
        } else {
            format!("subagent {} · {}", short(&o.id), o.profile_id)
        };
        self.push_child(
            &path,
            Cell::new(CellKind::Notice(format!("{label} started"))),
        );
        self.side.activity(&short(&o.id), "started");
        self.agents.insert(o.id.clone(), path.clone());
        path
    }

    fn push_child(&mut self, path: &[usize], cell: Cell) -> Option<Vec<usize>> {
        let idx = match self.transcript.cell_mut(path) {
            Some(Cell {
                kind: CellKind::Tool(card),
                ..
            }) => {
                card.children.push(cell);
                card.children.len() - 1
            }
            _ => return None,
        };
        self.transcript.touch(path);
        let mut p = path.to_vec();
        p.push(idx);
        Some(p)
    }

    fn sub_delta(&mut self, o: &AgentOrigin, delta: &str) {
        let container = self.container_for(o);
        let path = match self.sub_open.get(&o.id) {
            Some(p) => Some(p.clone()),
            None => {
                let p = self.push_child(
                    &container,
                    Cell::new(CellKind::Assistant(StreamDoc::default())),
                );
                if let Some(p) = &p {
                    self.sub_open.insert(o.id.clone(), p.clone());
                }
                p
            }
        };
        if let Some(p) = path {
            if let Some(Cell {
                kind: CellKind::Assistant(d),
                ..
            }) = self.transcript.cell_mut(&p)
            {
                d.push(delta);
            }
            self.transcript.touch(&p);
        }
    }

    fn close_sub_text(&mut self, agent_id: &str) {
        if let Some(p) = self.sub_open.remove(agent_id) {
            if let Some(Cell {
                kind: CellKind::Assistant(d),
                ..
            }) = self.transcript.cell_mut(&p)
            {
                d.finish();
            }
            self.transcript.touch(&p);
        }
    }

    fn tool_started(&mut self, id: &str, tool: &str, args: &Value, origin: Option<AgentOrigin>) {
        let card = Cell::new(CellKind::Tool(ToolCard::pending(id, tool, args)));
        let (path, depth) = match &origin {
            Some(o) => {
                let c = self.container_for(o);
                self.close_sub_text(&o.id);
                self.side.activity(
                    &short(&o.id),
                    &format!("→ {tool} {}", args_preview(args, 60)),
                );
                match self.push_child(&c, card) {
                    Some(p) => (p, o.depth),
                    None => return,
                }
            }
            None => {
                self.close_open();
                if self.run != RunState::Stopping {
                    self.run = RunState::RunningTool(tool.to_string());
                }
                (vec![self.transcript.push(card)], 0)
            }
        };
        if tool == SPAWN {
            self.spawns.push((path.clone(), depth));
        }
        self.tools.insert(id.to_string(), path);
    }

    /// Marks the card of call `id` as waiting for its approval (or not).
    pub(super) fn card_awaiting(&mut self, id: &str, waiting: bool) {
        let Some(path) = self.tools.get(id).cloned() else {
            return;
        };
        if let Some(Cell {
            kind: CellKind::Tool(card),
            ..
        }) = self.transcript.cell_mut(&path)
        {
            card.set_awaiting_approval(waiting);
        }
        self.transcript.touch(&path);
    }

    #[allow(clippy::too_many_arguments)]
    #[expect(
        clippy::too_many_arguments,
        reason = "the fields of one tool_call event"
    )]
    pub(super) fn tool_call(
        &mut self,
        id: &str,
        tool: &str,
        args: &Value,
        result: &str,
        success: bool,
        display: Option<&ToolDisplay>,
        origin: Option<AgentOrigin>,
    ) {
        if let Some(o) = &origin {
            let mark = if success { "✓" } else { "✗" };
            self.side.activity(&short(&o.id), &format!("{mark} {tool}"));
        } else if self.run != RunState::Stopping && self.approvals.is_empty() {
            self.run = RunState::Waiting;
        }
        let path = match self.tools.remove(id) {
            Some(p) => p,
            None => {
                let cell = Cell::new(CellKind::Tool(ToolCard::pending(id, tool, args)));
                match &origin {
                    Some(o) => {
                        let c = self.container_for(o);
                        match self.push_child(&c, cell) {
                            Some(p) => p,
                            None => return,
                        }
                    }
                    None => vec![self.transcript.push(cell)],
                }
            }
        };
        if let Some(Cell {
            kind: CellKind::Tool(card),
            ..
        }) = self.transcript.cell_mut(&path)
        {
            card.finish(result, success);
            card.display = display.map(|d| Box::new(d.clone()));
        }
        self.transcript.touch(&path);
        if tool == SPAWN {
            self.spawns.retain(|(p, _)| *p != path);
            let done: Vec<String> = self
                .agents
                .iter()
                .filter(|(_, p)| **p == path)
                .map(|(a, _)| a.clone())
                .collect();
            for a in done {
                self.close_sub_text(&a);
                self.side
                    .activity(&short(&a), if success { "finished" } else { "failed" });
            }
        }
    }
}
