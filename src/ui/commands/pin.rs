//! `/pin` and `/unpin` (messages kept verbatim through compaction) and the
//! argument of `/compact`. Both front ends.
//!
//! Numbers are those `/pin` lists: user and assistant messages with text or
//! images (an image-only message shows as `(image)`), in
//! the order of the transcript, from 1. `last` is the latest answer.
use crate::app::App;
use crate::app::{PinEntry, PinTarget};
use crate::protocol::CompactMode;

pub(crate) const USAGE: &str =
    "usage: /pin [n|last] · /unpin n|last — /pin alone lists the messages";

/// `/compact`, `/compact --preview`, `/compact apply`.
pub(crate) fn compact_mode(arg: Option<&str>) -> Result<CompactMode, String> {
    match arg {
        None => Ok(CompactMode::Now),
        Some("--preview") | Some("preview") | Some("-p") => Ok(CompactMode::Preview),
        Some("apply") | Some("--apply") | Some("yes") => Ok(CompactMode::Apply),
        Some(other) => Err(format!(
            "unknown /compact argument '{other}'; use /compact, /compact --preview or /compact apply"
        )),
    }
}

fn preview(e: &PinEntry) -> String {
    let text = e.text.split_whitespace().collect::<Vec<_>>().join(" ");
    let text = if text.is_empty() {
        "(image)".to_string()
    } else {
        text
    };
    format!("{}: {}", e.role, crate::ui::format::preview(&text, 70))
}

/// Runs `/pin` / `/unpin` on `session`; returns the lines to show.
pub(crate) fn execute(
    app: &App,
    session: &str,
    arg: Option<&str>,
    pin: bool,
) -> Result<Vec<String>, String> {
    let Some(arg) = arg else {
        if !pin {
            return Err(USAGE.into());
        }
        let list = app.pin_entries(session)?;
        if list.is_empty() {
            return Ok(vec![
                "nothing to pin yet: no messages in this session".into(),
            ]);
        }
        let mut out: Vec<String> = list
            .iter()
            .map(|e| {
                let mark = if e.pinned { "📌" } else { "  " };
                format!("{mark}{:>4}  {}", e.n, preview(e))
            })
            .collect();
        out.push("/pin N keeps message N verbatim through compaction; /unpin N undoes it".into());
        return Ok(out);
    };
    let target = match arg {
        "last" => PinTarget::LastAnswer,
        n => PinTarget::Number(
            n.parse()
                .map_err(|_| format!("'{n}' is not a message number; {USAGE}"))?,
        ),
    };
    let Some((e, changed)) = app.set_pin(session, target, pin)? else {
        let count = app.pin_entries(session)?.len();
        return Err(format!(
            "no message {arg}: this session has {count} pinnable messages (/pin lists them)"
        ));
    };
    let n = e.n;
    Ok(vec![match (pin, changed) {
        (true, true) => format!(
            "📌 pinned #{n} ({}): kept verbatim through every compaction",
            preview(&e)
        ),
        (true, false) => format!("#{n} is already pinned"),
        (false, true) => format!("unpinned #{n}: a later compaction may summarise it"),
        (false, false) => format!("#{n} was not pinned"),
    }])
}
