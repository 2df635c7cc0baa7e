//! `navi run`: one message, no interaction. Answer text on stdout, written
//! as it arrives (Markdown-rendered only on a terminal), progress on stderr;
//! `--json` prints every event as one JSON line. SIGINT stops the turn
//! cooperatively (exit 130, the session is saved); a second SIGINT exits at
//! once; SIGTERM and SIGHUP stop it the same way, then exit 143 / 129. The
//! session is opened as its one writer: busy in another navi → exit 1 naming
//! its pid, or wait (`--wait`). When the reader of stdout goes away the turn is stopped and navi
//! exits 0 quietly.
//!
//! The message is the argument, stdin (`-` or no argument), or both: piped
//! text after a message is attached to it (inline when small, a session file
//! with a preview when large). `-f` files go through [`crate::attach`].
use super::lines::{LineOptions, LineRenderer, Piece, Stream, ThinkingView, code_style_for, style};
use super::signals::StopSignals;
use crate::app::launch::{Failure, GlobalArgs, build_app, is_broken_pipe};
use crate::app::{AppOptions, OpenOptions, Prepared, SessionChoice, SessionHandle, TurnTweaks};
use crate::attach::{self, Attachment};
use crate::protocol::{AgentEvent, Decision, Op, SessionEvent, TurnEnd};
use clap::Args;
use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;

async fn read_stdin() -> Result<Vec<u8>, Failure> {
    tokio::task::spawn_blocking(|| {
        let mut b = Vec::new();
        std::io::stdin().read_to_end(&mut b).map(|_| b)
    })
    .await
    .map_err(Failure::runtime)?
    .map_err(|e| Failure::usage(format!("cannot read standard input: {e}")))
}

/// What the user gave: the message text and piped bytes to attach.
struct Input {
    text: String,
    piped: Option<Vec<u8>>,
}

async fn read_input(arg: Option<&str>) -> Result<Input, Failure> {
    let stdin_tty = std::io::stdin().is_terminal();
    let input = match arg {
        Some("-") | None if !stdin_tty || arg.is_some() => {
            let bytes = read_stdin().await?;
            let text = String::from_utf8(bytes).map_err(|_| {
                Failure::usage(
                    "standard input is not UTF-8 text; give a message and pipe the file, or use -f PATH",
                )
            })?;
            Input { text, piped: None }
        }
        None => {
            return Err(Failure::usage(
                "no message; pass text, `-` to read it from stdin, or pipe text in",
            ));
        }
        Some(m) => {
            let piped = if stdin_tty {
                None
            } else {
                Some(read_stdin().await?).filter(|b| !b.iter().all(u8::is_ascii_whitespace))
            };
            Input {
                text: m.to_string(),
                piped,
            }
        }
    };
    if input.text.trim().is_empty() && input.piped.is_none() {
        return Err(Failure::usage(
            "the message is empty; pass text or `-` with text on stdin",
        ));
    }
    Ok(input)
}

/// Asks on the controlling terminal: `allow terminal: rm -rf build? [y]es/[s]ession/[N]o`.
/// Input typed before the question is dropped first, so only an answer typed
/// after it was shown counts.
fn ask_tty(tool: &str, summary: &str) -> Decision {
    let prompt = super::wording::approval_question(tool, summary);
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
    super::wording::decision(&String::from_utf8_lossy(&line))
}

