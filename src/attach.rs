//! Attachments: files a user hands to a session (`navi run -f`, piped stdin,
//! plain mode's `/attach` and `@path`, the TUI's `/attach`). Front-end
//! neutral: callers resolve paths, this module decides what each file is and
//! builds the user message.
//!
//! - Text (valid UTF-8, no NUL byte) up to `inline_max` bytes goes into the
//!   message as a fenced block headed by its name.
//! - Images (PNG, JPEG, GIF, WebP, recognised by magic bytes) travel as
//!   multimodal input on the user message.
//! - Anything else, and text over `inline_max`, is copied into the session's
//!   files dir (`<session_files>/<session id>/`) and named in an
//!   "[Uploaded files on disk: …]" note so the agent can open it with tools.
//!
//! Invariants: a stored file is a copy (the original is never moved);
//! executables are refused before anything is copied; a name already taken
//! gets a numeric suffix (`notes-1.txt`), never overwriting; nothing over
//! `max_size` is read whole into memory. A file the user names is opened
//! without following any symbolic link inside a directory tools can write
//! (`FilesPolicy::guarded`; see `nofollow::guarded`): a tool cannot turn
//! `@notes.txt` into another file. Stored copies are created in the
//! session's directory without following links either.
use crate::config::{Config, Paths};
use crate::llm::ChatMessage;
pub(crate) use crate::llm::ImageData;
use crate::nofollow::guarded::Refused;
use crate::tools::image_probe;
use base64::Engine;
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

/// Extensions of programs and scripts that are never stored.
const EXECUTABLE_EXT: &[&str] = &[
    "sh", "bash", "zsh", "fish", "py", "pyw", "pl", "rb", "php", "exe", "com", "bat", "cmd", "ps1",
    "msi", "dll", "so", "dylib", "app", "jar", "elf", "vbs", "scr",
];

/// Where session files live and the limits that apply to them.
#[derive(Clone, Debug)]
pub(crate) struct FilesPolicy {
    /// The session files root; each session has a subdirectory.
    pub(crate) root: PathBuf,
    /// Largest file accepted, in bytes.
    pub(crate) max_size: u64,
    /// Largest text put into the message itself, in bytes.
    pub(crate) inline_max: u64,
    /// Session directories untouched for longer than this are removed.
    pub(crate) ttl: Duration,
    /// Directories tools can write: a symbolic link in them is not followed
    /// when the user attaches a file through it.
    pub(crate) guarded: Vec<PathBuf>,
}

impl FilesPolicy {
    /// `[session_files]`: a relative `dir` is under the data dir.
    pub(crate) fn from_config(config: &Config, paths: &Paths) -> Self {
        let dir = PathBuf::from(&config.session_files.dir);
        FilesPolicy {
            root: if dir.is_absolute() {
                dir
            } else {
                paths.data_dir.join(dir)
            },
            max_size: config.session_files.max_size_mb.saturating_mul(1024 * 1024),
            inline_max: config.session_files.inline_max_kb.saturating_mul(1024),
            ttl: Duration::from_secs(config.session_files.ttl_hours.saturating_mul(3600)),
            guarded: Vec::new(),
        }
        .guarding(Self::tool_writable(config, paths))
    }

    /// What tools can write whatever the work dir: the writable roots, the
    /// session dirs, this process's directory (and its sandbox workspace).
    fn tool_writable(config: &Config, paths: &Paths) -> Vec<PathBuf> {
        let mut v: Vec<PathBuf> = config
            .sandbox
            .writable_roots
            .iter()
            .map(PathBuf::from)
            .collect();
        v.push(paths.data_dir.join("sessions"));
        if let Ok(cwd) = std::env::current_dir() {
            v.push(config.sandbox.workspace_dir(&cwd));
            v.push(cwd);
        }
        v
    }

    /// Adds directories tools can write (a session's work dir).
    pub(crate) fn guarding(mut self, dirs: impl IntoIterator<Item = PathBuf>) -> Self {
        let root = self.root.clone();
        for d in dirs.into_iter().chain(std::iter::once(root)) {
            if !self.guarded.contains(&d) {
                self.guarded.push(d);
            }
        }
        self
    }

    /// The directory of one session's files.
    pub(crate) fn session_dir(&self, session_id: &str) -> PathBuf {
        let safe: String = session_id
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        self.root.join(safe)
    }
}

#[derive(Debug, thiserror::Error)]
pub(crate) enum AttachError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("{path} is a directory; attach the files in it one by one")]
    Directory { path: PathBuf },
    #[error(
        "not attached: {link} is a symbolic link in a directory tools can write (a tool may have made it); attach the file it points to by its own path"
    )]
    Link { link: PathBuf },
    #[error(
        "{path} is {size} bytes, over the {max} byte limit; raise [session_files].max_size_mb or attach a smaller file"
    )]
    TooLarge { path: PathBuf, size: u64, max: u64 },
    #[error("{path} looks like a program or script; executables are not stored as session files")]
    Executable { path: PathBuf },
    #[error("cannot store {name} in {dir}: {source}")]
    Store {
        name: String,
        dir: PathBuf,
        source: std::io::Error,
    },
}

