//! The shadow repository: a private git repository per workspace, kept in
//! navi's data dir, that records the workspace's files as tree objects.
//!
//! Invariants:
//! - git runs as [`super::git`] describes (nothing in the workspace, the
//!   home directory or the user's repository configures it), with
//!   `GIT_DIR` the shadow repository and a per-session index file in it;
//! - the user's own repository is only read: when the workspace lies in
//!   one, its object directory is an alternate of the shadow repository and
//!   a session's first index is a copy of the user's index (keeping its
//!   modification time, so git's racy-entry check stays right) — only files
//!   changed since are hashed; its index, refs and objects are never
//!   written (git may refresh an object file's modification time, as it does
//!   whenever it reuses an object);
//! - the objects a kept checkpoint needs are copied into the shadow
//!   repository ([`Shadow::localize`]), so a `git gc` in the user's
//!   repository cannot break `/undo`;
//! - nested repositories are recorded as gitlinks but their gitlink entries
//!   are dropped from the index before each `git add`, so git never runs
//!   `git status` inside them (their configuration could name a filter);
//! - trees are kept alive by refs under `refs/navi/` of the shadow
//!   repository only.
use super::diff::{self, Raw};
use super::git::{self, Git};
use super::index;
use super::repo::{self, UserRepo};
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

pub use super::diff::Change;

/// The empty tree's id.
pub(crate) const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

pub struct Shadow {
    git: Git,
    /// The workspace relative to the work tree's top (empty: the top).
    prefix: Vec<u8>,
    repo: Option<UserRepo>,
}

/// Where a session's first index came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Seed {
    /// The session already had one.
    Existing,
    /// Another session's index of this workspace.
    Sibling,
    /// The user's repository's index.
    User,
    /// None: every file is hashed.
    Fresh,
}

