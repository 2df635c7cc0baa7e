//! `navi --plain`: line mode for SSH, dumb terminals, pipes and screen
//! readers. Same agent, events and slash commands as the TUI; output is
//! printed as it arrives and never redrawn (no alternate screen).
//!
//! Invariants:
//! - One loop: read a line while idle, then run the turn or the command to
//!   its end; events are only printed while no editor owns the terminal.
//! - Without colour (NO_COLOR, TERM=dumb, stdout not a TTY) no escape
//!   sequence is written; without a TTY on stdin, stdout and stderr (or
//!   with TERM=dumb) reedline is never started.
//! - Start-up does no network I/O and loads no syntax definitions.
//! - Exit code 0 on /quit or end of input; 130 when Ctrl-C ends a piped run.
mod attach;
mod editor;
mod hold;
mod input;
mod lookup;
mod slash;
mod turn;
mod waiting;

use super::commands::{self, UiState};
use super::lines::{
    CodeStyle, LineOptions, LineRenderer, Palette, Piece, Stream, ThinkingView, code_style_for,
    style,
};
use crate::app::launch::{Failure, GlobalArgs, build_app};
use crate::app::{App, AppOptions, SessionChoice, SessionHandle};
use crate::protocol::SessionEvent;
use editor::{Editor, EditorConfig, NaviPrompt, Reply};
use input::{Input, Interrupts, LineSource};
use std::io::{IsTerminal, Write};
use tokio::sync::mpsc;

/// What the terminal can do.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Term {
    pub(crate) stdin_tty: bool,
    pub(crate) stdout_tty: bool,
    /// reedline paints its prompt on stderr.
    pub(crate) stderr_tty: bool,
    pub(crate) dumb: bool,
    pub(crate) color: bool,
}

impl Term {
    pub(crate) fn detect() -> Term {
        let stdin_tty = std::io::stdin().is_terminal();
        let stdout_tty = std::io::stdout().is_terminal();
        Term {
            stdin_tty,
            stdout_tty,
            stderr_tty: std::io::stderr().is_terminal(),
            dumb: std::env::var("TERM").is_ok_and(|t| t == "dumb"),
            color: style::color_wanted(stdout_tty),
        }
    }

    /// reedline needs a real terminal on all three streams (it reads keys
    /// from stdin and paints on stderr; answers go to stdout).
    pub(crate) fn editor(&self) -> bool {
        self.stdin_tty && self.stdout_tty && self.stderr_tty && !self.dumb
    }
}

struct Plain {
    app: App,
    st: UiState,
    r: LineRenderer,
    input: Input,
    sig: Interrupts,
    term: Term,
    /// A SIGTERM / SIGHUP arrived: exit with this code once the current turn
    /// or command has finished what it owes.
    exit_after: Option<u8>,
    /// A turn ended in an error (piped input then exits 1).
    failed: bool,
    /// Files queued with `/attach` for the next message.
    pending: Vec<crate::attach::Attachment>,
    /// Lines typed while a turn ran (`/stop` acts at once).
    typed: hold::Typed,
    /// The running turn's text and `/attach` files, kept for the next line
    /// when the message is refused.
    sent: Option<(String, Vec<crate::attach::Attachment>)>,
    /// The open session (a session command replaces it) and its events.
    session: SessionHandle,
    events: Option<mpsc::Receiver<SessionEvent>>,
    /// The waiting line of the running turn.
    waiting: waiting::Waiting,
    /// The model announced last in this project (`model: using …` once).
    model_note: crate::ui::model_note::ModelNote,
}

pub(crate) async fn run(
    g: &GlobalArgs,
    choice: SessionChoice,
    profile: Option<String>,
) -> Result<u8, Failure> {
    let term = Term::detect();
    let sig = Interrupts::install();
    let opts = AppOptions {
        // Approvals are asked inline when somebody is at the keyboard.
        interactive: term.stdin_tty,
        ..Default::default()
    };
    let (app, _log) = build_app(g, opts)?;
    let mut session = crate::ui::tui::open_session(&app, &choice, profile.as_deref())?;
    if let Some(note) = session.opening_note() {
        eprintln!("navi: {note}");
    }
    if let Some(note) = session.instructions_note() {
        eprintln!("navi: {note}");
    }
    let meta = session
        .info()
        .ok_or_else(|| Failure::runtime(format!("session {} is gone", session.id())))?;
    let events = session.take_events();
    app.spawn_memory_extraction(&meta.id);
    // In the background: the prompt never waits for MCP servers.
    app.spawn_mcp();
    let themes = crate::ui::tui::theme::names(Some(&app.paths().config_dir));
    let input = if term.editor() {
        let ed = Editor::start(EditorConfig {
            history: app.paths().data_dir.join("history.txt"),
            color: term.color,
            profiles: app.profile_ids(),
            themes,
            source: Some(std::sync::Arc::new(lookup::Lookup(
                app.lookups(&meta.profile_id),
            ))),
            custom: commands::custom_items(&session),
        });
        if let Some(w) = &ed.history_warning {
            eprintln!("warning: {w}");
        }
        Input::Editor(ed)
    } else {
        Input::Lines(LineSource::spawn(term.stdin_tty))
    };
    let st = UiState {
        session: meta,
        show_thinking: app.config().ui.show_thinking,
        theme: app.config().ui.theme.clone(),
        last_answer: String::new(),
    };
    let r = LineRenderer::new(LineOptions {
        color: term.color,
        thinking: if st.show_thinking {
            ThinkingView::Full
        } else {
            ThinkingView::Summary
        },
        live_answer: true,
        markdown: true,
        code: code_style(&st.theme, &app),
    });
    let model_note =
        crate::ui::model_note::ModelNote::load(&app.paths().data_dir, &session.work_dir());
    let mut r = r;
    r.set_model(model_note.last());
    let mut plain = Plain {
        app,
        st,
        r,
        input,
        sig,
        term,
        exit_after: None,
        failed: false,
        pending: Vec::new(),
        typed: hold::Typed::default(),
        sent: None,
        session,
        events,
        waiting: waiting::Waiting::default(),
        model_note,
    };
    if term.stdin_tty {
        // The last resort when the terminal goes away and the loop does not
        // notice (see `input::hung_up`): exit as for SIGHUP.
        crate::ui::tui::hangup::watch(std::time::Duration::from_secs(10));
    }
    plain.greet();
    let code = plain.repl().await;
    if let Input::Editor(e) = &mut plain.input {
        e.shutdown();
    }
    // The open session ends as in every front end (a running turn stopped
    // and saved, its connections, lock and what the process kept for it
    // released); the MCP servers this run started go too.
    plain.session.close().await;
    plain.app.stop_mcp();
    Ok(code)
}