/// Opens the session as its one writer. Busy in another navi: fail (exit 1)
/// naming that navi's pid, or with `--wait` poll until it is free (a stop
/// signal while waiting exits with its code).
async fn open_locked(
    app: &crate::app::App,
    choice: &SessionChoice,
    args: &RunArgs,
    no_plan: bool,
    signals: &mut StopSignals,
) -> Result<Result<SessionHandle, u8>, Failure> {
    let mut told = false;
    let opts = OpenOptions {
        profile: args.profile.clone(),
        pending: true,
        ..Default::default()
    };
    let tweaks = TurnTweaks {
        system: args.system.clone(),
        temperature: args.temperature,
        no_plan: args.no_plan || no_plan,
        no_tools: args.no_tools,
        max_tokens: args.max_tokens,
    };
    loop {
        match app.open_handle(choice, opts.clone()) {
            Err(e) if args.wait && e.busy().is_some() => {
                let (session, pid) = e.busy().unwrap_or_default();
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
            other => {
                let h = other?;
                h.set_tweaks(tweaks);
                return Ok(Ok(h));
            }
        }
    }
}

/// The user message: text, piped input, then `-f` files.
fn build_message(
    h: &SessionHandle,
    input: Input,
    files: &[std::path::PathBuf],
) -> Result<Prepared, Failure> {
    let (policy, session_id) = (h.files(), &h.id());
    let mut items: Vec<Attachment> = Vec::new();
    if let Some(bytes) = &input.piped {
        let name = if std::str::from_utf8(bytes).is_ok() {
            "stdin.txt"
        } else {
            "stdin"
        };
        let a = match attach::attach_bytes(policy, session_id, name, bytes, None) {
            Ok(Attachment::Text { text, .. }) => Attachment::Text {
                name: "stdin".into(),
                text,
            },
            Ok(a) => {
                eprintln!("attached piped input as {}", a.describe());
                a
            }
            Err(e) => return Err(Failure::usage(format!("piped input: {e}"))),
        };
        items.push(a);
    }
    for f in files {
        let a = match h.submit(Op::Attach { path: f.clone() }) {
            Ok(crate::app::Reply::Attached(a)) => a,
            Ok(_) => return Err(Failure::usage(format!("cannot attach {}", f.display()))),
            Err(e) => return Err(Failure::usage(e)),
        };
        eprintln!("attached {}", a.describe());
        items.push(a);
    }
    Ok(h.prepare_with(input.text.trim_end(), &items))
}

pub(crate) async fn run(g: &GlobalArgs, args: RunArgs) -> Result<u8, Failure> {
    let input = read_input(args.message.as_deref()).await?;
    // With --json too: the approval_request event goes to stdout and the
    // question to the terminal, so a person at it can answer.
    let interactive = std::io::stdin().is_terminal() && std::io::stderr().is_terminal();
    let opts = AppOptions {
        interactive,
        approve: args.approve.clone(),
        approve_all: args.approve_all,
        full_auto: args.full_auto,
        ephemeral: args.no_save,
        one_connection: true,
        ..Default::default()
    };
    let (app, _log) = build_app(g, opts)?;
    if app.approvals_relaxed() {
        eprintln!(
            "navi: {} (some risky tool calls run without asking)",
            app.guard_words()
        );
    }
    let choice = match (&args.session, args.continue_last) {
        (Some(id), _) => SessionChoice::Id(id.clone()),
        (None, true) => SessionChoice::Continue,
        (None, false) => SessionChoice::New,
    };
    let mut signals = StopSignals::install();
    let mut h = match open_locked(&app, &choice, &args, g.no_plan, &mut signals).await? {
        Ok(h) => h,
        Err(code) => return Ok(code),
    };
    if let Some(note) = h.opening_note() {
        // e.g. the session belongs to another project.
        eprintln!("navi: {note}");
    }
    // The inputs first: a bad one is a usage error that leaves nothing
    // behind (the new session is still pending: no row; files it copied
    // are removed) and starts no MCP server.
    let message = match build_message(&h, input, &args.files) {
        Ok(m) => m,
        Err(e) => {
            h.discard_files_if_pending();
            return Err(e);
        }
    };
    // One message, so no "next message" for late MCP tools: wait for the
    // configured servers (each bounded by its start-up timeout).
    h.start_mcp().await;
    let Some(mut events) = h.take_events() else {
        return Err(Failure::runtime("the session's events were taken"));
    };
    h.send(message).map_err(Failure::runtime)?;
    let stdout_tty = std::io::stdout().is_terminal();
    let color = style::color_wanted(std::io::stderr().is_terminal());
    let mut renderer = LineRenderer::new(LineOptions {
        color,
        thinking: ThinkingView::Summary,
        // Into a pipe too: scripts see the answer as it arrives.
        live_answer: true,
        markdown: stdout_tty,
        // Highlighting only colours Markdown on a terminal; reading the
        // theme costs a TOML parse, so a pipe skips it.
        code: if stdout_tty {
            code_style_for(&app.config().ui.theme, &app.paths().config_dir).unwrap_or_default()
        } else {
            Default::default()
        },
    });
    // `model: using …` only when the choice differs from the last one
    // announced in this project.
    let mut model_note =
        crate::ui::model_note::ModelNote::load(&app.paths().data_dir, &h.work_dir());
    renderer.set_model(model_note.last());
    let mut out = std::io::stdout().lock();
    let mut interrupts = 0u32;
    // SIGTERM / SIGHUP: the exit code once the turn has stopped.
    let mut fatal: Option<u8> = None;
    let mut reader_gone = false;
    let mut stopping = false;
    let stop = |h: &SessionHandle, stopping: &mut bool| {
        *stopping = true;
        let _ = h.submit(Op::Stop);
    };
    let end = loop {
        tokio::select! {
            ev = events.recv() => {
                let ev = match ev {
                    Some(SessionEvent::Agent { event }) => event,
                    Some(SessionEvent::TurnEnded { end, .. }) => break end,
                    None => break TurnEnd::Failed { message: "the turn ended without a word".into(), unreached: false },
                };
                let written = if reader_gone {
                    Ok(())
                } else if args.json {
                    writeln!(out, "{}", ev.to_json_line()).and_then(|_| out.flush())
                } else if !matches!(ev, AgentEvent::Error { .. }) {
                    // The error itself is what `navi run` exits with.
                    write_pieces(renderer.event(&ev), &mut out)
                } else {
                    Ok(())
                };
                if written.as_ref().is_err_and(is_broken_pipe) {
                    reader_gone = true;
                    stop(&h, &mut stopping);
                }
                if let AgentEvent::ApprovalRequest { id, tool, summary, .. } = ev {
                    let d = if interactive && !reader_gone && !stopping {
                        let ask = tokio::task::spawn_blocking(move || ask_tty(&tool, &summary));
                        tokio::select! {
                            d = ask => Some(d.unwrap_or(Decision::Deny)),
                            sig = signals.recv() => {
                                // Ctrl-C (or SIGTERM/SIGHUP) at the question
                                // stops the whole turn, not just this call:
                                // no answer, the gate reports it cancelled.
                                eprintln!();
                                if sig.is_fatal() {
                                    fatal = Some(sig.exit_code());
                                }
                                interrupts += 1;
                                stop(&h, &mut stopping);
                                None
                            }
                        }
                    } else {
                        Some(Decision::Deny)
                    };
                    if let Some(decision) = d {
                        let _ = h.submit(Op::Approval { id, decision });
                    }
                }
            }
            sig = signals.recv() => {
                if sig.is_fatal() {
                    fatal = Some(sig.exit_code());
                    let _ = write_pieces(renderer.close(), &mut out);
                    stop(&h, &mut stopping);
                    continue;
                }
                interrupts += 1;
                if interrupts > 1 {
                    eprintln!("\nnavi: interrupted");
                    return Ok(130);
                }
                let _ = write_pieces(renderer.close(), &mut out);
                eprintln!("stopping… (Ctrl-C again to quit at once)");
                stop(&h, &mut stopping);
            }
        }
    };
    if !args.json {
        model_note.remember(renderer.model());
    }
    if !reader_gone {
        let _ = write_pieces(renderer.close(), &mut out);
    }
    let id = h.id();
    let profile_id = h.info().map(|m| m.profile_id).unwrap_or_default();
    // A new session whose one turn never reached a model (server down, no
    // such model, no key) holds only the message and the error: it is not
    // kept (the error is printed below; with --json one line says so). A
    // server that answered with an error (an image refused, say) keeps the
    // session: the user goes on from it.
    if matches!(choice, SessionChoice::New)
        && matches!(
            end,
            TurnEnd::Failed {
                unreached: true,
                ..
            }
        )
        && fatal.is_none()
        && never_answered(&h)
        && h.submit(Op::Delete).is_ok()
    {
        if args.json && !reader_gone {
            let line = serde_json::json!({"type": "session_not_saved", "session_id": id,
                "reason": "the run never reached a model"});
            let _ = writeln!(out, "{line}").and_then(|_| out.flush());
        } else {
            eprintln!("nothing was saved: the run never reached a model");
        }
    }
    h.close().await;
    app.stop_mcp();
    // Memory for one-shot users: stale sessions are extracted in the
    // background, after the answer (never the session just used).
    app.spawn_auto_extraction(g, &id);
    if let Some(code) = fatal {
        return Ok(code);
    }
    if reader_gone {
        return Ok(0);
    }
    match end {
        TurnEnd::Done { .. } => Ok(0),
        TurnEnd::Stopped => Ok(130),
        TurnEnd::Failed { message, .. } => {
            // Nothing configured and no server: say what to do.
            match app.first_run_help(&profile_id, &message) {
                Some(help) => Err(Failure::runtime(format!("{message}\n\n{help}"))),
                None => Err(Failure::runtime(message)),
            }
        }
        TurnEnd::Refused { message } => Err(Failure::runtime(message)),
    }
}

/// True when the session holds nothing a model produced: only the user's
/// messages and errors.
fn never_answered(h: &SessionHandle) -> bool {
    h.history().is_ok_and(|events| {
        events
            .iter()
            .all(|e| matches!(e, AgentEvent::UserMessage { .. } | AgentEvent::Error { .. }))
    })
}

/// Answer text to stdout (flushed per piece), progress to stderr.
fn write_pieces(pieces: Vec<Piece>, out: &mut impl Write) -> std::io::Result<()> {
    for p in pieces {
        match p.stream {
            Stream::Answer => {
                out.write_all(p.text.as_bytes())?;
                out.flush()?;
            }
            Stream::Info => {
                let mut err = std::io::stderr().lock();
                let _ = err.write_all(p.text.as_bytes());
                let _ = err.flush();
            }
        }
    }
    Ok(())
}

/// `navi run`'s own flags.
#[derive(Args, Debug)]
pub(crate) struct RunArgs {
    /// The message; `-` reads it from standard input. Piped input given
    /// together with a message is sent after it.
    #[arg(value_name = "MESSAGE")]
    pub(crate) message: Option<String>,
    /// Profile for a new session (or switch the continued one).
    #[arg(short = 'p', long, value_name = "ID")]
    pub(crate) profile: Option<String>,
    /// Continue this session (id, id prefix, or list number).
    #[arg(short = 's', long, value_name = "ID", conflicts_with = "continue_last")]
    pub(crate) session: Option<String>,
    /// Continue the most recent session.
    #[arg(short = 'c', long = "continue")]
    pub(crate) continue_last: bool,
    /// Attach a file (repeatable): text inline, images as image input,
    /// other files stored as session files.
    #[arg(short = 'f', long = "file", value_name = "PATH")]
    pub(crate) files: Vec<PathBuf>,
    /// Extra system text for this run (added to the profile's prompt).
    #[arg(long, value_name = "TEXT")]
    pub(crate) system: Option<String>,
    /// Sampling temperature for this run (overrides the profile).
    #[arg(long, value_name = "T", value_parser = parse_temperature)]
    pub(crate) temperature: Option<f64>,
    /// Cap on the tokens the model may generate per call.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub(crate) max_tokens: Option<u32>,
    /// No planner calls (also accepted before `run`, and by the
    /// interactive front ends).
    #[arg(long)]
    pub(crate) no_plan: bool,
    /// Offer the model no tools.
    #[arg(long)]
    pub(crate) no_tools: bool,
    /// Ephemeral run: nothing is written to the session database.
    #[arg(long, conflicts_with_all = ["session", "continue_last"])]
    pub(crate) no_save: bool,
    /// Print the event stream as JSON lines on stdout.
    #[arg(long)]
    pub(crate) json: bool,
    /// Allow this risky tool without asking (repeatable).
    #[arg(long, value_name = "TOOL")]
    pub(crate) approve: Vec<String>,
    /// Allow every risky tool without asking (a tool set to "deny" in the
    /// config stays denied).
    #[arg(long)]
    pub(crate) approve_all: bool,
    /// File changes inside the workspace and sandboxed commands run without
    /// asking; leaving the sandbox still asks.
    #[arg(long)]
    pub(crate) full_auto: bool,
    /// If the session is busy in another navi, wait until it is free
    /// instead of failing.
    #[arg(long)]
    pub(crate) wait: bool,
}

fn parse_temperature(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(t) if (0.0..=2.0).contains(&t) => Ok(t),
        _ => Err(format!("expected a number from 0 to 2, got '{s}'")),
    }
}