/// The shadow repository's directory for a workspace:
/// `<data>/checkpoints/<16 hex of the FNV-1a hash of the workspace path>/git`.
pub(crate) fn dir_for(data_dir: &Path, workspace: &Path) -> PathBuf {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in workspace.as_os_str().as_encoded_bytes() {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    data_dir
        .join("checkpoints")
        .join(format!("{h:016x}"))
        .join("git")
}

/// A session id made safe for a file name and a ref name.
fn safe(id: &str) -> String {
    id.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Writes `text` to `path` unless it already holds exactly that.
fn ensure_file(path: &Path, text: &str) -> Result<(), String> {
    if std::fs::read_to_string(path).is_ok_and(|t| t == text) {
        return Ok(());
    }
    if let Some(dir) = path.parent() {
        crate::private_fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    std::fs::write(path, text).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    crate::private_fs::tighten_if_exists(path);
    Ok(())
}

impl Shadow {
    /// Opens (creating on first use) the shadow repository of `workspace`
    /// for `session`; git is looked for outside the workspace.
    pub fn open(data_dir: &Path, workspace: &Path, session: &str) -> Result<Shadow, String> {
        Shadow::open_guarded(data_dir, workspace, session, &[])
    }

    /// Like [`Shadow::open`]; `untrusted` are further directories tools can
    /// write (no git program is taken from them).
    pub(crate) fn open_guarded(
        data_dir: &Path,
        workspace: &Path,
        session: &str,
        untrusted: &[PathBuf],
    ) -> Result<Shadow, String> {
        if !workspace.is_dir() {
            return Err(format!(
                "the workspace {} no longer exists (or is not a directory)",
                workspace.display()
            ));
        }
        let mut guard = untrusted.to_vec();
        guard.push(workspace.to_path_buf());
        let program = git::find_program(&guard)?;
        let repo = repo::discover(workspace);
        let git_dir = dir_for(data_dir, workspace);
        let home = data_dir.join("checkpoints").join("home");
        crate::private_fs::create_dir_all(&home)
            .map_err(|e| format!("cannot create {}: {e}", home.display()))?;
        let top = repo
            .as_ref()
            .map_or(workspace.to_path_buf(), |r| r.top.clone());
        let index = git_dir.join(format!("index-{}", safe(session)));
        let s = Shadow {
            git: Git::new(program, home, git_dir, top, index),
            prefix: repo
                .as_ref()
                .map(|r| r.prefix.as_os_str().as_bytes().to_vec())
                .unwrap_or_default(),
            repo,
        };
        let dir = s.git.git_dir().to_path_buf();
        if !dir.join("HEAD").is_file() {
            crate::private_fs::create_dir_all(&dir)
                .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
            s.git
                .command(&["init", "--quiet", "--bare", "--template="])
                .env_remove("GIT_WORK_TREE")
                .env_remove("GIT_INDEX_FILE")
                .output()
                .map_err(|e| format!("cannot run git: {e}"))
                .and_then(|o| {
                    o.status.success().then_some(()).ok_or_else(|| {
                        format!(
                            "git init failed: {}",
                            String::from_utf8_lossy(&o.stderr).trim()
                        )
                    })
                })?;
            // Which workspace this is, for someone looking at the data dir.
            let _ = ensure_file(&dir.join("navi-workspace"), &workspace.to_string_lossy());
        }
        ensure_file(&dir.join("info/attributes"), git::ATTRIBUTES)?;
        s.exclude_inside(data_dir)?;
        if let Some(r) = &s.repo {
            s.borrow_objects(&r.objects)?;
        }
        Ok(s)
    }

    /// navi's own data dir (its database, this repository) when it lies
    /// inside the work tree: never part of a checkpoint.
    fn exclude_inside(&self, data_dir: &Path) -> Result<(), String> {
        let (Ok(top), Ok(data)) = (self.git.work_tree.canonicalize(), data_dir.canonicalize())
        else {
            return Ok(());
        };
        let file = self.git.git_dir().join("info/exclude");
        let Ok(rel) = data.strip_prefix(&top) else {
            return ensure_file(&file, "");
        };
        ensure_file(&file, &format!("/{}/\n", rel.to_string_lossy()))
    }

    /// The user's object directory as an alternate (read-only).
    fn borrow_objects(&self, objects: &Path) -> Result<(), String> {
        let file = self.git.git_dir().join("objects/info/alternates");
        let line = objects.to_string_lossy().into_owned();
        let old = std::fs::read_to_string(&file).unwrap_or_default();
        if old.lines().any(|l| l == line) {
            return Ok(());
        }
        ensure_file(&file, &format!("{old}{line}\n"))
    }

    /// `-- <the workspace>` as a pathspec of the work tree.
    fn pathspec(&self) -> Vec<u8> {
        if self.prefix.is_empty() {
            b".".to_vec()
        } else {
            self.prefix.clone()
        }
    }

    /// Runs its git on one thread (see [`super::git::Git::command`]).
    pub(crate) fn in_background(mut self) -> Shadow {
        self.git.background = true;
        self
    }

    /// Whether this session has an index yet.
    pub(crate) fn has_index(&self) -> bool {
        self.git.index.is_file()
    }

    /// The session's index lock is held (by a git still running, maybe of
    /// an earlier navi).
    pub(crate) fn busy(&self) -> bool {
        let mut lock = self.git.index.clone().into_os_string();
        lock.push(".lock");
        let lock = PathBuf::from(lock);
        match std::fs::metadata(&lock).and_then(|m| m.modified()) {
            // A lock older than an hour is left from a git that died.
            Ok(t) if t.elapsed().is_ok_and(|a| a.as_secs() > 3600) => {
                let _ = std::fs::remove_file(&lock);
                false
            }
            Ok(_) => true,
            Err(_) => false,
        }
    }

    /// Gives the session an index to start from when it has none: another
    /// session's of this workspace, else the user's repository's.
    pub(crate) fn seed(&self) -> Seed {
        if self.has_index() {
            return Seed::Existing;
        }
        let mine = self.git.index.file_name().map(|n| n.to_os_string());
        let sibling = std::fs::read_dir(self.git.git_dir())
            .into_iter()
            .flatten()
            .flatten()
            .filter(|e| {
                let n = e.file_name();
                n.as_bytes().starts_with(b"index-")
                    && !n.as_bytes().ends_with(b".lock")
                    && Some(&n) != mine.as_ref()
            })
            .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
            .max();
        if let Some((_, p)) = sibling
            && self.copy_index(&p)
        {
            return Seed::Sibling;
        }
        if let Some(r) = &self.repo
            && self.copy_index(&r.index)
        {
            return Seed::User;
        }
        Seed::Fresh
    }

    /// Copies an index file that can serve as a start, with its mtime.
    fn copy_index(&self, from: &Path) -> bool {
        let Ok(data) = std::fs::read(from) else {
            return false;
        };
        if index::scan(&data).map_or(true, |s| s.special) {
            return false;
        }
        let Ok(mtime) = std::fs::metadata(from).and_then(|m| m.modified()) else {
            return false;
        };
        let mut tmp = self.git.index.clone().into_os_string();
        tmp.push(".seed");
        let tmp = PathBuf::from(tmp);
        let done = std::fs::write(&tmp, &data)
            .and_then(|_| std::fs::File::options().write(true).open(&tmp))
            .and_then(|f| f.set_times(std::fs::FileTimes::new().set_modified(mtime)))
            .and_then(|_| std::fs::rename(&tmp, &self.git.index));
        if done.is_err() {
            let _ = std::fs::remove_file(&tmp);
        }
        crate::private_fs::tighten_if_exists(&self.git.index);
        done.is_ok()
    }

    /// Drops the session's index (it is rebuilt from scratch next time).
    pub(crate) fn reset_index(&self) {
        let _ = std::fs::remove_file(&self.git.index);
    }

    /// Entries of the session's index inside the workspace.
    pub(crate) fn tracked(&self) -> usize {
        let Ok(data) = std::fs::read(&self.git.index) else {
            return 0;
        };
        if self.prefix.is_empty() {
            return index::count(&self.git.index).unwrap_or(0);
        }
        index::scan_under(&data, &self.prefix).unwrap_or(0)
    }

    /// Files git would add that the index does not hold yet, counted up
    /// to `cap`.
    pub(crate) fn untracked(&self, cap: usize) -> Result<usize, String> {
        let spec = self.pathspec();
        let args: [&std::ffi::OsStr; 6] = [
            "ls-files".as_ref(),
            "-z".as_ref(),
            "--others".as_ref(),
            "--exclude-standard".as_ref(),
            "--".as_ref(),
            std::ffi::OsStr::from_bytes(&spec),
        ];
        self.git.count_records(&args, cap)
    }

    /// Removes gitlink entries from the index so that `git add` does not
    /// ask the nested repositories for their status.
    fn drop_gitlinks(&self) -> Result<(), String> {
        drop_gitlinks_in(&self.git)
    }

    /// Records the workspace as it is now: the tree's id, and a note when
    /// some files could not be read (they are left out of the checkpoint).
    pub fn snapshot(&self) -> Result<(String, Option<String>), String> {
        self.drop_gitlinks()?;
        let spec = self.pathspec();
        let args: [&std::ffi::OsStr; 5] = [
            "add".as_ref(),
            "--all".as_ref(),
            "--ignore-errors".as_ref(),
            "--".as_ref(),
            std::ffi::OsStr::from_bytes(&spec),
        ];
        let note = match self.git.run(&args, None) {
            Ok(_) => None,
            // A missing git or workspace: no checkpoint at all.
            Err(e) if e.starts_with("git is not") || e.starts_with("cannot run") => {
                return Err(e);
            }
            Err(e) if e.contains("index.lock") => return Err(e),
            // A nested repository git cannot read (its configuration is
            // damaged, on purpose maybe) stops `git add`: again without
            // the nested repositories.
            Err(e) => self.add_without_nested()?.then_some(e),
        };
        Ok((self.tree_of(&self.git)?, note))
    }

    /// The tree of the workspace in the index `git` works on.
    fn tree_of(&self, git: &Git) -> Result<String, String> {
        let tree = if self.prefix.is_empty() {
            git.run(&["write-tree"], None)?
        } else {
            let mut p = std::ffi::OsString::from("--prefix=");
            p.push(std::ffi::OsStr::from_bytes(&self.prefix));
            p.push("/");
            match git.run(&["write-tree".as_ref(), p.as_os_str()], None) {
                Ok(t) => t,
                // Nothing recorded under the workspace yet.
                Err(e) if e.contains("not found") => EMPTY_TREE.as_bytes().to_vec(),
                Err(e) => return Err(e),
            }
        };
        Ok(String::from_utf8_lossy(&tree).trim().to_string())
    }

    /// `git add` leaving every nested repository out: whether the failure
    /// stays (there is none, or the add fails again).
    fn add_without_nested(&self) -> Result<bool, String> {
        let spec = self.pathspec();
        let list = self.git.run(
            &[
                "ls-files".as_ref(),
                "-z".as_ref(),
                "--others".as_ref(),
                "--directory".as_ref(),
                "--exclude-standard".as_ref(),
                "--".as_ref(),
                std::ffi::OsStr::from_bytes(&spec),
            ],
            None,
        )?;
        let top = self.git.work_tree.clone();
        let nested: Vec<&[u8]> = list
            .split(|b| *b == 0)
            .filter(|d| d.ends_with(b"/"))
            .filter(|d| {
                top.join(std::ffi::OsStr::from_bytes(d))
                    .join(".git")
                    .symlink_metadata()
                    .is_ok()
            })
            .map(|d| &d[..d.len() - 1])
            .collect();
        if nested.is_empty() {
            return Ok(true);
        }
        let mut args: Vec<std::ffi::OsString> = vec![
            "add".into(),
            "--all".into(),
            "--ignore-errors".into(),
            "--".into(),
        ];
        let mut literal = std::ffi::OsString::from(":(literal)");
        literal.push(std::ffi::OsStr::from_bytes(&spec));
        args.push(literal);
        for n in nested {
            let mut x = std::ffi::OsString::from(":(exclude,literal)");
            x.push(std::ffi::OsStr::from_bytes(n));
            args.push(x);
        }
        let out = self
            .git
            .command(&args)
            .env_remove("GIT_LITERAL_PATHSPECS")
            .output()
            .map_err(|e| format!("cannot run git: {e}"))?;
        Ok(!out.status.success())
    }

    /// Keeps `tree` alive under `refs/navi/<session>/<name>`.
    pub(crate) fn keep(&self, session: &str, name: &str, tree: &str) -> Result<(), String> {
        let r = format!("refs/navi/{}/{name}", safe(session));
        self.git.run(&["update-ref", &r, tree], None).map(|_| ())
    }

    /// The raw difference of two trees (`trees`: with the tree entries).
    pub(crate) fn raw(&self, a: &str, b: &str, trees: bool) -> Result<Vec<Raw>, String> {
        let mut args = vec![
            "diff-tree",
            "-r",
            "-z",
            "--no-renames",
            "--raw",
            "--abbrev=40",
        ];
        if trees {
            args.push("-t");
        }
        args.extend([a, b]);
        Ok(diff::parse_raw(&self.git.run(&args, None)?))
    }

    /// What changed from tree `a` to tree `b`, with line counts.
    pub fn changes(&self, a: &str, b: &str) -> Result<Vec<Change>, String> {
        let raw = self.raw(a, b, false)?;
        if raw.is_empty() {
            return Ok(Vec::new());
        }
        let numstat = self.git.run(
            &["diff-tree", "-r", "-z", "--no-renames", "--numstat", a, b],
            None,
        )?;
        Ok(diff::with_counts(&raw, &numstat))
    }

    /// Copies into the shadow repository every object the difference of
    /// each `(a, b)` pair needs (trees and blobs, both sides), so they
    /// outlive the user's repository. Nothing to do outside a repository.
    pub(crate) fn localize(&self, pairs: &[(&str, &str)]) -> Result<(), String> {
        if self.repo.is_none() {
            return Ok(());
        }
        let mut ids = std::collections::BTreeSet::new();
        for (a, b) in pairs {
            ids.insert(a.to_string());
            ids.insert(b.to_string());
            for r in self.raw(a, b, true)? {
                for (id, mode) in [r.old_side(), r.new_side()].into_iter().flatten() {
                    if mode != "160000" {
                        ids.insert(id.to_string());
                    }
                }
            }
        }
        ids.remove(EMPTY_TREE);
        if ids.is_empty() {
            return Ok(());
        }
        let list: String = ids.iter().map(|i| format!("{i}\n")).collect();
        let base = self.git.git_dir().join("objects/pack/pack");
        let mut args = vec![
            std::ffi::OsString::from("pack-objects"),
            "--quiet".into(),
            "--window=0".into(),
        ];
        args.push(base.into_os_string());
        self.git.run(&args, Some(list.as_bytes())).map(|_| ())
    }

    /// The content of a blob.
    pub(crate) fn blob(&self, id: &str) -> Result<Vec<u8>, String> {
        self.git.run(&["cat-file", "blob", id], None)
    }

    /// Whether the workspace lies in a repository of the user's.
    pub fn in_repository(&self) -> bool {
        self.repo.is_some()
    }
}

/// Removes gitlink entries from the index `git` works on (see
/// [`Shadow::snapshot`]).
fn drop_gitlinks_in(git: &Git) -> Result<(), String> {
    let Ok(data) = std::fs::read(&git.index) else {
        return Ok(());
    };
    let scan = index::scan(&data)?;
    if scan.gitlinks.is_empty() {
        return Ok(());
    }
    let mut list = Vec::new();
    for g in &scan.gitlinks {
        list.extend_from_slice(g);
        list.push(0);
    }
    git.run(
        &["update-index", "--force-remove", "-z", "--stdin"],
        Some(&list),
    )
    .map(|_| ())
}

#[cfg(test)]
#[path = "shadow_tests.rs"]
mod tests;

#[path = "shadow_paths.rs"]
mod paths;
