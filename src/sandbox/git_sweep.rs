//! After a sandboxed call: git metadata the call created is neutralised, so
//! the user's next `git status` in a repository the model made (a `git
//! init`, a clone, a `.git` file pointing anywhere) runs nothing it planted.
//!
//! Existing git metadata was read-only during the call ([`super::policy`]);
//! what is new is every `.git` the scan finds now and did not find before
//! (or that is another inode), and the git directories it names unless they
//! were already trusted. In each such git directory (and the nested ones of
//! its `modules/` and `worktrees/`), navi — outside the sandbox, never
//! following a symbolic link:
//! - rewrites `config` and `config.worktree` with only the keys that hold
//!   data ([`super::git_config`]): no `core.fsmonitor`, `core.hooksPath`,
//!   pager, editor, ssh command, alias, filter, diff or merge driver,
//!   credential helper or include survives; the original is kept beside it
//!   as `config.navi-unsafe` when anything was dropped;
//! - moves a `hooks` directory holding anything but git's `*.sample` files
//!   to `hooks.navi-unsafe` and leaves an empty `hooks`.
//!
//! Invariant: the sweep runs once every process of the call is gone (the
//! call's session was killed and sandboxed processes cannot leave it), so
//! nothing of the call can write after it.
use super::Policy;
use super::git_config;
use super::git_scan;
use rustix::fs::{self as rfs, AtFlags, CWD, Dir, FileType, Mode, OFlags, ResolveFlags};
use std::io::{Read, Write};
use std::os::fd::{AsFd, OwnedFd};
use std::path::{Path, PathBuf};

/// Directories of a git dir never walked for configuration.
const DATA_DIRS: [&str; 5] = ["objects", "refs", "logs", "lfs", "info"];

/// Deepest nesting walked inside one git directory.
const MAX_DEPTH: usize = 8;

/// Largest configuration file read; a bigger one is replaced.
const MAX_CONFIG: u64 = 1 << 20;

/// Neutralises the git metadata the call created; one note per git
/// directory changed (for the tool result).
pub(crate) fn after_call(policy: &Policy) -> Vec<String> {
    if policy.writable.is_empty() {
        return Vec::new();
    }
    let now = git_scan::scan(&policy.writable, &policy.scan_skip);
    // Trusted by identity, not by path: a repository made where a moved
    // one was is new; the moved one is still the same directory.
    let trusted = &policy.git_dir_ids;
    let mut done: Vec<PathBuf> = Vec::new();
    let mut notes = Vec::new();
    for d in &now {
        if policy
            .git
            .iter()
            .any(|old| old.path == d.path && old.id == d.id)
        {
            continue;
        }
        for gd in &d.git_dirs {
            let writable = policy.writable.iter().any(|w| gd.starts_with(w))
                && !policy.keep_in_place.iter().any(|c| gd.starts_with(c));
            // In (or under) a git directory seen before: the user's, left alone.
            let known = gd
                .ancestors()
                .any(|a| git_scan::id_of(a).is_some_and(|id| trusted.contains(&id)));
            if !writable || known || done.contains(gd) {
                continue;
            }
            done.push(gd.clone());
            match neutralise(gd) {
                Ok(changes) if changes.is_empty() => {}
                Ok(changes) => {
                    tracing::info!(
                        "sandbox: neutralised {}: {}",
                        gd.display(),
                        changes.join("; ")
                    );
                    notes.push(format!(
                        "[sandbox] navi neutralised the git repository this call created at {}: {} (a repository made in the sandbox runs no hooks or configured commands outside it; the originals are kept as *.navi-unsafe, which git ignores)",
                        gd.display(),
                        changes.join("; ")
                    ));
                }
                Err(e) => {
                    tracing::warn!("sandbox: cannot neutralise {}: {e}", gd.display());
                    notes.push(format!(
                        "[sandbox] WARNING: the git repository this call created at {} could not be checked ({e}); do not run git there before reading its .git/config and hooks",
                        gd.display()
                    ));
                }
            }
        }
    }
    notes
}

