//! The user's own git repository around a workspace, found without running
//! git: its work tree's top, where the workspace sits in it, its index and
//! its object directory. Checkpoints borrow its objects (read-only, through
//! `objects/info/alternates` of the shadow repository) and start from a
//! copy of its index, so only files changed since the user's last `git`
//! command are hashed.
//!
//! Only what is needed is read, as data: `.git` (a directory, or a file
//! naming one), `commondir`, and three keys of the repository's `config`.
//! A repository navi cannot use safely this way (another hash than SHA-1,
//! `core.worktree`, `core.bare`, not owned by this user) is left alone: the
//! workspace is then recorded as if it were not in a repository.
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct UserRepo {
    /// The top of the work tree (the directory holding `.git`).
    pub(crate) top: PathBuf,
    /// The workspace relative to `top` (empty when it is the top).
    pub(crate) prefix: PathBuf,
    /// The repository's index file.
    pub(crate) index: PathBuf,
    /// Its object directory.
    pub(crate) objects: PathBuf,
}

/// The git dir a `.git` entry stands for.
fn git_dir_of(dot_git: &Path) -> Option<PathBuf> {
    let meta = std::fs::metadata(dot_git).ok()?;
    if meta.is_dir() {
        return Some(dot_git.to_path_buf());
    }
    let text = std::fs::read_to_string(dot_git).ok()?;
    let target = text.lines().find_map(|l| l.strip_prefix("gitdir:"))?.trim();
    let base = dot_git.parent()?;
    Some(base.join(target))
}

/// The values of `core.bare`, `core.worktree` and
/// `extensions.objectformat` in a git config file (simple syntax only;
/// anything unusual counts as "set").
fn unusable(config: &str) -> bool {
    let mut section = String::new();
    for line in config.lines() {
        let l = line.trim();
        if l.starts_with('#') || l.starts_with(';') || l.is_empty() {
            continue;
        }
        if let Some(rest) = l.strip_prefix('[') {
            section = rest
                .split([']', ' ', '"'])
                .next()
                .unwrap_or("")
                .to_ascii_lowercase();
            continue;
        }
        let (key, value) = match l.split_once('=') {
            Some((k, v)) => (k.trim().to_ascii_lowercase(), v.trim().to_ascii_lowercase()),
            None => (l.to_ascii_lowercase(), "true".into()),
        };
        match (section.as_str(), key.as_str()) {
            ("core", "worktree") => return true,
            ("core", "bare") if value != "false" && value != "no" && value != "0" => return true,
            ("extensions", "objectformat") if value != "sha1" => return true,
            ("extensions", "compatobjectformat") => return true,
            _ => {}
        }
    }
    false
}

/// The repository whose work tree holds `workspace`, when navi can use it.
pub(crate) fn discover(workspace: &Path) -> Option<UserRepo> {
    let ws = workspace.canonicalize().ok()?;
    let dev = std::fs::metadata(&ws).ok()?.dev();
    let me = rustix::process::geteuid().as_raw();
    let mut dir = ws.as_path();
    loop {
        let dot_git = dir.join(".git");
        if std::fs::symlink_metadata(&dot_git).is_ok() {
            let git_dir = git_dir_of(&dot_git)?.canonicalize().ok()?;
            let meta = std::fs::metadata(&git_dir).ok()?;
            if meta.uid() != me || !git_dir.join("HEAD").exists() {
                return None;
            }
            let common = match std::fs::read_to_string(git_dir.join("commondir")) {
                Ok(c) => git_dir.join(c.trim()).canonicalize().ok()?,
                Err(_) => git_dir.clone(),
            };
            let config = std::fs::read_to_string(common.join("config")).unwrap_or_default();
            if unusable(&config) {
                return None;
            }
            let objects = common.join("objects");
            if !objects.is_dir() {
                return None;
            }
            return Some(UserRepo {
                top: dir.to_path_buf(),
                prefix: ws.strip_prefix(dir).ok()?.to_path_buf(),
                index: git_dir.join("index"),
                objects,
            });
        }
        let parent = dir.parent()?;
        // Like git: the search stops at a file system boundary.
        if std::fs::metadata(parent).ok()?.dev() != dev {
            return None;
        }
        dir = parent;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let ok = std::process::Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .output()
            .unwrap()
            .status
            .success();
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn finds_the_top_and_the_prefix() {
        let d = tempfile::tempdir().unwrap();
        let top = d.path().canonicalize().unwrap().join("repo");
        std::fs::create_dir_all(top.join("a/b")).unwrap();
        git(&top, &["init", "-q"]);
        let r = discover(&top.join("a/b")).unwrap();
        assert_eq!(r.top, top);
        assert_eq!(r.prefix, Path::new("a/b"));
        assert_eq!(r.index, top.join(".git/index"));
        assert_eq!(r.objects, top.join(".git/objects"));
        assert_eq!(discover(&top).unwrap().prefix, Path::new(""));
        // A linked worktree: its own index, the main repository's objects.
        git(
            &top,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-q",
                "--allow-empty",
                "-m",
                "x",
            ],
        );
        git(&top, &["worktree", "add", "-q", "../wt"]);
        let wt = d.path().canonicalize().unwrap().join("wt");
        let r = discover(&wt).unwrap();
        assert_eq!(r.top, wt);
        assert_eq!(r.objects, top.join(".git/objects"));
        assert!(r.index.starts_with(top.join(".git/worktrees")));
        assert!(discover(d.path()).is_none());
    }

    #[test]
    fn unusual_repositories_are_left_alone() {
        assert!(!unusable(
            "[core]\n\tbare = false\n\trepositoryformatversion = 0\n"
        ));
        assert!(unusable("[core]\n\tworktree = /elsewhere\n"));
        assert!(unusable("[core]\n\tbare\n"));
        assert!(unusable("[extensions]\n\tobjectFormat = sha256\n"));
        assert!(!unusable("[extensions]\n\tobjectformat = sha1\n"));
    }
}
