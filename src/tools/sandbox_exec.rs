//! `navi __sandbox-exec --policy FILE -- PROGRAM ARGS…`: a command started
//! by someone else (the editor's terminal, under `navi acp`) inside the
//! same kernel sandbox a local `terminal` child gets.
//!
//! Invariants:
//! - the spec file ([`ExecSpec`]: the policy, the environment rules) is
//!   written by navi ([`write_spec`]) with mode 0600 in a directory of
//!   navi's data dir that sandboxed children cannot write; the runner
//!   refuses a file that is missing, unreadable, not valid, not owned by
//!   this user or writable by others — exit 2, nothing runs (never
//!   unsandboxed in place of the policy); it deletes the file once read;
//! - the child starts exactly as [`super::process::run`] starts a local one:
//!   the environment scrubbed of secrets, a session of its own
//!   ([`super::child_setup::detach`]), SIGKILL when the runner dies,
//!   [`crate::sandbox::enforce::attach`] last; stdin/stdout/stderr are
//!   the runner's own (the editor's terminal);
//! - SIGINT, SIGTERM and SIGHUP sent to the runner go on to the child's
//!   process group; once the child has exited, what is left of its session
//!   (background jobs) is killed, like a local call;
//! - the exit code is the child's, or 128 + the signal that ended it; a
//!   child that could not be started (including a sandbox the kernel cannot
//!   enforce when it is required) exits 126 with the reason on stderr.
use super::child_setup::{detach, die_with_parent, kill_tree, signal_group};
use crate::sandbox::Policy;
use serde::{Deserialize, Serialize};
use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

/// The name of the hidden subcommand.
pub const SUBCOMMAND: &str = "__sandbox-exec";

/// Exit code for a bad or missing spec file.
const BAD_SPEC: u8 = 2;
/// Exit code when the child could not be started.
const CANNOT_START: u8 = 126;

/// What the runner needs besides the command.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub(crate) struct ExecSpec {
    pub(crate) policy: Policy,
    /// `[security].env_passthrough`.
    #[serde(default)]
    pub(crate) env_passthrough: Vec<String>,
    /// Drop exported bash functions (the allow-list is on: an exported
    /// function could shadow an allowed name).
    #[serde(default)]
    pub(crate) drop_bash_funcs: bool,
    /// Where the runner writes the child's pid, so navi can end the
    /// child's session even when the editor killed the runner outright.
    #[serde(default)]
    pub(crate) pid_file: Option<PathBuf>,
}

/// After the command ended: kills what is left of the session whose
/// leader's pid the runner wrote to `pid_file` (SIGKILL of the runner
/// leaves its grandchildren), and removes the file.
pub(crate) fn end_leftovers(pid_file: &Path) {
    if let Some(pid) = std::fs::read_to_string(pid_file)
        .ok()
        .and_then(|t| t.trim().parse::<u32>().ok())
    {
        kill_tree(pid);
    }
    let _ = std::fs::remove_file(pid_file);
}

/// Where spec files go: `<data_dir>/run` (private; read-only to sandboxed
/// children, like the rest of navi's data dir outside the session dirs).
pub(crate) fn spec_dir(paths: &crate::config::Paths) -> PathBuf {
    paths.data_dir.join("run")
}

/// Writes `spec` to a new 0600 file in `dir` (created private) and returns
/// its path; `spec.pid_file` becomes the same name with `.pid`. The caller
/// removes both after the command ended ([`end_leftovers`]).
pub(crate) fn write_spec(dir: &Path, spec: &mut ExecSpec) -> std::io::Result<PathBuf> {
    crate::private_fs::create_dir_all(dir)?;
    static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    for _ in 0..8 {
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let name = format!("sandbox-{}-{nanos:08x}-{n}.json", std::process::id());
        let path = dir.join(name);
        match std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(&path)
        {
            Ok(mut f) => {
                spec.pid_file = Some(path.with_extension("pid"));
                let text = serde_json::to_vec(&*spec).map_err(std::io::Error::other);
                let written = text.and_then(|t| f.write_all(&t));
                if let Err(e) = written {
                    let _ = std::fs::remove_file(&path);
                    return Err(e);
                }
                return Ok(path);
            }
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(std::io::Error::other(
        "no free name for the sandbox spec file",
    ))
}

/// Reads and checks the spec file (see the module invariants).
pub(crate) fn read_spec(path: &Path) -> Result<ExecSpec, String> {
    let shown = path.display();
    let meta = std::fs::symlink_metadata(path)
        .map_err(|e| format!("cannot read the sandbox policy file {shown}: {e}"))?;
    if !meta.is_file() {
        return Err(format!(
            "the sandbox policy file {shown} is not a regular file"
        ));
    }
    if meta.uid() != super::process::current_uid() || meta.mode() & 0o022 != 0 {
        return Err(format!(
            "the sandbox policy file {shown} must belong to this user and be writable by no one else"
        ));
    }
    let text = std::fs::read(path)
        .map_err(|e| format!("cannot read the sandbox policy file {shown}: {e}"))?;
    serde_json::from_slice(&text)
        .map_err(|e| format!("the sandbox policy file {shown} is not a valid policy: {e}"))
}

/// The exit code for a child's status: its code, or 128 + its signal.
fn exit_code(status: std::process::ExitStatus) -> u8 {
    use std::os::unix::process::ExitStatusExt;
    match (status.code(), status.signal()) {
        (Some(c), _) => (c & 0xff) as u8,
        (None, Some(s)) => (128 + (s & 0x7f)) as u8,
        (None, None) => 1,
    }
}

/// Runs the subcommand; returns the process's exit code.
pub async fn main(spec_file: &Path, command: &[OsString]) -> u8 {
    let spec = match read_spec(spec_file) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("navi {SUBCOMMAND}: {e}; nothing was run");
            return BAD_SPEC;
        }
    };
    let _ = std::fs::remove_file(spec_file);
    let Some((program, args)) = command.split_first() else {
        eprintln!("navi {SUBCOMMAND}: no command given after --");
        return BAD_SPEC;
    };
    run(&spec, program, args).await
}

