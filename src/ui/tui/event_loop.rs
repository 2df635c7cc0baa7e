//! The event loop: terminal input, agent events, frame ticks and spinner
//! ticks in one `tokio::select!`.
//!
//! Invariants:
//! - Input is polled first (`biased`), and handling a key is a bounded state
//!   change, so typing never waits for the stream; agent events are applied
//!   in batches and only mark the frame dirty.
//! - Drawing happens only when the scheduler says a frame is due (≤ max_fps),
//!   however many events arrived.
//! - The loop holds the open session's handle (and the app, to open,
//!   list and delete sessions); every change to the session is an `Op`.
//! - A running turn is stopped with `Op::Stop` (its token), never aborted;
//!   on quit the loop waits (bounded) for the turn to end so the session is
//!   written.
//! - Events are applied while a run the loop started is in flight; it ends
//!   with the session's `TurnEnded`.
//! - Nothing touches the network before the first frame: the backend check
//!   starts after it; a resumed session's history loads on a blocking thread
//!   meanwhile and is shown from the second frame on (messages typed before
//!   it arrives are queued).
use super::cells::CellKind;
use super::render::render;
use super::scheduler::{ANIMATION, FrameScheduler};
use super::state::{Action, RunState, TuiState};
use crate::app::{App, SessionHandle};
use crate::protocol::{AgentEvent, Op, SessionEvent};
use crossterm::event::Event;
use futures_util::{Stream, StreamExt};
use ratatui::Terminal;
use ratatui::backend::Backend;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;

/// The sessions and models the completion popup asked for.
mod arg_fill;
/// Slash commands and the `/model` picker.
mod commands;
/// Checkpoint helpers: the diff of a files-changed card, edit and resend.
mod rewind_ui;

/// What the background backend check found: the model the open profile will
/// use and its context window (0: unknown), or why the backend cannot serve.
pub(crate) type Check = Pin<Box<dyn Future<Output = Result<(String, u64), String>> + Send>>;

/// The server's models (for `/model`), fetched off the UI thread.
pub(crate) type Models =
    Pin<Box<dyn Future<Output = Result<Vec<crate::protocol::ModelInfo>, String>> + Send>>;

/// A session's display history, loaded off the UI thread.
pub(crate) type Load = Pin<Box<dyn Future<Output = Result<Vec<AgentEvent>, String>> + Send>>;

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

