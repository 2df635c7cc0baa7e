//! Putting files back: `/undo` (the last turn not yet undone) and
//! `/rewind N --files` (every turn from N on).
//!
//! Invariants: only the paths the undone turns changed are written; a file
//! whose content is no longer what the turn left (the user edited it by
//! hand since) is not overwritten unless `force` — the refusal names every
//! such file; nothing is written when any check fails.
use super::shadow::Shadow;
use super::{Record, load, save};
use crate::session::SessionStore;
use std::collections::BTreeMap;
use std::path::Path;

struct Item {
    /// What the last of the turns left there (`None`: no file).
    expected: Option<String>,
    /// What the first of the turns found there: blob id and mode.
    target: Option<(String, String)>,
}

/// The files to put back when undoing `recs` (oldest first).
fn plan(sh: &Shadow, recs: &[&Record]) -> Result<BTreeMap<String, Item>, String> {
    let mut items: BTreeMap<String, Item> = BTreeMap::new();
    for r in recs {
        for c in sh.changes(&r.before, &r.after)? {
            let after = sh.entry(&r.after, &c.path)?.map(|(id, _)| id);
            match items.get_mut(&c.path) {
                Some(it) => it.expected = after,
                None => {
                    let target = sh.entry(&r.before, &c.path)?;
                    items.insert(
                        c.path.clone(),
                        Item {
                            expected: after,
                            target,
                        },
                    );
                }
            }
        }
    }
    Ok(items)
}

/// Paths whose content is not what the turns left.
fn edited_by_hand(sh: &Shadow, items: &BTreeMap<String, Item>) -> Result<Vec<String>, String> {
    let paths: Vec<String> = items.keys().cloned().collect();
    let now = sh.hash_now(&paths)?;
    Ok(paths
        .into_iter()
        .zip(now)
        .filter(|(p, now)| items.get(p).is_some_and(|it| it.expected != *now))
        .map(|(p, _)| p)
        .collect())
}

fn write_one(sh: &Shadow, path: &str, target: &Option<(String, String)>) -> Result<(), String> {
    let full = sh.work().join(path);
    let Some((id, mode)) = target else {
        return match std::fs::remove_file(&full) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(format!("cannot delete {path}: {e}"))
            }
            _ => Ok(()),
        };
    };
    let data = sh.blob(id)?;
    if let Some(dir) = full.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    if full.symlink_metadata().is_ok_and(|m| m.is_dir()) {
        return Err(format!("{path} is a directory now; not replaced"));
    }
    #[cfg(unix)]
    if mode == "120000" {
        let _ = std::fs::remove_file(&full);
        let target = String::from_utf8_lossy(&data).into_owned();
        return std::os::unix::fs::symlink(target, &full)
            .map_err(|e| format!("cannot restore the link {path}: {e}"));
    }
    if full
        .symlink_metadata()
        .is_ok_and(|m| m.file_type().is_symlink())
    {
        let _ = std::fs::remove_file(&full);
    }
    std::fs::write(&full, &data).map_err(|e| format!("cannot write {path}: {e}"))?;
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let exec = mode == "100755";
        if let Ok(m) = std::fs::metadata(&full) {
            let mut p = m.permissions();
            let bits = if exec {
                p.mode() | 0o111
            } else {
                p.mode() & !0o111
            };
            p.set_mode(bits);
            let _ = std::fs::set_permissions(&full, p);
        }
    }
    Ok(())
}

/// Undoes the records at `idx` (indices into the session's records, oldest
/// first, none undone yet); lines to show.
fn undo(
    store: &SessionStore,
    data_dir: &Path,
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
    let sh =
        Shadow::open(data_dir, &ws, session).map_err(|e| format!("nothing was restored: {e}"))?;
    let items = plan(&sh, &recs).map_err(|e| format!("nothing was restored: {e}"))?;
    let edited = edited_by_hand(&sh, &items).map_err(|e| format!("nothing was restored: {e}"))?;
    if !edited.is_empty() && !force {
        return Err(format!(
            "not restored: {} changed since navi's turn (edited by hand?): {}. Repeat the command with --force to overwrite {}, or keep your edits",
            if edited.len() == 1 {
                "this file"
            } else {
                "these files"
            },
            edited.join(", "),
            if edited.len() == 1 { "it" } else { "them" },
        ));
    }
    let mut failed = Vec::new();
    let mut lines = Vec::new();
    for (path, it) in &items {
        match write_one(&sh, path, &it.target) {
            Ok(()) => lines.push(format!(
                "  {} {path}",
                match (&it.target, &it.expected) {
                    (None, _) => "removed",
                    (Some(_), None) => "restored (was deleted)",
                    _ => "restored",
                }
            )),
            Err(e) => failed.push(e),
        }
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
    data_dir: &Path,
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
    let mut lines = undo(store, data_dir, session, &[i], force)?;
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
    data_dir: &Path,
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
    let mut lines = undo(store, data_dir, session, &idx, force)?;
    lines.insert(
        0,
        "files restored to how they were before that message:".into(),
    );
    Ok(lines)
}