/// Neutralises one git directory; what was changed, by relative path.
fn neutralise(git_dir: &Path) -> std::io::Result<Vec<String>> {
    let dir = rfs::openat2(
        CWD,
        git_dir,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
        ResolveFlags::NO_SYMLINKS,
    )?;
    let mut changes = Vec::new();
    walk(&dir, "", 0, &mut changes)?;
    Ok(changes)
}

fn names(dir: &OwnedFd) -> std::io::Result<Vec<(String, FileType)>> {
    let mut out = Vec::new();
    for entry in Dir::read_from(dir)? {
        let entry = entry?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if name == "." || name == ".." {
            continue;
        }
        let mut kind = entry.file_type();
        if kind == FileType::Unknown {
            // A file system without types in its listings.
            kind = rfs::statat(dir, entry.file_name(), AtFlags::SYMLINK_NOFOLLOW)
                .map(|st| FileType::from_raw_mode(st.st_mode))
                .unwrap_or(FileType::Unknown);
        }
        out.push((name, kind));
    }
    Ok(out)
}

fn walk(dir: &OwnedFd, rel: &str, depth: usize, changes: &mut Vec<String>) -> std::io::Result<()> {
    for (name, kind) in names(dir)? {
        match name.as_str() {
            "config" | "config.worktree" if kind != FileType::Directory => {
                fix_config(dir, &name, rel, changes)?;
            }
            "hooks" => fix_hooks(dir, rel, kind, changes)?,
            n if kind == FileType::Directory && depth < MAX_DEPTH && !DATA_DIRS.contains(&n) => {
                let sub = rfs::openat(
                    dir,
                    n,
                    OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
                    Mode::empty(),
                )?;
                walk(&sub, &format!("{rel}{n}/"), depth + 1, changes)?;
            }
            _ => {}
        }
    }
    Ok(())
}

/// A name in `dir` not taken yet: `base`, `base.1`, `base.2`, …
fn unused(dir: &OwnedFd, base: &str) -> String {
    (0..1000)
        .map(|i| {
            if i == 0 {
                base.to_string()
            } else {
                format!("{base}.{i}")
            }
        })
        .find(|n| rfs::statat(dir, n.as_str(), AtFlags::SYMLINK_NOFOLLOW).is_err())
        .unwrap_or_else(|| format!("{base}.{}", std::process::id()))
}

fn read_regular(dir: &OwnedFd, name: &str) -> Option<Vec<u8>> {
    let fd = rfs::openat(
        dir,
        name,
        OFlags::RDONLY | OFlags::NOFOLLOW | OFlags::CLOEXEC | OFlags::NONBLOCK,
        Mode::empty(),
    )
    .ok()?;
    let st = rfs::fstat(&fd).ok()?;
    if FileType::from_raw_mode(st.st_mode) != FileType::RegularFile
        || st.st_size as u64 > MAX_CONFIG
    {
        return None;
    }
    let mut bytes = Vec::new();
    std::fs::File::from(fd).read_to_end(&mut bytes).ok()?;
    Some(bytes)
}

/// Writes `text` as `dir/name` through a new file renamed over it.
fn replace(dir: &OwnedFd, name: &str, text: &str) -> std::io::Result<()> {
    let tmp = unused(dir, ".navi-config.tmp");
    let fd = rfs::openat(
        dir,
        tmp.as_str(),
        OFlags::WRONLY | OFlags::CREATE | OFlags::EXCL | OFlags::NOFOLLOW | OFlags::CLOEXEC,
        Mode::from_bits_truncate(0o644),
    )?;
    let mut f = std::fs::File::from(fd);
    f.write_all(text.as_bytes())?;
    f.sync_all()?;
    rfs::renameat(dir, tmp.as_str(), dir, name)?;
    Ok(())
}