/// One attached file, as it will reach the model.
#[derive(Clone, Debug, PartialEq)]
pub enum Attachment {
    /// Inlined as a fenced block.
    Text { name: String, text: String },
    /// Sent as multimodal input.
    Image { name: String, image: ImageData },
    /// Copied into the session's files dir; `preview` is shown inline
    /// (large text), empty for binary files.
    Stored {
        name: String,
        path: PathBuf,
        preview: String,
    },
}

impl Attachment {
    pub(crate) fn name(&self) -> &str {
        match self {
            Attachment::Text { name, .. }
            | Attachment::Image { name, .. }
            | Attachment::Stored { name, .. } => name,
        }
    }

    /// A short description for the user: `notes.txt (inline text)`.
    pub fn describe(&self) -> String {
        match self {
            Attachment::Text { name, .. } => format!("{name} (inline text)"),
            Attachment::Image { name, .. } => format!("{name} (image)"),
            Attachment::Stored { name, path, .. } => {
                format!("{name} (session file {})", path.display())
            }
        }
    }
}

fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| "file".into())
}

fn looks_executable(path: &Path, head: &[u8]) -> bool {
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    if EXECUTABLE_EXT.contains(&ext.as_str()) {
        return true;
    }
    // ELF, PE, Mach-O (both byte orders, fat), or a `#!` script.
    let magic: &[&[u8]] = &[
        b"\x7fELF",
        b"MZ",
        b"\xfe\xed\xfa\xce",
        b"\xfe\xed\xfa\xcf",
        b"\xce\xfa\xed\xfe",
        b"\xcf\xfa\xed\xfe",
        b"\xca\xfe\xba\xbe",
        b"#!",
    ];
    magic.iter().any(|m| head.starts_with(m))
}

/// Text when it is UTF-8 without NUL bytes.
fn as_text(bytes: &[u8]) -> Option<&str> {
    if bytes.contains(&0) {
        return None;
    }
    std::str::from_utf8(bytes).ok()
}

/// The first lines of a text, at most `max` bytes (cut on a char boundary).
pub(crate) fn preview(text: &str, lines: usize, max: usize) -> String {
    let mut out: String = text.lines().take(lines).collect::<Vec<_>>().join("\n");
    if out.len() > max {
        let mut cut = max;
        while !out.is_char_boundary(cut) {
            cut -= 1;
        }
        out.truncate(cut);
    }
    out
}

/// `~/x` → `$HOME/x`.
pub(crate) fn expand(path: &str) -> PathBuf {
    match (path.strip_prefix("~/"), std::env::var_os("HOME")) {
        (Some(rest), Some(home)) => PathBuf::from(home).join(rest),
        _ => PathBuf::from(path),
    }
}

/// The `@path` words of a message that name existing files (both front
/// ends: plain mode and the TUI).
pub(crate) fn at_paths(text: &str) -> Vec<PathBuf> {
    text.split_whitespace()
        .filter_map(|w| w.strip_prefix('@'))
        .map(|w| w.trim_end_matches([',', ';', ':', ')', '?', '!']))
        .filter(|w| !w.is_empty())
        .map(expand)
        .filter(|p| p.is_file())
        .collect()
}

/// Reads a file the user named and decides how it travels. `session_id` is
/// where files that are not inlined are copied.
pub(crate) fn attach_path(
    policy: &FilesPolicy,
    session_id: &str,
    path: &Path,
) -> Result<Attachment, AttachError> {
    let read_err = |source| AttachError::Read {
        path: path.to_path_buf(),
        source,
    };
    let file = match crate::nofollow::guarded::open(path, &policy.guarded) {
        Ok(f) => f,
        Err(Refused::Directory) => {
            return Err(AttachError::Directory {
                path: path.to_path_buf(),
            });
        }
        Err(Refused::Link(link)) => return Err(AttachError::Link { link }),
        Err(Refused::Io(e)) => return Err(read_err(e)),
    };
    let meta = file.metadata().map_err(read_err)?;
    if meta.len() > policy.max_size {
        return Err(AttachError::TooLarge {
            path: path.to_path_buf(),
            size: meta.len(),
            max: policy.max_size,
        });
    }
    let mut bytes = Vec::new();
    std::io::Read::read_to_end(
        &mut std::io::Read::take(file, policy.max_size.saturating_add(1)),
        &mut bytes,
    )
    .map_err(read_err)?;
    attach_bytes(policy, session_id, &file_name(path), &bytes, Some(path))
}

