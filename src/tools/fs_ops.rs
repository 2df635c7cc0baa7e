//! Blocking file operations behind the `filesystem` tool. Paths given here are
//! already resolved and root-checked ([`super::paths`]).
//!
//! Invariants:
//! - writes are atomic: the new content goes to a temp file in the same
//!   directory, is synced, takes over the old file's permissions and is
//!   renamed over the target — readers see the old or the new file, never a
//!   partial one; on any error the temp file is removed;
//! - reads stream line by line, so a huge file costs only what is shown;
//!   only regular files are opened, without blocking ([`super::fs_guard`]);
//!   binary files (NUL or many control bytes in the first 8 KiB) are
//!   described, not dumped; non-UTF-8 text is decoded as Latin-1 with a note;
//!   lines longer than the line cap are cut with a note;
//! - every output is capped at the byte limit with a marker saying how to
//!   continue.

use super::fetch::human_size;
use super::fs_guard::{Content, OpenPolicy, classify, decode_line, open_regular};
use super::image_probe::sniff;
pub(crate) use crate::util::time::utc;
use std::fs;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::Path;

/// Default number of lines `read` returns.
pub(crate) const DEFAULT_READ_LINES: usize = 2000;
/// Default number of entries `list` returns.
pub(crate) const DEFAULT_LIST_ENTRIES: usize = 500;
/// Files above this size are not line-counted to the end.
const COUNT_LINES_MAX: u64 = 50_000_000;

/// A guess at what a binary file is, from its first bytes.
fn binary_kind(head: &[u8]) -> &'static str {
    if let Some(k) = sniff(head) {
        return k.mime();
    }
    let table: [(&[u8], &str); 9] = [
        (b"\x7fELF", "ELF executable"),
        (b"%PDF", "PDF document"),
        (b"PK\x03\x04", "zip archive"),
        (b"\x1f\x8b", "gzip data"),
        (b"BZh", "bzip2 data"),
        (b"\xfd7zXZ", "xz data"),
        (b"SQLite format 3", "SQLite database"),
        (b"\x00asm", "WebAssembly module"),
        (b"7z\xbc\xaf", "7z archive"),
    ];
    table
        .iter()
        .find(|(magic, _)| head.starts_with(magic))
        .map(|(_, k)| *k)
        .unwrap_or("binary data")
}

/// Reads one line into `buf`, keeping at most `max` bytes of it (the rest
/// of the line is consumed and dropped). Returns the bytes consumed.
fn read_line_capped(r: &mut impl BufRead, buf: &mut Vec<u8>, max: usize) -> io::Result<usize> {
    read_line_len(r, buf, max).map(|(n, _)| n)
}

/// Like [`read_line_capped`], also saying whether the line ended in `\n`.
fn read_line_len(r: &mut impl BufRead, buf: &mut Vec<u8>, max: usize) -> io::Result<(usize, bool)> {
    let mut consumed = 0;
    loop {
        let chunk = r.fill_buf()?;
        if chunk.is_empty() {
            return Ok((consumed, false));
        }
        let (take, done) = match chunk.iter().position(|&b| b == b'\n') {
            Some(i) => (i + 1, true),
            None => (chunk.len(), false),
        };
        let room = max.saturating_sub(buf.len());
        buf.extend_from_slice(&chunk[..take.min(room)]);
        r.consume(take);
        consumed += take;
        if done {
            return Ok((consumed, true));
        }
    }
}

/// Limits and checks of one read.
#[derive(Clone, Copy, Debug)]
pub(crate) struct ReadOpts {
    /// Most bytes of output.
    pub(crate) byte_cap: usize,
    /// Longest line shown; the rest of a longer line is dropped with a note.
    pub(crate) max_line: usize,
    pub(crate) open: OpenPolicy,
}

/// The lines of a text file one read showed: first and last (1-based) and
/// the file's line count when it was counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct LineSpan {
    pub(crate) first: usize,
    pub(crate) last: usize,
    pub(crate) total: Option<usize>,
}

