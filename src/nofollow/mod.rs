//! Files under a directory, reached without following symbolic links:
//! what navi itself does, outside the sandbox, on paths a tool could have
//! changed (`/undo` and `/rewind --files` restoring and deleting files, the
//! hand-edit check before them, attachments).
//!
//! Invariants: every path is relative to a directory opened once
//! ([`Beneath::open`]); each of its components is opened with
//! `openat2(RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS)` — or, where the kernel
//! lacks it, one `openat(O_NOFOLLOW)` per component — so a directory
//! swapped for a symbolic link, before or during the operation, stops it
//! with [`Blocked::Link`] naming the component instead of reaching outside.
//! `..`, `.`, empty and absolute components are refused. The last component
//! is never followed either: a link is read, replaced or removed as a link.
//! Files are replaced through a new file and a rename in the same directory,
//! so a reader never sees half a file and a name swapped for a directory is
//! not written into.
pub(crate) mod guarded;

use rustix::fs::{AtFlags, FileType, Mode, OFlags, ResolveFlags};
use std::io::{self, Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

/// Why a path could not be used.
#[derive(Debug)]
pub(crate) enum Blocked {
    /// This component (the path up to it) is a symbolic link.
    Link(Vec<u8>),
    /// This component is a file where a directory was expected.
    NotDir(Vec<u8>),
    /// Not a plain relative path (`..`, `.`, empty or absolute parts).
    Bad(Vec<u8>),
    Io(Vec<u8>, io::Error),
}

impl Blocked {
    /// The path (or the part of it) the problem is about.
    pub(crate) fn path(&self) -> &[u8] {
        match self {
            Blocked::Link(p) | Blocked::NotDir(p) | Blocked::Bad(p) | Blocked::Io(p, _) => p,
        }
    }

    /// What is wrong, without the path: "is a symbolic link", …
    pub(crate) fn reason(&self) -> String {
        match self {
            Blocked::Link(_) => "is a symbolic link (navi does not follow links here)".into(),
            Blocked::NotDir(_) => "is not a directory".into(),
            Blocked::Bad(_) => "is not a plain relative path".into(),
            Blocked::Io(_, e) => e.to_string(),
        }
    }
}

/// What is at a path now.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Now {
    Missing,
    /// A file or a symbolic link as git would record it: its mode
    /// (`100644`, `100755`, `120000`) and blob id.
    Blob {
        mode: &'static str,
        id: String,
        /// The last change of the inode (seconds, nanoseconds).
        ctime: (i64, i64),
    },
    Dir,
    /// A device, socket or FIFO.
    Other,
}

