//! `TuiState`: everything the TUI shows, as plain data. Fed `AgentEvent`s
//! (`apply`), keys (`handle_key`) and command outcomes (`apply_outcome`);
//! drawn by `render::render`. It owns no terminal, no App and no task, so
//! tests and benchmarks drive it directly and draw it to a `TestBackend`.
//!
//! Invariants:
//! - The state never performs I/O; what needs the App (send a message, run a
//!   command, stop a turn, answer an approval) goes up as an [`Action`].
//! - `running` is true from `begin_turn` until `turn_finished` (the event
//!   channel closed); messages submitted meanwhile (or while the history is
//!   still `loading`) wait in `queue`.
//! - Every tool card is reachable by its call id (`tools`), every subagent by
//!   its id (`agents`, the path of the card its cells nest under).
use super::approval::ApprovalPrompt;
use super::cells::{Cell, CellKind};
use super::composer::Composer;
use super::picker::Picker;
use super::popup::Popup;
use super::side_pane::SidePane;
use super::theme::Theme;
use super::transcript::Transcript;
use crate::protocol::Decision;
use std::collections::{HashMap, VecDeque};
use std::path::PathBuf;
use std::time::Instant;

/// What the agent is doing, for the status bar.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RunState {
    Idle,
    /// The planner runs before the first model call.
    Planning,
    /// Waiting for the model (before the first token, between tool calls).
    Waiting,
    Thinking,
    Responding,
    RunningTool(String),
    Approval,
    Stopping,
    Compacting,
}

impl RunState {
    pub fn label(&self) -> String {
        match self {
            RunState::Idle => "idle".into(),
            RunState::Planning => "planning".into(),
            RunState::Waiting => "waiting for the model".into(),
            RunState::Thinking => "thinking".into(),
            RunState::Responding => "responding".into(),
            RunState::RunningTool(t) => format!("running {t}"),
            RunState::Approval => "waiting for approval".into(),
            RunState::Stopping => "stopping…".into(),
            RunState::Compacting => "compacting".into(),
        }
    }
}

/// A user intent the event loop carries out with the App.
#[derive(Clone, Debug, PartialEq)]
pub enum Action {
    /// Start a turn with this message (already shown as a user cell).
    Send(String),
    /// A slash command line, to parse and execute.
    Command(String),
    /// Stop the running turn (cooperatively).
    Stop,
    Quit,
    Answer(String, Decision),
    /// `/compact` started on the current session: its events follow.
    Compacting,
    /// Steer the running turn with this message (Ctrl-S).
    Steer(String),
    /// Switch to this model (chosen in the `/model` picker).
    SwitchModel(crate::protocol::ModelInfo),
    /// Edit the draft in `$VISUAL` / `$EDITOR` (Ctrl-G, Ctrl-X Ctrl-E).
    Editor,
    /// A command the user confirmed (`y` after `/session delete`).
    Confirmed(crate::ui::commands::SlashCommand),
    /// Edit and resend: rewind to before user message N, then send this.
    Resend(usize, String),
}

#[derive(Clone, Debug, Default, PartialEq)]
pub struct StatusInfo {
    pub(crate) session_id: String,
    pub(crate) profile: String,
    pub model: String,
    pub(crate) title: String,
    pub(crate) ctx_used: u64,
    pub(crate) ctx_max: u64,
    /// Shown instead of the model while it is not known yet ("checking…",
    /// "server down").
    pub(crate) model_note: String,
    /// The model's last turn ran on the lean preset for tiny models.
    pub(crate) lean: bool,
}

