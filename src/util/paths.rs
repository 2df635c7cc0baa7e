//! Paths as the user writes them (`~/x`, relative) made absolute, and
//! resolved like `realpath` (see [`resolve`]).
use std::collections::VecDeque;
use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

/// Expands a leading `~` or `~/` with `$HOME`.
pub(crate) fn expand_tilde(raw: &str) -> PathBuf {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    match (raw, home) {
        ("~", Some(h)) => h,
        (r, Some(h)) if r.starts_with("~/") => h.join(&r[2..]),
        (r, _) => PathBuf::from(r),
    }
}

/// `raw` made absolute against `base` (after `~` expansion), not resolved.
pub(crate) fn absolute(raw: &str, base: &Path) -> PathBuf {
    let p = expand_tilde(raw);
    if p.is_absolute() { p } else { base.join(p) }
}

/// Most symlinks followed while resolving one path (Linux uses 40 too).
const MAX_LINKS: usize = 40;

/// Resolves `path` (absolute or relative to `base`): symlinks followed, `..`
/// folded, a missing tail kept as written. Errors on symlink loops and on
/// components that cannot be inspected (permission denied, not a directory).
pub(crate) fn resolve(path: &Path, base: &Path) -> io::Result<PathBuf> {
    let start = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    let mut queue: VecDeque<OsString> = VecDeque::new();
    push_components(&start, &mut queue, false);
    let mut out = PathBuf::from("/");
    let mut links = 0usize;
    while let Some(part) = queue.pop_front() {
        if part == ".." {
            out.pop();
            continue;
        }
        let next = out.join(&part);
        match std::fs::symlink_metadata(&next) {
            Ok(meta) if meta.file_type().is_symlink() => {
                links += 1;
                if links > MAX_LINKS {
                    return Err(io::Error::other(format!(
                        "too many levels of symbolic links at {}",
                        next.display()
                    )));
                }
                let target = std::fs::read_link(&next)?;
                if target.is_absolute() {
                    out = PathBuf::from("/");
                }
                push_components(&target, &mut queue, true);
            }
            Ok(_) => out = next,
            // A missing component, or one under a plain file: the rest cannot
            // exist either, so it is folded lexically (and fails later on use).
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::NotFound | io::ErrorKind::NotADirectory
                ) =>
            {
                out = next
            }
            Err(e) => {
                return Err(io::Error::new(
                    e.kind(),
                    format!("cannot inspect {}: {e}", next.display()),
                ));
            }
        }
    }
    Ok(out)
}

/// Pushes the normal and `..` components of `p` onto the queue (at the front
/// when `front`, keeping their order).
fn push_components(p: &Path, queue: &mut VecDeque<OsString>, front: bool) {
    let parts: Vec<OsString> = p
        .components()
        .filter_map(|c| match c {
            Component::Normal(s) => Some(s.to_os_string()),
            Component::ParentDir => Some(OsString::from("..")),
            Component::RootDir | Component::CurDir | Component::Prefix(_) => None,
        })
        .collect();
    if front {
        for part in parts.into_iter().rev() {
            queue.push_front(part);
        }
    } else {
        queue.extend(parts);
    }
}

/// Resolves the directory entry itself: the parent is resolved, the last
/// component is NOT followed if it is a symlink (for delete and stat of links).
pub(crate) fn resolve_entry(path: &Path, base: &Path) -> io::Result<PathBuf> {
    let abs = if path.is_absolute() {
        path.to_path_buf()
    } else {
        base.join(path)
    };
    match (abs.parent(), abs.components().next_back()) {
        (Some(parent), Some(Component::Normal(name))) => Ok(resolve(parent, base)?.join(name)),
        _ => resolve(&abs, base),
    }
}
