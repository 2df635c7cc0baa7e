//! `navi context`: what the fixed part of each profile's requests costs —
//! persona, profile prompt, every tool schema. A server that can count
//! (llama-server's `/tokenize`) is asked for its count of each base
//! request — the same figure a window refusal names; for the others the
//! figures are the agent's estimate and nothing goes over the network.
use super::{Failure, GlobalArgs, build_app};
use crate::app::{App, AppOptions, OpenOptions, SessionChoice, SessionHandle};
use crate::protocol::{AgentEvent, CompactMode, Op, SessionEvent, TurnEnd};
use crate::ui::signals::{Stop, StopSignals};
use std::io::Write;
use tokio::sync::mpsc;

pub(crate) async fn context(
    g: &GlobalArgs,
    profile: Option<String>,
    json: bool,
) -> Result<u8, Failure> {
    let (app, _log) = build_app(g, AppOptions::default())?;
    let ids = match profile {
        Some(id) => vec![id],
        None => app.profile_ids(),
    };
    let mut costs = Vec::new();
    for id in &ids {
        costs.push(app.base_cost(id).await.map_err(Failure::usage)?);
    }
    let instructions = app.instructions();
    let text = if json {
        // Each profile's entry names the AGENTS.md files every request carries.
        let mut v = serde_json::to_value(&costs).map_err(Failure::runtime)?;
        for c in v.as_array_mut().into_iter().flatten() {
            c["instructions"] = serde_json::json!({
                "tokens": instructions.tokens(),
                "files": instructions.files,
            });
        }
        serde_json::to_string_pretty(&v).map_err(Failure::runtime)?
    } else {
        let mut parts: Vec<String> = costs
            .iter()
            .map(|c| crate::app::words::budget_lines(c).join("\n"))
            .collect();
        // The same lines as `/context` (every profile's requests carry them).
        parts.push(instructions.lines().join("\n"));
        parts.join("\n\n")
    };
    // A closed pipe (`navi context | head`) is not an error worth a panic.
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}") {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Failure::runtime(e)),
        _ => Ok(0),
    }
}

/// `navi compact [--session ID] [--preview]`: compacts a session's context
/// as `/compact` does (at most the last two turns kept verbatim). With
/// `--preview` the summary is shown first and applied only when the user
/// answers y on a terminal; without a terminal nothing changes.
pub(crate) async fn compact(
    g: &GlobalArgs,
    session: Option<String>,
    preview: bool,
) -> Result<u8, Failure> {
    let (app, _log) = build_app(g, AppOptions::default())?;
    let choice = match session {
        Some(key) => SessionChoice::Id(key),
        None => match app.sessions()?.first() {
            Some(latest) => SessionChoice::Id(latest.id.clone()),
            None => return Err(Failure::runtime("no sessions yet: nothing to compact")),
        },
    };
    let mut signals = StopSignals::install();
    // The session's one writer until it is closed: every way out below
    // closes it (saved, unlocked).
    let mut h = app.open_handle(&choice, OpenOptions::default())?;
    let result = compact_open(&app, &mut h, preview, &mut signals).await;
    h.close().await;
    app.stop_mcp();
    result
}

/// How one compaction run ended, and what it said on the way.
struct Ran {
    end: TurnEnd,
    /// The stop signal that ended it, if one did.
    signal: Option<Stop>,
    events: Vec<AgentEvent>,
}

/// Runs `op` (a compaction) on `h` until it ends; a stop signal stops it.
async fn run(
    h: &SessionHandle,
    events: &mut mpsc::Receiver<SessionEvent>,
    op: Op,
    signals: &mut StopSignals,
) -> Result<Ran, Failure> {
    h.submit(op).map_err(Failure::runtime)?;
    let mut ran = Ran {
        end: TurnEnd::Stopped,
        signal: None,
        events: Vec::new(),
    };
    loop {
        tokio::select! {
            ev = events.recv() => match ev {
                Some(SessionEvent::Agent { event }) => ran.events.push(event),
                Some(SessionEvent::TurnEnded { end, .. }) => {
                    ran.end = end;
                    return Ok(ran);
                }
                None => return Err(Failure::runtime("the compaction ended without a word")),
            },
            sig = signals.recv(), if ran.signal.is_none() => {
                ran.signal = Some(sig);
                let _ = h.submit(Op::Stop);
            }
        }
    }
}