pub struct TuiState {
    /// The open session (`None` only before start-up finished).
    pub(crate) session: Option<crate::protocol::SessionMeta>,
    pub theme: Theme,
    pub theme_names: Vec<String>,
    pub profile_ids: Vec<String>,
    /// The user's own commands (`/name args`, description) for completion.
    pub(crate) custom_commands: Vec<(String, String)>,
    /// Rereads them when a command directory changed (files added later).
    pub(crate) command_watch: Option<crate::ui::commands::CommandWatch>,
    pub(crate) config_dir: Option<PathBuf>,
    pub(crate) no_color: bool,
    pub transcript: Transcript,
    pub side: SidePane,
    pub composer: Composer,
    pub popup: Option<Popup>,
    /// Sessions and models the popup completes arguments from.
    pub(crate) args: super::arg_lists::ArgLists,
    /// Files under the working directory, scanned once per `@` mention.
    pub mention_files: Option<Vec<String>>,
    pub picker: Option<Picker>,
    pub approvals: VecDeque<ApprovalPrompt>,
    pub status: StatusInfo,
    pub run: RunState,
    pub running: bool,
    /// The session's history is still loading (messages wait in `queue`).
    pub loading: bool,
    pub queue: VecDeque<String>,
    /// Files queued with `/attach` for the next message sent.
    pub attachments: Vec<crate::attach::Attachment>,
    /// The running turn's typed text and `/attach` files, given back to
    /// the composer when the message is refused (`input_returned`).
    pub(crate) sent: Option<(String, Vec<crate::attach::Attachment>)>,
    /// Steers sent to the running turn and not yet taken in.
    pub steers: Vec<String>,
    /// `/model`'s picker, once the server listed its models.
    pub(crate) model_picker: Option<super::model_picker::ModelPicker>,
    /// The todo pane toggled with Alt-T (`None`: shown from 100 columns).
    pub(crate) side_shown: Option<bool>,
    /// Terminal width at the last frame.
    pub(crate) viewport_total: u16,
    /// The working directory as shown on the status line (empty: hidden).
    pub cwd: String,
    /// Approval and sandbox mode as shown on the status line
    /// (`ask · workspace-write`; empty: hidden).
    pub guard: String,
    /// The sandbox settings, for the sentence an approval of a command shows.
    pub(crate) sandbox: crate::sandbox::SandboxConfig,
    /// The run state shown and since when (the status line counts seconds).
    pub(crate) phase: Option<(String, Instant)>,
    /// When the running turn began (a long one is announced at its end).
    pub(crate) turn_started: Option<Instant>,
    /// Plain mode's history file, shared by the composer (`None`: not kept).
    pub(crate) history_file: Option<PathBuf>,
    /// Ctrl-R's reverse history search, while open.
    pub rsearch: Option<super::rsearch::RevSearch>,
    /// Ctrl-X was pressed: Ctrl-E next opens the editor.
    pub(crate) ctrl_x: bool,
    /// The last lone Esc while idle (a second within 1 s: edit and resend).
    pub(crate) esc_at: Option<std::time::Instant>,
    /// Edit and resend: the number of the user message being edited.
    pub(crate) editing: Option<usize>,
    /// The user's messages before the loaded part of a resumed history (its
    /// tail): added to a message's place in the transcript, it gives the
    /// number `/rewind N` takes.
    pub(crate) users_before: usize,
    /// A `files_changed` card waits for its diff (the turn number).
    pub(crate) diff_wanted: Option<usize>,
    /// The screen was used by another program: repaint it all.
    pub(crate) repaint: bool,
    /// The transcript search bar (Ctrl-F), while open.
    pub search: Option<super::search::Search>,
    /// A destructive command waiting for `y` (the question shown).
    pub(crate) confirm: Option<(String, crate::ui::commands::SlashCommand)>,
    pub(crate) show_thinking: bool,
    pub(crate) thinking_expanded: bool,
    pub(crate) generation: u64,
    pub spinner: usize,
    pub last_answer: String,
    /// The first Ctrl-C while idle, waiting for a second one to quit.
    pub(crate) quit_armed: Option<Instant>,
    /// A transient message in the status bar.
    pub(crate) flash: Option<String>,
    /// Terminal escape sequences to write after the next frame (OSC 52).
    pub(crate) outbox: Vec<String>,
    /// Transcript viewport size at the last frame (for paging).
    pub(crate) viewport: (u16, u16),
    pub(super) open_assistant: Option<usize>,
    pub(super) open_thinking: Option<usize>,
    pub(super) thinking_streamed: bool,
    pub(super) stop_shown: bool,
    /// The front approval request has been drawn: only keys read after that
    /// can answer it (keys typed ahead go to the composer instead).
    pub(crate) approval_shown: bool,
    pub(super) turn_text: Option<usize>,
    pub(super) tools: HashMap<String, Vec<usize>>,
    pub(super) agents: HashMap<String, Vec<usize>>,
    pub(super) spawns: Vec<(Vec<usize>, u32)>,
    pub(super) sub_open: HashMap<String, Vec<usize>>,
}

