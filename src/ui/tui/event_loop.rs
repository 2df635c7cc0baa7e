//! The event loop: terminal input, agent events, frame ticks and spinner
//! ticks in one `tokio::select!`.
//!
//! Invariants:
//! - Input is polled first (`biased`), and handling a key is a bounded state
//!   change, so typing never waits for the stream; agent events are applied
//!   in batches and only mark the frame dirty.
//! - Drawing happens only when the scheduler says a frame is due (≤ max_fps),
//!   however many events arrived.
//! - A running turn is stopped by its token, never aborted; on quit the loop
//!   waits (bounded) for the turn to close its channel so the session is
//!   written.
//! - Nothing touches the network before the first frame: the backend check
//!   starts after it; a resumed session's history loads on a blocking thread
//!   meanwhile (messages typed before it arrives are queued).
use super::cells::CellKind;
use super::host::{Check, Host, Load, Models, Turn};
use super::model_picker::{self, ModelPicker};
use super::render::render;
use super::scheduler::{ANIMATION, FrameScheduler};
use super::state::{Action, RunState, TuiState};
use crate::protocol::AgentEvent;
use crate::ui::commands;
use crossterm::event::Event;
use futures_util::{Stream, StreamExt};
use ratatui::Terminal;
use ratatui::backend::Backend;
use std::io;
use std::time::{Duration, Instant};

/// The sessions and models the completion popup asked for.
mod arg_fill;
/// Checkpoint helpers: the diff of a files-changed card, edit and resend.
mod rewind_ui;

/// Longest wait for a stopped turn to finish writing when quitting.
#[path = "attach_send.rs"]
mod attach_send;

const QUIT_GRACE: Duration = Duration::from_secs(3);
/// Most agent events applied before the loop looks at input again.
const BATCH: usize = 512;

pub struct LoopOptions {
    pub max_fps: u32,
    pub check_backend: bool,
}

async fn sleep_opt(at: Option<Instant>) {
    match at {
        Some(t) => tokio::time::sleep_until(t.into()).await,
        None => std::future::pending().await,
    }
}

async fn recv_opt(run: &mut Option<Turn>) -> Option<AgentEvent> {
    match run {
        Some(t) => t.events.recv().await,
        None => std::future::pending().await,
    }
}

async fn join_opt(task: &mut Option<tokio::task::JoinHandle<()>>) {
    match task {
        Some(t) => {
            let _ = t.await;
        }
        None => std::future::pending().await,
    }
}

async fn hist_opt(task: &mut Option<tokio::task::JoinHandle<Vec<String>>>) -> Vec<String> {
    match task {
        Some(t) => t.await.unwrap_or_default(),
        None => std::future::pending().await,
    }
}

async fn load_opt(load: &mut Option<Load>) -> Result<Vec<AgentEvent>, String> {
    match load {
        Some(l) => l.await,
        None => std::future::pending().await,
    }
}

async fn models_opt(
    models: &mut Option<Models>,
) -> Result<Vec<crate::protocol::ModelInfo>, String> {
    match models {
        Some(m) => m.await,
        None => std::future::pending().await,
    }
}

async fn check_opt(check: &mut Option<Check>) -> Result<(String, u64), String> {
    match check {
        Some(c) => c.await,
        None => std::future::pending().await,
    }
}

pub struct EventLoop<'h, H: Host> {
    pub(crate) host: &'h mut H,
    pub state: TuiState,
    run: Option<Turn>,
    quit_at: Option<Instant>,
    done: bool,
    /// `/model`'s request for the server's list, and the name to check.
    models: Option<Models>,
    model_wanted: Option<String>,
    /// Runs `$EDITOR` on a draft (Ctrl-G); `None` in tests without one.
    pub(crate) editor: Option<EditorFn<'h>>,
    /// Asks the terminal for its background once the first frame is drawn
    /// (`[ui].theme = "auto"`); `None` when not wanted.
    pub probe_background: Option<ProbeFn<'h>>,
}

/// Queries the terminal's background (OSC 11) with the input paused.
pub(crate) type ProbeFn<'h> = Box<dyn FnOnce() -> super::background::Probe + 'h>;

/// Edits a draft in an external editor: the new text, or why not.
pub(crate) type EditorFn<'h> = Box<dyn FnMut(&str) -> Result<String, String> + 'h>;

impl<'h, H: Host> EventLoop<'h, H> {
    pub fn new(host: &'h mut H, state: TuiState) -> Self {
        EventLoop {
            host,
            state,
            run: None,
            quit_at: None,
            done: false,
            models: None,
            model_wanted: None,
            probe_background: None,
            editor: None,
        }
    }