async fn compact_open(
    app: &App,
    h: &mut SessionHandle,
    preview: bool,
    signals: &mut StopSignals,
) -> Result<u8, Failure> {
    let id = h.id();
    let short: String = id.chars().take(8).collect();
    let Some(mut events) = h.take_events() else {
        return Err(Failure::runtime("the session's events were taken"));
    };
    let mode = if preview {
        CompactMode::Preview
    } else {
        CompactMode::Now
    };
    let ran = run(h, &mut events, Op::Compact { mode }, signals).await?;
    if let Some(sig) = ran.signal {
        eprintln!("navi: compaction stopped; session {short} is unchanged");
        return Ok(sig.exit_code());
    }
    match &ran.end {
        TurnEnd::Stopped => {
            eprintln!("navi: compaction stopped; session {short} is unchanged");
            return Ok(130);
        }
        TurnEnd::Failed { message, .. } | TurnEnd::Refused { message } => {
            return Err(Failure::runtime(format!(
                "compaction failed, session {short} is unchanged: {message}"
            )));
        }
        TurnEnd::Done { .. } => {}
    }
    let mut planned = None;
    for ev in &ran.events {
        match ev {
            // A plan that would save nothing: said why, nothing changed.
            AgentEvent::Notice { message } => {
                crate::outln!("session {short}: {message}")?;
                return Ok(0);
            }
            AgentEvent::ContextCompressed {
                messages_before,
                messages_after,
                ..
            } if messages_before == messages_after => {
                crate::outln!(
                    "nothing to compact in session {short}: its context ({messages_before} messages) holds only recent turns"
                )?;
                return Ok(0);
            }
            AgentEvent::ContextCompressed {
                messages_before,
                messages_after,
                ..
            } => return report(h, *messages_before, *messages_after),
            AgentEvent::CompactionPlanned {
                summary,
                messages_replaced,
                turns_kept,
                pinned_kept,
                tokens_before,
                tokens_after,
            } => {
                planned = Some(crate::app::words::preview_lines(
                    summary,
                    *messages_replaced,
                    *turns_kept,
                    *pinned_kept,
                    *tokens_before,
                    *tokens_after,
                ))
            }
            _ => {}
        }
    }
    let Some(lines) = planned else {
        return Ok(0);
    };
    for l in &lines[..lines.len().saturating_sub(1)] {
        crate::outln!("{l}")?;
    }
    use std::io::IsTerminal;
    if !std::io::stdin().is_terminal() {
        crate::outln!(
            "no terminal to confirm on: nothing changed (run navi compact without --preview to apply)"
        )?;
        return Ok(0);
    }
    eprint!("apply this compaction to session {short}? [y/N] ");
    let ask = tokio::task::spawn_blocking(|| {
        let mut answer = String::new();
        let _ = std::io::stdin().read_line(&mut answer);
        answer
    });
    let answer = tokio::select! {
        a = ask => a.unwrap_or_default(),
        sig = signals.recv() => {
            eprintln!("\nnavi: compaction not applied; session {short} is unchanged");
            return Ok(sig.exit_code());
        }
    };
    if !matches!(answer.trim(), "y" | "Y" | "yes") {
        crate::outln!("nothing changed")?;
        return Ok(0);
    }
    let applied = run(
        h,
        &mut events,
        Op::Compact {
            mode: CompactMode::Apply,
        },
        signals,
    )
    .await?;
    if let Some(sig) = applied.signal {
        eprintln!("navi: compaction stopped; session {short} is unchanged");
        return Ok(sig.exit_code());
    }
    if let TurnEnd::Failed { message, .. } | TurnEnd::Refused { message } = applied.end {
        return Err(Failure::runtime(message));
    }
    let _ = app;
    match applied.events.iter().find_map(|e| match e {
        AgentEvent::ContextCompressed {
            messages_before,
            messages_after,
            ..
        } => Some((*messages_before, *messages_after)),
        _ => None,
    }) {
        Some((b, a)) => report(h, b, a),
        None => Ok(0),
    }
}

fn report(h: &SessionHandle, before: usize, after: usize) -> Result<u8, Failure> {
    let short: String = h.id().chars().take(8).collect();
    let account = h.context().ok().map(|a| a.describe());
    crate::outln!(
        "compacted session {short}: {before} → {after} context messages{}",
        account
            .map(|t| format!("; context now {t}"))
            .unwrap_or_default()
    )?;
    Ok(0)
}
