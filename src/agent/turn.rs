//! One turn: planning, then up to `max_iterations` model calls with tool
//! execution in between, then `stream_end` (or `stream_stopped`).
use super::context::{last_user_goal, system_prompt_with_roster};
use super::conversation::Conversation;
use super::mechanics::Mechanics;
use super::tokens::TokenTracker;
use super::{Agent, AgentError, Session, TurnOutcome, planning};
use crate::llm::{ChatMessage, LlmBackend, LlmError, ToolCall};
use crate::profile::Profile;
use crate::protocol::{AgentEvent, AgentOrigin, EventSink};
use crate::session::MessageKind;
use crate::tools::ToolContext;
use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

pub(crate) const CANCELLED: &str = "operation cancelled by user";
/// Streaming text is written to the store before it is emitted, at most this
/// often (faster streams are coalesced; the final text is always written).
pub(super) const FLUSH_EVERY: Duration = Duration::from_millis(20);

pub(super) struct Run<'a> {
    pub(crate) agent: &'a Agent,
    pub(crate) profile: Profile,
    pub(crate) conv: Conversation,
    pub(crate) sink: &'a EventSink,
    pub(crate) cancel: &'a CancellationToken,
    pub(crate) origin: Option<AgentOrigin>,
    /// The session whose state the run uses (a subagent's: its parent's).
    pub(crate) session: Arc<Session>,
    pub(crate) backend: Arc<dyn LlmBackend>,
    pub(crate) model: String,
    pub(crate) tracker: TokenTracker,
    pub(super) seen_ids: HashSet<String>,
    /// The memory summary, read once per run (it changes only when memory does).
    pub(crate) memory: Option<String>,
    /// The project's AGENTS.md block, read once per run (byte-stable until
    /// a file changes: the system prompt stays a cacheable prefix).
    pub(crate) instructions: String,
    /// MCP tools this run offers, fixed at its start (a server that becomes
    /// ready mid-turn joins at the next user message).
    pub(super) mcp_tools: Vec<String>,
    /// Tools loaded on demand in this session, in load order (`on_demand.rs`).
    pub(super) loaded: Vec<String>,
    /// `load_tools` calls in this run that loaded nothing new.
    pub(super) repeated_loads: u32,
    /// What the user typed for this turn, without attached or piped text
    /// (planning decides on it); `None` for a subagent's task.
    pub(super) typed: Option<String>,
    /// The small-model path of this run (`small.rs`).
    pub(crate) small: super::small::SmallPlan,
    /// llama-server slot holding this session's restored cache (`cache_warm.rs`).
    pub(super) slot: Option<u32>,
}

/// What one streamed model call produced.
pub(super) struct CallResult {
    pub(crate) msg: ChatMessage,
    pub(crate) stopped: bool,
}

pub(super) async fn run_ephemeral(
    agent: &Agent,
    user_message: &str,
    profile_id: &str,
    parent: &Arc<Session>,
    origin: AgentOrigin,
    sink: &EventSink,
    cancel: &CancellationToken,
) -> Result<TurnOutcome, AgentError> {
    let profile = agent.profile(profile_id)?.clone();
    let mut conv = Conversation::ephemeral(&origin.id);
    conv.push(ChatMessage::user(user_message), MessageKind::Message, None)?;
    let plan = profile.subagent_planning_enabled;
    let mut run = Run::start(
        agent,
        profile,
        conv,
        sink,
        cancel,
        Some(origin),
        parent.clone(),
        0,
    )
    .await?;
    run.execute(plan).await
}