    /// After the background query: the theme, then the keys read meanwhile,
    /// handled as if they had just been typed.
    fn probed(&mut self, probe: super::background::Probe) {
        self.state.apply_background(probe.background);
        let (keys, dropped) = super::background::key_events(&probe.other);
        for ev in keys {
            self.input(ev);
        }
        if dropped > 0 {
            self.state.hint(format!(
                "{dropped} byte(s) of terminal input during background detection were not keys and were ignored"
            ));
        }
    }

    fn session_id(&self) -> String {
        self.state.status.session_id.clone()
    }

    fn perform(&mut self, action: Action) {
        match action {
            Action::Send(text) => {
                if self.run.is_none() {
                    let sid = self.session_id();
                    self.run = self.start(&sid, &text);
                } else {
                    self.state.queue.push_back(text);
                }
            }
            Action::Command(line) => self.command(&line),
            Action::Confirmed(cmd) => self.run_command(cmd),
            Action::Resend(n, text) => self.resend(n, text),
            Action::Editor => self.edit_draft(),
            Action::SwitchModel(m) => self.switch_model(m),
            Action::Stop => {
                if let Some(r) = &self.run {
                    r.cancel.cancel();
                }
            }
            Action::Quit => match &self.run {
                Some(r) => {
                    r.cancel.cancel();
                    self.state.run = RunState::Stopping;
                    self.state.flash = Some("stopping the turn before quitting…".into());
                    self.quit_at
                        .get_or_insert_with(|| Instant::now() + QUIT_GRACE);
                }
                None => self.done = true,
            },
            Action::Answer(id, d) => self.host.answer(&id, d),
            Action::Steer(text) => {
                if self.run.is_some() {
                    let sid = self.session_id();
                    self.host.steer(&sid, &text);
                } else {
                    self.state.steers.retain(|s| *s != text);
                    self.state.begin_turn(&text);
                    self.perform(Action::Send(text));
                }
            }
            Action::Compact(mode) => {
                if self.run.is_some() {
                    self.state.hint("a turn is running; /stop it first");
                } else {
                    let sid = self.session_id();
                    self.run = Some(self.host.compact(&sid, mode));
                    self.state.begin_task(RunState::Compacting);
                }
            }
        }
    }

    fn command(&mut self, line: &str) {
        // What the command shows lands at the bottom: bring the view there
        // (a search or a scroll may have left it higher up).
        self.state.transcript.follow();
        let cmd = match commands::parse(line) {
            Ok(c) => c,
            Err(e) => return self.state.hint(e),
        };
        if let commands::SlashCommand::Attach(args) = &cmd {
            return self.attach_cmd(args);
        }
        if let commands::SlashCommand::SessionDelete(key) = &cmd {
            let what = match key {
                Some(k) => format!("session {k}"),
                None => format!(
                    "this session ({})",
                    if self.state.status.title.is_empty() {
                        "untitled"
                    } else {
                        &self.state.status.title
                    }
                ),
            };
            let q =
                format!("delete {what} and all its messages? y deletes, any other key keeps it");
            self.state.info(vec![q.clone()]);
            self.state.flash = Some(q.clone());
            self.state.confirm = Some((q, cmd));
            return;
        }
        if let commands::SlashCommand::Model(arg) = &cmd
            && arg.as_deref() != Some("default")
            && self.models.is_none()
        {
            let profile = self.state.status.profile.clone();
            if let Some(f) = self.host.list_models(&profile) {
                self.models = Some(f);
                self.model_wanted = arg.clone();
                self.state.flash = Some("asking the server for its models…".into());
                return;
            }
        }
        let default = matches!(&cmd, commands::SlashCommand::Model(Some(d)) if d == "default");
        let help = cmd == commands::SlashCommand::Help;
        self.run_command(cmd);
        if help {
            self.state.info(
                super::keys::KEY_HELP
                    .iter()
                    .map(|l| l.to_string())
                    .collect(),
            );
        }
        if default {
            // The profile's list decides again at the next message.
            self.state.status.model.clear();
            self.state.status.model_note = "model: profile's list".into();
        }
    }

    /// The server listed its models for `/model`.
    fn models_listed(&mut self, r: Result<Vec<crate::protocol::ModelInfo>, String>) {
        self.state.flash = None;
        let wanted = self.model_wanted.take();
        let list = match r {
            Ok(l) => {
                self.keep_model_names(&l);
                l
            }
            Err(e) => {
                return self
                    .state
                    .hint(format!("cannot list the server's models: {e}"));
            }
        };
        match wanted {
            None => {
                let current = self.state.status.model.clone();
                self.state.model_picker = Some(ModelPicker::new(list, &current));
            }
            Some(name) => match model_picker::find(&list, &name) {
                Some(m) => self.switch_model(m.clone()),
                None => self.state.hint(model_picker::unknown(&name, &list)),
            },
        }
    }