fn fix_config(
    dir: &OwnedFd,
    name: &str,
    rel: &str,
    changes: &mut Vec<String>,
) -> std::io::Result<()> {
    let original = read_regular(dir, name);
    let (text, dropped) = match &original {
        Some(bytes) => git_config::safe_text(bytes),
        None => (
            git_config::MINIMAL.to_string(),
            vec!["not a regular file".to_string()],
        ),
    };
    if original.as_deref() == Some(text.as_bytes()) {
        return Ok(());
    }
    if !dropped.is_empty() {
        let aside = unused(dir, &format!("{name}.navi-unsafe"));
        rfs::renameat(dir, name, dir, aside.as_str())?;
        changes.push(format!("{rel}{name}: removed {}", dropped.join(", ")));
    }
    replace(dir, name, &text)
}

fn fix_hooks(
    dir: &OwnedFd,
    rel: &str,
    kind: FileType,
    changes: &mut Vec<String>,
) -> std::io::Result<()> {
    let planted: Vec<String> = if kind == FileType::Directory {
        let hooks = rfs::openat(
            dir,
            "hooks",
            OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC,
            Mode::empty(),
        )?;
        names(&hooks)?
            .into_iter()
            .map(|(n, _)| n)
            .filter(|n| !n.ends_with(".sample"))
            .collect()
    } else {
        vec!["(not a directory)".to_string()]
    };
    if planted.is_empty() {
        return Ok(());
    }
    let aside = unused(dir, "hooks.navi-unsafe");
    rfs::renameat(dir, "hooks", dir, aside.as_str())?;
    rfs::mkdirat(dir.as_fd(), "hooks", Mode::from_bits_truncate(0o755))?;
    changes.push(format!("{rel}hooks: moved {}", planted.join(", ")));
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn planted_config_and_hooks_are_moved_aside() {
        let tmp = tempfile::tempdir().unwrap();
        let gd = tmp.path().canonicalize().unwrap().join("repo/.git");
        std::fs::create_dir_all(gd.join("hooks")).unwrap();
        std::fs::create_dir_all(gd.join("modules/sub/hooks")).unwrap();
        std::fs::write(gd.join("hooks/pre-commit.sample"), "x").unwrap();
        std::fs::write(gd.join("hooks/post-index-change"), "evil").unwrap();
        std::fs::write(
            gd.join("config"),
            "[core]\n\tbare = false\n\tfsmonitor = evil\n",
        )
        .unwrap();
        std::fs::write(gd.join("modules/sub/config"), "[alias]\n\tx = !evil\n").unwrap();
        let changes = neutralise(&gd).unwrap();
        assert_eq!(changes.len(), 3, "{changes:?}");
        assert_eq!(
            std::fs::read_to_string(gd.join("config")).unwrap(),
            "[core]\n\tbare = false\n"
        );
        assert!(
            std::fs::read_to_string(gd.join("config.navi-unsafe"))
                .unwrap()
                .contains("evil")
        );
        assert!(
            !std::fs::read_to_string(gd.join("modules/sub/config"))
                .unwrap()
                .contains("evil")
        );
        assert!(gd.join("hooks").is_dir() && !gd.join("hooks/post-index-change").exists());
        assert!(gd.join("hooks.navi-unsafe/post-index-change").exists());
        // A second pass has nothing left to do.
        assert!(neutralise(&gd).unwrap().is_empty());
    }

    #[test]
    fn a_config_that_is_a_link_is_replaced_not_followed() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        let gd = root.join(".git");
        std::fs::create_dir_all(&gd).unwrap();
        std::fs::write(root.join("victim"), "keep me").unwrap();
        std::os::unix::fs::symlink(root.join("victim"), gd.join("config")).unwrap();
        neutralise(&gd).unwrap();
        assert_eq!(
            std::fs::read_to_string(root.join("victim")).unwrap(),
            "keep me"
        );
        assert_eq!(
            std::fs::read_to_string(gd.join("config")).unwrap(),
            git_config::MINIMAL
        );
    }
}
