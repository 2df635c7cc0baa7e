//! Checkpoints and rewinding (`/diff`, `/undo`, `/rewind`, `navi sessions
//! diff`): the files each turn changed, shown as diffs; putting them back;
//! going back to before a message. Results are lines to show; refusals are
//! worded here once.
use super::handle::{Reply, SessionHandle, invalid};
use super::{App, AppError};
use crate::checkpoint::{self, Place, Record, shadow::Shadow};
use crate::protocol::OpError;
use crate::session::rewind::RewindError;
use crate::text_diff::{DiffLine, diff};
use std::path::Path;

/// How many of the user's latest messages `/rewind` lists.
const REWIND_LISTED: usize = 50;

/// Blobs larger than this are not diffed.
const MAX_DIFF: usize = 2 * 1024 * 1024;

impl App {
    /// Where navi keeps its data (checkpoint blobs live under it).
    pub fn data_dir(&self) -> &Path {
        &self.paths.data_dir
    }

    /// `navi sessions diff`: what a stored session (or its turn `turn`)
    /// changed in the files, as diff lines; the inner error says there are
    /// no changes (or no such turn).
    pub(crate) fn session_diff(
        &self,
        key: &str,
        turn: Option<usize>,
    ) -> Result<Result<Vec<String>, String>, AppError> {
        let meta = self.store.resolve(key)?;
        let records = checkpoint::load(&self.store, &meta.id);
        let cwd = std::env::current_dir().unwrap_or_default();
        let place = checkpoint::place_for(&self.config, &self.paths, &cwd);
        Ok(diff_lines(records, &place, &meta.id, turn))
    }
}

impl SessionHandle {
    /// `/diff [N]`: what the session (or its turn `n`) changed in the files.
    pub fn diff(&self, turn: Option<usize>) -> Result<Vec<String>, String> {
        let records = checkpoint::load(&self.store, self.session.id());
        diff_lines(records, &self.checkpoint_place(), self.session.id(), turn)
    }

    /// Where checkpoints are kept and which directories tools can write.
    pub(crate) fn checkpoint_place(&self) -> checkpoint::Place {
        checkpoint::place_for(
            &self.agent.env.config,
            &self.agent.env.paths,
            self.session.work_dir(),
        )
    }

    /// How many messages of the user's `/rewind N` can go back to, and the
    /// last `last` of them, numbered as `/rewind N` takes them, with their
    /// text (read from an index: the cost does not grow with the history).
    pub fn user_messages(&self, last: usize) -> Result<(usize, Vec<(usize, String)>), String> {
        let (count, rows) = self
            .store
            .recent_turns(self.session.id(), last)
            .map_err(|e| e.to_string())?;
        Ok((
            count,
            rows.into_iter()
                .map(|(n, m)| (n, m.msg.text().into_owned()))
                .collect(),
        ))
    }

    /// `/rewind` alone: the user's messages, numbered, and how to use them.
    pub fn rewind_list(&self) -> Result<Vec<String>, String> {
        let (count, list) = self.user_messages(REWIND_LISTED)?;
        if list.is_empty() {
            return Ok(vec![
                "nothing to rewind: you have sent no message in this session".into(),
            ]);
        }
        let mut out: Vec<String> = list
            .iter()
            .map(|(n, content)| {
                let text = content.split_whitespace().collect::<Vec<_>>().join(" ");
                format!("{n:>4}  {}", super::lines::preview(&text, 70))
            })
            .collect();
        if count > list.len() {
            let earlier = count - list.len();
            out.insert(
                0,
                format!(
                    "… {earlier} earlier message(s), 1 to {earlier}: /rewind N takes any of them"
                ),
            );
        }
        out.push("/rewind N goes back to before message N (it and later messages stay in the history, marked); add --files to restore the files too".into());
        Ok(out)
    }

    /// `/undo`: restores the files of the last turn that changed any.
    pub(super) fn undo(&self, force: bool) -> Result<Vec<String>, String> {
        checkpoint::restore::undo_last(
            &self.store,
            &self.checkpoint_place(),
            self.session.id(),
            force,
        )
    }

