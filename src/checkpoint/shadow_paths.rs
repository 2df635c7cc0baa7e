//! Recording only the paths a turn's file tools name (see
//! [`super::super::named`]): a turn whose writing tools are all of that kind
//! never looks at the rest of the workspace, however large it is.
//!
//! Each such turn has an index of its own in the shadow repository
//! (`turn-<session>`), started empty: before the tools run, the paths they
//! name are added as they are then (the turn's "before" tree); when the
//! turn ends they are added again (its "after" tree). Both trees hold only
//! those paths, so their difference is exactly what the turn's tools did to
//! them. The same rules as a full snapshot apply: `.gitignore`d files and
//! navi's data dir are left out, gitlink entries are dropped before each
//! `git add`, nothing in the workspace configures git.
//!
//! [`Shadow::overlay`] turns such a "before" tree into a whole one when a
//! command comes later in the turn.
use super::{Git, Shadow, drop_gitlinks_in};
use crate::checkpoint::named::within;
use std::ffi::{OsStr, OsString};
use std::os::unix::ffi::OsStrExt;
use std::path::PathBuf;

/// A zero object id: `update-index --index-info` removes the entry.
const NO_OBJECT: &str = "0000000000000000000000000000000000000000";

impl Shadow {
    /// A file next to the session's index: `<what>-<session>`.
    fn beside(&self, what: &str) -> PathBuf {
        let name = self
            .git
            .index
            .file_name()
            .map(|n| n.as_bytes().strip_prefix(b"index-").unwrap_or(n.as_bytes()))
            .unwrap_or_default();
        let mut file = OsString::from(format!("{what}-"));
        file.push(OsStr::from_bytes(name));
        self.git.git_dir().join(file)
    }

    fn turn_git(&self) -> Git {
        self.git.with_index(self.beside("turn"))
    }

    /// Drops the index of the turn in progress.
    pub(crate) fn drop_turn_index(&self) {
        let _ = std::fs::remove_file(self.beside("turn"));
    }

    /// A workspace path as a path of the work tree.
    fn full(&self, p: &[u8]) -> Vec<u8> {
        if self.prefix.is_empty() {
            return p.to_vec();
        }
        let mut v = self.prefix.clone();
        v.push(b'/');
        v.extend_from_slice(p);
        v
    }

    /// Adds `paths` (relative to the workspace) to the turn's index as they
    /// are now — `fresh`: to a new, empty one — leaving out `keep` (paths
    /// under them recorded earlier in the turn, whose entries must stay).
    /// The tree of the workspace in that index, and a note when some files
    /// could not be read.
    pub(crate) fn record_paths(
        &self,
        paths: &[Vec<u8>],
        keep: &[Vec<u8>],
        fresh: bool,
    ) -> Result<(String, Option<String>), String> {
        let git = self.turn_git();
        if fresh {
            self.drop_turn_index();
        }
        drop_gitlinks_in(&git)?;
        let top = self.git.work_tree.clone();
        let mut present = Vec::new();
        let mut missing = Vec::new();
        for p in paths {
            let full = self.full(p);
            if top
                .join(OsStr::from_bytes(&full))
                .symlink_metadata()
                .is_ok()
            {
                present.push(full);
            } else {
                missing.push(full);
            }
        }
        // A path that is neither there nor recorded: nothing to add (git
        // would stop at a pathspec that matches nothing).
        if !missing.is_empty() && git.index.is_file() {
            let mut args: Vec<&OsStr> = vec!["ls-files".as_ref(), "-z".as_ref(), "--".as_ref()];
            args.extend(missing.iter().map(|m| OsStr::from_bytes(m)));
            let listed = git.run(&args, None)?;
            let entries: Vec<&[u8]> = listed.split(|b| *b == 0).collect();
            present.extend(
                missing
                    .into_iter()
                    .filter(|m| entries.iter().any(|e| within(e, m))),
            );
        }
        let mut note = None;
        if !present.is_empty() {
            let mut specs = Vec::new();
            for p in &present {
                specs.extend_from_slice(b":(literal)");
                specs.extend_from_slice(p);
                specs.push(0);
            }
            for k in keep {
                let k = self.full(k);
                if present.iter().any(|p| within(&k, p) && k != *p) {
                    specs.extend_from_slice(b":(exclude,literal)");
                    specs.extend_from_slice(&k);
                    specs.push(0);
                }
            }
            let args = [
                "add",
                "--all",
                "--ignore-errors",
                "--pathspec-from-file=-",
                "--pathspec-file-nul",
            ];
            let mut cmd = git.command(&args);
            cmd.env_remove("GIT_LITERAL_PATHSPECS");
            let out = git.output(cmd, Some(&specs))?;
            match out.status.code() {
                Some(0) => {}
                // Some paths were left out: ignored ones (as in a full
                // snapshot, nothing to say) or unreadable ones (noted).
                Some(1) => {
                    let err = String::from_utf8_lossy(&out.stderr);
                    note = err
                        .lines()
                        .find(|l| l.starts_with("error:"))
                        .map(|l| crate::checkpoint::names::shown(l.trim().as_bytes()));
                }
                _ => return Err(Git::reason(&args, &out.stderr)),
            }
        }
        Ok((self.tree_of(&git)?, note))
    }

    /// `current` (a tree of the whole workspace) with the entries at and
    /// under `paths` taken from `before` instead.
    pub(crate) fn overlay(
        &self,
        current: &str,
        before: &str,
        paths: &[Vec<u8>],
    ) -> Result<String, String> {
        let index = self.beside("overlay");
        let _ = std::fs::remove_file(&index);
        let git = self.git.with_index(index.clone());
        let done = (|| {
            git.run(&["read-tree", current], None)?;
            let mut info = Vec::new();
            for (tree, drop) in [(current, true), (before, false)] {
                let head = ["ls-tree", "-r", "-z", "--full-tree", tree, "--"];
                let mut args: Vec<&OsStr> = head.iter().map(OsStr::new).collect();
                args.extend(paths.iter().map(|p| OsStr::from_bytes(p)));
                for line in git.run(&args, None)?.split(|b| *b == 0) {
                    // `<mode> <type> <id>\t<path>`
                    let Some(tab) = line.iter().position(|b| *b == b'\t') else {
                        continue;
                    };
                    if drop {
                        info.extend_from_slice(format!("0 {NO_OBJECT}").as_bytes());
                        info.extend_from_slice(&line[tab..]);
                    } else {
                        info.extend_from_slice(line);
                    }
                    info.push(0);
                }
            }
            git.run(&["update-index", "-z", "--index-info"], Some(&info))?;
            let tree = git.run(&["write-tree"], None)?;
            Ok(String::from_utf8_lossy(&tree).trim().to_string())
        })();
        let _ = std::fs::remove_file(&index);
        done
    }
}

#[cfg(test)]
#[path = "shadow_paths_tests.rs"]
mod tests;
