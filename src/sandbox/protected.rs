//! What navi reads as configuration, or keeps as its own state, and so must
//! stay read-only to every sandboxed process wherever it lives — inside the
//! workspace included (navi started in `$HOME` has `~/.config/navi` there;
//! `NAVI_CONFIG` may name a file in the project).
//!
//! The list: the config file in use (`--config`, `NAVI_CONFIG` or the
//! default), the config directory (profiles, persona, themes, manuals,
//! `config.toml`), the user-tools directory (`[tools].dir`, wherever it
//! points), the data directory and the session database with its journal
//! files (`[storage].db_path` may be elsewhere), and the project paths of
//! [`PROJECT_PATHS`] in the workspace. MCP server definitions live in the
//! config file.
//!
//! Invariant: every path here is turned into a read-only carve-out by
//! [`super::policy`] when it lies inside a writable root; the directories
//! between it and that root become mount points that cannot be renamed
//! ([`super::mounts`]), so no sandboxed process can put another file in its
//! place either. A path must exist to be protected: navi creates its config
//! directory when missing (a sandboxed process could otherwise create it
//! with a `config.toml` for the next start).
use crate::config::Paths;
use std::path::{Path, PathBuf};

/// Project configuration navi reads from the workspace, relative to it: the
/// project's instructions (`AGENTS.md`) and its own commands and settings
/// (`.navi/`). navi's own file tools still edit them (with approval); only
/// sandboxed processes cannot.
/// A path that does not exist when a tool starts is not protected (a mount
/// needs an existing path), so a reader of such a path should not trust one
/// that appeared during a turn.
pub(crate) const PROJECT_PATHS: &[&str] = &["AGENTS.md", ".navi"];

/// Files SQLite keeps next to a database.
const DB_COMPANIONS: [&str; 3] = ["-wal", "-shm", "-journal"];

/// Every existing path to protect, canonical. `tools_dir`: the resolved
/// `[tools].dir` when known; `workspace`: for [`PROJECT_PATHS`].
pub(crate) fn sources(
    paths: &Paths,
    tools_dir: Option<&Path>,
    workspace: Option<&Path>,
    project: &[&str],
) -> Vec<PathBuf> {
    let _ = crate::private_fs::create_dir_all(&paths.config_dir);
    let mut all: Vec<PathBuf> = Vec::new();
    all.extend(paths.config_file.clone());
    all.push(paths.config_dir.clone());
    all.push(paths.data_dir.clone());
    all.push(paths.log_dir.clone());
    all.push(paths.db_path.clone());
    for suffix in DB_COMPANIONS {
        let mut p = paths.db_path.clone().into_os_string();
        p.push(suffix);
        all.push(PathBuf::from(p));
    }
    all.extend(tools_dir.map(Path::to_path_buf));
    if let Some(w) = workspace {
        all.extend(project.iter().map(|p| w.join(p)));
    }
    let mut out: Vec<PathBuf> = Vec::new();
    for p in all {
        if let Ok(c) = p.canonicalize()
            && !out.contains(&c)
        {
            out.push(c);
        }
    }
    out
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn every_source_is_listed_once_and_canonical() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let data = root.join("data");
        std::fs::create_dir_all(&data).unwrap();
        std::fs::write(root.join("navi.toml"), "").unwrap();
        std::fs::write(root.join("db"), "").unwrap();
        std::fs::write(root.join("db-wal"), "").unwrap();
        std::fs::create_dir_all(root.join("ws/.navi")).unwrap();
        let paths = Paths {
            config_file: Some(root.join("ws/../navi.toml")),
            config_dir: root.join("cfg"),
            data_dir: data.clone(),
            db_path: root.join("db"),
            log_dir: data.join("logs"),
        };
        let got = sources(
            &paths,
            Some(&root.join("cfg")),
            Some(&root.join("ws")),
            &[".navi", "AGENTS.md"],
        );
        assert_eq!(
            got,
            vec![
                root.join("navi.toml"),
                root.join("cfg"),
                data,
                root.join("db"),
                root.join("db-wal"),
                root.join("ws/.navi"),
            ]
        );
        assert!(root.join("cfg").is_dir(), "the config dir is created");
    }
}
