//! Paths as the user writes them (`~/x`, relative) made absolute.
use std::path::{Path, PathBuf};

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
