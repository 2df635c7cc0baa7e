//! Assets compiled into the binary (see `build.rs`). User files in the config
//! directory override these by the same relative path.
include!(concat!(env!("OUT_DIR"), "/embedded.rs"));

/// The embedded file at `path` (e.g. `"manuals/terminal.md"`).
pub fn get(path: &str) -> Option<&'static str> {
    FILES.iter().find(|(p, _)| *p == path).map(|(_, c)| *c)
}

/// Embedded files under a directory prefix (e.g. `"profiles/"`).
pub(crate) fn under(prefix: &str) -> impl Iterator<Item = (&'static str, &'static str)> + '_ {
    FILES
        .iter()
        .filter(move |(p, _)| p.starts_with(prefix))
        .map(|(p, c)| (*p, *c))
}