/// Code highlighting for the configured theme; a broken theme file is
/// reported and the default used.
fn code_style(theme: &str, app: &App) -> CodeStyle {
    code_style_for(theme, &app.paths().config_dir).unwrap_or_else(|e| {
        eprintln!("warning: {e}");
        CodeStyle {
            depth: style::depth(),
            ..CodeStyle::default()
        }
    })
}

impl Plain {
    fn pal(&self) -> Palette {
        self.r.palette()
    }

    /// Answers (and command output) to stdout; progress, status and errors
    /// too when stdout is the terminal, else to stderr, so a redirected or
    /// piped stdout holds only what was asked for.
    fn emit(&self, pieces: Vec<Piece>) {
        let mut out = std::io::stdout().lock();
        let mut err = std::io::stderr().lock();
        if !pieces.is_empty()
            && let Some(e) = self.waiting.erase()
        {
            // The waiting line is redrawn in place: it goes before anything else.
            let _ = if self.term.stdout_tty {
                out.write_all(e.as_bytes())
            } else {
                err.write_all(e.as_bytes())
            };
        }
        for p in pieces {
            if p.stream == Stream::Info && !self.term.stdout_tty {
                let _ = out.flush();
                let _ = err.write_all(p.text.as_bytes());
                let _ = err.flush();
            } else {
                let _ = out.write_all(p.text.as_bytes());
            }
        }
        let _ = out.flush();
    }

    /// Prints a line of command output (closing any open line first).
    fn say(&mut self, line: &str) {
        self.line(Stream::Answer, line);
    }

    /// Prints a progress, status or error line.
    fn note(&mut self, line: &str) {
        self.line(Stream::Info, line);
    }

    fn line(&mut self, stream: Stream, line: &str) {
        let mut pieces = self.r.close();
        pieces.push(Piece {
            stream,
            text: format!("{line}\n"),
        });
        self.emit(pieces);
    }

    fn prompt(&self) -> NaviPrompt {
        let s = &self.st.session;
        let right = if s.title.is_empty() {
            s.id.chars().take(8).collect()
        } else {
            super::format::preview(&s.title, 30)
        };
        NaviPrompt {
            left: format!("navi[{}]", s.profile_id),
            right,
            indicator: "> ".into(),
        }
    }

    fn session_label(&self) -> String {
        let s = &self.st.session;
        let id: String = s.id.chars().take(8).collect();
        if s.title.is_empty() {
            format!("session {id}")
        } else {
            format!("session {id} \"{}\"", s.title)
        }
    }

    fn greet(&mut self) {
        let history = self.session.recent_history().unwrap_or_default();
        self.st.last_answer = crate::protocol::last_answer(&history).to_string();
        if !history.is_empty() {
            self.show_history(&history, 6);
        }
        let line = format!(
            "navi {} · {} · profile {} · {} · /help lists commands, Ctrl-D quits",
            env!("CARGO_PKG_VERSION"),
            self.session_label(),
            self.st.session.profile_id,
            self.app.guard_words()
        );
        let line = self.pal().dim(&line);
        self.note(&line);
    }

    async fn repl(&mut self) -> u8 {
        loop {
            let prompt = self.prompt();
            match self
                .input
                .read_main(&prompt, &mut self.sig, &mut self.typed)
                .await
            {
                Reply::Eof => {
                    if self.input.interactive() {
                        self.say("");
                        return 0;
                    }
                    return u8::from(self.failed);
                }
                Reply::Signal(code) => return code,
                Reply::Interrupted if !self.input.interactive() => return 130,
                Reply::Interrupted => continue,
                Reply::Line(text) => {
                    let t = text.trim();
                    if t.is_empty() {
                        continue;
                    }
                    if let Some(msg) = t.strip_prefix("//") {
                        // `//text` sends "/text" to the model.
                        let msg = format!("/{msg}");
                        if let Some(code) = self.turn(&msg).await {
                            return code;
                        }
                    } else if let Some(rest) = t
                        .strip_prefix("/attach")
                        .filter(|r| r.is_empty() || r.starts_with(' '))
                    {
                        self.attach_cmd(rest);
                    } else if let Some(prompt) = commands::custom_prompt(&self.session, t) {
                        // The user's own command: its prompt is the message.
                        if let Some(code) = self.turn(&prompt).await {
                            return code;
                        }
                    } else if t.starts_with('/') {
                        if self.slash(t).await {
                            return self.exit_after.unwrap_or(0);
                        }
                    } else if let Some(code) = self.turn(&text).await {
                        return code;
                    }
                    if let Some(code) = self.exit_after {
                        return code;
                    }
                }
            }
        }
    }
}
