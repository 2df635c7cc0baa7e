//! The end of a turn: the "after" snapshot, what changed, and the record
//! kept for `/diff`, `/undo` and `/rewind --files`.
//!
//! A changed file whose inode last changed while none of the turn's tools
//! was running (with a little slack either side) was probably changed by
//! someone else — the user in an editor, another session, a background job —
//! and is marked in the record: `/undo` then asks (`--force`) before
//! putting it back. The inode change time is used because no program can
//! set it (`cp -p`, `tar` and `touch -d` set the modification time).
use super::Record;
use super::prepare::Place;
use super::turns::Ended;
use crate::nofollow::{Beneath, Now};
use crate::protocol::FileChange;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Slack around a tool's run for the file system's clock.
const BEFORE: Duration = Duration::from_secs(1);
const AFTER: Duration = Duration::from_secs(2);

type Recorded = Option<(Record, Vec<FileChange>)>;

/// Takes the "after" snapshot — of the whole workspace, or of `named`
/// alone in the turn's own index when the turn was recorded from the
/// paths its tools named — and the record and the event's files when the
/// turn changed any. `kept`: how many records the session has.
pub(crate) fn after(
    place: &Place,
    session: &str,
    turn: &Ended<'_>,
    before: &str,
    named: Option<&[Vec<u8>]>,
    kept: usize,
) -> Result<Recorded, String> {
    let sh = place.shadow(session)?;
    let after = match named {
        Some(paths) => {
            let done = sh.record_paths(paths, &[], false);
            sh.drop_turn_index();
            done?.0
        }
        None => sh.snapshot()?.0,
    };
    let changes = sh.changes(before, &after)?;
    if changes.is_empty() {
        return Ok(None);
    }
    let foreign = match Beneath::open(&place.workspace) {
        Ok(b) => changes
            .iter()
            .filter(|c| c.status != 'D')
            .filter(|c| match b.now(&c.path) {
                Ok(Now::Blob { ctime, .. }) => !during(ctime, turn.windows),
                _ => false,
            })
            .map(|c| c.path.clone())
            .collect(),
        Err(_) => Vec::new(),
    };
    // The objects the record needs, out of the user's repository.
    if let Err(e) = sh.localize(&[(before, after.as_str())]) {
        tracing::warn!("checkpoint objects not copied: {e}");
    }
    let n = kept + 1;
    sh.keep(session, &format!("{n}/before"), before)?;
    sh.keep(session, &format!("{n}/after"), &after)?;
    let files = changes.iter().map(super::summary::to_event).collect();
    Ok(Some((
        Record {
            turn: turn.number,
            message: turn.message.to_string(),
            workspace: place.workspace.clone(),
            before: before.to_string(),
            after,
            undone: false,
            foreign,
        },
        files,
    )))
}

/// Whether an inode change time falls in one of the tool windows.
fn during(ctime: (i64, i64), windows: &[(SystemTime, SystemTime)]) -> bool {
    let (Ok(secs), Ok(nanos)) = (u64::try_from(ctime.0), u32::try_from(ctime.1)) else {
        return false;
    };
    let t = UNIX_EPOCH + Duration::new(secs, nanos);
    windows.iter().any(|(start, end)| {
        let from = start.checked_sub(BEFORE).unwrap_or(UNIX_EPOCH);
        t >= from && t <= *end + AFTER
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_change_counts_as_the_turns_only_inside_a_tool_window() {
        let base = UNIX_EPOCH + Duration::from_secs(1_000_000);
        let w = [(base, base + Duration::from_secs(10))];
        let at = |s: i64| (1_000_000 + s, 0);
        assert!(during(at(0), &w));
        assert!(during(at(5), &w));
        assert!(during(at(11), &w), "slack after");
        assert!(during(at(-1), &w), "slack before");
        assert!(!during(at(13), &w));
        assert!(!during(at(-2), &w));
        assert!(!during(at(5), &[]));
    }
}
