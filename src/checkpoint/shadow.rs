//! The shadow repository: a private git repository per workspace, kept in
//! navi's data dir, that records the workspace's files as tree objects.
//!
//! Invariants: every git command runs with `GIT_DIR` set to the shadow
//! repository, `GIT_WORK_TREE` to the workspace and `GIT_INDEX_FILE` to a
//! per-session index inside the shadow repository, with every other `GIT_*`
//! variable of the environment removed. So the user's own `.git` (branches,
//! index, stash, config, hooks) is never read or written; git skips `.git`
//! and honours the workspace's `.gitignore` files. Trees are kept alive by
//! refs under `refs/navi/` of the shadow repository only.
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// Environment variables that would point git somewhere else.
const GIT_VARS: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
    "GIT_COMMON_DIR",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_PREFIX",
    "GIT_CONFIG",
    "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT",
];

/// One file a turn added, changed or deleted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    pub path: String,
    /// `A`, `M` or `D` (a type change counts as `M`).
    pub status: char,
    pub added: u64,
    pub removed: u64,
    pub binary: bool,
}

pub struct Shadow {
    git_dir: PathBuf,
    work: PathBuf,
    index: PathBuf,
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

/// The shadow repository holds copies of the user's files: git runs with
/// umask 077, so what it creates is the owner's only (dirs 0700, files 0600,
/// objects 0400), whatever navi's own umask.
#[allow(unsafe_code)]
fn private(c: &mut Command) {
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        // SAFETY: runs in the forked child before exec and only calls
        // umask(2), which is async-signal-safe as `pre_exec` requires.
        unsafe {
            c.pre_exec(|| {
                libc::umask(0o077);
                Ok(())
            });
        }
    }
}

impl Shadow {
    /// Opens (creating on first use) the shadow repository of `workspace`
    /// for `session`.
    pub fn open(data_dir: &Path, workspace: &Path, session: &str) -> Result<Shadow, String> {
        if !workspace.is_dir() {
            return Err(format!(
                "the workspace {} no longer exists (or is not a directory)",
                workspace.display()
            ));
        }
        let git_dir = dir_for(data_dir, workspace);
        let s = Shadow {
            index: git_dir.join(format!("index-{}", safe(session))),
            git_dir,
            work: workspace.to_path_buf(),
        };
        if !s.git_dir.join("HEAD").is_file() {
            crate::private_fs::create_dir_all(&s.git_dir)
                .map_err(|e| format!("cannot create {}: {e}", s.git_dir.display()))?;
            s.init()?;
            // Which workspace this is, for someone looking at the data dir.
            let named = s.git_dir.join("navi-workspace");
            let _ = std::fs::write(&named, workspace.to_string_lossy().as_bytes());
            crate::private_fs::tighten_if_exists(&named);
        }
        s.exclude_inside(data_dir);
        Ok(s)
    }

    /// navi's own data dir (its database, this repository) when it lies
    /// inside the workspace: never part of a checkpoint.
    fn exclude_inside(&self, data_dir: &Path) {
        let (Ok(ws), Ok(data)) = (self.work.canonicalize(), data_dir.canonicalize()) else {
            return;
        };
        let Ok(rel) = data.strip_prefix(&ws) else {
            return;
        };
        let line = format!("/{}/\n", rel.to_string_lossy());
        let info = self.git_dir.join("info");
        let file = info.join("exclude");
        if std::fs::read_to_string(&file).is_ok_and(|t| t.contains(&line)) {
            return;
        }
        let _ = crate::private_fs::create_dir_all(&info);
        let old = std::fs::read_to_string(&file).unwrap_or_default();
        let _ = std::fs::write(&file, format!("{old}{line}"));
        crate::private_fs::tighten_if_exists(&file);
    }

    /// `git init --bare` of the shadow repository (no work tree yet).
    fn init(&self) -> Result<(), String> {
        let mut c = Command::new("git");
        for v in GIT_VARS {
            c.env_remove(v);
        }
        private(&mut c);
        let out = c
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .args(["init", "--quiet", "--bare", "--template="])
            .arg(&self.git_dir)
            .stdin(Stdio::null())
            .output()
            .map_err(|e| {
                if e.kind() == std::io::ErrorKind::NotFound {
                    "git is not installed (checkpoints need the git program on PATH)".to_string()
                } else {
                    format!("cannot run git: {e}")
                }
            })?;
        if !out.status.success() {
            let err = String::from_utf8_lossy(&out.stderr);
            return Err(format!("git init failed: {}", err.trim()));
        }
        Ok(())
    }

