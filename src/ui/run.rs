//! `navi run`: one message, no interaction. Final text on stdout (streamed
//! live when stdout is a terminal), progress on stderr; `--json` prints every
//! event as one JSON line. SIGINT stops the turn cooperatively (exit 130, the
//! session is saved); a second SIGINT exits at once.
use super::lines::{LineOptions, LineRenderer, Piece, Stream, ThinkingView, code_style_for, style};
use crate::agent::events::AgentEvent;
use crate::app::{AppOptions, SessionChoice};
use crate::cli::{Failure, GlobalArgs, RunArgs, build_app};
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
fn ask_tty(tool: &str, summary: &str) -> Decision {
    let prompt = format!("allow {tool}: {summary}? [y]es/[s]ession/[N]o ");
    let Ok(mut tty) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
    else {
        return Decision::Deny;
    };
    let _ = tty.write_all(prompt.as_bytes());
    let _ = tty.flush();
    let mut line = String::new();
    let mut byte = [0u8; 1];
    while let Ok(1) = tty.read(&mut byte) {
        if byte[0] == b'\n' {
            break;
        }
        line.push(byte[0] as char);
    }
    match line.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Decision::Once,
        "s" | "session" => Decision::Session,
        _ => Decision::Deny,
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
    let meta = app.open_session(&choice, args.profile.as_deref())?;
    // One message, so no "next message" for late MCP tools: wait for the
    // configured servers (each bounded by its start-up timeout).
    app.agent.env.mcp.start();
    app.agent.env.mcp.wait_started().await;
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
                    let d = if interactive {
                        tokio::task::spawn_blocking(move || ask_tty(&tool, &summary)).await.unwrap_or(Decision::Deny)
                    } else {
                        Decision::Deny
                    };
                    app.agent.gate.answer(&id, d);
                }
            }
            _ = tokio::signal::ctrl_c() => {
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