/// Like [`attach_path`] for bytes that did not come from a file (piped
/// stdin): `name` is what the model is told.
pub(crate) fn attach_bytes(
    policy: &FilesPolicy,
    session_id: &str,
    name: &str,
    bytes: &[u8],
    origin: Option<&Path>,
) -> Result<Attachment, AttachError> {
    let shown = origin.map(Path::to_path_buf).unwrap_or_else(|| name.into());
    if bytes.len() as u64 > policy.max_size {
        return Err(AttachError::TooLarge {
            path: shown,
            size: bytes.len() as u64,
            max: policy.max_size,
        });
    }
    if let Some(kind) = image_probe::sniff(bytes) {
        return Ok(Attachment::Image {
            name: name.to_string(),
            image: ImageData {
                mime: kind.mime().to_string(),
                base64: base64::engine::general_purpose::STANDARD.encode(bytes),
            },
        });
    }
    let text = as_text(bytes);
    if let Some(t) = text
        && bytes.len() as u64 <= policy.inline_max
    {
        return Ok(Attachment::Text {
            name: name.to_string(),
            text: t.to_string(),
        });
    }
    if looks_executable(Path::new(name), &bytes[..bytes.len().min(8)]) {
        return Err(AttachError::Executable { path: shown });
    }
    let path = store(policy, session_id, name, bytes)?;
    Ok(Attachment::Stored {
        name: name.to_string(),
        path,
        preview: text.map(|t| preview(t, 20, 2000)).unwrap_or_default(),
    })
}

/// Copies bytes into the session's files dir under a free name, after
/// removing session dirs older than the TTL.
pub(crate) fn store(
    policy: &FilesPolicy,
    session_id: &str,
    name: &str,
    bytes: &[u8],
) -> Result<PathBuf, AttachError> {
    // Cleanup rides on use: no timer, nothing at start-up.
    cleanup_stale(policy);
    let dir = policy.session_dir(session_id);
    let err = |source| AttachError::Store {
        name: name.to_string(),
        dir: dir.clone(),
        source,
    };
    std::fs::create_dir_all(&dir).map_err(err)?;
    let clean = sanitize(name);
    let (stem, ext) = match clean.rsplit_once('.') {
        Some((s, e)) if !s.is_empty() => (s.to_string(), format!(".{e}")),
        _ => (clean.clone(), String::new()),
    };
    // The session's directory is opened without following links (tools
    // can write in it), and each copy is a new file there.
    let at = crate::nofollow::Beneath::open(&dir).map_err(err)?;
    for n in 0..10_000u32 {
        let candidate = if n == 0 {
            clean.clone()
        } else {
            format!("{stem}-{n}{ext}")
        };
        match at.create_new(candidate.as_bytes(), bytes) {
            Ok(true) => return Ok(dir.join(&candidate)),
            Ok(false) => continue,
            Err(crate::nofollow::Blocked::Io(_, e)) => return Err(err(e)),
            Err(b) => return Err(err(std::io::Error::other(b.reason()))),
        }
    }
    Err(err(std::io::Error::other("no free file name")))
}

/// A file name without path separators or leading dots.
fn sanitize(name: &str) -> String {
    let s: String = name
        .chars()
        .map(|c| {
            if c == '/' || c == '\\' || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect();
    let s = s.trim_start_matches('.').to_string();
    if s.is_empty() { "file".into() } else { s }
}

/// The user message: the text, then each inline file as a fenced block,
/// then the upload note; images ride along on the message.
pub(crate) fn compose(text: &str, items: &[Attachment]) -> ChatMessage {
    let mut body = text.trim_end().to_string();
    let mut stored = Vec::new();
    let mut images = Vec::new();
    for a in items {
        match a {
            Attachment::Text { name, text } => {
                body.push_str(&format!("\n\n{name}:\n{}", fenced(text)));
            }
            Attachment::Image { image, .. } => images.push(image.clone()),
            Attachment::Stored {
                name,
                path,
                preview,
            } => {
                if !preview.is_empty() {
                    body.push_str(&format!(
                        "\n\n{name} (first lines; the whole file is on disk):\n{}",
                        fenced(preview)
                    ));
                }
                stored.push(format!("- {name} → {}", path.display()));
            }
        }
    }
    if !stored.is_empty() {
        body.push_str(&format!(
            "\n\n[Uploaded files on disk:\n{}]",
            stored.join("\n")
        ));
    }
    let mut msg = ChatMessage::user(body.trim_start().to_string());
    images.into_iter().for_each(|i| msg.push_image(i));
    msg
}

/// A fence longer than any backtick run inside the text.
fn fenced(text: &str) -> String {
    let mut longest = 0;
    let mut run = 0;
    for c in text.chars() {
        run = if c == '`' { run + 1 } else { 0 };
        longest = longest.max(run);
    }
    let fence = "`".repeat(longest.max(2) + 1);
    format!("{fence}\n{}\n{fence}", text.trim_end_matches('\n'))
}

/// Removes session directories not modified within the TTL; returns how
/// many were removed. Errors on single entries are skipped.
pub(crate) fn cleanup_stale(policy: &FilesPolicy) -> usize {
    let Ok(entries) = std::fs::read_dir(&policy.root) else {
        return 0;
    };
    let now = SystemTime::now();
    let mut removed = 0;
    for e in entries.flatten() {
        let old = e
            .metadata()
            .and_then(|m| m.modified())
            .ok()
            .and_then(|t| now.duration_since(t).ok())
            .is_some_and(|age| age > policy.ttl);
        if old && e.path().is_dir() && std::fs::remove_dir_all(e.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

#[cfg(test)]
#[path = "attach_tests.rs"]
mod tests;
