//! One turn (and `/compact`) in plain mode: events printed as they come,
//! approvals asked inline, Ctrl-C a cooperative stop.
//!
//! Invariants: a turn is stopped only with `Op::Stop` (its cancel token),
//! never aborted (the agent writes what it owes to the session first); the
//! status line is printed after every turn that ran; a run's events are
//! read from the session's stream until its `TurnEnded`.
use super::Plain;
use super::editor::Reply;
use crate::protocol::AgentEvent;
use crate::protocol::{Decision, Op, SessionEvent, TurnEnd};
use crate::ui::lines::highlight;
use std::time::Instant;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// The next item of the session's stream (`None`: it closed).
async fn next(events: &mut Option<mpsc::Receiver<SessionEvent>>) -> Option<SessionEvent> {
    match events {
        Some(rx) => rx.recv().await,
        None => None,
    }
}

/// What a run produced once its stream said how it ended (`None`: the
/// stream closed without saying).
// One item at a time, straight from the stream: boxing the event would cost
// an allocation per streamed token for nothing.
#[allow(clippy::large_enum_variant)]
enum Item {
    Event(AgentEvent),
    End(Option<TurnEnd>),
}

fn item(ev: Option<SessionEvent>) -> Item {
    match ev {
        Some(SessionEvent::Agent { event }) => Item::Event(event),
        Some(SessionEvent::TurnEnded { end, .. }) => Item::End(Some(end)),
        None => Item::End(None),
    }
}

use crate::ui::wording::decision;

