//! What project a directory belongs to, and what the project brings with it:
//! its instructions (`AGENTS.md`, see [`instructions`]) and its own slash
//! commands (see [`commands`]).
//!
//! A project is the git top level of a directory (the nearest ancestor with
//! a `.git` directory or file), else the directory itself. Sessions record
//! the project they were started in (`sessions.project`) and the directory
//! they work in (`sessions.cwd`), so `navi -c` continues this project's
//! conversation and lists show where each session belongs.
pub mod commands;
pub mod init;
pub mod instructions;

use std::path::{Path, PathBuf};

/// `[project]`: what navi reads from the project it runs in.
#[derive(Clone, Debug, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct ProjectConfig {
    /// Read `AGENTS.md` files into the system prompt.
    pub instructions: bool,
    /// At most this many bytes of instructions in all; the files closest to
    /// the working directory keep theirs first.
    pub instructions_max_bytes: usize,
}

impl Default for ProjectConfig {
    fn default() -> Self {
        ProjectConfig {
            instructions: true,
            instructions_max_bytes: 32 * 1024,
        }
    }
}

/// The project `dir` belongs to: its git top level, else `dir` itself.
/// Never fails: an unreadable ancestor just ends the search.
pub fn root(dir: &Path) -> PathBuf {
    git_root(dir).unwrap_or_else(|| dir.to_path_buf())
}

/// The nearest ancestor of `dir` (itself included) holding `.git`.
pub(crate) fn git_root(dir: &Path) -> Option<PathBuf> {
    dir.ancestors()
        .find(|d| std::fs::symlink_metadata(d.join(".git")).is_ok())
        .map(Path::to_path_buf)
}

/// The directories from the project root down to `dir`, root first (just
/// `dir` when it is not inside a git repository).
pub(crate) fn chain(dir: &Path) -> Vec<PathBuf> {
    let top = root(dir);
    let mut out: Vec<PathBuf> = dir
        .ancestors()
        .take_while(|d| d.starts_with(&top))
        .map(Path::to_path_buf)
        .collect();
    out.reverse();
    out
}

/// A short form of a project directory for lists: `~/x` under the home
/// directory, else the path.
pub fn display(dir: &str) -> String {
    if let Some(home) = std::env::var_os("HOME").map(PathBuf::from)
        && !home.as_os_str().is_empty()
        && let Ok(rest) = Path::new(dir).strip_prefix(&home)
    {
        return if rest.as_os_str().is_empty() {
            "~".into()
        } else {
            format!("~/{}", rest.display())
        };
    }
    dir.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn root_is_the_git_top_level_else_the_dir() {
        let t = tempfile::tempdir().unwrap();
        let repo = t.path().join("repo");
        let deep = repo.join("a/b");
        std::fs::create_dir_all(&deep).unwrap();
        assert_eq!(root(&deep), deep);
        assert_eq!(chain(&deep), vec![deep.clone()]);
        std::fs::create_dir(repo.join(".git")).unwrap();
        assert_eq!(root(&deep), repo);
        assert_eq!(
            chain(&deep),
            vec![repo.clone(), repo.join("a"), repo.join("a/b")]
        );
        // A worktree or submodule has a `.git` file: it is a top level too.
        std::fs::write(deep.join(".git"), "gitdir: elsewhere").unwrap();
        assert_eq!(root(&deep), deep);
    }
}
