//! `navi context`: what the fixed part of each profile's requests costs —
//! persona, profile prompt, every tool schema. A server that can count
//! (llama-server's `/tokenize`) is asked for its count of each base
//! request — the same figure a window refusal names; for the others the
//! figures are the agent's estimate and nothing goes over the network.
use super::{Failure, GlobalArgs, build_app};
use crate::agent::budget::{self, BaseCost};
use crate::app::AppOptions;
use std::io::Write;

pub(crate) async fn context(
    g: &GlobalArgs,
    profile: Option<String>,
    json: bool,
) -> Result<u8, Failure> {
    let (app, _log) = build_app(g, AppOptions::default())?;
    let ids = match profile {
        Some(id) => vec![id],
        None => app.profiles.ids(),
    };
    let mut costs: Vec<BaseCost> = Vec::new();
    for id in &ids {
        costs.push(app.agent.count_base(id).await.map_err(Failure::usage)?);
    }
    let text = if json {
        serde_json::to_string_pretty(&costs).map_err(Failure::runtime)?
    } else {
        costs
            .iter()
            .map(|c| budget::render(c).join("\n"))
            .collect::<Vec<_>>()
            .join("\n\n")
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
    use crate::agent::compact_run::{CompactMode, preview_lines};
    use crate::protocol::{AgentEvent, EventSink};
    use std::io::IsTerminal;
    let (app, _log) = build_app(g, AppOptions::default())?;
    let store_err = |e: crate::session::StoreError| match e {
        crate::session::StoreError::NotFound(_) | crate::session::StoreError::Ambiguous(_) => {
            Failure::usage(e)
        }
        other => Failure::runtime(other),
    };
    let meta = match session {
        Some(key) => app.store.resolve(&key).map_err(store_err)?,
        None => app
            .store
            .latest()
            .map_err(store_err)?
            .ok_or_else(|| Failure::runtime("no sessions yet: nothing to compact"))?,
    };
    let short = &meta.id[..8.min(meta.id.len())];
    app.store.lock(&meta.id).map_err(store_err)?;
    let cancel = tokio_util::sync::CancellationToken::new();
    let c = cancel.clone();
    tokio::spawn(async move {
        if tokio::signal::ctrl_c().await.is_ok() {
            c.cancel();
        }
    });
    let (sink, mut rx) = EventSink::channel(64);
    let mode = if preview {
        CompactMode::Preview
    } else {
        CompactMode::Now
    };
    let result = app.agent.compact_mode(&meta.id, mode, &sink, &cancel).await;
    drop(sink);
    let mut planned = None;
    while let Ok(ev) = rx.try_recv() {
        planned = match ev {
            AgentEvent::CompactionPlanned {
                summary,
                messages_replaced,
                turns_kept,
                pinned_kept,
                tokens_before,
                tokens_after,
            } => Some(preview_lines(
                &summary,
                messages_replaced,
                turns_kept,
                pinned_kept,
                tokens_before,
                tokens_after,
            )),
            _ => planned,
        };
    }
    let (before, after) = match result {
        Err(_) if cancel.is_cancelled() => {
            eprintln!("navi: compaction stopped; session {short} is unchanged");
            return Ok(130);
        }
        Err(e @ crate::agent::AgentError::NothingSaved { .. }) => {
            crate::outln!("session {short}: {e}")?;
            return Ok(0);
        }
        Err(e) => {
            return Err(Failure::runtime(format!(
                "compaction failed, session {short} is unchanged: {e}"
            )));
        }
        Ok(counts) => counts,
    };
    if before == after {
        crate::outln!(
            "nothing to compact in session {short}: its context ({before} messages) holds only recent turns"
        )?;
        return Ok(0);
    }
    if let Some(lines) = planned {
        for l in &lines[..lines.len().saturating_sub(1)] {
            crate::outln!("{l}")?;
        }
        if !std::io::stdin().is_terminal() {
            app.agent.discard_compaction(&meta.id);
            crate::outln!(
                "no terminal to confirm on: nothing changed (run navi compact without --preview to apply)"
            )?;
            return Ok(0);
        }
        eprint!("apply this compaction to session {short}? [y/N] ");
        let mut answer = String::new();
        let _ = std::io::stdin().read_line(&mut answer);
        if !matches!(answer.trim(), "y" | "Y" | "yes") {
            app.agent.discard_compaction(&meta.id);
            crate::outln!("nothing changed")?;
            return Ok(0);
        }
        let (sink, _rx) = EventSink::channel(8);
        let (b, a) = app
            .agent
            .compact_mode(&meta.id, CompactMode::Apply, &sink, &cancel)
            .await
            .map_err(Failure::runtime)?;
        return report(&meta.id, b, a, &app);
    }
    report(&meta.id, before, after, &app)
}

fn report(id: &str, before: usize, after: usize, app: &crate::app::App) -> Result<u8, Failure> {
    let short = &id[..8.min(id.len())];
    let account = app.agent.context_account(id).ok().map(|a| a.describe());
    crate::outln!(
        "compacted session {short}: {before} → {after} context messages{}",
        account
            .map(|t| format!("; context now {t}"))
            .unwrap_or_default()
    )?;
    Ok(0)
}
