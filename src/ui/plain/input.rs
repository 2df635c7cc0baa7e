//! Where plain mode's input comes from, and SIGINT.
//!
//! Invariants:
//! - With a real terminal (stdin and stdout TTYs, not `TERM=dumb`) lines come
//!   from reedline; otherwise from a thread that reads stdin line by line
//!   (cooked mode: the terminal's own line editing, no escape sequences).
//! - SIGINT is caught for the whole run (it never kills navi); who reacts to
//!   it depends on the state: a running turn stops, an idle prompt is cleared.
//!   While reedline reads, the terminal is raw and Ctrl-C arrives as a key.
//! - A question (approval, picker) always gets an answer: `Interrupted` when
//!   the user pressed Ctrl-C or the question became moot.
use super::editor::{Editor, NaviPrompt, Reply, Which, join_continuations};
use super::hold::{Typed, is_stop};
use std::io::{BufRead, Write};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// SIGINT, SIGTERM and SIGHUP (see [`crate::ui::signals`]).
pub(crate) type Interrupts = crate::ui::signals::StopSignals;

/// Lines from stdin, read on a thread of their own.
pub(crate) struct LineSource {
    rx: mpsc::UnboundedReceiver<String>,
    /// Lines typed ahead before a question was shown: kept for the main
    /// prompt, never taken as the answer.
    held: std::collections::VecDeque<String>,
    /// A person types (stdin is a terminal): print prompts, ask questions.
    tty: bool,
    /// Prompts go to stderr unless only stdout is the terminal.
    prompt_on_stderr: bool,
}

impl LineSource {
    pub(crate) fn spawn(tty: bool) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let _ = std::thread::Builder::new()
            .name("navi-stdin".into())
            .spawn(move || {
                let stdin = std::io::stdin();
                let mut lock = stdin.lock();
                let mut buf = Vec::new();
                loop {
                    buf.clear();
                    match lock.read_until(b'\n', &mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {
                            while matches!(buf.last(), Some(b'\n' | b'\r')) {
                                buf.pop();
                            }
                            let line = String::from_utf8_lossy(&buf).into_owned();
                            if tx.send(line).is_err() {
                                break;
                            }
                        }
                    }
                }
            });
        use std::io::IsTerminal;
        let prompt_on_stderr = std::io::stderr().is_terminal() || !std::io::stdout().is_terminal();
        LineSource {
            rx,
            held: Default::default(),
            tty,
            prompt_on_stderr,
        }
    }

    /// Prompts and questions go to the terminal, never into a redirected
    /// stream (`navi --plain > answers.txt`, `2> log`).
    fn show(&self, text: &str) {
        if self.prompt_on_stderr {
            let mut out = std::io::stderr().lock();
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
        } else {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
        }
    }

    /// Moves lines already read (typed before now) aside for the main prompt
    /// and drops what the terminal holds that was not read yet.
    fn hold_typed_ahead(&mut self) -> usize {
        let mut n = 0;
        while let Ok(l) = self.rx.try_recv() {
            self.held.push_back(l);
            n += 1;
        }
        n + crate::ui::typeahead::discard_stdin()
    }

    async fn read(&mut self, prompt: &str, sig: &mut Interrupts, main: bool) -> Reply {
        if self.tty {
            self.show(prompt);
        }
        let mut text = String::new();
        loop {
            let held = if main { self.held.pop_front() } else { None };
            tokio::select! {
                line = async { match held { Some(l) => Some(l), None => self.rx.recv().await } } => match line {
                    None if text.is_empty() => return Reply::Eof,
                    None => return Reply::Line(text),
                    Some(l) => {
                        if let Some(head) = l.strip_suffix('\\') {
                            text.push_str(head);
                            text.push('\n');
                            if self.tty {
                                self.show("… ");
                            }
                            continue;
                        }
                        text.push_str(&l);
                        return Reply::Line(text);
                    }
                },
                stop = sig.recv() => {
                    if self.tty {
                        self.show("\n");
                    }
                    return stopped(stop);
                }
            }
        }
    }
}

/// The exit code when the terminal went away, as for SIGHUP.
const HANGUP: u8 = 129;

/// Resolves when the terminal on stdin has hung up (an SSH connection
/// dropped, a window closed) even if no SIGHUP reached navi: reedline's
/// reader would spin on the dead descriptor forever instead of returning.
async fn hung_up() {
    loop {
        tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        if crate::ui::tui::hangup::tty_hung_up() {
            return;
        }
    }
}