impl Plain {
    /// Runs a turn to its end. `Some(code)` means navi should exit now.
    pub(super) async fn turn(&mut self, text: &str) -> Option<u8> {
        self.sig.drain();
        self.drain_stale();
        if self.term.color {
            highlight::warm();
        }
        self.r.begin_turn();
        let started = Instant::now();
        let message = self.compose_message(text)?;
        if let Err(e) = self.session.send(message) {
            let t = self.pal().red(&format!("error: {e}"));
            self.note(&t);
            return None;
        }
        // Cancelled with the turn's stop (a question waiting stops asking).
        let cancel = CancellationToken::new();
        // Typed-ahead text is held (not echoed into the answer) while the
        // editor owns the terminal between turns.
        let _echo =
            matches!(self.input, super::input::Input::Editor(_)).then(super::hold::EchoOff::start);
        let mut presses = 0u32;
        let mut quit = None;
        self.waiting.start();
        let mut tick = tokio::time::interval(std::time::Duration::from_secs(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Skip);
        let end = loop {
            tokio::select! {
                ev = next(&mut self.events) => match item(ev) {
                    Item::Event(ev) => {
                        self.waiting.event(&ev);
                        let pieces = self.r.event(&ev);
                        self.emit(pieces);
                        self.after_event(ev, &cancel).await;
                    }
                    Item::End(end) => break end,
                },
                _ = tick.tick() => self.show_waiting(),
                _ = self.input.stop_typed(&mut self.typed) => {
                    // `/stop` typed during the turn: like a first Ctrl-C.
                    if cancel.is_cancelled() {
                        let t = self.pal().yellow("still stopping…");
                        self.note(&t);
                    } else {
                        let pieces = self.r.close();
                        self.emit(pieces);
                        self.stop(&cancel);
                    }
                }
                stop = self.sig.recv() => {
                    if stop.is_fatal() {
                        // SIGTERM / SIGHUP: stop like Ctrl-C (tool process
                        // groups killed, results saved), then exit.
                        let pieces = self.r.close();
                        self.emit(pieces);
                        self.stop(&cancel);
                        self.exit_after = Some(stop.exit_code());
                        continue;
                    }
                    presses += 1;
                    match presses {
                        1 => {
                            let pieces = self.r.close();
                            self.emit(pieces);
                            self.stop(&cancel);
                        }
                        2 => {
                            let t = self.pal().yellow("still stopping… Ctrl-C once more leaves navi");
                            self.note(&t);
                        }
                        _ => {
                            quit = Some(130);
                            break None;
                        }
                    }
                }
            }
        };
        self.waiting.stop();
        if let Some(e) = self.waiting.erase() {
            self.raw(e);
        }
        if quit.is_some() {
            self.note("navi: interrupted");
            return quit;
        }
        let p = self.pal();
        match end {
            Some(TurnEnd::Stopped) => {
                if !self.r.saw_stop() {
                    self.note(&p.yellow("stopped"));
                }
            }
            Some(TurnEnd::Done { .. }) => {}
            Some(TurnEnd::Failed { message, .. }) => {
                self.failed = true;
                if !self.r.saw_error() {
                    self.note(&p.red(&format!("error: {message}")));
                }
                if let Some(help) = self
                    .app
                    .first_run_help(&self.st.session.profile_id, &message)
                {
                    // Nothing configured and no server: what to do.
                    self.note("");
                    self.note(&help);
                }
            }
            Some(TurnEnd::Refused { message }) => {
                self.failed = true;
                if !self.r.saw_error() {
                    self.note(&p.red(&format!("error: {message}")));
                }
                self.keep_refused();
            }
            None => {
                self.failed = true;
                self.note(&p.red("error: the turn failed: it ended without a word"));
            }
        }
        self.model_note.remember(self.r.model());
        let mut status = self.r.status_line(started.elapsed());
        if self.app.approvals_relaxed() {
            // Calls that run without asking stay in sight after every turn.
            let g = self.pal().dim(&format!("[{}]", self.app.guard_words()));
            status = format!("{status} {g}");
        }
        self.note(&status);
        self.announce_end(started.elapsed());
        if let Some(meta) = self.session.info() {
            self.st.session = meta;
        }
        self.exit_after
    }

    /// A file write waiting for approval: the same diff the TUI's overlay
    /// shows, coloured only when colours are on.
    fn show_write_diff(&mut self, call: Option<&crate::protocol::CallInfo>) {
        use crate::text_diff::DiffLine;
        let Some(lines) = call.and_then(crate::ui::tui::approval_diff::for_call) else {
            return;
        };
        let p = self.pal();
        for l in &lines {
            let t = l.text();
            let shown = match l {
                DiffLine::Added(_) => p.green(&t),
                DiffLine::Removed(_) => p.red(&t),
                DiffLine::Header(_) => p.cyan(&t),
                DiffLine::Context(_) => p.dim(&t),
            };
            self.note(&shown);
        }
    }

    /// The waiting line, when something has been awaited a while.
    fn show_waiting(&mut self) {
        let tty = self.term.stdout_tty || self.term.stderr_tty;
        if let Some(line) = self.waiting.tick(tty) {
            self.raw(&line);
        }
    }

    /// Writes `text` where progress lines go (stdout on a terminal, else stderr).
    fn raw(&self, text: &str) {
        use std::io::Write;
        if self.term.stdout_tty {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
        } else {
            let _ = std::io::stderr().lock().write_all(text.as_bytes());
        }
    }

    /// A long turn's end, announced to a user in another window (bell or a
    /// notification escape, `[ui] notify`), on the terminal only.
    fn announce_end(&self, took: std::time::Duration) {
        use std::io::Write;
        let ui = &self.app.config().ui;
        let Some(seq) =
            crate::ui::notify::escape(ui.notify, ui.notify_after_secs, took, "the turn ended")
        else {
            return;
        };
        if self.term.stdout_tty {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(seq.as_bytes());
            let _ = out.flush();
        } else if self.term.stderr_tty {
            let _ = std::io::stderr().lock().write_all(seq.as_bytes());
        }
    }

    /// Drops what the session sent while nothing ran (a profile switch's
    /// event: the command that caused it already said what happened).
    pub(super) fn drain_stale(&mut self) {
        if let Some(rx) = self.events.as_mut() {
            while rx.try_recv().is_ok() {}
        }
    }

    /// Asks the running turn (or compaction) to stop; `cancel` marks it so.
    fn stop(&self, cancel: &CancellationToken) {
        cancel.cancel();
        let _ = self.session.submit(Op::Stop);
    }

    async fn after_event(&mut self, ev: AgentEvent, cancel: &CancellationToken) {
        match ev {
            AgentEvent::ApprovalRequest {
                id,
                tool,
                summary,
                call,
                args,
            } => {
                self.show_write_diff(call.as_deref());
                if let Some(s) =
                    crate::ui::sandbox_words::for_call(&self.app.config().sandbox, &tool, &args)
                {
                    let t = self.pal().dim(&s);
                    self.note(&t);
                }
                let q = crate::ui::wording::approval_question(&tool, &summary);
                // Lines typed during the turn could be meant as the answer:
                // they are dropped like the rest of the typed-ahead text.
                let held = self.typed.discard();
                let (reply, dropped) = self.input.ask(&q, &mut self.sig, cancel).await;
                if dropped + held > 0 {
                    let t = self
                        .pal()
                        .dim("(text typed before the question was not taken as the answer)");
                    self.say(&t);
                }
                let d = match reply {
                    Reply::Line(a) if super::hold::is_stop(&a) => {
                        // `/stop` as the answer stops the whole turn.
                        self.stop(cancel);
                        return;
                    }
                    Reply::Line(a) => decision(&a),
                    Reply::Interrupted => {
                        // Ctrl-C at the question stops the whole turn; the
                        // gate answers the call "cancelled".
                        self.stop(cancel);
                        return;
                    }
                    Reply::Signal(code) => {
                        self.stop(cancel);
                        self.exit_after = Some(code);
                        return;
                    }
                    Reply::Eof => Decision::Deny,
                };
                if d != Decision::Deny {
                    self.waiting.resume(&tool);
                }
                let _ = self.session.submit(Op::Approval { id, decision: d });
            }
            AgentEvent::ProfileSwitched { profile_id, .. } => {
                self.st.session.profile_id = profile_id;
            }
            AgentEvent::StreamEnd { content, .. } if !content.is_empty() => {
                self.st.last_answer = content;
            }
            _ => {}
        }
    }

    /// `/compact` started (the shared command submitted it): its events
    /// until it ends; Ctrl-C stops it.
    pub(super) async fn compacting(&mut self) {
        self.sig.drain();
        let t = self.pal().dim("compacting…");
        self.note(&t);
        let cancel = CancellationToken::new();
        let end = loop {
            tokio::select! {
                ev = next(&mut self.events) => match item(ev) {
                    Item::Event(ev) => {
                        let mut pieces = self.r.event(&ev);
                        // The preview and the result are the command's
                        // output (stdout); an error stays a diagnostic.
                        if !matches!(ev, AgentEvent::Error { .. }) {
                            for p in &mut pieces {
                                p.stream = crate::ui::lines::Stream::Answer;
                            }
                        }
                        self.emit(pieces);
                    }
                    Item::End(end) => break end,
                },
                _ = self.input.stop_typed(&mut self.typed) => self.stop(&cancel),
                stop = self.sig.recv() => {
                    if stop.is_fatal() {
                        self.exit_after = Some(stop.exit_code());
                    }
                    self.stop(&cancel)
                }
            }
        };
        let p = self.pal();
        match end {
            // "nothing to compact" came as an event; so did a failure.
            Some(TurnEnd::Done { .. } | TurnEnd::Failed { .. } | TurnEnd::Refused { .. }) => {}
            Some(TurnEnd::Stopped) => self.say(&p.yellow("compaction stopped")),
            None => self.say(&p.red("error: compaction failed: it ended without a word")),
        }
        if let Some(meta) = self.session.info() {
            self.st.session = meta;
        }
    }
}
