//! Path resolution and the `[security].fs_allowed_paths` root check.
//!
//! Invariants:
//! - [`resolve`] returns an absolute path with every symlink resolved and every
//!   `.`/`..` folded, like `realpath`, but also for paths whose tail does not
//!   exist yet (the missing tail cannot contain symlinks, so folding it is exact);
//! - the path that was checked is the path the tool then uses: callers do I/O
//!   on the resolved path, never on the raw argument;
//! - a root matches by whole components (`/srv/a` does not admit `/srv/ab`).

use std::path::{Path, PathBuf};

pub(crate) use crate::util::paths::{absolute, expand_tilde, resolve, resolve_entry};

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