fn stopped(stop: crate::ui::signals::Stop) -> Reply {
    if stop.is_fatal() {
        Reply::Signal(stop.exit_code())
    } else {
        Reply::Interrupted
    }
}

pub(crate) enum Input {
    Editor(Editor),
    Lines(LineSource),
}

impl Input {
    /// Somebody is there to answer questions.
    pub(crate) fn interactive(&self) -> bool {
        match self {
            Input::Editor(_) => true,
            Input::Lines(l) => l.tty,
        }
    }

    /// The main prompt. `Line` holds the message with continuations joined.
    /// Lines typed during the last turn come first, shown after the prompt
    /// as if typed there; unfinished text starts the editor's buffer.
    pub(crate) async fn read_main(
        &mut self,
        prompt: &NaviPrompt,
        sig: &mut Interrupts,
        typed: &mut Typed,
    ) -> Reply {
        match self {
            Input::Editor(e) => {
                if let Some(line) = typed.pop_line() {
                    let shown = format!(
                        "{}{}{}\n",
                        prompt.left,
                        prompt.indicator,
                        line.replace('\n', "\n… ")
                    );
                    let mut err = std::io::stderr().lock();
                    let _ = err.write_all(shown.as_bytes());
                    let _ = err.flush();
                    let rx = e.request_with(Which::Main, prompt.clone(), line.clone(), true);
                    let _ = rx.await;
                    return Reply::Line(line);
                }
                let preset = typed.take_partial();
                let mut rx = e.request_with(Which::Main, prompt.clone(), preset, false);
                tokio::select! {
                    r = &mut rx => match r {
                        Ok(Reply::Line(s)) => Reply::Line(join_continuations(&s)),
                        Ok(other) => other,
                        Err(_) => Reply::Eof,
                    },
                    stop = sig.recv() => {
                        // SIGTERM / SIGHUP (or a SIGINT from `kill`) while
                        // reedline reads: end the read, then report it.
                        e.abandon(rx).await;
                        stopped(stop)
                    }
                    () = hung_up() => {
                        e.abandon(rx).await;
                        Reply::Signal(HANGUP)
                    }
                }
            }
            Input::Lines(l) => {
                let p = format!("{}{}", prompt.left, prompt.indicator);
                l.read(&p, sig, true).await
            }
        }
    }

    /// Resolves when `/stop` is typed while a turn runs (a terminal only);
    /// other lines typed meanwhile are held for the main prompt.
    pub(crate) async fn stop_typed(&mut self, typed: &mut Typed) {
        match self {
            Input::Editor(_) => typed.stop_typed().await,
            Input::Lines(l) if l.tty => loop {
                match l.rx.recv().await {
                    Some(line) if is_stop(&line) => return,
                    Some(line) => l.held.push_back(line),
                    None => std::future::pending::<()>().await,
                }
            },
            // A script's `/stop` line is a command in its turn.
            Input::Lines(_) => std::future::pending::<()>().await,
        }
    }

    /// Asks one question; `cancel` makes it moot (answered `Interrupted`).
    /// Only what is typed after the question is shown can answer it: input
    /// typed ahead is dropped from the terminal first (and lines already read
    /// are kept for the main prompt), and the returned count of dropped
    /// lines/bytes lets the caller say so.
    pub(crate) async fn ask(
        &mut self,
        question: &str,
        sig: &mut Interrupts,
        cancel: &CancellationToken,
    ) -> (Reply, usize) {
        match self {
            Input::Editor(e) => {
                let prompt = NaviPrompt {
                    left: question.to_string(),
                    right: String::new(),
                    indicator: String::new(),
                };
                let dropped = crate::ui::typeahead::discard_stdin()
                    + crate::ui::typeahead::drain_key_buffer();
                let mut rx = e.request(Which::Question, prompt);
                let r = tokio::select! {
                    r = &mut rx => r.unwrap_or(Reply::Eof),
                    _ = cancel.cancelled() => {
                        // Let the editor thread finish the read before going on.
                        e.abandon(rx).await;
                        Reply::Interrupted
                    }
                    stop = sig.recv() => {
                        e.abandon(rx).await;
                        stopped(stop)
                    }
                    () = hung_up() => {
                        e.abandon(rx).await;
                        Reply::Signal(HANGUP)
                    }
                };
                (r, dropped)
            }
            Input::Lines(l) => {
                let dropped = l.hold_typed_ahead();
                let r = tokio::select! {
                    r = l.read(question, sig, false) => r,
                    _ = cancel.cancelled() => {
                        if l.tty {
                            l.show("\n");
                        }
                        Reply::Interrupted
                    }
                };
                (r, dropped)
            }
        }
    }
}
