//! `navi run`: one message, no interaction. Final text on stdout (streamed
//! live when stdout is a terminal), progress on stderr; `--json` prints every
//! event as one JSON line. SIGINT stops the turn cooperatively (exit 130, the
//! session is saved); a second SIGINT exits at once. SIGTERM and SIGHUP stop
//! it the same way, then exit 143 / 129. The session is opened as its one
//! writer: busy in another navi → exit 1 naming its pid, or wait (`--wait`).
use super::lines::{LineOptions, LineRenderer, Piece, Stream, ThinkingView, code_style_for, style};
use super::signals::StopSignals;
use crate::agent::events::AgentEvent;
use crate::app::{AppError, AppOptions, SessionChoice};
use crate::cli::{Failure, GlobalArgs, RunArgs, build_app};
use crate::session::{LockError, StoreError};
use crate::tools::Decision;
use std::io::{IsTerminal, Read, Write};

async fn read_message(arg: &str) -> Result<String, Failure> {
    let text = if arg == "-" {
        tokio::task::spawn_blocking(|| {
            let mut s = String::new();
            std::io::stdin().read_to_string(&mut s).map(|_| s)
        })
        .await
        .map_err(Failure::runtime)?
        .map_err(|e| Failure::usage(format!("cannot read the message from stdin: {e}")))?
    } else {
        arg.to_string()
    };
    if text.trim().is_empty() {
        return Err(Failure::usage(
            "the message is empty; pass text or `-` with text on stdin",
        ));
    }
    Ok(text)
}

/// Asks on the controlling terminal: `allow terminal: rm -rf build? [y]es/[s]ession/[N]o`.
/// Input typed before the question is dropped first, so only an answer typed
/// after it was shown counts.
fn ask_tty(tool: &str, summary: &str) -> Decision {
    let prompt = format!("allow {tool}: {summary}? [y]es/[s]ession/[N]o ");
    let Ok(mut tty) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
    else {
        return Decision::Deny;
    };
    if super::typeahead::discard(&tty) > 0 {
        let _ = tty.write_all(b"(text typed before this question was ignored)\n");
    }
    let _ = tty.write_all(prompt.as_bytes());
    let _ = tty.flush();
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while let Ok(1) = tty.read(&mut byte) {
        if byte[0] == b'\n' {
            break;
        }
        line.push(byte[0]);
    }
    match String::from_utf8_lossy(&line)
        .trim()
        .to_ascii_lowercase()
        .as_str()
    {
        "y" | "yes" => Decision::Once,
        "s" | "session" => Decision::Session,
        _ => Decision::Deny,
    }
}

/// Opens the session as its one writer. Busy in another navi: fail (exit 1)
/// naming that navi's pid, or with `--wait` poll until it is free (a stop
/// signal while waiting exits with its code).
async fn open_locked(
    app: &crate::app::App,
    choice: &SessionChoice,
    args: &RunArgs,
    signals: &mut StopSignals,
) -> Result<Result<crate::session::SessionMeta, u8>, Failure> {
    let mut told = false;
    loop {
        match app.open_session(choice, args.profile.as_deref()) {
            Err(AppError::Store(StoreError::Lock(LockError::Busy { session, pid })))
                if args.wait =>
            {
                if !told {
                    let short: String = session.chars().take(8).collect();
                    let who = pid.map(|p| format!(" (pid {p})")).unwrap_or_default();
                    eprintln!(
                        "navi: session {short} is busy in another navi{who}; waiting for it…"
                    );
                    told = true;
                }
                tokio::select! {
                    _ = tokio::time::sleep(std::time::Duration::from_millis(200)) => {}
                    stop = signals.recv() => return Ok(Err(stop.exit_code())),
                }
            }
            other => return Ok(Ok(other?)),
        }
    }
}

