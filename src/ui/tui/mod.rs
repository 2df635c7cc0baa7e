//! The full-screen TUI (`navi`): ratatui + crossterm on the alternate screen.
//!
//! Structure (one component per file): [`state::TuiState`] is the whole UI
//! as plain data — fed `AgentEvent`s (`apply`), keys (`keys`) and command
//! outcomes (`outcome`), drawn by [`render::render`]; the cells
//! (`cells`, `markdown`, `highlight`, `wrap`), panes (`transcript`,
//! `side_pane`, `composer`, `status`) and overlays (`popup`, `picker`,
//! `approval`) each own their drawing; [`event_loop::EventLoop`] routes
//! input, agent events and frame ticks ([`scheduler`]) and holds the open
//! session's handle (and the app, to open, list and delete sessions).
//!
//! Invariants:
//! - The TUI consumes only `AgentEvent`s and sends only user intents (start a
//!   turn, run a slash command through `ui::commands`, stop, answer an
//!   approval); it knows no HTTP and no SQL.
//! - No network before the first frame; the terminal is restored on every
//!   exit, including panics (`terminal`).
//! - Every colour comes from a theme (`theme`); `NO_COLOR` drops them all.
pub(crate) mod apply;
pub mod approval;
pub(crate) mod approval_diff;
pub(crate) mod arg_lists;
pub mod background;
pub mod cells;
pub(crate) mod clipboard;
pub(crate) mod composer;
pub(crate) mod depth_backend;
pub(crate) mod editor;
pub mod event_loop;
pub mod farewell;
pub(crate) mod hangup;
pub mod highlight;
pub(crate) mod history;
pub(crate) mod input_history;
pub(crate) mod keys;
pub(crate) mod markdown;
pub(crate) mod mention;
pub mod model_picker;
pub(crate) mod outcome;
mod paste;
pub(crate) mod picker;
pub(crate) mod popup;
pub mod render;
pub(crate) mod rsearch;
pub(crate) mod scheduler;
pub(crate) mod search;
pub(crate) mod side_pane;
pub mod state;
pub(crate) mod status;
pub(crate) mod steer;
pub(crate) mod stream_doc;
pub(crate) mod terminal;
pub mod theme;
pub(crate) mod transcript;
pub(crate) mod wrap;

use crate::app::launch::{Failure, GlobalArgs, build_app};
use crate::app::{App, AppOptions, OpenOptions, SessionChoice, SessionHandle};
use event_loop::{EventLoop, LoopOptions};
use futures_util::StreamExt;
use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use state::TuiState;
use std::io::Write;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use theme::Theme;

/// Opens the session the TUI (and plain mode) starts on: pending until its
/// first message; when the most recent session is busy in another navi
/// (the user did not name it) a new one starts instead, with a note saying
/// why. A session named with `--session` that is busy stays an error.
pub fn open_session(
    app: &App,
    choice: &SessionChoice,
    profile: Option<&str>,
) -> Result<SessionHandle, Failure> {
    let opts = OpenOptions {
        profile: profile.map(String::from),
        pending: true,
        new_if_busy: true,
        ..Default::default()
    };
    Ok(app.open_handle(choice, opts)?)
}

/// The initial state for `session` of `app`: theme, options and the
/// session. The history is not read here: the event loop loads it while the
/// first frame is drawn (`state.loading`).
pub fn initial_state(app: &App, session: &SessionHandle) -> Result<TuiState, Failure> {
    let meta = session
        .info()
        .ok_or_else(|| Failure::runtime(format!("session {} is gone", session.id())))?;
    let no_color = theme::no_color_env();
    let config = app.config();
    let dir = app.paths().config_dir.clone();
    // "auto": COLORFGBG now (no I/O); an OSC 11 query after the first frame.
    let wanted = background::theme_without_query(&config.ui.theme);
    let (theme, theme_error) = match Theme::load(wanted, Some(&dir), no_color) {
        Ok(t) => (t, None),
        Err(e) => (Theme::fallback(no_color), Some(e)),
    };
    let mut st = TuiState::new(theme);
    st.theme_names = theme::names(Some(&dir));
    st.config_dir = Some(dir);
    st.no_color = no_color;
    st.profile_ids = app.profile_ids();
    st.show_thinking = config.ui.show_thinking;
    st.cwd = status::short_cwd();
    st.guard = app.guard_label();
    st.sandbox = config.sandbox.clone();
    st.history_file = Some(app.paths().data_dir.join("history.txt"));
    st.switch_session(&meta, &[]);
    // The window stored with the session, until the backend check says;
    // the model chosen for it, if one was.
    st.status.ctx_max = session.stored_window();
    st.status.model = session.model().unwrap_or_default();
    st.loading = true;
    if let Some(e) = theme_error {
        st.hint(format!("[ui].theme: {e}; using the built-in dark theme"));
    }
    if let Some(note) = session.opening_note() {
        st.hint(note.to_string());
    }
    if let Some(note) = session.instructions_note() {
        st.info(vec![note]);
    }
    st.custom_commands = crate::ui::commands::custom_items(session);
    st.command_watch = Some(crate::ui::commands::CommandWatch::new(
        session,
        &app.paths().config_dir,
    ));
    Ok(st)
}