    /// Switches through the shared `/model <name>`; the status line follows.
    fn switch_model(&mut self, m: crate::protocol::ModelInfo) {
        self.run_command(commands::SlashCommand::Model(Some(m.name.clone())));
        self.state.status.model = m.name.clone();
        self.state.status.model_note.clear();
        if let Some(n) = m.context_length {
            self.state.status.ctx_max = n;
        }
    }

    fn run_command(&mut self, cmd: commands::SlashCommand) {
        let Some(mut ui) = self.state.ui_state() else {
            return self.state.hint("no session is open");
        };
        let before = self.session_id();
        match self.host.execute(cmd, &mut ui) {
            Ok(out) => {
                self.state.absorb_ui_state(&ui);
                for a in self.state.apply_outcome(out) {
                    self.perform(a);
                }
                let now = self.session_id();
                if now != before {
                    self.state.side.todos = self.host.todos(&now);
                }
            }
            Err(e) => self.state.hint(e),
        }
    }

    /// Ctrl-G: the draft in the external editor; a failure keeps it.
    fn edit_draft(&mut self) {
        let Some(edit) = self.editor.as_mut() else {
            self.state.hint("no external editor here");
            return;
        };
        let draft = self.state.composer.expanded();
        match edit(&draft) {
            Ok(text) => {
                self.state.composer.clear();
                self.state.composer.set_text(&text);
                self.state.refresh_popup();
            }
            Err(e) => self.state.hint(e),
        }
        self.state.repaint = true;
    }

    /// Appends what was sent to the history file, off the input path.
    fn save_history(&mut self) {
        let fresh = std::mem::take(&mut self.state.composer.fresh);
        if fresh.is_empty() {
            return;
        }
        if let Some(path) = self.state.history_file.clone() {
            tokio::task::spawn_blocking(move || {
                if let Err(e) = super::input_history::append(&path, &fresh) {
                    tracing::warn!("{e}");
                }
            });
        }
    }

    /// One terminal event.
    pub(crate) fn input(&mut self, ev: Event) {
        let actions = match ev {
            Event::Key(k) => self.state.handle_key(k, Instant::now()),
            Event::Paste(p) => {
                self.state.handle_paste(&p);
                Vec::new()
            }
            Event::Mouse(m) => {
                self.state.handle_mouse(m);
                Vec::new()
            }
            _ => Vec::new(),
        };
        for a in actions {
            self.perform(a);
        }
        self.fill_arg_lists();
    }

    /// The running turn's channel closed.
    fn finished(&mut self) {
        self.run = None;
        let stopped = self.state.turn_finished();
        let sid = self.session_id();
        if let Some(meta) = self.host.refresh(&sid) {
            self.state.set_session_meta(&meta);
        }
        let left = self.host.take_steers(&sid);
        if self.quit_at.is_some() {
            self.done = true;
            return;
        }
        if let Some(m) = self.state.steers_left(left, stopped) {
            self.run = self.start(&sid, &m);
            return;
        }
        if stopped {
            self.state.queue_held();
            return;
        }
        if let Some(m) = self.state.next_queued() {
            self.run = self.start(&sid, &m);
        }
    }

