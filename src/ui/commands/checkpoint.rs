//! `/diff [N]`, `/undo [--force]`, `/rewind [N] [--files] [--force]` (both
//! front ends) and `navi sessions diff ID`. The logic is in `checkpoint`;
//! this file parses arguments and turns results into lines.
//!
//! Diffs use the approval overlay's diff (`approval_diff::diff`) and its
//! line marks (`+`, `-`, two spaces of context, `@@` headers).
use crate::app::App;
use crate::checkpoint::{self, Record, shadow::Shadow};
use crate::ui::tui::approval_diff::{DiffLine, diff};
use std::path::Path;

/// Blobs larger than this are not diffed.
const MAX_DIFF: usize = 2 * 1024 * 1024;

pub(crate) const REWIND_USAGE: &str =
    "usage: /rewind N [--files] [--force] — /rewind alone lists your messages";

/// One diff line as text (the approval overlay's marks).
pub(crate) fn line_text(l: &DiffLine) -> String {
    match l {
        DiffLine::Header(t) => t.clone(),
        DiffLine::Added(t) => format!("+{t}"),
        DiffLine::Removed(t) => format!("-{t}"),
        DiffLine::Context(t) => format!(" {t}"),
    }
}

fn text_of(sh: &Shadow, tree: &str, path: &str) -> Result<Option<Option<String>>, String> {
    let Some((id, _)) = sh.entry(tree, path)? else {
        return Ok(None);
    };
    let data = sh.blob(&id)?;
    if data.len() > MAX_DIFF {
        return Ok(Some(None));
    }
    Ok(Some(String::from_utf8(data).ok()))
}

/// The diff of one recorded turn: a header per file, then its lines.
fn record_diff(data_dir: &Path, session: &str, r: &Record) -> Result<Vec<DiffLine>, String> {
    let sh = Shadow::open(data_dir, &r.workspace, session)?;
    let mut out = Vec::new();
    for c in sh.changes(&r.before, &r.after)? {
        let f = checkpoint::summary::to_event(&c);
        out.push(DiffLine::Header(format!(
            "── {} {} (+{} -{})",
            f.status, f.path, f.added, f.removed
        )));
        let old = text_of(&sh, &r.before, &c.path)?;
        let new = text_of(&sh, &r.after, &c.path)?;
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
                out.extend(lines);
            }
        }
    }
    Ok(out)
}

/// `/diff` (every turn) or `/diff N` (turn N), as diff lines.
pub(crate) fn diff_lines(
    records: Vec<Record>,
    data_dir: &Path,
    session: &str,
    turn: Option<usize>,
) -> Result<Vec<DiffLine>, String> {
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
        match record_diff(data_dir, session, r) {
            Ok(lines) => out.extend(lines),
            Err(e) => out.push(DiffLine::Header(format!("cannot show this turn: {e}"))),
        }
    }
    Ok(out)
}

fn number(arg: &str, what: &str) -> Result<usize, String> {
    arg.parse()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("'{arg}' is not a {what} number (1, 2, …)"))
}

/// `/diff [N]` as text lines.
pub(crate) fn diff_command(
    app: &App,
    session: &str,
    arg: Option<&str>,
) -> Result<Vec<String>, String> {
    let turn = arg.map(|a| number(a, "turn")).transpose()?;
    Ok(
        diff_lines(app.checkpoints(session), app.data_dir(), session, turn)?
            .iter()
            .map(line_text)
            .collect(),
    )
}

/// `/undo [--force]`.
pub(crate) fn undo_command(
    app: &App,
    session: &str,
    args: &[String],
) -> Result<Vec<String>, String> {
    let force = match args {
        [] => false,
        [f] if f == "--force" => true,
        _ => return Err("usage: /undo [--force]".into()),
    };
    app.undo_last(session, force)
}

/// What `/rewind` asks for.
pub(crate) enum Rewind {
    List,
    To { n: usize, files: bool, force: bool },
}

pub(crate) fn parse_rewind(args: &[String]) -> Result<Rewind, String> {
    let mut n = None;
    let (mut files, mut force) = (false, false);
    for a in args {
        match a.as_str() {
            "--files" | "-f" => files = true,
            "--force" => force = true,
            s if n.is_none() => {
                n = Some(number(s, "message").map_err(|e| format!("{e}; {REWIND_USAGE}"))?)
            }
            s => return Err(format!("unexpected '{s}'; {REWIND_USAGE}")),
        }
    }
    match n {
        None if files || force => Err(REWIND_USAGE.into()),
        None => Ok(Rewind::List),
        Some(n) => Ok(Rewind::To { n, files, force }),
    }
}

/// How many of your latest messages `/rewind` lists.
const REWIND_LISTED: usize = 50;

/// Your latest messages, numbered as `/rewind N` takes them.
pub(crate) fn rewind_list(app: &App, session: &str) -> Result<Vec<String>, String> {
    let (count, list) = app.user_messages(session, REWIND_LISTED)?;
    if list.is_empty() {
        return Ok(vec![
            "nothing to rewind: you have sent no message in this session".into(),
        ]);
    }
    let mut out: Vec<String> = list
        .iter()
        .map(|(n, content)| {
            let text = content.split_whitespace().collect::<Vec<_>>().join(" ");
            format!("{n:>4}  {}", crate::ui::format::preview(&text, 70))
        })
        .collect();
    if count > list.len() {
        out.insert(
            0,
            format!(
                "… {} earlier message(s), 1 to {}: /rewind N takes any of them",
                count - list.len(),
                count - list.len()
            ),
        );
    }
    out.push("/rewind N goes back to before message N (it and later messages stay in the history, marked); add --files to restore the files too".into());
    Ok(out)
}

/// `/rewind N`: files first (when asked; a refusal changes nothing), then
/// the conversation. The rewound message's text and the lines to show.
pub(crate) fn rewind_to(
    app: &App,
    session: &str,
    n: usize,
    files: bool,
    force: bool,
) -> Result<(String, Vec<String>), String> {
    let count = app.user_messages(session, 0)?.0;
    if n > count {
        return Err(match count {
            0 => format!("no message {n}: you have sent no message in this session"),
            c => format!(
                "no message {n}: this session has {c} message(s) of yours (/rewind lists them)"
            ),
        });
    }
    let mut lines = if files {
        app.undo_from(session, n, force)?
    } else {
        Vec::new()
    };
    let (text, marked) = app.rewind(session, n)?;
    lines.insert(
        0,
        format!("rewound to before message {n}: {marked} later entries are kept in the history, marked [rewound], and left out of the model's context"),
    );
    if !files
        && app
            .checkpoints(session)
            .iter()
            .any(|r| !r.undone && r.turn >= n)
    {
        lines.push(format!("files were left as they are; /rewind {n} --files … restores them too (or /undo, turn by turn)"));
    }
    Ok((text, lines))
}