impl TuiState {
    pub fn new(theme: Theme) -> Self {
        TuiState {
            session: None,
            theme,
            theme_names: Vec::new(),
            profile_ids: Vec::new(),
            custom_commands: Vec::new(),
            command_watch: None,
            config_dir: None,
            no_color: false,
            transcript: Transcript::default(),
            side: SidePane::default(),
            composer: Composer::default(),
            popup: None,
            args: Default::default(),
            mention_files: None,
            picker: None,
            approvals: VecDeque::new(),
            status: StatusInfo::default(),
            run: RunState::Idle,
            running: false,
            loading: false,
            queue: VecDeque::new(),
            attachments: Vec::new(),
            sent: None,
            steers: Vec::new(),
            confirm: None,
            search: None,
            ctrl_x: false,
            esc_at: None,
            editing: None,
            users_before: 0,
            diff_wanted: None,
            rsearch: None,
            history_file: None,
            repaint: false,
            phase: None,
            turn_started: None,
            side_shown: None,
            viewport_total: 0,
            cwd: String::new(),
            guard: String::new(),
            sandbox: Default::default(),
            model_picker: None,
            show_thinking: true,
            thinking_expanded: false,
            generation: 0,
            spinner: 0,
            last_answer: String::new(),
            quit_armed: None,
            flash: None,
            outbox: Vec::new(),
            viewport: (80, 20),
            open_assistant: None,
            open_thinking: None,
            thinking_streamed: false,
            stop_shown: false,
            approval_shown: false,
            turn_text: None,
            tools: HashMap::new(),
            agents: HashMap::new(),
            spawns: Vec::new(),
            sub_open: HashMap::new(),
        }
    }

    /// Whether something on screen moves by itself (spinners).
    pub(crate) fn animating(&self) -> bool {
        self.running || self.transcript.cells.last().is_some_and(Cell::animated)
    }

    /// Re-renders everything at the next frame (theme, thinking display).
    pub(crate) fn invalidate(&mut self) {
        self.generation += 1;
        self.transcript.touch_all();
    }

    pub(crate) fn set_theme(&mut self, theme: Theme) {
        self.theme = theme;
        self.invalidate();
    }

    pub(crate) fn push(&mut self, kind: CellKind) -> usize {
        self.transcript.push(Cell::new(kind))
    }

    /// The background backend check ended: the model (and its window) go
    /// on the status line before anything is typed; a backend that cannot
    /// serve shows there too, with the reason in the transcript.
    pub(crate) fn backend_checked(&mut self, r: Result<(String, u64), String>) {
        match r {
            Ok((model, window)) => {
                if self.status.model.is_empty() {
                    self.status.model = model;
                }
                if self.status.ctx_max == 0 && window > 0 {
                    self.status.ctx_max = window;
                }
                self.status.model_note.clear();
            }
            Err(e) if e.starts_with(crate::app::probe::NO_MODEL) => {
                self.status.model_note = "⚠ no model of the profile: /model picks one".into();
                self.push(CellKind::Error(e));
            }
            Err(e) => {
                self.status.model_note = "⚠ server down".into();
                self.push(CellKind::Error(e));
            }
        }
    }