/// Reads lines `offset..offset+limit` (1-based) of a text file, and says
/// which lines it showed (`None` when it showed none: a binary or empty
/// file, an offset past the end).
pub(crate) fn read_text(
    path: &Path,
    offset: usize,
    limit: usize,
    opts: ReadOpts,
) -> io::Result<(String, Option<LineSpan>)> {
    let (file, meta) = open_regular(path, opts.open)?;
    read_from(path, file, meta.len(), offset, limit, opts)
}

/// [`read_text`] of a text given whole (the editor's buffer of `path`).
pub(crate) fn read_given(
    path: &Path,
    text: &str,
    offset: usize,
    limit: usize,
    opts: ReadOpts,
) -> io::Result<(String, Option<LineSpan>)> {
    let len = text.len() as u64;
    read_from(
        path,
        io::Cursor::new(text.as_bytes()),
        len,
        offset,
        limit,
        opts,
    )
}

/// The lines of `file` (`len` bytes, named `path` in messages).
fn read_from(
    path: &Path,
    mut file: impl Read,
    len: u64,
    offset: usize,
    limit: usize,
    opts: ReadOpts,
) -> io::Result<(String, Option<LineSpan>)> {
    let byte_cap = opts.byte_cap;
    let max_line = opts.max_line.clamp(1, byte_cap.max(1));
    let mut head = vec![0u8; 8192];
    let n = file.read(&mut head)?;
    head.truncate(n);
    let content = classify(&head);
    if content == Content::Binary || (content == Content::OtherText && sniff(&head).is_some()) {
        let text = format!(
            "{} is a binary file ({}, {}); not shown as text",
            path.display(),
            binary_kind(&head),
            human_size(len)
        );
        return Ok((text, None));
    }
    if len == 0 && n == 0 {
        return Ok((format!("{} is empty (0 bytes)", path.display()), None));
    }
    let mut reader = BufReader::new(head.chain(file));
    let offset = offset.max(1);
    let limit = limit.max(1);
    let mut out = String::new();
    let mut line_no = 0usize;
    let mut last_shown = 0usize;
    let mut stopped = false;
    let mut latin1_lines = 0usize;
    let mut buf = Vec::new();
    loop {
        let (consumed, newline) = read_line_len(&mut reader, &mut buf, max_line + 1)?;
        if consumed == 0 {
            break;
        }
        line_no += 1;
        let line_len = consumed - usize::from(newline);
        let full = line_len > max_line;
        if full {
            buf.truncate(max_line);
        }
        let (mut line, latin1) = decode_line(&buf, full);
        buf.clear();
        if line_no < offset {
            continue;
        }
        if line_no >= offset + limit {
            stopped = true;
            break;
        }
        if full {
            let dropped = line_len - max_line;
            line.push_str(&format!(
                "\n[... line {line_no} cut: {dropped} more bytes not shown ([tools].max_line_bytes) ...]\n"
            ));
        }
        if out.len() + line.len() > byte_cap {
            if out.is_empty() {
                // One huge line: show its start.
                let mut cut = byte_cap.min(line.len());
                while !line.is_char_boundary(cut) {
                    cut -= 1;
                }
                out.push_str(&line[..cut]);
                out.push_str("\n[... line cut ...]\n");
                last_shown = line_no;
            }
            stopped = true;
            break;
        }
        latin1_lines += usize::from(latin1);
        out.push_str(&line);
        last_shown = line_no;
    }
    // How long is the file? Count the rest cheaply unless it is huge.
    let total = if !stopped {
        Some(line_no)
    } else if len <= COUNT_LINES_MAX {
        let mut total = line_no;
        while read_line_capped(&mut reader, &mut buf, 0)? > 0 {
            total += 1;
        }
        Some(total)
    } else {
        None
    };
    if last_shown == 0 {
        let text = format!(
            "{} has only {line_no} lines; offset {offset} is past the end",
            path.display()
        );
        return Ok((text, None));
    }
    let span = LineSpan {
        first: offset,
        last: last_shown,
        total,
    };
    if latin1_lines > 0 {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        out.push_str(&format!(
            "[note: {latin1_lines} line(s) shown are not valid UTF-8 and were decoded as Latin-1 (ISO-8859-1); some characters may be wrong]\n"
        ));
    }
    let more = total.is_none_or(|t| last_shown < t);
    if more || offset > 1 {
        if !out.ends_with('\n') {
            out.push('\n');
        }
        let total_text = total.map(|t| format!(" of {t}")).unwrap_or_default();
        out.push_str(&format!(
            "[showing lines {offset}-{last_shown}{total_text} of {} ({})",
            path.display(),
            human_size(len)
        ));
        if more {
            out.push_str(&format!("; continue with offset={}", last_shown + 1));
        }
        out.push(']');
    }
    Ok((out, Some(span)))
}