/// The git blob id (SHA-1) of `data`.
pub(crate) fn blob_id(data: &[u8]) -> String {
    let mut ctx = ring::digest::Context::new(&ring::digest::SHA1_FOR_LEGACY_USE_ONLY);
    ctx.update(format!("blob {}\0", data.len()).as_bytes());
    ctx.update(data);
    hex(ctx.finish().as_ref())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn errno(e: rustix::io::Errno) -> io::Error {
    io::Error::from_raw_os_error(e.raw_os_error())
}

/// The components of a relative path; `Bad` for anything but plain names.
fn components(rel: &[u8]) -> Result<Vec<&[u8]>, Blocked> {
    let parts: Vec<&[u8]> = rel.split(|b| *b == b'/').collect();
    if rel.is_empty()
        || parts
            .iter()
            .any(|p| p.is_empty() || *p == b"." || *p == b"..")
    {
        return Err(Blocked::Bad(rel.to_vec()));
    }
    Ok(parts)
}

fn os(b: &[u8]) -> &std::ffi::OsStr {
    use std::os::unix::ffi::OsStrExt;
    std::ffi::OsStr::from_bytes(b)
}

/// A directory that paths are resolved beneath.
pub(crate) struct Beneath {
    root: OwnedFd,
}

const DIR_FLAGS: OFlags = OFlags::PATH
    .union(OFlags::DIRECTORY)
    .union(OFlags::CLOEXEC)
    .union(OFlags::NOFOLLOW);

impl Beneath {
    /// Opens `root` itself (links in `root`'s own path are the user's and
    /// are followed).
    pub(crate) fn open(root: &Path) -> io::Result<Beneath> {
        let fd = rustix::fs::open(
            root,
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
        )
        .map_err(errno)?;
        Ok(Beneath { root: fd })
    }

    /// The directory of `parts` (`None`: a part is missing and `create`
    /// is false).
    fn dir(&self, parts: &[&[u8]], create: bool) -> Result<Option<OwnedFd>, Blocked> {
        if parts.is_empty() {
            return rustix::io::dup(&self.root)
                .map(Some)
                .map_err(|e| Blocked::Io(Vec::new(), errno(e)));
        }
        let joined = parts.join(&b'/');
        #[cfg(target_os = "linux")]
        {
            let how =
                ResolveFlags::BENEATH | ResolveFlags::NO_SYMLINKS | ResolveFlags::NO_MAGICLINKS;
            for _ in 0..3 {
                match rustix::fs::openat2(&self.root, os(&joined), DIR_FLAGS, Mode::empty(), how) {
                    Ok(fd) => return Ok(Some(fd)),
                    // A rename raced the lookup: try again.
                    Err(rustix::io::Errno::AGAIN) => continue,
                    // Missing, a link or a file on the way, or no openat2:
                    // the walk below says which part and creates what is
                    // missing.
                    Err(_) => break,
                }
            }
        }
        self.walk(parts, create)
    }

    /// One component at a time, each opened without following links.
    fn walk(&self, parts: &[&[u8]], create: bool) -> Result<Option<OwnedFd>, Blocked> {
        let mut cur = rustix::io::dup(&self.root).map_err(|e| Blocked::Io(Vec::new(), errno(e)))?;
        for (i, part) in parts.iter().enumerate() {
            let so_far = parts[..=i].join(&b'/');
            let name = os(part);
            let next = match rustix::fs::openat(&cur, name, DIR_FLAGS, Mode::empty()) {
                Ok(fd) => fd,
                Err(rustix::io::Errno::NOENT) if create => {
                    match rustix::fs::mkdirat(&cur, name, Mode::from_raw_mode(0o777)) {
                        Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                        Err(e) => return Err(Blocked::Io(so_far, errno(e))),
                    }
                    rustix::fs::openat(&cur, name, DIR_FLAGS, Mode::empty())
                        .map_err(|e| classify(&cur, name, so_far.clone(), e))?
                }
                Err(rustix::io::Errno::NOENT) => return Ok(None),
                Err(e) => return Err(classify(&cur, name, so_far, e)),
            };
            cur = next;
        }
        Ok(Some(cur))
    }

    /// The directory holding `rel` and the last component's name.
    fn parent<'a>(
        &self,
        rel: &'a [u8],
        create: bool,
    ) -> Result<Option<(OwnedFd, &'a [u8])>, Blocked> {
        let parts = components(rel)?;
        let (name, dirs) = parts
            .split_last()
            .ok_or_else(|| Blocked::Bad(rel.to_vec()))?;
        Ok(self.dir(dirs, create)?.map(|d| (d, *name)))
    }

    /// What is at `rel` now, hashed as git would record it.
    pub(crate) fn now(&self, rel: &[u8]) -> Result<Now, Blocked> {
        let Some((dir, name)) = self.parent(rel, false)? else {
            return Ok(Now::Missing);
        };
        let io = |e| Blocked::Io(rel.to_vec(), errno(e));
        let st = match rustix::fs::statat(&dir, os(name), AtFlags::SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(rustix::io::Errno::NOENT) => return Ok(Now::Missing),
            Err(e) => return Err(io(e)),
        };
        let ctime = (st.st_ctime, st.st_ctime_nsec as i64);
        match FileType::from_raw_mode(st.st_mode) {
            FileType::Symlink => {
                let target = rustix::fs::readlinkat(&dir, os(name), Vec::new()).map_err(io)?;
                Ok(Now::Blob {
                    mode: "120000",
                    id: blob_id(target.as_bytes()),
                    ctime,
                })
            }
            FileType::Directory => Ok(Now::Dir),
            FileType::RegularFile => {
                let (data, st) =
                    read_regular(&dir, name).map_err(|e| Blocked::Io(rel.to_vec(), e))?;
                let exec = st.st_mode & 0o100 != 0;
                Ok(Now::Blob {
                    mode: if exec { "100755" } else { "100644" },
                    id: blob_id(&data),
                    ctime: (st.st_ctime, st.st_ctime_nsec as i64),
                })
            }
            _ => Ok(Now::Other),
        }
    }

    /// Removes the file or link `rel` (a directory is refused); a missing
    /// one is fine.
    pub(crate) fn remove(&self, rel: &[u8]) -> Result<(), Blocked> {
        let Some((dir, name)) = self.parent(rel, false)? else {
            return Ok(());
        };
        match rustix::fs::unlinkat(&dir, os(name), AtFlags::empty()) {
            Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
            Err(e) => Err(Blocked::Io(rel.to_vec(), errno(e))),
        }
    }

    /// Removes the directory `rel` when it is empty (anything else: left).
    pub(crate) fn remove_empty_dir(&self, rel: &[u8]) {
        if let Ok(Some((dir, name))) = self.parent(rel, false) {
            let _ = rustix::fs::unlinkat(&dir, os(name), AtFlags::REMOVEDIR);
        }
    }

    /// Puts `data` at `rel` (creating missing directories): a new file
    /// renamed over what is there. An existing file keeps its permissions
    /// (and, as root, its owner); `exec` sets or clears the execute bits.
    pub(crate) fn write(&self, rel: &[u8], data: &[u8], exec: bool) -> Result<(), Blocked> {
        let Some((dir, name)) = self.parent(rel, true)? else {
            return Err(Blocked::Io(rel.to_vec(), io::ErrorKind::NotFound.into()));
        };
        let io = |e: io::Error| Blocked::Io(rel.to_vec(), e);
        let old = existing(&dir, name, rel)?;
        let (tmp, fd) = temp(&dir, if exec { 0o777 } else { 0o666 }).map_err(io)?;
        let done = (|| {
            let mut f = std::fs::File::from(fd);
            f.write_all(data)?;
            if let Some(st) = &old {
                let bits = st.st_mode & 0o777;
                let bits = if exec { bits | 0o111 } else { bits & !0o111 };
                rustix::fs::fchmod(&f, Mode::from_raw_mode(bits)).map_err(errno)?;
                if rustix::process::geteuid().is_root() {
                    let _ = rustix::fs::fchown(
                        &f,
                        Some(rustix::fs::Uid::from_raw(st.st_uid)),
                        Some(rustix::fs::Gid::from_raw(st.st_gid)),
                    );
                }
            }
            rustix::fs::renameat(&dir, os(&tmp), &dir, os(name)).map_err(errno)
        })();
        if done.is_err() {
            let _ = rustix::fs::unlinkat(&dir, os(&tmp), AtFlags::empty());
        }
        done.map_err(io)
    }

    /// Puts a symbolic link to `target` at `rel` (creating missing
    /// directories), renamed over what is there.
    pub(crate) fn write_link(&self, rel: &[u8], target: &[u8]) -> Result<(), Blocked> {
        let Some((dir, name)) = self.parent(rel, true)? else {
            return Err(Blocked::Io(rel.to_vec(), io::ErrorKind::NotFound.into()));
        };
        existing(&dir, name, rel)?;
        let io = |e| Blocked::Io(rel.to_vec(), errno(e));
        for n in 0..100u32 {
            let tmp = format!(".navi-restore-{}-{n}", std::process::id());
            match rustix::fs::symlinkat(os(target), &dir, os(tmp.as_bytes())) {
                Ok(()) => {
                    return rustix::fs::renameat(&dir, os(tmp.as_bytes()), &dir, os(name)).map_err(
                        |e| {
                            let _ =
                                rustix::fs::unlinkat(&dir, os(tmp.as_bytes()), AtFlags::empty());
                            io(e)
                        },
                    );
                }
                Err(rustix::io::Errno::EXIST) => continue,
                Err(e) => return Err(io(e)),
            }
        }
        Err(Blocked::Io(
            rel.to_vec(),
            io::Error::other("no free temporary name"),
        ))
    }

    /// Creates `rel` (a new file in an existing directory, never replacing
    /// anything): `Ok(false)` when the name is taken.
    pub(crate) fn create_new(&self, rel: &[u8], data: &[u8]) -> Result<bool, Blocked> {
        let Some((dir, name)) = self.parent(rel, false)? else {
            return Err(Blocked::Io(rel.to_vec(), io::ErrorKind::NotFound.into()));
        };
        let flags =
            OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
        match rustix::fs::openat(&dir, os(name), flags, Mode::from_raw_mode(0o600)) {
            Ok(fd) => std::fs::File::from(fd)
                .write_all(data)
                .map(|_| true)
                .map_err(|e| Blocked::Io(rel.to_vec(), e)),
            Err(rustix::io::Errno::EXIST) => Ok(false),
            Err(e) => Err(Blocked::Io(rel.to_vec(), errno(e))),
        }
    }
}

