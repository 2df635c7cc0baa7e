//! The git that navi runs for its checkpoints — outside the sandbox, so
//! nothing a tool can write may steer it.
//!
//! Invariants:
//! - the program is found on `PATH` outside every directory tools can
//!   write (a `git` planted in `~/.local/bin` of a workspace that is the
//!   home directory is never run);
//! - the environment is cleared: no `GIT_*` variable of the user's, `HOME`
//!   and `XDG_CONFIG_HOME` an empty directory of navi's, no system or global
//!   configuration (`GIT_CONFIG_NOSYSTEM`, `GIT_CONFIG_GLOBAL=/dev/null`), no
//!   system attributes; the only configuration read is the shadow
//!   repository's own (navi wrote it, in the data dir tools cannot write)
//!   and the `-c` settings below;
//! - attributes from the work tree are not read (`GIT_ATTR_SOURCE` is the
//!   empty tree) and the shadow repository's `info/attributes` unsets
//!   `filter`, `diff`, `text`, `eol`, `ident`, `working-tree-encoding` and
//!   `merge` for every path, so no filter, driver or conversion applies even
//!   where `GIT_ATTR_SOURCE` is not known — and files are stored byte for
//!   byte;
//! - hooks point at `/dev/null`, `core.fsmonitor` is off; the commands
//!   used start no other program (nested repositories are never asked for
//!   their status: see `shadow::Shadow::snapshot`).
use std::ffi::OsStr;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

/// The empty tree's id: attributes are read from it instead of the work tree.
const EMPTY_TREE: &str = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";

/// What the shadow repository's `info/attributes` holds.
pub(crate) const ATTRIBUTES: &str =
    "* !filter !diff -text !eol -ident -working-tree-encoding !merge\n";

/// Settings given on every command line (they win over any file).
const SETTINGS: &[&str] = &[
    "core.bare=false",
    "core.autocrlf=false",
    "core.safecrlf=false",
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.attributesFile=/dev/null",
    "core.excludesFile=/dev/null",
    "core.untrackedCache=false",
    "core.splitIndex=false",
    "core.sparseCheckout=false",
    "core.quotepath=false",
    "core.symlinks=true",
    "core.filemode=true",
    "core.ignoreCase=false",
    "index.sparse=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "advice.addEmbeddedRepo=false",
    "submodule.recurse=false",
    "diff.ignoreSubmodules=all",
];

/// How to run git for one shadow repository and index.
#[derive(Clone, Debug)]
pub(crate) struct Git {
    program: PathBuf,
    /// An empty directory of navi's: `HOME` and `XDG_CONFIG_HOME`.
    home: PathBuf,
    pub(crate) git_dir: PathBuf,
    pub(crate) work_tree: PathBuf,
    pub(crate) index: PathBuf,
    /// A snapshot no one may be waiting for yet: it uses one thread.
    pub(crate) background: bool,
}

/// The first `git` on `PATH` that lies outside `untrusted` (the
/// directories tools can write).
pub(crate) fn find_program(untrusted: &[PathBuf]) -> Result<PathBuf, String> {
    find_in(&std::env::var_os("PATH").unwrap_or_default(), untrusted)
}

/// [`find_program`] with a given `PATH`.
pub(crate) fn find_in(path: &OsStr, untrusted: &[PathBuf]) -> Result<PathBuf, String> {
    let untrusted: Vec<PathBuf> = untrusted
        .iter()
        .filter_map(|p| p.canonicalize().ok())
        .collect();
    let mut skipped = None;
    for dir in std::env::split_paths(path) {
        if !dir.is_absolute() {
            continue;
        }
        let candidate = dir.join("git");
        let Ok(meta) = std::fs::metadata(&candidate) else {
            continue;
        };
        use std::os::unix::fs::PermissionsExt;
        if !meta.is_file() || meta.permissions().mode() & 0o111 == 0 {
            continue;
        }
        let real_dir = dir.canonicalize().unwrap_or(dir.clone());
        let real = candidate.canonicalize().unwrap_or(candidate.clone());
        if untrusted
            .iter()
            .any(|u| real_dir.starts_with(u) || real.starts_with(u))
        {
            skipped.get_or_insert(candidate);
            continue;
        }
        return Ok(candidate);
    }
    Err(match skipped {
        Some(p) => format!(
            "the only git on PATH is {}, inside a directory tools can write; navi does not run it (install git elsewhere on PATH)",
            p.display()
        ),
        None => "git is not installed (checkpoints need the git program on PATH)".into(),
    })
}

/// The error text of a failed git: its last meaningful stderr line.
fn failure(args: &[&OsStr], stderr: &[u8]) -> String {
    let err = String::from_utf8_lossy(stderr);
    let line = err
        .lines()
        .rfind(|l| !l.trim().is_empty() && !l.starts_with("warning:") && !l.starts_with("hint:"))
        .unwrap_or("no message")
        .trim();
    format!(
        "git {} failed: {}",
        args.first()
            .map(|a| a.to_string_lossy())
            .unwrap_or_default(),
        crate::checkpoint::names::shown(line.as_bytes())
    )
}

fn spawn_error(e: std::io::Error) -> String {
    if e.kind() == std::io::ErrorKind::NotFound {
        "git is not installed (checkpoints need the git program on PATH)".to_string()
    } else {
        format!("cannot run git: {e}")
    }
}