/// Whether to ask the terminal for its background after the first frame:
/// `[ui].theme = "auto"`, colours on, `COLORFGBG` silent, and a terminal
/// that answers (see [`background::should_query`]).
fn wants_probe(theme: &str) -> bool {
    use std::io::IsTerminal;
    theme == "auto"
        && !theme::no_color_env()
        && std::env::var("COLORFGBG")
            .ok()
            .and_then(|v| background::from_colorfgbg(&v))
            .is_none()
        && background::should_query(
            std::env::var("TERM").ok().as_deref(),
            std::env::var_os("TMUX").is_some(),
            std::io::stdout().is_terminal(),
        )
}

/// Resolves on SIGTERM or SIGHUP (never on other platforms), recording the
/// exit code navi then ends with (143 or 129).
async fn terminated(code: Arc<AtomicU8>) {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        if let (Ok(mut term), Ok(mut hup)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::hangup()),
        ) {
            let c = tokio::select! {
                _ = term.recv() => 143,
                _ = hup.recv() => 129,
            };
            code.store(c, Ordering::SeqCst);
            return;
        }
    }
    std::future::pending::<()>().await
}

pub(crate) async fn run(
    g: &GlobalArgs,
    choice: SessionChoice,
    profile: Option<String>,
) -> Result<u8, Failure> {
    let (app, _log) = build_app(
        g,
        AppOptions {
            interactive: true,
            ..Default::default()
        },
    )?;
    let session = open_session(&app, &choice, profile.as_deref())?;
    let state = initial_state(&app, &session)?;
    app.spawn_memory_extraction(&session.id());
    // In the background: the first frame never waits for MCP servers.
    app.spawn_mcp();
    let opts = LoopOptions {
        max_fps: app.config().ui.max_fps,
        check_backend: true,
    };
    let guard = terminal::enter().map_err(|e| {
        Failure::runtime(format!(
            "cannot start the full-screen UI: {e}; use `navi --plain`"
        ))
    })?;
    let signal_code = Arc::new(AtomicU8::new(0));
    hangup::watch(std::time::Duration::from_secs(5));
    let mut lp = EventLoop::new(&app, session, state);
    let result = async {
        // No `terminal.clear()`: it asks the terminal for the cursor position
        // (a round trip before the first frame); `enter` cleared the screen.
        // Colours come down to what the terminal shows (no 24-bit colour
        // unless it says so).
        let mut terminal = Terminal::new(depth_backend::DepthBackend::new(
            CrosstermBackend::new(std::io::stdout()),
            crate::ui::color_depth::ColorDepth::from_env(),
        ))?;
        // SIGTERM / SIGHUP end the input: the loop then quits as on Ctrl-C
        // (stopping a running turn cooperatively) and the terminal is restored.
        let shared = editor::SharedInput::new();
        let mut input = shared
            .clone()
            .take_until(Box::pin(terminated(signal_code.clone())));
        if wants_probe(&app.config().ui.theme) {
            let paused = shared.clone();
            lp.probe_background = Some(Box::new(move || {
                paused.pause();
                let p = background::query_tty(std::time::Duration::from_millis(100));
                paused.resume();
                p
            }));
        }
        lp.editor = Some(Box::new(move |draft: &str| {
            editor::edit_draft(&shared, draft)
        }));
        let r = lp
            .run(
                &mut terminal,
                &mut input,
                &opts,
                |seq| {
                    let mut out = std::io::stdout();
                    let _ = out.write_all(seq.as_bytes());
                    let _ = out.flush();
                },
                |_| {},
            )
            .await;
        let bye = farewell::farewell(&lp.state, app.config().tui.scrollback);
        r.map(|()| bye)
    }
    .await;
    drop(guard);
    // The open session ends as in every front end: a running turn stopped
    // and saved, its connections, its lock and what the process kept for it
    // released; a session nothing was sent in is not kept.
    lp.session().close().await;
    if let Ok(bye) = &result
        && !bye.is_empty()
    {
        // The alternate screen is gone: leave the answer and the way back.
        let mut out = std::io::stdout();
        let _ = out.write_all(bye.as_bytes());
        let _ = out.flush();
    }
    // The MCP servers this run started, with everything they started.
    app.stop_mcp();
    result
        .map(|_| signal_code.load(Ordering::SeqCst))
        .map_err(|e| Failure::runtime(format!("terminal error: {e}")))
}