/// Why opening `name` in `dir` as a directory failed: a link, a file, or
/// an I/O error.
fn classify(dir: &OwnedFd, name: &std::ffi::OsStr, path: Vec<u8>, e: rustix::io::Errno) -> Blocked {
    match rustix::fs::statat(dir, name, AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) if FileType::from_raw_mode(st.st_mode) == FileType::Symlink => Blocked::Link(path),
        Ok(st) if FileType::from_raw_mode(st.st_mode) != FileType::Directory => {
            Blocked::NotDir(path)
        }
        _ => Blocked::Io(path, errno(e)),
    }
}

/// What is at `name` before it is replaced: a file's metadata (`None`:
/// nothing, or a link, which is replaced as a link). A directory is refused.
fn existing(dir: &OwnedFd, name: &[u8], rel: &[u8]) -> Result<Option<rustix::fs::Stat>, Blocked> {
    match rustix::fs::statat(dir, os(name), AtFlags::SYMLINK_NOFOLLOW) {
        Ok(st) => match FileType::from_raw_mode(st.st_mode) {
            FileType::Directory => Err(Blocked::Io(
                rel.to_vec(),
                io::Error::other("a directory is there now; not replaced"),
            )),
            FileType::RegularFile => Ok(Some(st)),
            _ => Ok(None),
        },
        Err(rustix::io::Errno::NOENT) => Ok(None),
        Err(e) => Err(Blocked::Io(rel.to_vec(), errno(e))),
    }
}

