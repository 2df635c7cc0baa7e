//! Path resolution and the `[security].fs_allowed_paths` root check.
//!
//! Invariants:
//! - [`resolve`] returns an absolute path with every symlink resolved and every
//!   `.`/`..` folded, like `realpath`, but also for paths whose tail does not
//!   exist yet (the missing tail cannot contain symlinks, so folding it is exact);
//! - the path that was checked is the path the tool then uses: callers do I/O
//!   on the resolved path, never on the raw argument;
//! - a root matches by whole components (`/srv/a` does not admit `/srv/ab`).

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io;
use std::path::{Component, Path, PathBuf};

/// Most symlinks followed while resolving one path (Linux uses 40 too).
const MAX_LINKS: usize = 40;

pub(crate) use crate::util::paths::{absolute, expand_tilde};

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

/// The roots a filesystem tool may touch.
#[derive(Clone, Debug)]
pub(crate) struct FsRoots {
    /// `None` = anywhere (`"*"`).
    roots: Option<Vec<PathBuf>>,
}

impl FsRoots {
    /// Builds the roots from the config list; relative roots resolve against
    /// `base` (the work dir), `~` against `$HOME`.
    pub(crate) fn from_config(list: &[String], base: &Path) -> Self {
        if list.iter().any(|r| r.trim() == "*") {
            return FsRoots { roots: None };
        }
        let roots = list
            .iter()
            .map(|r| r.trim())
            .filter(|r| !r.is_empty())
            .map(|r| {
                let abs = absolute(r, base);
                resolve(&abs, base).unwrap_or(abs)
            })
            .collect();
        FsRoots { roots: Some(roots) }
    }

    /// These roots plus `dir` (when restricted). Used to let reads reach
    /// the session's own files dir, where oversized items are kept.
    pub(crate) fn with_root(mut self, dir: &Path) -> Self {
        if let Some(r) = self.roots.as_mut() {
            let resolved = resolve(dir, dir).unwrap_or_else(|_| dir.to_path_buf());
            r.push(resolved);
        }
        self
    }

    pub(crate) fn is_unrestricted(&self) -> bool {
        self.roots.is_none()
    }

    /// Whether `resolved` is one of the roots themselves.
    pub(crate) fn is_root(&self, resolved: &Path) -> bool {
        self.roots
            .as_ref()
            .is_some_and(|r| r.iter().any(|root| root == resolved))
    }

    /// The roots as shown in refusals.
    pub(crate) fn describe(&self) -> String {
        match &self.roots {
            None => "anywhere (\"*\")".into(),
            Some(r) if r.is_empty() => "none (the list is empty)".into(),
            Some(r) => r
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", "),
        }
    }

    /// `Ok` when the already-resolved path lies inside a root.
    pub(crate) fn check(&self, resolved: &Path, shown_as: &str) -> Result<(), String> {
        match &self.roots {
            None => Ok(()),
            Some(roots) if roots.iter().any(|r| resolved.starts_with(r)) => Ok(()),
            Some(_) => Err(format!(
                "access denied: '{shown_as}' resolves to {}, which is outside the allowed roots ([security].fs_allowed_paths): {}",
                resolved.display(),
                self.describe()
            )),
        }
    }

    /// Resolves `raw` against `base` and checks it: the one call tools use.
    pub(crate) fn resolve_checked(&self, raw: &str, base: &Path) -> Result<PathBuf, String> {
        if raw.trim().is_empty() {
            return Err("argument 'path' is empty".into());
        }
        if raw.contains('\0') {
            return Err("argument 'path' contains a NUL byte".into());
        }
        let abs = absolute(raw, base);
        let resolved = resolve(&abs, base).map_err(|e| format!("cannot resolve '{raw}': {e}"))?;
        self.check(&resolved, raw)?;
        Ok(resolved)
    }

    /// Like [`Self::resolve_checked`] but does not follow a final symlink.
    pub(crate) fn resolve_entry_checked(&self, raw: &str, base: &Path) -> Result<PathBuf, String> {
        if raw.trim().is_empty() {
            return Err("argument 'path' is empty".into());
        }
        let abs = absolute(raw, base);
        let resolved =
            resolve_entry(&abs, base).map_err(|e| format!("cannot resolve '{raw}': {e}"))?;
        self.check(&resolved, raw)?;
        Ok(resolved)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn folds_dots_in_missing_tail() {
        let r = resolve(Path::new("/nonexistent-navi/a/../b/./c"), Path::new("/")).unwrap();
        assert_eq!(r, PathBuf::from("/nonexistent-navi/b/c"));
        let r = resolve(Path::new("/nonexistent-navi/../../.."), Path::new("/")).unwrap();
        assert_eq!(r, PathBuf::from("/"));
    }

    #[test]
    fn relative_against_base() {
        let r = resolve(Path::new("x/../y"), Path::new("/nonexistent-navi")).unwrap();
        assert_eq!(r, PathBuf::from("/nonexistent-navi/y"));
    }

    #[test]
    fn root_match_is_by_component() {
        let roots = FsRoots::from_config(&["/nonexistent-navi/a".into()], Path::new("/"));
        assert!(roots.check(Path::new("/nonexistent-navi/a/x"), "x").is_ok());
        assert!(roots.check(Path::new("/nonexistent-navi/ab"), "x").is_err());
        let err = roots.check(Path::new("/etc"), "/etc").unwrap_err();
        assert!(err.contains("/nonexistent-navi/a"), "{err}");
    }
}