impl Git {
    pub(crate) fn new(
        program: PathBuf,
        home: PathBuf,
        git_dir: PathBuf,
        work_tree: PathBuf,
        index: PathBuf,
    ) -> Git {
        Git {
            program,
            home,
            git_dir,
            work_tree,
            index,
            background: false,
        }
    }

    /// A command with the cleared environment and the fixed settings.
    pub(crate) fn command<S: AsRef<OsStr>>(&self, args: &[S]) -> Command {
        let mut c = Command::new(&self.program);
        let mut path = std::ffi::OsString::new();
        if let Some(dir) = self.program.parent() {
            path.push(dir);
            path.push(":");
        }
        path.push("/usr/bin:/bin");
        c.env_clear()
            .env("PATH", path)
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", &self.home)
            .env("LC_ALL", "C")
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_ATTR_NOSYSTEM", "1")
            .env("GIT_ATTR_SOURCE", EMPTY_TREE)
            .env("GIT_DIR", &self.git_dir)
            .env("GIT_WORK_TREE", &self.work_tree)
            .env("GIT_INDEX_FILE", &self.index)
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_OPTIONAL_LOCKS", "0")
            .env("GIT_LITERAL_PATHSPECS", "1")
            .env("GIT_NO_REPLACE_OBJECTS", "1")
            .env("GIT_ADVICE", "0")
            .current_dir(&self.work_tree);
        for s in SETTINGS {
            c.arg("-c").arg(s);
        }
        // One thread for the `stat` of every file (git's default is up to
        // 20): a snapshot in the background leaves the other cores to the
        // turn. (Lowering its priority instead starved the turns that wait
        // for it on a busy machine.)
        if self.background {
            c.arg("-c").arg("core.preloadIndex=false");
        }
        c.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        private(&mut c);
        c
    }

    /// The same git with another index file.
    pub(crate) fn with_index(&self, index: PathBuf) -> Git {
        Git {
            index,
            ..self.clone()
        }
    }

    /// Runs git; its stdout on success, a one-line reason otherwise.
    pub(crate) fn run<S: AsRef<OsStr>>(
        &self,
        args: &[S],
        input: Option<&[u8]>,
    ) -> Result<Vec<u8>, String> {
        let out = self.output(self.command(args), input)?;
        if out.status.success() {
            return Ok(out.stdout);
        }
        let args: Vec<&OsStr> = args.iter().map(AsRef::as_ref).collect();
        Err(failure(&args, &out.stderr))
    }

    /// The one-line reason of a failed git (see [`Git::run`]).
    pub(crate) fn reason<S: AsRef<OsStr>>(args: &[S], stderr: &[u8]) -> String {
        let args: Vec<&OsStr> = args.iter().map(AsRef::as_ref).collect();
        failure(&args, stderr)
    }

    /// Runs a command made by [`Git::command`], feeding it `input`; what it
    /// printed and how it ended.
    pub(crate) fn output(
        &self,
        mut cmd: Command,
        input: Option<&[u8]>,
    ) -> Result<std::process::Output, String> {
        if input.is_some() {
            cmd.stdin(Stdio::piped());
        }
        let mut child = cmd.spawn().map_err(spawn_error)?;
        // Fed from a thread: git may answer before it has read everything.
        let feeder = match (input, child.stdin.take()) {
            (Some(data), Some(mut stdin)) => {
                let data = data.to_vec();
                Some(std::thread::spawn(move || stdin.write_all(&data)))
            }
            _ => None,
        };
        let out = child
            .wait_with_output()
            .map_err(|e| format!("git failed: {e}"))?;
        if let Some(f) = feeder {
            let _ = f.join();
        }
        Ok(out)
    }

    /// How many NUL-terminated records git prints, reading no further than
    /// `cap` (git is stopped there).
    pub(crate) fn count_records<S: AsRef<OsStr>>(
        &self,
        args: &[S],
        cap: usize,
    ) -> Result<usize, String> {
        let mut child = self
            .command(args)
            .stderr(Stdio::null())
            .spawn()
            .map_err(spawn_error)?;
        let mut n = 0;
        if let Some(mut out) = child.stdout.take() {
            let mut buf = vec![0u8; 64 * 1024];
            while n < cap {
                match out.read(&mut buf) {
                    Ok(0) | Err(_) => break,
                    Ok(k) => n += buf[..k].iter().filter(|b| **b == 0).count(),
                }
            }
        }
        if n >= cap {
            let _ = child.kill();
        }
        let status = child.wait().map_err(|e| format!("git failed: {e}"))?;
        if n < cap && !status.success() {
            let args: Vec<&OsStr> = args.iter().map(AsRef::as_ref).collect();
            return Err(failure(&args, b""));
        }
        Ok(n.min(cap))
    }

    pub(crate) fn git_dir(&self) -> &Path {
        &self.git_dir
    }
}

/// The shadow repository holds copies of the user's files: git runs with
/// umask 077, so what it creates is the owner's only (dirs 0700, files 0600,
/// objects 0400), whatever navi's own umask.
#[allow(unsafe_code)]
fn private(c: &mut Command) {
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
