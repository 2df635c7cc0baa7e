//! Opening files for the file tools safely, and telling text from binary.
//!
//! Invariants:
//! - a file is opened with `O_NONBLOCK | O_NOCTTY` and its type is checked on
//!   the OPEN handle (`fstat`), so a FIFO, socket or device never blocks the
//!   tool and cannot be swapped in between check and open; only regular
//!   files are read;
//! - with a filesystem root list set (`[security].fs_allowed_paths` not
//!   `"*"`), a regular file with more than one hard link is refused unless
//!   `[security].fs_allow_hard_links` — its other name may lie outside the
//!   roots, and the root check cannot see it;
//! - text is bytes without NUL and with few control characters; lines that
//!   are not valid UTF-8 are decoded as Latin-1 (every byte is a character),
//!   and the caller says so — only real binary is described as binary.
use std::fs::{self, File, Metadata};
use std::io;
use std::os::unix::fs::{FileTypeExt, MetadataExt, OpenOptionsExt};
use std::path::Path;

/// What the file tools allow when opening.
#[derive(Clone, Copy, Debug, Default)]
pub(crate) struct OpenPolicy {
    /// Refuse files with more than one hard link.
    pub(crate) refuse_hard_links: bool,
}

/// A name for a non-regular file type.
pub(crate) fn special_kind(ft: &fs::FileType) -> Option<&'static str> {
    if ft.is_fifo() {
        Some("a named pipe (FIFO)")
    } else if ft.is_socket() {
        Some("a socket")
    } else if ft.is_char_device() {
        Some("a character device")
    } else if ft.is_block_device() {
        Some("a block device")
    } else {
        None
    }
}

/// Checks a file's metadata against the policy (regular file, link count).
pub(crate) fn check_regular(path: &Path, meta: &Metadata, policy: OpenPolicy) -> io::Result<()> {
    let ft = meta.file_type();
    if ft.is_dir() {
        return Err(io::Error::other(format!(
            "{} is a directory; use action=list",
            path.display()
        )));
    }
    if let Some(kind) = special_kind(&ft) {
        return Err(io::Error::other(format!(
            "{} is {kind}, not a regular file; refusing to read it (it could block or never end)",
            path.display()
        )));
    }
    if !ft.is_file() {
        return Err(io::Error::other(format!(
            "{} is not a regular file; refusing to read it",
            path.display()
        )));
    }
    if policy.refuse_hard_links && meta.nlink() > 1 {
        return Err(io::Error::other(format!(
            "{} has {} hard links; with [security].fs_allowed_paths set, files with more than one link are refused (another link may be outside the allowed roots); set [security].fs_allow_hard_links = true to allow them",
            path.display(),
            meta.nlink()
        )));
    }
    Ok(())
}

/// Opens `path` for reading without blocking on special files, and checks
/// the opened file. Returns the file and its metadata.
pub(crate) fn open_regular(path: &Path, policy: OpenPolicy) -> io::Result<(File, Metadata)> {
    // Cheap early answer for directories and special files (no open at all).
    let pre = fs::metadata(path)?;
    check_regular(path, &pre, policy)?;
    let file = fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    // The file actually opened is what counts (it may have been replaced).
    let meta = file.metadata()?;
    check_regular(path, &meta, policy)?;
    Ok((file, meta))
}

/// What the first bytes of a file are.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Content {
    /// Valid UTF-8 text (a character cut at the sample's end is fine).
    Utf8,
    /// Text in another encoding (Latin-1, Windows-1252, ...).
    OtherText,
    Binary,
}

/// Classifies a sample (at most the first 8 KiB are looked at).
pub(crate) fn classify(bytes: &[u8]) -> Content {
    let sample = &bytes[..bytes.len().min(8192)];
    if sample.contains(&0) {
        return Content::Binary;
    }
    let controls = sample
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0c | 0x1b | 0x08))
        .count();
    if controls * 10 > sample.len() {
        return Content::Binary;
    }
    match std::str::from_utf8(sample) {
        Ok(_) => Content::Utf8,
        Err(e) if e.error_len().is_none() && sample.len() == 8192 => Content::Utf8,
        Err(_) => Content::OtherText,
    }
}

/// Decodes one line: UTF-8 when valid, else Latin-1. `cut` says the line was
/// cut at a byte limit (a multi-byte character cut there is still UTF-8).
/// The flag says whether the Latin-1 fallback was used.
pub(crate) fn decode_line(bytes: &[u8], cut: bool) -> (String, bool) {
    match std::str::from_utf8(bytes) {
        Ok(s) => (s.to_string(), false),
        Err(e) if cut && e.error_len().is_none() => {
            (String::from_utf8_lossy(bytes).into_owned(), false)
        }
        Err(_) => (bytes.iter().map(|&b| char::from(b)).collect(), true),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classifies_text_and_binary() {
        assert_eq!(classify(b"hello\nworld"), Content::Utf8);
        assert_eq!(classify(b"caf\xe9 cr\xe8me\n"), Content::OtherText);
        assert_eq!(classify(b"\x89PNG\r\n\x1a\n\0\0"), Content::Binary);
        assert_eq!(classify(&[1, 2, 3, 4, 5, 6, b'a']), Content::Binary);
    }

    #[test]
    fn decodes_latin1_lines() {
        assert_eq!(decode_line(b"caf\xe9", false), ("café".to_string(), true));
        assert_eq!(
            decode_line(b"caf\xe9\n", false),
            ("café\n".to_string(), true)
        );
        assert_eq!(
            decode_line("café".as_bytes(), false),
            ("café".to_string(), false)
        );
        // "é" cut in half by a line cap stays UTF-8.
        assert!(!decode_line(&"café".as_bytes()[..4], true).1);
    }
}
