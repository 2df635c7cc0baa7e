//! Opening a file the user named (an attachment, an `@path`), following
//! only the symbolic links that lie outside the directories tools can write.
//!
//! A link the user made in their home directory is theirs and is followed;
//! a link inside the workspace (or another tool-writable root) may have been
//! planted by a tool to turn `@notes.txt` into someone's private key, so it
//! stops the open with an error naming it. Every component is opened
//! relative to the one before with `O_NOFOLLOW`, so nothing can be swapped
//! between the check and the open.
use rustix::fs::{AtFlags, FileType, Mode, OFlags};
use std::collections::VecDeque;
use std::ffi::OsString;
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

/// Why a named file was not opened.
#[derive(Debug)]
pub(crate) enum Refused {
    /// This link lies in a directory tools can write.
    Link(PathBuf),
    Directory,
    Io(std::io::Error),
}

fn errno(e: rustix::io::Errno) -> std::io::Error {
    std::io::Error::from_raw_os_error(e.raw_os_error())
}

const DIR: OFlags = OFlags::PATH
    .union(OFlags::DIRECTORY)
    .union(OFlags::CLOEXEC)
    .union(OFlags::NOFOLLOW);

/// Opens `path` (relative: to the current directory) for reading; links
/// inside any of `guarded` are refused.
pub(crate) fn open(path: &Path, guarded: &[PathBuf]) -> Result<std::fs::File, Refused> {
    let guarded: Vec<PathBuf> = guarded
        .iter()
        .filter_map(|g| g.canonicalize().ok())
        .collect();
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        std::env::current_dir().map_err(Refused::Io)?.join(path)
    };
    let mut queue: VecDeque<OsString> = names(&abs);
    let root = || rustix::fs::open("/", DIR, Mode::empty()).map_err(|e| Refused::Io(errno(e)));
    // The directories walked so far (physical), with their descriptors.
    let mut at = PathBuf::from("/");
    let mut fds: Vec<OwnedFd> = vec![root()?];
    let mut links = 0;
    while let Some(name) = queue.pop_front() {
        if name == ".." {
            if fds.len() > 1 {
                fds.pop();
                at.pop();
            }
            continue;
        }
        let dir = fds.last().ok_or(Refused::Directory)?;
        let st = rustix::fs::statat(dir, &name, AtFlags::SYMLINK_NOFOLLOW)
            .map_err(|e| Refused::Io(errno(e)))?;
        match FileType::from_raw_mode(st.st_mode) {
            FileType::Symlink => {
                if guarded.iter().any(|g| at.starts_with(g)) {
                    return Err(Refused::Link(at.join(&name)));
                }
                links += 1;
                if links > 40 {
                    return Err(Refused::Io(std::io::Error::from_raw_os_error(libc::ELOOP)));
                }
                let target = rustix::fs::readlinkat(dir, &name, Vec::new())
                    .map_err(|e| Refused::Io(errno(e)))?;
                let target = PathBuf::from(
                    <std::ffi::OsStr as std::os::unix::ffi::OsStrExt>::from_bytes(
                        target.as_bytes(),
                    ),
                );
                if target.is_absolute() {
                    fds.truncate(1);
                    at = PathBuf::from("/");
                }
                for n in names(&target).into_iter().rev() {
                    queue.push_front(n);
                }
            }
            FileType::Directory => {
                if queue.is_empty() {
                    return Err(Refused::Directory);
                }
                let fd = rustix::fs::openat(dir, &name, DIR, Mode::empty())
                    .map_err(|e| refused(&at, &name, e))?;
                fds.push(fd);
                at.push(&name);
            }
            _ if !queue.is_empty() => {
                return Err(Refused::Io(std::io::Error::from_raw_os_error(
                    libc::ENOTDIR,
                )));
            }
            _ => {
                let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
                let fd = rustix::fs::openat(dir, &name, flags, Mode::empty())
                    .map_err(|e| refused(&at, &name, e))?;
                let f = std::fs::File::from(fd);
                let meta = f.metadata().map_err(Refused::Io)?;
                if meta.is_dir() {
                    return Err(Refused::Directory);
                }
                return Ok(f);
            }
        }
    }
    Err(Refused::Directory)
}

/// A failed open: swapped for a link since it was looked at, or an error.
fn refused(at: &Path, name: &std::ffi::OsStr, e: rustix::io::Errno) -> Refused {
    match e {
        rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR => Refused::Link(at.join(name)),
        e => Refused::Io(errno(e)),
    }
}

/// The names of `p`'s components (`..` kept, `.` and the root dropped).
fn names(p: &Path) -> VecDeque<OsString> {
    p.components()
        .filter_map(|c| match c {
            Component::Normal(n) => Some(n.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            _ => None,
        })
        .collect()
}
