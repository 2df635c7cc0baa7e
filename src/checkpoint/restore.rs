//! Putting files back: `/undo` (the last turn not yet undone) and
//! `/rewind N --files` (every turn from N on).
//!
//! Invariants:
//! - only the paths the undone turns changed are written, each reached
//!   through [`crate::nofollow`]: a directory on the way that is a symbolic
//!   link now stops the whole restore before anything is written (even with
//!   `--force`), and stops that file when it happens during the restore —
//!   both name the path;
//! - a file that is not what the turns left — edited since (by the user,
//!   another session, a background job), changed between two of the undone
//!   turns, or changed during the turn while none of its tools ran — is not
//!   overwritten or deleted unless `force`; the refusal names every such
//!   file and says how to override; nothing is written when any check
//!   fails, and each file is checked again just before it is written;
//! - nested repositories (gitlinks) are never touched.
use super::diff::Raw;
use super::names::shown;
use super::prepare::Place;
use super::shadow::Shadow;
use super::{Record, load, save};
use crate::nofollow::{Beneath, Blocked, Now};
use crate::session::SessionStore;
use std::collections::BTreeMap;

/// A blob id and mode.
type Side = Option<(String, String)>;

/// The files to restore by path, and the directories the turns created.
type Plan = (BTreeMap<Vec<u8>, Item>, Vec<Vec<u8>>);

#[derive(Debug)]
struct Item {
    /// What the last of the turns left there.
    expected: Side,
    /// What the first of the turns found there.
    target: Side,
    /// Why it needs `--force`, beyond not matching `expected`.
    doubt: Option<&'static str>,
}

fn side(s: Option<(&str, &str)>) -> Side {
    s.map(|(id, mode)| (id.to_string(), mode.to_string()))
}

/// The files to put back when undoing `recs` (oldest first), and the
/// directories the turns created.
fn plan(sh: &Shadow, recs: &[&Record]) -> Result<Plan, String> {
    let mut items: BTreeMap<Vec<u8>, Item> = BTreeMap::new();
    let mut dirs = Vec::new();
    for r in recs {
        for c in sh.raw(&r.before, &r.after, true)? {
            if c.old_mode == "040000" || c.new_mode == "040000" {
                if c.status == 'A' {
                    dirs.push(c.path);
                }
                continue;
            }
            let Raw { path, .. } = &c;
            let foreign = r.foreign.contains(path);
            match items.get_mut(path) {
                Some(it) => {
                    // Changed between two of these turns, by someone else:
                    // this turn found it other than the earlier one left it.
                    // (A turn's trees may hold only the paths its tools
                    // named, so paths are compared, not whole trees.)
                    if side(c.old_side()) != it.expected {
                        it.doubt = Some("changed between navi's turns");
                    }
                    it.expected = side(c.new_side());
                }
                None => {
                    items.insert(
                        path.clone(),
                        Item {
                            expected: side(c.new_side()),
                            target: side(c.old_side()),
                            doubt: None,
                        },
                    );
                }
            }
            if foreign && let Some(it) = items.get_mut(path) {
                it.doubt = Some("changed during the turn while none of its tools ran");
            }
        }
    }
    Ok((items, dirs))
}

fn is_gitlink(s: &Side) -> bool {
    s.as_ref().is_some_and(|(_, m)| m == "160000")
}

/// Whether what is there now is what the turns left.
fn matches(now: &Now, expected: &Side) -> bool {
    match (now, expected) {
        (Now::Missing, None) => true,
        (Now::Blob { mode, id, .. }, Some((eid, emode))) => id == eid && mode == emode,
        _ => false,
    }
}

/// `sub/x.txt: sub is a symbolic link …`
fn blocked_line(path: &[u8], b: &Blocked) -> String {
    let at = b.path();
    if at.is_empty() || at == path {
        format!("{}: {}", shown(path), b.reason())
    } else {
        format!("{}: {} {}", shown(path), shown(at), b.reason())
    }
}

fn write_one(sh: &Shadow, fs: &Beneath, path: &[u8], target: &Side) -> Result<(), String> {
    let Some((id, mode)) = target else {
        return fs.remove(path).map_err(|b| blocked_line(path, &b));
    };
    let data = sh.blob(id)?;
    let done = if mode == "120000" {
        fs.write_link(path, &data)
    } else {
        fs.write(path, &data, mode == "100755")
    };
    done.map_err(|b| blocked_line(path, &b))
}

