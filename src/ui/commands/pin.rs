//! `/pin` and `/unpin` (messages kept verbatim through compaction) and the
//! argument of `/compact`. Both front ends.
//!
//! Numbers are those `/pin` lists: user and assistant messages with text, in
//! the order of the transcript, from 1. `last` is the latest answer.
use crate::agent::compact_run::CompactMode;
use crate::app::App;
use crate::session::{StoredMessage, pins};

pub const USAGE: &str = "usage: /pin [n|last] · /unpin n|last — /pin alone lists the messages";

/// `/compact`, `/compact --preview`, `/compact apply`.
pub fn compact_mode(arg: Option<&str>) -> Result<CompactMode, String> {
    match arg {
        None => Ok(CompactMode::Now),
        Some("--preview") | Some("preview") | Some("-p") => Ok(CompactMode::Preview),
        Some("apply") | Some("--apply") | Some("yes") => Ok(CompactMode::Apply),
        Some(other) => Err(format!(
            "unknown /compact argument '{other}'; use /compact, /compact --preview or /compact apply"
        )),
    }
}

fn preview(m: &StoredMessage) -> String {
    let who = m.msg.role.as_str();
    let text = m
        .msg
        .content
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ");
    format!("{who}: {}", crate::ui::format::preview(&text, 70))
}

/// Runs `/pin` / `/unpin` on `session`; returns the lines to show.
pub fn execute(
    app: &App,
    session: &str,
    arg: Option<&str>,
    pin: bool,
) -> Result<Vec<String>, String> {
    let err = |e: crate::session::StoreError| e.to_string();
    let display = app
        .store
        .load(session)
        .map_err(err)?
        .map(|s| s.display)
        .unwrap_or_default();
    let list = pins::numbered(&display);
    let pinned = pins::load(&app.store, session).map_err(err)?;
    let is_pinned = |m: &StoredMessage| pinned.contains(&pins::key(m));
    let Some(arg) = arg else {
        if !pin {
            return Err(USAGE.into());
        }
        if list.is_empty() {
            return Ok(vec![
                "nothing to pin yet: no messages in this session".into(),
            ]);
        }
        let mut out: Vec<String> = list
            .iter()
            .map(|(n, m)| {
                let mark = if is_pinned(m) { "📌" } else { "  " };
                format!("{mark}{n:>4}  {}", preview(m))
            })
            .collect();
        out.push("/pin N keeps message N verbatim through compaction; /unpin N undoes it".into());
        return Ok(out);
    };
    let target = match arg {
        "last" => list
            .iter()
            .rev()
            .find(|(_, m)| m.msg.role == crate::llm::Role::Assistant)
            .copied(),
        n => {
            let n: usize = n
                .parse()
                .map_err(|_| format!("'{n}' is not a message number; {USAGE}"))?;
            list.iter().find(|(i, _)| *i == n).copied()
        }
    };
    let Some((n, m)) = target else {
        return Err(format!(
            "no message {arg}: this session has {} pinnable messages (/pin lists them)",
            list.len()
        ));
    };
    let changed = pins::set(&app.store, session, m, pin).map_err(err)?;
    Ok(vec![match (pin, changed) {
        (true, true) => format!(
            "📌 pinned #{n} ({}): kept verbatim through every compaction",
            preview(m)
        ),
        (true, false) => format!("#{n} is already pinned"),
        (false, true) => format!("unpinned #{n}: a later compaction may summarise it"),
        (false, false) => format!("#{n} was not pinned"),
    }])
}