pub async fn run(g: &GlobalArgs, args: RunArgs) -> Result<u8, Failure> {
    let message = read_message(&args.message).await?;
    let interactive =
        std::io::stdin().is_terminal() && std::io::stderr().is_terminal() && !args.json;
    let opts = AppOptions {
        interactive,
        approve: args.approve.clone(),
        approve_all: args.approve_all,
        ..Default::default()
    };
    let (app, _log) = build_app(g, opts)?;
    let choice = match (&args.session, args.continue_last) {
        (Some(id), _) => SessionChoice::Id(id.clone()),
        (None, true) => SessionChoice::Latest,
        (None, false) => SessionChoice::New,
    };
    let mut signals = StopSignals::install();
    let meta = match open_locked(&app, &choice, &args, &mut signals).await? {
        Ok(meta) => meta,
        Err(code) => return Ok(code),
    };
    let mut handle = app.start_turn(&meta.id, &message);
    let stdout_tty = std::io::stdout().is_terminal();
    let color = style::color_wanted(std::io::stderr().is_terminal());
    let mut renderer = LineRenderer::new(LineOptions {
        color,
        thinking: ThinkingView::Summary,
        live_answer: stdout_tty,
        markdown: stdout_tty,
        code: code_style_for(&app.config.ui.theme, &app.paths.config_dir).unwrap_or_default(),
    });
    let mut out = std::io::stdout().lock();
    let mut interrupts = 0u32;
    // SIGTERM / SIGHUP: the exit code once the turn has stopped.
    let mut fatal: Option<u8> = None;
    loop {
        tokio::select! {
            ev = handle.events.recv() => {
                let Some(ev) = ev else { break };
                if args.json {
                    let _ = writeln!(out, "{}", ev.to_json_line());
                    let _ = out.flush();
                } else if !matches!(ev, AgentEvent::Error { .. }) {
                    // The error itself is what `navi run` exits with.
                    write_pieces(renderer.event(&ev), &mut out);
                }
                if let AgentEvent::ApprovalRequest { id, tool, summary, .. } = ev {
                    let d = if interactive && !handle.cancel.is_cancelled() {
                        let ask = tokio::task::spawn_blocking(move || ask_tty(&tool, &summary));
                        tokio::select! {
                            d = ask => Some(d.unwrap_or(Decision::Deny)),
                            stop = signals.recv() => {
                                // Ctrl-C (or SIGTERM/SIGHUP) at the question
                                // stops the whole turn, not just this call:
                                // no answer, the gate reports it cancelled.
                                eprintln!();
                                if stop.is_fatal() {
                                    fatal = Some(stop.exit_code());
                                }
                                interrupts += 1;
                                handle.cancel.cancel();
                                None
                            }
                        }
                    } else {
                        Some(Decision::Deny)
                    };
                    if let Some(d) = d {
                        app.agent.gate.answer(&id, d);
                    }
                }
            }
            stop = signals.recv() => {
                if stop.is_fatal() {
                    fatal = Some(stop.exit_code());
                    write_pieces(renderer.close(), &mut out);
                    handle.cancel.cancel();
                    continue;
                }
                interrupts += 1;
                if interrupts > 1 {
                    eprintln!("\nnavi: interrupted");
                    return Ok(130);
                }
                write_pieces(renderer.close(), &mut out);
                eprintln!("stopping… (Ctrl-C again to quit at once)");
                handle.cancel.cancel();
            }
        }
    }
    write_pieces(renderer.close(), &mut out);
    let outcome = handle.task.await.map_err(Failure::runtime)?;
    app.end_session(&meta.id).await;
    if let Some(code) = fatal {
        return Ok(code);
    }
    match outcome {
        Ok(o) if o.stopped => Ok(130),
        Ok(_) => Ok(0),
        Err(crate::agent::AgentError::Llm(crate::llm::LlmError::Cancelled)) => Ok(130),
        Err(e) => Err(Failure::runtime(e)),
    }
}

/// Answer text to stdout, progress to stderr.
fn write_pieces(pieces: Vec<Piece>, out: &mut impl Write) {
    for p in pieces {
        match p.stream {
            Stream::Answer => {
                let _ = out.write_all(p.text.as_bytes());
                let _ = out.flush();
            }
            Stream::Info => {
                let mut err = std::io::stderr().lock();
                let _ = err.write_all(p.text.as_bytes());
                let _ = err.flush();
            }
        }
    }
}