/// Writes `data` to `target` atomically (temp file + rename). With
/// `append`, the old content comes first.
pub(crate) fn atomic_write(
    target: &Path,
    data: &[u8],
    append: bool,
    policy: OpenPolicy,
) -> io::Result<u64> {
    let parent = target
        .parent()
        .ok_or_else(|| io::Error::other("the path has no parent directory"))?;
    let name = target
        .file_name()
        .ok_or_else(|| io::Error::other("the path has no file name"))?
        .to_string_lossy();
    let old_meta = match fs::metadata(target) {
        Ok(m) if m.is_dir() => {
            return Err(io::Error::other(format!(
                "{} is a directory; give a file path",
                target.display()
            )));
        }
        Ok(m) => {
            // Special files are never written through or read (append).
            let policy = OpenPolicy {
                refuse_hard_links: append && policy.refuse_hard_links,
            };
            super::fs_guard::check_regular(target, &m, policy)?;
            Some(m)
        }
        Err(e) if e.kind() == io::ErrorKind::NotFound => None,
        Err(e) => return Err(e),
    };
    fs::create_dir_all(parent)?;
    let tmp = parent.join(format!(
        ".{name}.navi-{}.tmp",
        uuid::Uuid::new_v4().simple()
    ));
    let result = (|| -> io::Result<u64> {
        let mut out = fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&tmp)?;
        let mut written = 0u64;
        if append && old_meta.is_some() {
            let (mut old, _) = open_regular(target, policy)?;
            written += io::copy(&mut old, &mut out)?;
        }
        out.write_all(data)?;
        written += data.len() as u64;
        out.sync_all()?;
        if let Some(m) = &old_meta {
            fs::set_permissions(&tmp, fs::Permissions::from_mode(m.mode() & 0o7777))?;
        }
        fs::rename(&tmp, target)?;
        Ok(written)
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

fn kind_of(ft: &fs::FileType) -> &'static str {
    if ft.is_symlink() {
        "symlink"
    } else if ft.is_dir() {
        "directory"
    } else if ft.is_file() {
        "file"
    } else {
        "special file"
    }
}

/// Lists a directory (recursively up to `depth` levels), at most `limit`
/// entries, sorted; directories end in `/`, symlinks show their target.
pub(crate) fn list(dir: &Path, depth: usize, limit: usize) -> io::Result<String> {
    let meta = fs::metadata(dir)?;
    if !meta.is_dir() {
        return Err(io::Error::other(format!(
            "{} is not a directory; use action=read or stat",
            dir.display()
        )));
    }
    let mut lines = Vec::new();
    let mut more = false;
    walk(dir, dir, depth, limit, &mut lines, &mut more)?;
    if lines.is_empty() {
        return Ok(format!("{} is empty", dir.display()));
    }
    let mut out = format!("{}:\n{}", dir.display(), lines.join("\n"));
    if more {
        out.push_str(&format!(
            "\n[... listing stopped at {limit} entries; list a subdirectory or raise 'limit' ...]"
        ));
    }
    Ok(out)
}

fn walk(
    root: &Path,
    dir: &Path,
    depth: usize,
    limit: usize,
    lines: &mut Vec<String>,
    more: &mut bool,
) -> io::Result<()> {
    let mut entries: Vec<fs::DirEntry> = fs::read_dir(dir)?.filter_map(Result::ok).collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        if lines.len() >= limit {
            *more = true;
            return Ok(());
        }
        let path = e.path();
        let rel = path
            .strip_prefix(root)
            .unwrap_or(&path)
            .display()
            .to_string();
        let Ok(ft) = e.file_type() else { continue };
        if ft.is_symlink() {
            let target = fs::read_link(&path)
                .map(|t| t.display().to_string())
                .unwrap_or_else(|_| "?".into());
            lines.push(format!("{rel} -> {target}"));
        } else if ft.is_dir() {
            lines.push(format!("{rel}/"));
            if depth > 1 {
                // Unreadable subdirectories are skipped, not fatal.
                let _ = walk(root, &path, depth - 1, limit, lines, more);
            }
        } else {
            let size = e.metadata().map(|m| m.len()).unwrap_or(0);
            lines.push(format!("{rel}  ({})", human_size(size)));
        }
    }
    Ok(())
}

