//! One turn (and `/compact`) in plain mode: events printed as they come,
//! approvals asked inline, Ctrl-C a cooperative stop.
//!
//! Invariants: a turn is stopped only through its cancel token, never
//! aborted (the agent writes what it owes to the session first); the status
//! line is printed after every turn that ran; `UiState::running` is true
//! exactly while a turn's events are being read.
use super::Plain;
use super::editor::Reply;
use crate::protocol::AgentEvent;
use crate::protocol::{Decision, Op, TurnEnd};
use crate::ui::lines::highlight;
use std::time::Instant;
use tokio_util::sync::CancellationToken;

use crate::ui::wording::decision;

impl Plain {
    /// Runs a turn to its end. `Some(code)` means navi should exit now.
    pub(super) async fn turn(&mut self, text: &str) -> Option<u8> {
        self.sig.drain();
        if self.term.color {
            highlight::warm();
        }
        self.r.begin_turn();
        self.st.running = true;
        let started = Instant::now();
        let Some(message) = self.compose_message(text) else {
            self.st.running = false;
            return None;
        };
        let mut h = match self.port().send(message) {
            Ok(run) => run,
            Err(e) => {
                self.st.running = false;
                let t = self.pal().red(&format!("error: {e}"));
                self.note(&t);
                return None;
            }
        };
        // Typed-ahead text is held (not echoed into the answer) while the
        // editor owns the terminal between turns.
        let _echo =
            matches!(self.input, super::input::Input::Editor(_)).then(super::hold::EchoOff::start);
        let mut presses = 0u32;
        let mut quit = None;
        loop {
            tokio::select! {
                ev = h.events.recv() => {
                    let Some(ev) = ev else { break };
                    let pieces = self.r.event(&ev);
                    self.emit(pieces);
                    self.after_event(ev, &h.cancel).await;
                }
                _ = self.input.stop_typed(&mut self.typed) => {
                    // `/stop` typed during the turn: like a first Ctrl-C.
                    if h.cancel.is_cancelled() {
                        let t = self.pal().yellow("still stopping…");
                        self.note(&t);
                    } else {
                        let pieces = self.r.close();
                        self.emit(pieces);
                        h.cancel.cancel();
                    }
                }
                stop = self.sig.recv() => {
                    if stop.is_fatal() {
                        // SIGTERM / SIGHUP: stop like Ctrl-C (tool process
                        // groups killed, results saved), then exit.
                        let pieces = self.r.close();
                        self.emit(pieces);
                        h.cancel.cancel();
                        self.exit_after = Some(stop.exit_code());
                        continue;
                    }
                    presses += 1;
                    match presses {
                        1 => {
                            let pieces = self.r.close();
                            self.emit(pieces);
                            h.cancel.cancel();
                        }
                        2 => {
                            let t = self.pal().yellow("still stopping… Ctrl-C once more leaves navi");
                            self.note(&t);
                        }
                        _ => {
                            quit = Some(130);
                            break;
                        }
                    }
                }
            }
        }
        self.st.running = false;
        if quit.is_some() {
            self.note("navi: interrupted");
            return quit;
        }
        let p = self.pal();
        match h.end.await {
            Ok(TurnEnd::Stopped) => {
                if !self.r.saw_stop() {
                    self.note(&p.yellow("stopped"));
                }
            }
            Ok(TurnEnd::Done { .. }) => {}
            Ok(TurnEnd::Failed { message }) => {
                self.failed = true;
                if !self.r.saw_error() {
                    self.note(&p.red(&format!("error: {message}")));
                }
            }
            Ok(TurnEnd::Refused { message }) => {
                self.failed = true;
                if !self.r.saw_error() {
                    self.note(&p.red(&format!("error: {message}")));
                }
                self.keep_refused();
            }
            Err(_) => {
                self.failed = true;
                self.note(&p.red("error: the turn failed: it ended without a word"));
            }
        }
        let status = self.r.status_line(started.elapsed());
        self.note(&status);
        if let Some(meta) = self.app.session_meta(&self.st.session.id) {
            self.st.session = meta;
        }
        self.exit_after
    }

    async fn after_event(&mut self, ev: AgentEvent, cancel: &CancellationToken) {
        match ev {
            AgentEvent::ApprovalRequest {
                id, tool, summary, ..
            } => {
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
                        cancel.cancel();
                        return;
                    }
                    Reply::Line(a) => decision(&a),
                    Reply::Interrupted => {
                        // Ctrl-C at the question stops the whole turn; the
                        // gate answers the call "cancelled".
                        cancel.cancel();
                        return;
                    }
                    Reply::Signal(code) => {
                        cancel.cancel();
                        self.exit_after = Some(code);
                        return;
                    }
                    Reply::Eof => Decision::Deny,
                };
                let _ = self
                    .port()
                    .handle()
                    .submit(Op::Approval { id, decision: d });
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

    /// `/compact`: summarises older context; Ctrl-C stops it.
    pub(super) async fn compact(&mut self, mode: crate::protocol::CompactMode) {
        self.sig.drain();
        let t = self.pal().dim("compacting…");
        self.say(&t);
        let h = match self.port().compact(mode) {
            Ok(run) => run,
            Err(e) => {
                let t = self.pal().red(&format!("error: {e}"));
                self.say(&t);
                return;
            }
        };
        let (mut rx, cancel, end) = (h.events, h.cancel, h.end);
        loop {
            tokio::select! {
                ev = rx.recv() => match ev {
                    Some(ev) => {
                        let pieces = self.r.event(&ev);
                        self.emit(pieces);
                    }
                    None => break,
                },
                _ = self.input.stop_typed(&mut self.typed) => cancel.cancel(),
                stop = self.sig.recv() => {
                    if stop.is_fatal() {
                        self.exit_after = Some(stop.exit_code());
                    }
                    cancel.cancel()
                }
            }
        }
        let p = self.pal();
        match end.await {
            // "nothing to compact" came as an event; so did a failure.
            Ok(TurnEnd::Done { .. } | TurnEnd::Failed { .. } | TurnEnd::Refused { .. }) => {}
            Ok(TurnEnd::Stopped) => self.say(&p.yellow("compaction stopped")),
            Err(_) => self.say(&p.red("error: compaction failed: it ended without a word")),
        }
        if let Some(meta) = self.app.session_meta(&self.st.session.id) {
            self.st.session = meta;
        }
    }
}