    /// `/rewind N`: checks the conversation can go back, then restores the
    /// files (when asked; a refusal changes nothing), then rewinds the
    /// conversation. Never half: files are not touched for a rewind the
    /// conversation refuses.
    pub(super) fn rewind(&self, n: usize, files: bool, force: bool) -> Result<Reply, OpError> {
        self.idle()?;
        let id = self.session.id();
        let count = self.user_messages(0).map_err(OpError::Invalid)?.0;
        if n == 0 || n > count {
            return Err(OpError::Invalid(match count {
                0 => format!("no message {n}: you have sent no message in this session"),
                c => format!(
                    "no message {n}: this session has {c} message(s) of yours (/rewind lists them)"
                ),
            }));
        }
        let rewind_error = |e: RewindError| match e {
            RewindError::NoMessage(c) => OpError::Invalid(format!(
                "no message {n}: this session has {c} message(s) of yours"
            )),
            RewindError::Compacted => OpError::Invalid(format!(
                "cannot rewind to message {n}: it was summarised by a compaction; rewind to a later message"
            )),
            RewindError::Store(e) => invalid(e),
        };
        let nothing = || OpError::Invalid(format!("no message {n}: nothing is stored yet"));
        // The conversation is checked first, so a rewind it cannot do never
        // restores the files alone (half a rewind).
        let plan = self
            .session
            .with_lock(|l| self.store.rewind_plan(l, n))
            .ok_or_else(nothing)?
            .map_err(rewind_error)?;
        let mut lines = if files {
            checkpoint::restore::undo_from(&self.store, &self.checkpoint_place(), id, n, force)
                .map_err(OpError::Invalid)?
        } else {
            Vec::new()
        };
        let marked = self
            .session
            .with_lock(|l| self.store.rewind_apply(l, &plan))
            .ok_or_else(nothing)?
            .map_err(invalid)?;
        let text = plan.text;
        lines.insert(
            0,
            format!("rewound to before message {n}: {marked} later entries are kept in the history, marked [rewound], and left out of the model's context"),
        );
        if !files
            && checkpoint::load(&self.store, id)
                .iter()
                .any(|r| !r.undone && r.turn >= n)
        {
            lines.push(format!("files were left as they are; /rewind {n} --files … restores them too (or /undo, turn by turn)"));
        }
        Ok(Reply::Rewound { text, lines })
    }
}

/// The text of one side of a change: `None` no file, `Some(None)` binary
/// or too large.
fn text_of(sh: &Shadow, side: Option<(&str, &str)>) -> Result<Option<Option<String>>, String> {
    let Some((id, mode)) = side else {
        return Ok(None);
    };
    if mode == "160000" {
        return Ok(Some(None));
    }
    let data = sh.blob(id)?;
    if data.len() > MAX_DIFF {
        return Ok(Some(None));
    }
    Ok(Some(String::from_utf8(data).ok()))
}

/// A diffed line with its control characters made visible (a tab stays).
fn clean(l: DiffLine) -> DiffLine {
    let v = |t: String| crate::controls::visible(&t).replace('\n', "\\n");
    match l {
        DiffLine::Header(t) => DiffLine::Header(v(t)),
        DiffLine::Added(t) => DiffLine::Added(v(t)),
        DiffLine::Removed(t) => DiffLine::Removed(v(t)),
        DiffLine::Context(t) => DiffLine::Context(v(t)),
    }
}

/// The diff of one recorded turn: a header per file, then its lines.
fn record_diff(place: &Place, session: &str, r: &Record) -> Result<Vec<DiffLine>, String> {
    let sh = Place {
        workspace: r.workspace.clone(),
        ..place.clone()
    }
    .shadow(session)?;
    let raw = sh.raw(&r.before, &r.after, false)?;
    let mut out = Vec::new();
    for c in sh.changes(&r.before, &r.after)? {
        let f = checkpoint::summary::to_event(&c);
        out.push(DiffLine::Header(format!(
            "── {} {} (+{} -{})",
            f.status, f.path, f.added, f.removed
        )));
        let Some(entry) = raw.iter().find(|x| x.path == c.path) else {
            continue;
        };
        let old = text_of(&sh, entry.old_side())?;
        let new = text_of(&sh, entry.new_side())?;
        match (old, new) {
            (Some(None), _) | (_, Some(None)) => {
                out.push(DiffLine::Header(
                    "binary or large file; no line diff".into(),
                ));
            }
            (old, new) => {
                let old = old.flatten();
                let new = new.flatten();
                let mut lines = diff(old.as_deref(), new.as_deref().unwrap_or(""));
                if new.is_none() && !lines.is_empty() {
                    lines.insert(0, DiffLine::Header("deleted".into()));
                }
                out.extend(lines.into_iter().map(clean));
            }
        }
    }
    Ok(out)
}

/// Every turn's changes (or turn `turn`'s), as diff lines.
fn diff_lines(
    records: Vec<Record>,
    place: &Place,
    session: &str,
    turn: Option<usize>,
) -> Result<Vec<String>, String> {
    if records.is_empty() {
        return Err("no file changes in this session yet".into());
    }
    let chosen: Vec<&Record> = match turn {
        None => records.iter().collect(),
        Some(n) => {
            let r: Vec<&Record> = records.iter().filter(|r| r.turn == n).collect();
            if r.is_empty() {
                let with: Vec<String> = records.iter().map(|r| r.turn.to_string()).collect();
                return Err(format!(
                    "turn {n} changed no files; turns with changes: {}",
                    with.join(", ")
                ));
            }
            r.into_iter().rev().take(1).collect()
        }
    };
    let mut out = Vec::new();
    for r in chosen {
        let undone = if r.undone { " (undone)" } else { "" };
        out.push(DiffLine::Header(format!("turn {}{undone}", r.turn)));
        match record_diff(place, session, r) {
            Ok(lines) => out.extend(lines),
            Err(e) => out.push(DiffLine::Header(format!("cannot show this turn: {e}"))),
        }
    }
    Ok(out.iter().map(DiffLine::text).collect())
}
