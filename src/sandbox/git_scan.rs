//! Finding the git metadata in the writable roots: every `.git` directory,
//! file (worktree, submodule) or symbolic link at any depth, and the git
//! directories it names (`gitdir:`, `commondir`).
//!
//! The scan runs before every sandboxed spawn (the result becomes read-only
//! carve-outs) and after the call (anything new is neutralised,
//! [`super::git_sweep`]), so it is incremental: a directory whose inode
//! and ctime are unchanged since a scan at least [`SETTLE`] after its last
//! change is not read again (any entry made, removed or renamed in a
//! directory changes its ctime, and no program can set a ctime back).
//!
//! Invariants: `.git` directories are not descended into; symbolic links are
//! never followed while walking; at most [`MAX_DIRS`] directories are looked
//! at per root (breadth first, so shallow repositories come first) — past
//! that the rest is not protected, and navi says so in its log.
use std::collections::{HashMap, VecDeque};
use std::ffi::OsString;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Directories looked at per writable root.
pub(crate) const MAX_DIRS: usize = 100_000;

/// How long after a change a directory's listing is trusted (timestamps may
/// be coarser than the time between two changes).
const SETTLE: Duration = Duration::from_secs(2);

/// One `.git` entry and the git directories it names.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub(crate) struct DotGit {
    /// The `.git` entry itself.
    pub(crate) path: PathBuf,
    /// Its device and inode (not following a link).
    pub(crate) id: (u64, u64),
    /// Canonical git directories it names: the directory (or link target)
    /// itself, or a `.git` file's `gitdir:`, each with its `commondir`.
    pub(crate) git_dirs: Vec<PathBuf>,
}

/// The device and inode of `p` (following links), the identity that says
/// whether a git directory is the one seen before (a path can be reused by
/// a new directory; an inode of a directory that still exists cannot).
pub(crate) fn id_of(p: &Path) -> Option<(u64, u64)> {
    std::fs::metadata(p).ok().map(|m| (m.dev(), m.ino()))
}

/// What one directory held when it was last read.
struct Listing {
    /// Its ctime then (seconds, nanoseconds).
    ctime: (i64, i64),
    /// Read at least [`SETTLE`] after that change: trusted while unchanged.
    settled: bool,
    /// The scan generation that last saw it (old ones are dropped).
    seen: u64,
    subdirs: std::sync::Arc<[OsString]>,
    has_git: bool,
}

/// Listings by directory identity (device, inode): cheap to look up, and
/// still right when a directory moves (its ctime changes then anyway).
#[derive(Default)]
struct Cache {
    dirs: HashMap<(u64, u64), Listing>,
    generation: u64,
}

/// Entries kept before old ones are dropped, and how many scans old.
const CACHE_SOFT_LIMIT: usize = 4096;
const CACHE_AGE: u64 = 16;

fn cache() -> &'static Mutex<Cache> {
    static CACHE: std::sync::OnceLock<Mutex<Cache>> = std::sync::OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(Cache::default()))
}

/// Roots the scan gave up on (warned about once).
fn warned() -> &'static Mutex<std::collections::HashSet<PathBuf>> {
    static WARNED: std::sync::OnceLock<Mutex<std::collections::HashSet<PathBuf>>> =
        std::sync::OnceLock::new();
    WARNED.get_or_init(|| Mutex::new(std::collections::HashSet::new()))
}

fn push_unique(v: &mut Vec<PathBuf>, p: PathBuf) {
    if !v.contains(&p) {
        v.push(p);
    }
}

/// `dir` canonical, with the `commondir` it names.
fn with_common(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(gitdir) = dir.canonicalize() else {
        return;
    };
    if let Ok(common) = std::fs::read_to_string(gitdir.join("commondir"))
        && let Ok(c) = gitdir.join(common.trim()).canonicalize()
    {
        push_unique(out, c);
    }
    push_unique(out, gitdir);
}

/// Resolves one `.git` entry.
pub(crate) fn resolve(dot_git: &Path) -> Option<DotGit> {
    let meta = std::fs::symlink_metadata(dot_git).ok()?;
    let mut git_dirs = Vec::new();
    if meta.is_file() {
        if let Ok(text) = std::fs::read_to_string(dot_git)
            && let Some(target) = text.lines().find_map(|l| l.strip_prefix("gitdir:"))
        {
            let base = dot_git.parent().unwrap_or(Path::new("/"));
            with_common(&base.join(target.trim()), &mut git_dirs);
        }
    } else {
        // A directory, or a link git would follow to one.
        with_common(dot_git, &mut git_dirs);
    }
    Some(DotGit {
        path: dot_git.to_path_buf(),
        id: (meta.dev(), meta.ino()),
        git_dirs,
    })
}

fn now_secs() -> i64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0)
}

type Found = (std::sync::Arc<[OsString]>, bool);