    fn command(&self, args: &[&str]) -> Command {
        let mut c = Command::new("git");
        for v in GIT_VARS {
            c.env_remove(v);
        }
        c.env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.work)
            .env("GIT_INDEX_FILE", &self.index)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .current_dir(&self.work)
            .args([
                "-c",
                "core.bare=false",
                "-c",
                "core.autocrlf=false",
                "-c",
                "core.safecrlf=false",
                "-c",
                "core.fsmonitor=false",
                "-c",
                "core.quotepath=false",
                "-c",
                "core.hooksPath=/dev/null",
                "-c",
                "gc.auto=0",
                "-c",
                "advice.addEmbeddedRepo=false",
                "-c",
                "core.symlinks=true",
            ])
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        private(&mut c);
        c
    }

    /// Runs git; stdout on success, a one-line reason otherwise.
    fn run(&self, args: &[&str], input: Option<&[u8]>) -> Result<Vec<u8>, String> {
        let mut cmd = self.command(args);
        if input.is_some() {
            cmd.stdin(Stdio::piped());
        }
        let mut child = cmd.spawn().map_err(|e| {
            if e.kind() == std::io::ErrorKind::NotFound {
                "git is not installed (checkpoints need the git program on PATH)".to_string()
            } else {
                format!("cannot run git: {e}")
            }
        })?;
        if let (Some(data), Some(mut stdin)) = (input, child.stdin.take()) {
            stdin
                .write_all(data)
                .map_err(|e| format!("cannot feed git: {e}"))?;
        }
        let out = child
            .wait_with_output()
            .map_err(|e| format!("git failed: {e}"))?;
        if out.status.success() {
            return Ok(out.stdout);
        }
        let err = String::from_utf8_lossy(&out.stderr);
        let line = err
            .lines()
            .rfind(|l| !l.trim().is_empty() && !l.starts_with("warning:"))
            .unwrap_or("no message")
            .trim();
        Err(format!(
            "git {} failed: {line}",
            args.first().unwrap_or(&"")
        ))
    }

    /// Records the workspace as it is now: the tree's id, and a note when
    /// some files could not be read (they are left out of the checkpoint).
    pub fn snapshot(&self) -> Result<(String, Option<String>), String> {
        let note = match self.run(&["add", "--all", "--ignore-errors", "--", "."], None) {
            Ok(_) => None,
            // A missing git or workspace: no checkpoint at all.
            Err(e) if e.starts_with("git is not") || e.starts_with("cannot run") => {
                return Err(e);
            }
            Err(e) => Some(e),
        };
        let out = self.run(&["write-tree"], None)?;
        Ok((String::from_utf8_lossy(&out).trim().to_string(), note))
    }

    /// Keeps `tree` alive under `refs/navi/<session>/<name>`.
    pub(crate) fn keep(&self, session: &str, name: &str, tree: &str) -> Result<(), String> {
        let r = format!("refs/navi/{}/{name}", safe(session));
        self.run(&["update-ref", &r, tree], None).map(|_| ())
    }

    /// What changed from tree `a` to tree `b`.
    pub fn changes(&self, a: &str, b: &str) -> Result<Vec<Change>, String> {
        let status = self.run(
            &[
                "diff-tree",
                "-r",
                "-z",
                "--no-renames",
                "--name-status",
                a,
                b,
            ],
            None,
        )?;
        let numstat = self.run(
            &["diff-tree", "-r", "-z", "--no-renames", "--numstat", a, b],
            None,
        )?;
        let mut out = Vec::new();
        let mut parts = status.split(|c| *c == 0).filter(|p| !p.is_empty());
        while let (Some(s), Some(p)) = (parts.next(), parts.next()) {
            let status = match s.first() {
                Some(b'A') => 'A',
                Some(b'D') => 'D',
                _ => 'M',
            };
            out.push(Change {
                path: String::from_utf8_lossy(p).into_owned(),
                status,
                added: 0,
                removed: 0,
                binary: false,
            });
        }
        for rec in numstat.split(|c| *c == 0).filter(|p| !p.is_empty()) {
            let text = String::from_utf8_lossy(rec);
            let mut f = text.splitn(3, '\t');
            let (Some(a), Some(r), Some(p)) = (f.next(), f.next(), f.next()) else {
                continue;
            };
            if let Some(c) = out.iter_mut().find(|c| c.path == p) {
                c.binary = a == "-";
                c.added = a.parse().unwrap_or(0);
                c.removed = r.parse().unwrap_or(0);
            }
        }
        Ok(out)
    }

    /// The blob id and mode of `path` in `tree`, `None` when it is not there.
    pub(crate) fn entry(&self, tree: &str, path: &str) -> Result<Option<(String, String)>, String> {
        let out = self.run(&["ls-tree", "-z", tree, "--", path], None)?;
        let text = String::from_utf8_lossy(&out);
        let Some(line) = text.split('\0').find(|l| !l.is_empty()) else {
            return Ok(None);
        };
        let mut f = line.split(['\t', ' ']);
        let (Some(mode), Some(_kind), Some(id)) = (f.next(), f.next(), f.next()) else {
            return Ok(None);
        };
        Ok(Some((id.to_string(), mode.to_string())))
    }

    /// The content of a blob.
    pub(crate) fn blob(&self, id: &str) -> Result<Vec<u8>, String> {
        self.run(&["cat-file", "blob", id], None)
    }

    /// The blob ids the files at `paths` would have now (`None`: no file).
    pub(crate) fn hash_now(&self, paths: &[String]) -> Result<Vec<Option<String>>, String> {
        let present: Vec<&String> = paths
            .iter()
            .filter(|p| {
                self.work
                    .join(p)
                    .symlink_metadata()
                    .is_ok_and(|m| !m.is_dir())
            })
            .collect();
        let mut ids = std::collections::HashMap::new();
        if !present.is_empty() {
            let list: String = present.iter().map(|p| format!("{p}\n")).collect();
            let out = self.run(
                &["hash-object", "--no-filters", "--stdin-paths"],
                Some(list.as_bytes()),
            )?;
            for (p, id) in present.iter().zip(String::from_utf8_lossy(&out).lines()) {
                ids.insert((*p).clone(), id.trim().to_string());
            }
        }
        Ok(paths.iter().map(|p| ids.get(p).cloned()).collect())
    }

    pub(crate) fn work(&self) -> &Path {
        &self.work
    }
}