async fn recv_opt(events: &mut Option<mpsc::Receiver<SessionEvent>>) -> Option<SessionEvent> {
    match events {
        Some(rx) => rx.recv().await,
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

pub struct EventLoop<'h> {
    pub(crate) app: &'h App,
    /// The open session (a session command replaces it).
    pub(crate) session: SessionHandle,
    /// Its event stream.
    events: Option<mpsc::Receiver<SessionEvent>>,
    pub state: TuiState,
    /// A turn or compaction this loop started is in flight.
    run: bool,
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

impl<'h> EventLoop<'h> {
    pub fn new(app: &'h App, mut session: SessionHandle, state: TuiState) -> Self {
        let events = session.take_events();
        EventLoop {
            app,
            session,
            events,
            state,
            run: false,
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

    /// The open session (to close it when the loop is done).
    pub fn session(&self) -> &SessionHandle {
        &self.session
    }

    fn perform(&mut self, action: Action) {
        match action {
            Action::Send(text) => {
                if !self.run {
                    self.start(&text);
                } else {
                    self.state.queue.push_back(text);
                }
            }
            Action::Command(line) => self.command(&line),
            Action::Confirmed(cmd) => {
                self.run_command(cmd);
            }
            Action::Resend(n, text) => self.resend(n, text),
            Action::Editor => self.edit_draft(),
            Action::SwitchModel(m) => self.switch_model(m),
            Action::Stop => {
                if self.run {
                    let _ = self.session.submit(Op::Stop);
                }
            }
            Action::Quit => {
                if self.run {
                    let _ = self.session.submit(Op::Stop);
                    self.state.run = RunState::Stopping;
                    self.state.flash = Some("stopping the turn before quitting…".into());
                    self.quit_at
                        .get_or_insert_with(|| Instant::now() + QUIT_GRACE);
                } else {
                    self.done = true;
                }
            }
            Action::Answer(id, decision) => {
                let _ = self.session.submit(Op::Approval { id, decision });
            }
            Action::Steer(text) => {
                let taken = self.run
                    && self
                        .session
                        .submit(Op::Steer { text: text.clone() })
                        .is_ok();
                if !taken {
                    self.state.steers.retain(|s| *s != text);
                    self.state.begin_turn(&text);
                    self.perform(Action::Send(text));
                }
            }
            Action::Compacting => {
                self.run = true;
                self.state.begin_task(RunState::Compacting);
            }
        }
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

    /// The run ended (the session's `TurnEnded`); `steers`: what it never
    /// took in.
    fn finished(&mut self, steers: Vec<String>) {
        self.run = false;
        if let Some(took) = self.state.turn_started.take().map(|t| t.elapsed()) {
            let ui = &self.app.config().ui;
            if let Some(seq) =
                crate::ui::notify::escape(ui.notify, ui.notify_after_secs, took, "the turn ended")
            {
                use std::io::Write;
                let mut out = std::io::stdout().lock();
                let _ = out.write_all(seq.as_bytes());
                let _ = out.flush();
            }
        }
        let stopped = self.state.turn_finished();
        if let Some(meta) = self.session.info() {
            self.state.set_session_meta(&meta);
        }
        if self.quit_at.is_some() {
            self.done = true;
            return;
        }
        if let Some(m) = self.state.steers_left(steers, stopped) {
            self.start(&m);
            return;
        }
        if stopped {
            self.state.queue_held();
            return;
        }
        if let Some(m) = self.state.next_queued() {
            self.start(&m);
        }
    }

    /// One item of the session's stream.
    fn session_event(&mut self, ev: SessionEvent) {
        match ev {
            // Outside a run (a profile switch's event): the command that
            // caused it already said what happened.
            SessionEvent::Agent { event } if self.run => self.state.apply(&event),
            SessionEvent::Agent { .. } => {}
            SessionEvent::TurnEnded { steers, .. } if self.run => self.finished(steers),
            SessionEvent::TurnEnded { .. } => {}
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
        // Loading starts now, beside the first frame; what it loaded is
        // shown once that frame is drawn (never before, however fast).
        let mut load: Option<Load> = if self.state.loading {
            let task = tokio::spawn(self.session.load_history());
            Some(Box::pin(async move {
                task.await
                    .map_err(|e| format!("cannot load the session: {e}"))?
            }))
        } else {
            None
        };
        if load.is_none() {
            self.state.history_loaded(&load_id, &[]);
            self.state.side.todos = self.session.todos();
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
                            check = self
                                .app
                                .check_backend(&profile)
                                .map(|c| Box::pin(c) as Check);
                            if check.is_some() && self.state.status.model.is_empty() {
                                self.state.status.model_note = "model: checking…".into();
                            }
                        }
                    }
                }
                ev = recv_opt(&mut self.events) => {
                    match ev {
                        Some(ev) => {
                            self.session_event(ev);
                            let mut n = 0;
                            while n < BATCH {
                                let Some(rx) = self.events.as_mut() else { break };
                                match rx.try_recv() {
                                    Ok(ev) => self.session_event(ev),
                                    Err(_) => break,
                                }
                                n += 1;
                            }
                            self.fill_diff();
                        }
                        // The handle is gone: nothing more comes.
                        None => {
                            self.events = None;
                            if self.run {
                                self.finished(Vec::new());
                            }
                        }
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
                r = load_opt(&mut load), if !first => {
                    load = None;
                    tracing::debug!(elapsed = ?started.elapsed(), "tui: history loaded");
                    match r {
                        Ok(h) => self.state.history_loaded(&load_id, &h),
                        Err(e) => {
                            self.state.history_loaded(&load_id, &[]);
                            self.state.push(CellKind::Error(e));
                        }
                    }
                    self.state.side.todos = self.session.todos();
                    if !self.run
                        && let Some(m) = self.state.next_queued()
                    {
                        self.start(&m);
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