/// Undoes the records at `idx` (indices into the session's records, oldest
/// first, none undone yet); lines to show.
fn undo(
    store: &SessionStore,
    place: &Place,
    session: &str,
    idx: &[usize],
    force: bool,
) -> Result<Vec<String>, String> {
    let mut records = load(store, session);
    let recs: Vec<&Record> = idx.iter().filter_map(|i| records.get(*i)).collect();
    let Some(first) = recs.first() else {
        return Ok(vec![]);
    };
    let ws = first.workspace.clone();
    if recs.iter().any(|r| r.workspace != ws) {
        return Err("these turns changed files in different workspaces; use /undo to restore them one turn at a time".into());
    }
    let nothing = |e: String| format!("nothing was restored: {e}");
    let place = Place {
        workspace: ws.clone(),
        ..place.clone()
    };
    let sh = place.shadow(session).map_err(nothing)?;
    let (items, dirs) = plan(&sh, &recs).map_err(nothing)?;
    let fs =
        Beneath::open(&ws).map_err(|e| nothing(format!("cannot open {}: {e}", ws.display())))?;
    let mut links = Vec::new();
    let mut doubts = Vec::new();
    for (path, it) in &items {
        if is_gitlink(&it.target) || is_gitlink(&it.expected) {
            continue;
        }
        match fs.now(path) {
            Err(b) => links.push(blocked_line(path, &b)),
            Ok(now) if !matches(&now, &it.expected) => {
                doubts.push(format!("{} (changed since navi's turn)", shown(path)));
            }
            Ok(_) => {
                if let Some(why) = it.doubt {
                    doubts.push(format!("{} ({why})", shown(path)));
                }
            }
        }
    }
    if !links.is_empty() {
        return Err(format!(
            "not restored: {}; navi does not write through links. Nothing was changed",
            links.join("; ")
        ));
    }
    if !doubts.is_empty() && !force {
        let one = doubts.len() == 1;
        return Err(format!(
            "not restored: {} may hold work that is not navi's: {}. Nothing was changed; repeat the command with --force to overwrite {}, or keep {}",
            if one { "this file" } else { "these files" },
            doubts.join(", "),
            if one { "it" } else { "them" },
            if one {
                "it as it is"
            } else {
                "them as they are"
            },
        ));
    }
    let mut failed = Vec::new();
    let mut lines = Vec::new();
    for (path, it) in &items {
        let name = shown(path);
        if is_gitlink(&it.target) || is_gitlink(&it.expected) {
            lines.push(format!(
                "  left {name} (a nested repository; navi does not restore those)"
            ));
            continue;
        }
        // Changed since the check: left alone unless forced.
        match fs.now(path) {
            Err(b) => {
                failed.push(blocked_line(path, &b));
                continue;
            }
            Ok(now) if !force && !matches(&now, &it.expected) => {
                failed.push(format!("{name}: changed while restoring; left as it is"));
                continue;
            }
            Ok(_) => {}
        }
        match write_one(&sh, &fs, path, &it.target) {
            Ok(()) => lines.push(format!(
                "  {} {name}",
                match (&it.target, &it.expected) {
                    (None, _) => "removed",
                    (Some(_), None) => "restored (was deleted)",
                    _ => "restored",
                }
            )),
            Err(e) => failed.push(e),
        }
    }
    // Directories the turns made, deepest first, when nothing is left in them.
    let mut dirs = dirs;
    dirs.sort_by_key(|d| std::cmp::Reverse(d.len()));
    for d in &dirs {
        fs.remove_empty_dir(d);
    }
    for i in idx {
        if let Some(r) = records.get_mut(*i) {
            r.undone = true;
        }
    }
    save(store, session, &records)?;
    if !failed.is_empty() {
        lines.push(format!("could not restore: {}", failed.join("; ")));
    }
    Ok(lines)
}

/// `/undo`: the last turn not yet undone.
pub(crate) fn undo_last(
    store: &SessionStore,
    place: &Place,
    session: &str,
    force: bool,
) -> Result<Vec<String>, String> {
    let records = load(store, session);
    let Some(i) = records.iter().rposition(|r| !r.undone) else {
        return Err(if records.is_empty() {
            "nothing to undo: no turn of this session changed files".into()
        } else {
            "nothing to undo: every turn's changes are already undone".into()
        });
    };
    let turn = records[i].turn;
    let mut lines = undo(store, place, session, &[i], force)?;
    let left = records[..i].iter().filter(|r| !r.undone).count();
    lines.insert(0, format!("undid the file changes of turn {turn}:"));
    lines.push(format!(
        "{left} earlier turn{} with changes left to undo",
        if left == 1 { "" } else { "s" }
    ));
    Ok(lines)
}

/// `/rewind N --files`: every turn from `turn` on.
pub(crate) fn undo_from(
    store: &SessionStore,
    place: &Place,
    session: &str,
    turn: usize,
    force: bool,
) -> Result<Vec<String>, String> {
    let records = load(store, session);
    let idx: Vec<usize> = records
        .iter()
        .enumerate()
        .filter(|(_, r)| !r.undone && r.turn >= turn)
        .map(|(i, _)| i)
        .collect();
    if idx.is_empty() {
        return Ok(vec!["no file changes to restore from that point".into()]);
    }
    let mut lines = undo(store, place, session, &idx, force)?;
    lines.insert(
        0,
        "files restored to how they were before that message:".into(),
    );
    Ok(lines)
}