    pub(crate) fn info(&mut self, lines: Vec<String>) {
        self.push(CellKind::Info(lines));
    }

    pub fn notice(&mut self, text: impl Into<String>) {
        self.push(CellKind::Notice(text.into()));
    }

    /// Shows `message` as the user's and marks a turn as running.
    pub fn begin_turn(&mut self, message: &str) {
        self.turn_started = Some(Instant::now());
        self.push(CellKind::User(message.to_string()));
        self.transcript.follow();
        self.running = true;
        self.run = RunState::Waiting;
        self.stop_shown = false;
        self.turn_text = None;
        self.last_answer.clear();
    }

    /// A non-turn run (compaction) started.
    pub(crate) fn begin_task(&mut self, state: RunState) {
        self.running = true;
        self.run = state;
        self.stop_shown = false;
    }

    /// Asks the running turn to stop; `None` when there is nothing to stop.
    pub fn request_stop(&mut self) -> Option<Action> {
        if !self.running {
            return None;
        }
        if self.run == RunState::Stopping {
            self.flash = Some("still stopping… the turn ends after the current step".into());
            return None;
        }
        self.run = RunState::Stopping;
        // The gate drops pending requests on cancel.
        self.approvals.clear();
        Some(Action::Stop)
    }

    /// The turn's event channel closed. Returns whether it was stopped.
    pub fn turn_finished(&mut self) -> bool {
        self.close_open();
        let interrupted: Vec<Vec<usize>> = self.tools.values().cloned().collect();
        for path in interrupted {
            let done = match self.transcript.cell_mut(&path) {
                Some(Cell {
                    kind: CellKind::Tool(card),
                    ..
                }) if card.status == super::cells::ToolStatus::Pending => {
                    card.finish(
                        "interrupted: the turn ended before this tool finished",
                        false,
                    );
                    true
                }
                _ => false,
            };
            if done {
                self.transcript.touch(&path);
            }
        }
        let stopped = self.run == RunState::Stopping || self.stop_shown;
        if self.run == RunState::Stopping && !self.stop_shown {
            self.notice("stopped by user");
        }
        self.tools.clear();
        self.agents.clear();
        self.spawns.clear();
        self.sub_open.clear();
        self.approvals.clear();
        self.running = false;
        self.run = RunState::Idle;
        stopped
    }

    /// Closes the open assistant and thinking cells (finished rendering).
    pub(super) fn close_open(&mut self) {
        if let Some(i) = self.open_assistant.take()
            && let Some(c) = self.transcript.cells.get_mut(i)
        {
            if let CellKind::Assistant(d) = &mut c.kind {
                d.finish();
            }
            c.touch();
        }
        if let Some(i) = self.open_thinking.take()
            && let Some(c) = self.transcript.cells.get_mut(i)
        {
            if let CellKind::Thinking { open, .. } = &mut c.kind {
                *open = false;
            }
            c.touch();
        }
        let subs: Vec<Vec<usize>> = self.sub_open.drain().map(|(_, p)| p).collect();
        for p in subs {
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

    /// Answers the front approval request.
    pub(crate) fn answer_approval(&mut self, d: Decision) -> Vec<Action> {
        let Some(req) = self.approvals.pop_front() else {
            return Vec::new();
        };
        let what = match d {
            Decision::Once => "allowed once",
            Decision::Session => "allowed for this session",
            Decision::Deny => "denied",
        };
        self.card_awaiting(&req.id, false);
        self.notice(format!("{} {what}: {}", req.tool, req.summary));
        // The next request must be drawn before a key can answer it.
        self.approval_shown = false;
        if self.approvals.is_empty() && self.run == RunState::Approval {
            self.run = RunState::RunningTool(req.tool.clone());
        }
        vec![Action::Answer(req.id, d)]
    }
}
