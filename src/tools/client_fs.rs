//! The `filesystem` tool's reads and writes through the editor
//! ([`super::client::ClientSide`]): a read sees an unsaved buffer, a write
//! lands in the editor (its buffer, its undo).
//!
//! Invariants: the path is resolved and root-checked exactly as for the
//! disk, and that resolved path is what the editor is asked about;
//! directories, special files, binary files and files over 16 MiB stay
//! local (the caller
//! gets `None` and runs the disk operation, which refuses or describes
//! them); an editor that fails a read or a write is a tool error naming
//! the file and what the editor said, and nothing was written on navi's
//! side; an append never writes without the text it appends to.
use super::client::Client;
use super::fetch::human_size;
use super::fs_guard::{Content, OpenPolicy, check_regular, classify, open_regular};
use super::fs_ops::{self, ReadOpts};
use super::paths::FsRoots;
use super::write_display::{self, Before};
use crate::protocol::ToolDisplay;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The text for the model and the display data, like the disk operation.
pub(crate) type Done = Result<(String, Option<ToolDisplay>), String>;

/// What the disk says about `p` before the editor is asked.
enum Local {
    /// No such file (the editor may still have a buffer for it).
    Missing,
    /// A regular text file.
    Text,
    /// A directory, a special or binary file, or unreadable: the disk
    /// operation handles it (and says why it refuses).
    Other,
}

/// Text files larger than this on disk are read and written locally: the
/// protocol carries a file whole, in one message.
const CLIENT_MAX: u64 = 16 * 1024 * 1024;

fn local(p: &Path, policy: OpenPolicy) -> Local {
    match std::fs::metadata(p) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Local::Missing,
        Err(_) => Local::Other,
        Ok(m) if !m.is_file() || m.len() > CLIENT_MAX => Local::Other,
        Ok(_) => {
            let Ok((file, _)) = open_regular(p, policy) else {
                return Local::Other;
            };
            let mut head = Vec::new();
            if file.take(8192).read_to_end(&mut head).is_err() {
                return Local::Other;
            }
            if classify(&head) == Content::Binary {
                Local::Other
            } else {
                Local::Text
            }
        }
    }
}

/// The resolved, checked path and what the disk holds there (off the
/// async threads: a hung mount must not stall them).
async fn resolve(
    raw: &str,
    roots: &FsRoots,
    base: &Path,
    policy: OpenPolicy,
) -> Result<(PathBuf, Local), String> {
    let (raw, roots, base) = (raw.to_string(), roots.clone(), base.to_path_buf());
    tokio::task::spawn_blocking(move || {
        let p = roots.resolve_checked(&raw, &base)?;
        let l = local(&p, policy);
        Ok((p, l))
    })
    .await
    .map_err(|e| format!("the file operation failed: {e}"))?
}

/// `read` through the editor; `None`: the disk handles it.
pub(crate) async fn read(
    client: &Client,
    raw: &str,
    roots: &FsRoots,
    base: &Path,
    (offset, limit): (usize, usize),
    opts: ReadOpts,
) -> Option<Done> {
    let (p, l) = match resolve(raw, roots, base, opts.open).await {
        Ok(r) => r,
        Err(e) => return Some(Err(e)),
    };
    if matches!(l, Local::Other) {
        return None;
    }
    let text = match client.read_text(&p).await {
        Ok(t) => t,
        Err(e) => return Some(Err(refused("read", raw, &p, &e))),
    };
    let done = fs_ops::read_given(&p, &text, offset, limit, opts)
        .map(|(text, span)| {
            let shown = span.map(|s| ToolDisplay::FileRead {
                path: p.display().to_string(),
                first_line: s.first as u64,
                last_line: s.last as u64,
                total_lines: s.total.map(|t| t as u64),
            });
            (text, shown)
        })
        .map_err(|e| format!("{raw}: {e}"));
    Some(done)
}

fn refused(what: &str, raw: &str, p: &Path, why: &str) -> String {
    let unchanged = if what == "read" {
        ""
    } else {
        "; nothing was written, the file is as it was"
    };
    format!(
        "{raw}: the editor could not {what} {} ({why}){unchanged}",
        p.display()
    )
}

/// `write`/`append` through the editor; `None`: the disk handles it.
pub(crate) async fn write(
    client: &Client,
    raw: &str,
    roots: &FsRoots,
    base: &Path,
    (content, append): (&str, bool),
    policy: OpenPolicy,
) -> Option<Done> {
    let (p, l) = match resolve(raw, roots, base, policy).await {
        Ok(r) => r,
        Err(e) => return Some(Err(e)),
    };
    if let Ok(m) = std::fs::metadata(&p) {
        // Directories and special files are refused as on the disk.
        let policy = OpenPolicy {
            refuse_hard_links: append && policy.refuse_hard_links,
        };
        if let Err(e) = check_regular(&p, &m, policy) {
            return Some(Err(format!("{raw}: {e}")));
        }
    }
    if matches!(l, Local::Other) {
        return None;
    }
    // What the editor holds now: the diff's old side, and what an append
    // extends. A file the editor cannot read is new only if the disk has
    // none either.
    let old = if client.reads() {
        match (client.read_text(&p).await, &l) {
            (Ok(t), _) => Before::Text(t),
            (Err(_), Local::Missing) => Before::Missing,
            (Err(e), _) if append => return Some(Err(refused("read", raw, &p, &e))),
            (Err(_), _) => write_display::before(&p, policy),
        }
    } else {
        write_display::before(&p, policy)
    };
    let full = match (&old, append) {
        (Before::Text(t), true) => format!("{t}{content}"),
        (Before::Missing, _) | (_, false) => content.to_string(),
        (Before::Unknown, true) => {
            return Some(Err(format!(
                "{raw}: cannot append through the editor without the file's text; nothing was written"
            )));
        }
    };
    if let Some(dir) = p.parent()
        && let Err(e) = std::fs::create_dir_all(dir)
    {
        return Some(Err(format!("{raw}: cannot create {}: {e}", dir.display())));
    }
    if let Err(e) = client.write_text(&p, &full).await {
        return Some(Err(refused("write", raw, &p, &e)));
    }
    let total = full.len() as u64;
    let saved = std::fs::read(&p).is_ok_and(|d| d == full.as_bytes());
    let verb = if append {
        format!(
            "appended {} to {} (now {})",
            human_size(content.len() as u64),
            p.display(),
            human_size(total)
        )
    } else {
        format!("wrote {} to {}", human_size(total), p.display())
    };
    let text = if saved {
        format!("{verb} through the editor")
    } else {
        format!(
            "{verb} in the editor's buffer; the editor has not saved it to disk yet, so commands, checkpoints and /diff see the file's earlier content until it does"
        )
    };
    let shown = write_display::display(&p, old, content, append, total);
    Some(Ok((text, Some(shown))))
}