impl<'a> Run<'a> {
    #[allow(clippy::too_many_arguments)]
    pub(super) async fn start(
        agent: &'a Agent,
        profile: Profile,
        conv: Conversation,
        sink: &'a EventSink,
        cancel: &'a CancellationToken,
        origin: Option<AgentOrigin>,
        session: Arc<Session>,
        context_tokens: u64,
    ) -> Result<Run<'a>, AgentError> {
        let backend = agent.backend_for(&profile)?;
        let sel = tokio::select! {
            s = agent.select_model(Some(&session), &*backend, &profile) => s?,
            _ = cancel.cancelled() => return Err(LlmError::Cancelled.into()),
        };
        let window = agent.context_window(&*backend, &sel.model).await;
        let small = super::small::SmallPlan::choose(
            agent.config.llm.small_model,
            backend.model_traits(&sel.model).await,
        );
        // Ids already in the history count as seen: a server that restarts
        // its numbering each turn must not give two calls one id.
        let seen_ids = conv
            .context
            .iter()
            .flat_map(|m| m.msg.tool_calls().map(|c| c.id.clone()))
            .collect();
        let listed = if origin.is_some() && !profile.subagent_tools.is_empty() {
            &profile.subagent_tools
        } else {
            &profile.enabled_tools
        };
        let mcp_tools = crate::mcp::tool::select_for_profile(listed, &agent.mcp_ready(&session));
        if origin.is_none() {
            for message in agent.mcp_warnings(&session) {
                sink.emit(AgentEvent::Warning { message }).await;
            }
        }
        let mut tracker = TokenTracker::new(window, context_tokens);
        if origin.is_none() && conv.is_persistent() {
            tracker.ratio = super::account::load_ratio(&agent.store, &conv.session_id);
            if window > 0 {
                super::account::save_window(&agent.store, &conv.session_id, window)?;
            }
        }
        let instructions = agent.instructions(&session).text;
        let mut run = Run {
            instructions,
            agent,
            profile,
            conv,
            sink,
            cancel,
            origin,
            session,
            backend,
            model: sel.model.clone(),
            tracker,
            seen_ids,
            memory: agent.memory_summary(),
            mcp_tools,
            loaded: Vec::new(),
            repeated_loads: 0,
            typed: None,
            slot: None,
            small,
        };
        run.loaded = run.read_loaded();
        if run.origin.is_none() {
            let reason = if run.small.lean {
                format!("{}; {}", sel.reason, super::small::LEAN_NOTE)
            } else {
                sel.reason
            };
            sink.emit(AgentEvent::ModelSelected {
                model: sel.model,
                reason,
            })
            .await;
            run.tell_text_tools().await;
        }
        Ok(run)
    }

    pub(crate) fn is_subagent(&self) -> bool {
        self.origin.is_some()
    }

    /// The session whose todo list this run works on.
    pub(crate) fn state_session(&self) -> String {
        self.session.id().to_string()
    }

    pub(crate) async fn emit(&self, e: AgentEvent) {
        self.sink.emit(e).await;
    }

    /// The profile's tools (subagent list for subagents) plus the user tools
    /// enabled for every profile.
    pub(super) fn tool_names(&self) -> Vec<String> {
        let mut names = if self.is_subagent() && !self.profile.subagent_tools.is_empty() {
            self.profile.subagent_tools.clone()
        } else {
            self.profile.enabled_tools.clone()
        };
        if !self.is_subagent() && self.agent.turn_tweaks(&self.session).no_tools {
            return Vec::new();
        }
        if let Ok(reg) = self.agent.tools.read() {
            for n in reg.enabled_user() {
                if !names.contains(&n) {
                    names.push(n);
                }
            }
        }
        for n in &self.mcp_tools {
            if !names.contains(n) {
                names.push(n.clone());
            }
        }
        names
    }

    pub(super) fn system(&self) -> String {
        let base = if self.small.lean {
            super::small::lean_system(&self.step_tools())
        } else {
            let base = system_prompt_with_roster(
                self.agent.persona(),
                &self.profile,
                self.is_subagent(),
                &self.agent.profiles,
            );
            if self.small.constrained {
                format!("{base}\n\n{}", super::small::tools_text(&self.step_tools()))
            } else {
                base
            }
        };
        // The project's AGENTS.md instructions, whatever the preset.
        if self.instructions.is_empty() {
            base
        } else {
            format!("{base}\n\n{}", self.instructions)
        }
    }

    pub(super) async fn execute(&mut self, plan_now: bool) -> Result<TurnOutcome, AgentError> {
        self.fit_user_message().await?;
        let _ = self.auto_compact(false).await?;
        // Nothing goes out (not even a planner call) when the request cannot fit.
        self.check_room_shown(&self.request(self.messages(&[]), true))
            .await?;
        if !self.small.lean && planning::should_plan(&self.profile, plan_now) {
            planning::run(self).await?;
            if self.cancel.is_cancelled() {
                return self.stopped(String::new()).await;
            }
        }
        let max = self.profile.max_iterations.max(1);
        let mut mech = Mechanics::new(&self.profile);
        mech.start(&self.session.tools().todos());
        for iteration in 1..=max {
            if self.cancel.is_cancelled() {
                return self.stopped(String::new()).await;
            }
            let todos = self.session.tools().todos();
            let goal = last_user_goal(&self.conv.context);
            let inj = mech.before_call(iteration, max, goal.as_deref(), &todos);
            if let Some(w) = inj.stall_warning {
                self.emit(AgentEvent::Warning { message: w }).await;
            }
            // The first call of a turn carries no note. Later notes join the
            // last tool result and stay in the stored context (see
            // `notes_into_history`).
            if iteration > 1 {
                self.notes_into_history(&inj.notes)?;
            }
            let call = if self.small.step_now() {
                self.constrained_call().await?
            } else if self.small.constrained {
                self.free_answer().await?
            } else {
                self.call_fitting(&[]).await?
            };
            if call.stopped {
                return self.stopped(call.msg.text().into_owned()).await;
            }
            if !call.msg.has_tool_calls() {
                return self.finish(call.msg.text().into_owned(), true).await;
            }
            let calls: Vec<ToolCall> = call.msg.tool_calls().cloned().collect();
            self.note_invalid_calls(&calls);
            self.run_tools(&calls).await?;
            self.fit_call_arguments()?;
            if self.cancel.is_cancelled() {
                return self.stopped(String::new()).await;
            }
            mech.after_tools(&self.session.tools().todos());
            self.check_profile_switch().await?;
            // The safe point for steering: after the tool batch, before the next call.
            self.apply_steers().await?;
        }
        self.iteration_cap(max).await
    }

    fn tool_context(
        &self,
        call: &ToolCall,
        tool_list: Arc<Vec<crate::llm::ToolSchema>>,
    ) -> ToolContext {
        ToolContext {
            session_id: self.conv.session_id.clone(),
            parent_session_id: self.is_subagent().then(|| self.session.id().to_string()),
            call_id: call.id.clone(),
            env: self.agent.env.clone(),
            cancel: self.cancel.clone(),
            events: self.sink.clone(),
            origin: self.origin.clone(),
            tool_list,
            step_validation: self.profile.step_validation_enabled,
            session: self.session.tools().clone(),
            owner: Some(self.session.clone()),
            call_info: None,
        }
    }

    /// Executes the calls in order. Each gets exactly one result, even when
    /// the run is stopped half-way.
    async fn run_tools(&mut self, calls: &[ToolCall]) -> Result<(), AgentError> {
        let reg = self.agent.registry_for(&self.session);
        let tool_list = Arc::new(self.callable_schemas(&reg));
        let sub = self.is_subagent();
        // Checkpoints (src/checkpoint): the workspace before the turn's first
        // change; `window` records when the tools ran until it is dropped.
        let state = self.state_session();
        let session = self.session.clone();
        let mut window = session.checkpoints().before_tools(&state, calls).await;
        if let Some(message) = window.warning.take() {
            self.emit(AgentEvent::Warning { message }).await;
        }
        for call in calls {
            if self.cancel.is_cancelled() {
                self.conv.push(
                    ChatMessage::tool_result(call, CANCELLED),
                    MessageKind::Message,
                    Some(false),
                )?;
                // Shown too: every call of the batch gets its card, marked
                // as not run, in every front end.
                self.emit(AgentEvent::ToolStarted {
                    id: call.id.clone(),
                    tool: call.name.clone(),
                    args: call.arguments.clone(),
                    is_subagent: sub,
                    agent: self.origin.clone(),
                    call: None,
                })
                .await;
                self.emit(AgentEvent::ToolCall {
                    id: call.id.clone(),
                    tool: call.name.clone(),
                    args: call.arguments.clone(),
                    result: CANCELLED.to_string(),
                    success: false,
                    is_subagent: sub,
                    agent: self.origin.clone(),
                    display: None,
                })
                .await;
                continue;
            }
            let mut ctx = self.tool_context(call, tool_list.clone());
            let info = Arc::new(reg.describe(call, ctx.work_dir(), ctx.client()).await);
            ctx.call_info = Some(info.clone());
            self.emit(AgentEvent::ToolStarted {
                id: call.id.clone(),
                tool: call.name.clone(),
                args: call.arguments.clone(),
                is_subagent: sub,
                agent: self.origin.clone(),
                call: Some(Box::new((*info).clone())),
            })
            .await;
            let result = reg.execute(call, &ctx, &self.agent.gate).await;
            let content = result.to_model_content();
            self.push_tool_result(call, &content, result.success, result.display.clone())?;
            self.after_call(&call.name, &result.metadata).await?;
            if let Some(image) = result.image.clone() {
                let mut img = ChatMessage::user(format!(
                    "[image returned by {} for you to look at]",
                    call.name
                ));
                img.push_image(image);
                self.conv.push_context_only(img, MessageKind::Message)?;
            }
            self.emit(AgentEvent::ToolCall {
                id: call.id.clone(),
                tool: call.name.clone(),
                args: call.arguments.clone(),
                result: content,
                success: result.success,
                is_subagent: sub,
                agent: self.origin.clone(),
                display: result.display,
            })
            .await;
        }
        Ok(())
    }

    /// A tool (switch_profile) may have moved the session to another profile.
    async fn check_profile_switch(&mut self) -> Result<(), AgentError> {
        if self.is_subagent() {
            return Ok(());
        }
        let Some(now) = self.conv.stored_profile() else {
            return Ok(());
        };
        if now == self.profile.id {
            return Ok(());
        }
        let Some(p) = self.agent.profiles.get(&now).cloned() else {
            return Ok(());
        };
        self.backend = self.agent.backend_for(&p)?;
        let sel = self
            .agent
            .select_model(Some(&self.session), &*self.backend, &p)
            .await?;
        self.tracker.window = self.agent.context_window(&*self.backend, &sel.model).await;
        if self.tracker.window > 0 && self.conv.is_persistent() {
            super::account::save_window(
                &self.agent.store,
                &self.conv.session_id,
                self.tracker.window,
            )?;
        }
        self.model = sel.model;
        self.emit(AgentEvent::ProfileSwitched {
            profile_id: p.id.clone(),
            profile_name: p.name.clone(),
        })
        .await;
        self.profile = p;
        Ok(())
    }

    async fn finish(
        &mut self,
        content: String,
        completed: bool,
    ) -> Result<TurnOutcome, AgentError> {
        // Post-turn: the next turn starts under the threshold.
        let _ = self.auto_compact(false).await?;
        let used = self.save_account()?;
        let cfg = &self.agent.config.context;
        if !self.is_subagent()
            && cfg.compression_enabled
            && self.tracker.should_warn(cfg.warn_threshold)
        {
            self.emit(AgentEvent::Warning {
                message: format!(
                    "context is {:.0}% full ({} of {} tokens) even after compaction; /context shows where the tokens go",
                    self.tracker.fraction() * 100.0,
                    used,
                    self.tracker.window
                ),
            })
            .await;
        }
        if !self.is_subagent() {
            self.checkpoint_end().await;
            self.emit(AgentEvent::StreamEnd {
                content: content.clone(),
                context_tokens: used,
                max_context_tokens: self.tracker.window,
            })
            .await;
        }
        Ok(TurnOutcome {
            text: content,
            stopped: false,
            completed,
        })
    }

    async fn stopped(&mut self, partial: String) -> Result<TurnOutcome, AgentError> {
        self.save_account()?;
        // Closed in the history: the next message is the user's own.
        self.conv.close_turn(super::integrity::STOPPED)?;
        self.conv
            .push_display_only(ChatMessage::system("stopped by user"), MessageKind::Notice)?;
        if !self.is_subagent() {
            self.checkpoint_end().await;
            self.emit(AgentEvent::StreamStopped).await;
        }
        Ok(TurnOutcome {
            text: partial,
            stopped: true,
            completed: false,
        })
    }

    /// Checkpoints (src/checkpoint): what the turn changed, before its end event.
    async fn checkpoint_end(&self) {
        crate::checkpoint::end_turn(
            self.session.checkpoints(),
            &self.agent.store,
            &self.conv.session_id,
            self.sink,
        )
        .await;
    }

    /// The iteration cap: one last call without tools asks for a summary of
    /// what was done and what is left.
    async fn iteration_cap(&mut self, max: u32) -> Result<TurnOutcome, AgentError> {
        self.emit(AgentEvent::Warning {
            message: format!("reached the limit of {max} tool-calling iterations (max_iterations of profile {}); asking for a summary", self.profile.id),
        })
        .await;
        let note = format!(
            "You have used all {max} iterations for this turn. Do not call any tools. Tell the user what you did, what is still left, and how to continue."
        );
        let req = if self.notes_into_history(std::slice::from_ref(&note))? {
            self.request(self.messages(&[]), false)
        } else {
            self.request(self.messages(&[note]), false)
        };
        let call = self.stream_call(&req, true).await?;
        if call.stopped {
            return self.stopped(call.msg.text().into_owned()).await;
        }
        for c in call.msg.tool_calls() {
            let r = ChatMessage::tool_result(
                c,
                "not executed: the iteration limit for this turn was reached",
            );
            self.conv.push(r, MessageKind::Message, Some(false))?;
        }
        let text = if call.msg.text().trim().is_empty() {
            format!(
                "I stopped after {max} tool-calling iterations without finishing. Ask me to continue to pick up where I left off."
            )
        } else {
            call.msg.text().into_owned()
        };
        self.finish(text, false).await
    }
}