/// The subdirectories of `dir` and whether it holds a `.git` (from the
/// cache when still valid).
fn listing(dir: &Path, cache: &mut Cache, now: i64) -> Option<Found> {
    let meta = std::fs::symlink_metadata(dir).ok()?;
    if !meta.is_dir() {
        return None;
    }
    let id = (meta.dev(), meta.ino());
    let ctime = (meta.ctime(), meta.ctime_nsec());
    let generation = cache.generation;
    if let Some(l) = cache.dirs.get_mut(&id)
        && l.settled
        && l.ctime == ctime
    {
        l.seen = generation;
        return Some((l.subdirs.clone(), l.has_git));
    }
    let mut subdirs = Vec::new();
    let mut has_git = false;
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let name = entry.file_name();
        if name == ".git" {
            has_git = true;
        } else if entry.file_type().is_ok_and(|t| t.is_dir()) {
            subdirs.push(name);
        }
    }
    let subdirs: std::sync::Arc<[OsString]> = subdirs.into();
    cache.dirs.insert(
        id,
        Listing {
            ctime,
            settled: meta.ctime() + (SETTLE.as_secs() as i64) < now,
            seen: generation,
            subdirs: subdirs.clone(),
            has_git,
        },
    );
    Some((subdirs, has_git))
}

/// Every `.git` under `roots` (canonical directories). `skip`: directories
/// not to walk into (navi's own data, already read-only).
pub(crate) fn scan(roots: &[PathBuf], skip: &[PathBuf]) -> Vec<DotGit> {
    use std::os::unix::ffi::OsStrExt;
    let now = now_secs();
    let mut found = Vec::new();
    let Ok(mut cache) = cache().lock() else {
        return found;
    };
    cache.generation += 1;
    // Canonical paths: comparing bytes is enough (and much cheaper).
    let stop: Vec<&[u8]> = skip
        .iter()
        .chain(roots)
        .map(|p| p.as_os_str().as_bytes())
        .collect();
    for root in roots {
        let mut queue = VecDeque::from([root.clone()]);
        let mut seen = 0usize;
        while let Some(dir) = queue.pop_front() {
            seen += 1;
            if seen > MAX_DIRS {
                if warned().lock().is_ok_and(|mut w| w.insert(root.clone())) {
                    tracing::warn!(
                        "sandbox: stopped looking for git metadata in {} after {MAX_DIRS} directories; repositories deeper than that are not protected",
                        root.display()
                    );
                }
                break;
            }
            let Some((subdirs, has_git)) = listing(&dir, &mut cache, now) else {
                continue;
            };
            if has_git
                && let Some(d) = resolve(&dir.join(".git"))
                && !found.contains(&d)
            {
                found.push(d);
            }
            for sub in subdirs.iter() {
                let p = dir.join(sub);
                if !stop.contains(&p.as_os_str().as_bytes()) {
                    queue.push_back(p);
                }
            }
        }
    }
    if cache.dirs.len() > CACHE_SOFT_LIMIT {
        let g = cache.generation;
        cache.dirs.retain(|_, l| l.seen + CACHE_AGE >= g);
    }
    found
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn repositories_at_any_depth_and_where_files_point_are_found() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().canonicalize().unwrap();
        std::fs::create_dir_all(root.join(".git")).unwrap();
        std::fs::create_dir_all(root.join("a/b/c/d/e/f/g/h/i/nested/.git")).unwrap();
        std::fs::create_dir_all(root.join("store/sub.git")).unwrap();
        std::fs::write(root.join("store/sub.git/commondir"), "../common\n").unwrap();
        std::fs::create_dir_all(root.join("store/common")).unwrap();
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("sub/.git"), "gitdir: ../store/sub.git\n").unwrap();
        std::fs::create_dir_all(root.join("skipped/x/.git")).unwrap();
        let found = scan(std::slice::from_ref(&root), &[root.join("skipped")]);
        let paths: Vec<_> = found.iter().map(|d| d.path.clone()).collect();
        assert!(paths.contains(&root.join(".git")), "{paths:?}");
        assert!(paths.contains(&root.join("a/b/c/d/e/f/g/h/i/nested/.git")));
        assert!(!paths.iter().any(|p| p.starts_with(root.join("skipped"))));
        let sub = found
            .iter()
            .find(|d| d.path == root.join("sub/.git"))
            .unwrap();
        assert!(sub.git_dirs.contains(&root.join("store/sub.git")));
        assert!(sub.git_dirs.contains(&root.join("store/common")));
        // A new one is seen by the next scan.
        std::fs::create_dir_all(root.join("a/b/new/.git")).unwrap();
        let again = scan(std::slice::from_ref(&root), &[]);
        assert!(again.iter().any(|d| d.path == root.join("a/b/new/.git")));
    }
}
