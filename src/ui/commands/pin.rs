//! The arguments of `/pin`, `/unpin` and `/compact` (both front ends); the
//! pins themselves are [`Op::Pin`](crate::protocol::Op) on the session.
//!
//! Numbers are those `/pin` lists: user and assistant messages with text or
//! images (an image-only message shows as `(image)`), in the order of the
//! transcript, from 1. `last` is the latest answer.
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

/// The message a `/pin` or `/unpin` argument names: its number, 0 for
/// `last`. `/unpin` alone is a usage error.
pub(crate) fn index(arg: Option<&str>) -> Result<usize, String> {
    match arg {
        None => Err(USAGE.into()),
        Some("last") => Ok(0),
        Some(n) => n
            .parse()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| format!("'{n}' is not a message number; {USAGE}")),
    }
}