async fn run(spec: &ExecSpec, program: &OsStr, args: &[OsString]) -> u8 {
    use tokio::signal::unix::{SignalKind, signal};
    let shown = program.to_string_lossy();
    let mut sigs = Vec::new();
    for kind in [
        SignalKind::interrupt(),
        SignalKind::terminate(),
        SignalKind::hangup(),
    ] {
        match signal(kind) {
            Ok(s) => sigs.push((kind.as_raw_value(), s)),
            Err(e) => {
                eprintln!("navi {SUBCOMMAND}: cannot watch signals: {e}");
                return CANNOT_START;
            }
        }
    }
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args);
    super::child_env::scrub(&mut cmd, &spec.env_passthrough);
    if spec.drop_bash_funcs {
        for (k, _) in std::env::vars_os() {
            if k.to_string_lossy().starts_with("BASH_FUNC_") {
                cmd.env_remove(k);
            }
        }
    }
    detach(&mut cmd);
    die_with_parent(&mut cmd);
    if let Err(e) = crate::sandbox::enforce::attach(&mut cmd, &spec.policy) {
        eprintln!("navi {SUBCOMMAND}: cannot start {shown}: {e}");
        return CANNOT_START;
    }
    let mut child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => {
            eprintln!("navi {SUBCOMMAND}: cannot start {shown}: {e}");
            return CANNOT_START;
        }
    };
    let pid = child.id().unwrap_or(0);
    if let Some(f) = &spec.pid_file {
        let _ = std::fs::write(f, pid.to_string());
    }
    let (mut a, mut b, mut c) = match <[_; 3]>::try_from(sigs) {
        Ok([a, b, c]) => (a, b, c),
        Err(_) => return CANNOT_START,
    };
    let status = loop {
        tokio::select! {
            s = child.wait() => break s,
            _ = a.1.recv() => signal_group(pid, a.0),
            _ = b.1.recv() => signal_group(pid, b.0),
            _ = c.1.recv() => signal_group(pid, c.0),
        }
    };
    kill_tree(pid);
    match status {
        Ok(s) => exit_code(s),
        Err(e) => {
            eprintln!("navi {SUBCOMMAND}: lost the command {shown}: {e}");
            1
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_round_trips_and_a_loose_file_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let spec = ExecSpec {
            policy: Policy {
                writable: vec![dir.path().to_path_buf()],
                network: true,
                required: true,
                ..Default::default()
            },
            env_passthrough: vec!["MY_*".into()],
            drop_bash_funcs: true,
            pid_file: None,
        };
        let mut spec = spec;
        let path = write_spec(&dir.path().join("run"), &mut spec).unwrap();
        assert_eq!(spec.pid_file, Some(path.with_extension("pid")));
        let mode = std::fs::metadata(&path).unwrap().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let back = read_spec(&path).unwrap();
        assert_eq!(back.policy, spec.policy);
        assert_eq!(back.env_passthrough, spec.env_passthrough);

        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o666)).unwrap();
        let e = read_spec(&path).unwrap_err();
        assert!(e.contains("writable by no one else"), "{e}");
        let junk = dir.path().join("junk.json");
        std::fs::write(&junk, "{\"policy\": 3}").unwrap();
        let e = read_spec(&junk).unwrap_err();
        assert!(
            e.contains("not a valid policy") && e.contains("junk.json"),
            "{e}"
        );
        let e = read_spec(&dir.path().join("gone.json")).unwrap_err();
        assert!(e.contains("cannot read"), "{e}");
    }
}