/// Type, size, permissions, owner and times of `entry` (not following a
/// final symlink; `resolved` is where it leads).
pub(crate) fn stat(entry: &Path, resolved: &Path) -> io::Result<String> {
    let lmeta = fs::symlink_metadata(entry)?;
    let mut out = format!("path: {}\n", entry.display());
    if lmeta.file_type().is_symlink() {
        let target = fs::read_link(entry)?;
        out.push_str(&format!(
            "type: symlink -> {} (resolves to {})\n",
            target.display(),
            resolved.display()
        ));
    }
    let meta = match fs::metadata(resolved) {
        Ok(m) => m,
        Err(e) if lmeta.file_type().is_symlink() => {
            out.push_str(&format!("target: cannot be read ({e}; dangling link?)\n"));
            return Ok(out);
        }
        Err(e) => return Err(e),
    };
    if !lmeta.file_type().is_symlink() {
        out.push_str(&format!("type: {}\n", kind_of(&meta.file_type())));
    }
    out.push_str(&format!(
        "size: {} bytes ({})\npermissions: {:o}\nowner uid/gid: {}/{}\n",
        meta.len(),
        human_size(meta.len()),
        meta.mode() & 0o7777,
        meta.uid(),
        meta.gid()
    ));
    if let Ok(t) = meta.modified() {
        out.push_str(&format!("modified: {}\n", utc(t)));
    }
    if meta.is_file() {
        let mut head = vec![0u8; 8192];
        let n = open_regular(resolved, OpenPolicy::default())
            .and_then(|(mut f, _)| f.read(&mut head))
            .unwrap_or(0);
        head.truncate(n);
        let content = if n == 0 {
            "empty".to_string()
        } else {
            match classify(&head) {
                Content::Utf8 => "text".to_string(),
                Content::OtherText => "text (not UTF-8; read decodes it as Latin-1)".to_string(),
                Content::Binary => format!("binary ({})", binary_kind(&head)),
            }
        };
        out.push_str(&format!("content: {content}\n"));
    } else if let Some(kind) = super::fs_guard::special_kind(&meta.file_type()) {
        out.push_str(&format!("content: {kind}; not readable with action=read\n"));
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn binary_kinds() {
        assert_eq!(binary_kind(b"\x7fELF\x02"), "ELF executable");
        assert_eq!(binary_kind(b"\x89PNG\r\n\x1a\n"), "image/png");
        assert_eq!(binary_kind(b"\x01\x02"), "binary data");
    }
}