/// A new file with a free temporary name in `dir`.
fn temp(dir: &OwnedFd, mode: u32) -> io::Result<(Vec<u8>, OwnedFd)> {
    let flags = OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    for n in 0..100u32 {
        let name = format!(".navi-restore-{}-{n}", std::process::id()).into_bytes();
        match rustix::fs::openat(dir, os(&name), flags, Mode::from_raw_mode(mode)) {
            Ok(fd) => return Ok((name, fd)),
            Err(rustix::io::Errno::EXIST) => continue,
            Err(e) => return Err(errno(e)),
        }
    }
    Err(io::Error::other("no free temporary name"))
}

/// Opens `name` in `dir` for reading without following a link and without
/// blocking on a FIFO.
fn open_file(dir: &impl AsFd, name: &[u8]) -> io::Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    rustix::fs::openat(dir, os(name), flags, Mode::empty()).map_err(errno)
}

/// The whole content of the regular file `name` and its metadata.
fn read_regular(dir: &OwnedFd, name: &[u8]) -> io::Result<(Vec<u8>, rustix::fs::Stat)> {
    let fd = open_file(dir, name)?;
    let st = rustix::fs::fstat(&fd).map_err(errno)?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile {
        return Err(io::Error::other("not a regular file any more"));
    }
    let mut data = Vec::with_capacity(usize::try_from(st.st_size).unwrap_or(0));
    std::fs::File::from(fd).read_to_end(&mut data)?;
    Ok((data, st))
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
