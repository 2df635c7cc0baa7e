//! `navi run`: one message, no interaction. Final text on stdout (streamed
//! live when stdout is a terminal), progress on stderr; `--json` prints every
//! event as one JSON line. SIGINT stops the turn cooperatively (exit 130, the
//! session is saved); a second SIGINT exits at once.
use super::format::{args_preview, preview};
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
    let mut handle = app.start_turn(&meta.id, &message);
    let stdout_tty = std::io::stdout().is_terminal();
    let mut out = std::io::stdout().lock();
    let mut interrupts = 0u32;
    let mut streamed = false;
    let mut thinking_shown = false;
    loop {
        tokio::select! {
            ev = handle.events.recv() => {
                let Some(ev) = ev else { break };
                if args.json {
                    let _ = writeln!(out, "{}", ev.to_json_line());
                    let _ = out.flush();
                } else {
                    render(&ev, &mut out, stdout_tty, &mut streamed, &mut thinking_shown);
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
                eprintln!("\nstopping… (Ctrl-C again to quit at once)");
                handle.cancel.cancel();
            }
        }
    }
    let outcome = handle.task.await.map_err(Failure::runtime)?;
    match outcome {
        Ok(o) if o.stopped => Ok(130),
        Ok(_) => Ok(0),
        Err(crate::agent::AgentError::Llm(crate::llm::LlmError::Cancelled)) => Ok(130),
        Err(e) => Err(Failure::runtime(e)),
    }
}

fn render(
    ev: &AgentEvent,
    out: &mut impl Write,
    stdout_tty: bool,
    streamed: &mut bool,
    thinking_shown: &mut bool,
) {
    match ev {
        AgentEvent::ThinkingDelta {
            is_subagent: false, ..
        } if !*thinking_shown => {
            *thinking_shown = true;
            eprintln!("thinking…");
        }
        AgentEvent::ThinkingEnd { .. } => *thinking_shown = false,
        AgentEvent::StreamDelta {
            delta,
            is_subagent: false,
            ..
        } if stdout_tty => {
            *streamed = true;
            let _ = write!(out, "{delta}");
            let _ = out.flush();
        }
        AgentEvent::PlanReady { plan } => eprintln!("plan:\n{plan}"),
        AgentEvent::ToolStarted {
            tool,
            args,
            is_subagent,
            ..
        } => {
            if *streamed {
                let _ = writeln!(out);
                *streamed = false;
            }
            let indent = if *is_subagent { "  " } else { "" };
            eprintln!("{indent}→ {tool}({})", args_preview(args, 100));
        }
        AgentEvent::ToolCall {
            tool,
            result,
            success,
            is_subagent,
            ..
        } => {
            let indent = if *is_subagent { "  " } else { "" };
            let mark = if *success { "✓" } else { "✗" };
            eprintln!("{indent}{mark} {tool}: {}", preview(result, 120));
        }
        AgentEvent::Warning { message } => eprintln!("warning: {message}"),
        AgentEvent::StreamEnd { content, .. } => {
            if stdout_tty {
                if *streamed {
                    let _ = writeln!(out);
                }
            } else {
                let _ = writeln!(out, "{content}");
            }
            let _ = out.flush();
        }
        AgentEvent::StreamStopped => eprintln!("stopped"),
        _ => {}
    }
}
