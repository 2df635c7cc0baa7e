//! The SSH hosts file and the per-session ControlMaster sockets of
//! `ssh_exec`.
//!
//! Invariants: the hosts file (`[security].ssh_hosts_file`, relative to the
//! config dir) maps names to `{host, port, user, key_file}` and is validated
//! so no value can be taken for an ssh option; control sockets live in a
//! directory only this user can enter (0700, owner checked) and their names
//! start with a stable hash of the session id, so [`session_prefix`] finds
//! exactly one session's sockets; socket paths stay short enough for the
//! 108-byte Unix socket limit (including ssh's temporary suffix).
use crate::tools::ToolEnv;
use crate::tools::paths::expand_tilde;
use serde::Deserialize;
use std::collections::BTreeMap;
use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::PathBuf;

/// One named host.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
pub(crate) struct HostEntry {
    pub(crate) host: String,
    #[serde(default = "default_port")]
    pub(crate) port: u16,
    #[serde(default)]
    pub(crate) user: Option<String>,
    #[serde(default)]
    pub(crate) key_file: Option<String>,
}

fn default_port() -> u16 {
    22
}

/// Longest control directory path we use (socket name and ssh's temporary
/// suffix must still fit in 108 bytes).
const MAX_CONTROL_DIR: usize = 60;

/// FNV-1a: a stable hash (unlike `DefaultHasher`) so sockets made by one
/// Navi process are found by the next.
pub(crate) fn fnv64(s: &str) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in s.bytes() {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The hosts file path (relative paths resolve against the config dir).
pub(crate) fn hosts_file(env: &ToolEnv) -> PathBuf {
    let p = expand_tilde(env.config.security.ssh_hosts_file.trim());
    if p.is_absolute() {
        p
    } else {
        env.paths.config_dir.join(p)
    }
}

/// A key file path (relative paths resolve against the config dir).
pub(crate) fn key_path(env: &ToolEnv, key: &str) -> PathBuf {
    let p = expand_tilde(key.trim());
    if p.is_absolute() {
        p
    } else {
        env.paths.config_dir.join(p)
    }
}

fn bad_value(v: &str) -> bool {
    v.is_empty() || v.starts_with('-') || v.chars().any(|c| c.is_whitespace() || c.is_control())
}

/// Reads and validates the hosts file.
pub(crate) fn load(env: &ToolEnv) -> Result<BTreeMap<String, HostEntry>, String> {
    let path = hosts_file(env);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            return Err(format!(
                "no SSH hosts are configured: {} does not exist; create it with {{\"name\": {{\"host\": \"…\", \"port\": 22, \"user\": \"…\", \"key_file\": \"…\"}}}}",
                path.display()
            ));
        }
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let hosts: BTreeMap<String, HostEntry> = serde_json::from_str(&text)
        .map_err(|e| format!("invalid SSH hosts file {}: {e}", path.display()))?;
    for (name, h) in &hosts {
        if bad_value(&h.host) {
            return Err(format!(
                "host '{name}' in {}: invalid 'host' value",
                path.display()
            ));
        }
        if h.user
            .as_deref()
            .is_some_and(|u| bad_value(u) || u.contains('@'))
        {
            return Err(format!(
                "host '{name}' in {}: invalid 'user' value",
                path.display()
            ));
        }
    }
    Ok(hosts)
}

/// The directory holding control sockets, created 0700.
pub fn control_dir(env: &ToolEnv) -> Result<PathBuf, String> {
    let preferred = env.paths.data_dir.join("ssh");
    let dir = if preferred.as_os_str().len() <= MAX_CONTROL_DIR {
        preferred
    } else {
        std::env::temp_dir().join(format!("navi-ssh-{}", crate::tools::process::current_uid()))
    };
    if !dir.exists() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(&dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let meta = std::fs::symlink_metadata(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    if !meta.is_dir() || meta.uid() != crate::tools::process::current_uid() {
        return Err(format!(
            "{} is not a directory owned by this user; remove it",
            dir.display()
        ));
    }
    Ok(dir)
}

/// File-name prefix of one session's sockets.
pub fn session_prefix(session_id: &str) -> String {
    format!("s{:012x}-", fnv64(session_id) & 0xffff_ffff_ffff)
}

/// The control socket for one session and host.
pub(crate) fn control_socket(
    env: &ToolEnv,
    session_id: &str,
    name: &str,
    h: &HostEntry,
) -> Result<PathBuf, String> {
    let conn = format!("{name}\0{}\0{}\0{:?}", h.host, h.port, h.user);
    Ok(control_dir(env)?.join(format!(
        "{}{:08x}",
        session_prefix(session_id),
        fnv64(&conn) & 0xffff_ffff
    )))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_are_stable_and_distinct() {
        assert_eq!(session_prefix("abc"), session_prefix("abc"));
        assert_ne!(session_prefix("abc"), session_prefix("abd"));
        assert_eq!(session_prefix("x").len(), 14);
    }

    #[test]
    fn host_values_are_validated() {
        assert!(bad_value("-oProxyCommand=x"));
        assert!(bad_value("a b"));
        assert!(!bad_value("example.com"));
    }
}