    /// Runs until the user quits. `emit` writes raw sequences (OSC 52) to
    /// the terminal; `on_frame` sees the state after every frame.
    pub async fn run<B, I>(
        &mut self,
        terminal: &mut Terminal<B>,
        input: &mut I,
        opts: &LoopOptions,
        mut emit: impl FnMut(&str),
        mut on_frame: impl FnMut(&TuiState),
    ) -> io::Result<()>
    where
        B: Backend,
        I: Stream<Item = io::Result<Event>> + Unpin,
    {
        let started = Instant::now();
        let mut sched = FrameScheduler::new(opts.max_fps);
        let mut check: Option<Check> = None;
        let mut first = true;
        let mut last_anim = Instant::now();
        let mut input_open = true;
        let mut warm: Option<tokio::task::JoinHandle<()>> = None;
        let mut hist: Option<tokio::task::JoinHandle<Vec<String>>> = None;
        let load_id = self.session_id();
        let mut load = if self.state.loading {
            self.host.load_history(&load_id)
        } else {
            None
        };
        if load.is_none() {
            self.state.history_loaded(&load_id, &[]);
            self.state.side.todos = self.host.todos(&load_id);
        }
        while !self.done {
            let now = Instant::now();
            let due = sched.due(now);
            let anim = self.state.animating().then(|| last_anim + ANIMATION);
            tokio::select! {
                biased;
                ev = input.next(), if input_open => {
                    match ev {
                        Some(Ok(ev)) => {
                            self.input(ev);
                            self.save_history();
                        }
                        Some(Err(e)) => return Err(e),
                        None => {
                            // The terminal went away: quit (after the turn stops).
                            input_open = false;
                            self.perform(Action::Quit);
                        }
                    }
                    sched.request();
                }
                _ = sleep_opt(due) => {
                    if std::mem::take(&mut self.state.repaint) {
                        // The screen was cleared on the way back; a blank
                        // frame makes ratatui's diff repaint everything (no
                        // `clear()`: it asks for the cursor position).
                        terminal
                            .draw(|_| {})
                            .map_err(|e| io::Error::other(e.to_string()))?;
                    }
                    terminal
                        .draw(|f| render(f, &mut self.state))
                        .map_err(|e| io::Error::other(e.to_string()))?;
                    sched.drawn(Instant::now());
                    for seq in self.state.outbox.drain(..) {
                        emit(&seq);
                    }
                    on_frame(&self.state);
                    if first {
                        first = false;
                        tracing::debug!(elapsed = ?started.elapsed(), "tui: first frame");
                        if let Some(probe) = self.probe_background.take() {
                            self.probed(probe());
                            sched.request();
                        }
                        if let Some(path) = self.state.history_file.clone() {
                            hist = Some(tokio::task::spawn_blocking(move || {
                                super::input_history::load(&path)
                            }));
                        }
                        if !super::highlight::ready() {
                            warm = Some(tokio::task::spawn_blocking(super::highlight::warm_up));
                        }
                        if opts.check_backend {
                            let profile = self.state.status.profile.clone();
                            check = self.host.check_backend(&profile);
                            if check.is_some() && self.state.status.model.is_empty() {
                                self.state.status.model_note = "model: checking…".into();
                            }
                        }
                    }
                }
                ev = recv_opt(&mut self.run) => {
                    match ev {
                        Some(ev) => {
                            self.state.apply(&ev);
                            let mut n = 0;
                            while n < BATCH {
                                let Some(r) = self.run.as_mut() else { break };
                                match r.events.try_recv() {
                                    Ok(ev) => self.state.apply(&ev),
                                    Err(_) => break,
                                }
                                n += 1;
                            }
                            self.fill_diff();
                        }
                        None => self.finished(),
                    }
                    sched.request();
                }
                _ = sleep_opt(anim) => {
                    self.state.spinner = self.state.spinner.wrapping_add(1);
                    last_anim = Instant::now();
                    sched.request();
                }
                r = check_opt(&mut check) => {
                    check = None;
                    tracing::debug!(elapsed = ?started.elapsed(), ok = r.is_ok(), "tui: backend check");
                    self.state.backend_checked(r);
                    sched.request();
                }
                r = load_opt(&mut load) => {
                    load = None;
                    tracing::debug!(elapsed = ?started.elapsed(), "tui: history loaded");
                    match r {
                        Ok(h) => self.state.history_loaded(&load_id, &h),
                        Err(e) => {
                            self.state.history_loaded(&load_id, &[]);
                            self.state.push(CellKind::Error(e));
                        }
                    }
                    self.state.side.todos = self.host.todos(&load_id);
                    if self.run.is_none()
                        && let Some(m) = self.state.next_queued()
                    {
                        let sid = self.session_id();
                        self.run = self.start(&sid, &m);
                    }
                    sched.request();
                }
                older = hist_opt(&mut hist) => {
                    hist = None;
                    self.state.composer.preload(older);
                }
                _ = join_opt(&mut warm) => {
                    // Code blocks drawn plain so far get their colours.
                    warm = None;
                    tracing::debug!(elapsed = ?started.elapsed(), "tui: highlighting ready");
                    self.state.invalidate();
                    sched.request();
                }
                r = models_opt(&mut self.models) => {
                    self.models = None;
                    self.models_listed(r);
                    sched.request();
                }
                r = super::arg_lists::fetched(&mut self.state.args.fetch) => {
                    self.arg_models_fetched(r);
                    sched.request();
                }
                _ = sleep_opt(self.quit_at) => {
                    self.done = true;
                }
            }
        }
        Ok(())
    }
}
