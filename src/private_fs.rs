//! Owner-only files and directories for what Navi keeps about the user: the
//! data dir, the session database (and its `-wal`/`-shm`), logs and
//! per-session dirs.
//!
//! Invariant: whatever the process umask, a directory created here is 0700
//! and a file 0600 — the mode is set explicitly after creation, not left to
//! the umask. Directories that already existed are left as they are (the user
//! may have chosen a shared parent); files Navi owns are tightened.
use std::fs;
use std::io;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::Path;

pub(crate) const DIR_MODE: u32 = 0o700;
pub(crate) const FILE_MODE: u32 = 0o600;

/// `mkdir -p` with every directory it creates made 0700.
pub(crate) fn create_dir_all(path: &Path) -> io::Result<()> {
    if path.is_dir() {
        return Ok(());
    }
    if let Some(parent) = path.parent().filter(|p| !p.as_os_str().is_empty()) {
        create_dir_all(parent)?;
    }
    match fs::DirBuilder::new().mode(DIR_MODE).create(path) {
        Ok(()) => fs::set_permissions(path, fs::Permissions::from_mode(DIR_MODE)),
        // Created concurrently by another navi: fine.
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists && path.is_dir() => Ok(()),
        Err(e) => Err(e),
    }
}

/// Creates `path` (empty, 0600) if it does not exist; an existing regular
/// file is made 0600 where we may (errors there are left to the caller's
/// own open). Never truncates.
pub(crate) fn ensure_private_file(path: &Path) -> io::Result<()> {
    if fs::symlink_metadata(path).is_ok() {
        tighten_if_exists(path);
        return Ok(());
    }
    match fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(FILE_MODE)
        .open(path)
    {
        Ok(file) => tighten(&file),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(()),
        Err(e) => Err(e),
    }
}

/// Replaces `path` with `bytes` atomically: written to a 0600 temporary file
/// beside it (whatever the umask), then renamed over it. The temporary file
/// is removed when anything fails.
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
    let tmp = path.with_file_name(format!(
        ".{}.{}.tmp",
        name.unwrap_or_default(),
        std::process::id()
    ));
    let _ = fs::remove_file(&tmp);
    let result = fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(FILE_MODE)
        .open(&tmp)
        .and_then(|mut f| {
            tighten(&f)?;
            f.write_all(bytes)
        })
        .and_then(|()| fs::rename(&tmp, path));
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Opens `path` for appending, creating it 0600.
pub(crate) fn open_append(path: &Path) -> io::Result<fs::File> {
    let file = fs::OpenOptions::new()
        .append(true)
        .create(true)
        .mode(FILE_MODE)
        .open(path)?;
    tighten(&file)?;
    Ok(file)
}

fn tighten(file: &fs::File) -> io::Result<()> {
    let meta = file.metadata()?;
    if meta.is_file() && meta.permissions().mode() & 0o7777 != FILE_MODE {
        file.set_permissions(fs::Permissions::from_mode(FILE_MODE))?;
    }
    Ok(())
}

/// Makes `path` 0600 if it exists (SQLite's `-wal` and `-shm` files).
pub(crate) fn tighten_if_exists(path: &Path) {
    if let Ok(meta) = fs::symlink_metadata(path)
        && meta.is_file()
        && meta.permissions().mode() & 0o7777 != FILE_MODE
    {
        let _ = fs::set_permissions(path, fs::Permissions::from_mode(FILE_MODE));
    }
}
