//! The environment tool processes start with: the user's environment minus
//! its secrets.
//!
//! Invariants: every child started through [`super::process`] (terminal,
//! code_exec, ssh_exec, user tools) gets no inherited variable whose name
//! looks like a credential ([`is_secret_name`]) unless that name is on
//! `[security].env_passthrough`; variables a tool sets explicitly on the
//! command (e.g. `NAVI_SESSION_ID`) are kept. What a child can print, the
//! model reads and the session database stores — so keys never get there.
use std::ffi::OsStr;
use tokio::process::Command;

/// Whether an environment variable name looks like it holds a secret:
/// `*_API_KEY`, `*_KEY`, `*_TOKEN`, `*_SECRET`, anything with `PASSWORD`,
/// `PASSWD`, `SECRET`, `TOKEN`, `APIKEY`, `ACCESS_KEY`, `PRIVATE_KEY` or
/// `CREDENTIAL` in it (case-insensitive). `SSH_AUTH_SOCK` and similar
/// socket paths are not secrets and stay.
pub(crate) fn is_secret_name(name: &str) -> bool {
    let n = name.to_ascii_uppercase();
    const SUFFIXES: [&str; 5] = ["_KEY", "_TOKEN", "_SECRET", "_PASS", "_PAT"];
    const PARTS: [&str; 9] = [
        "PASSWORD",
        "PASSWD",
        "SECRET",
        "TOKEN",
        "API_KEY",
        "APIKEY",
        "ACCESS_KEY",
        "PRIVATE_KEY",
        "CREDENTIAL",
    ];
    n == "KEY" || SUFFIXES.iter().any(|s| n.ends_with(s)) || PARTS.iter().any(|p| n.contains(p))
}

/// Whether `name` is on the pass-through list: exact names, or a prefix
/// ending in `*` (`MY_APP_*`). Case-sensitive, like the environment.
pub(crate) fn passes_through(name: &str, list: &[String]) -> bool {
    list.iter()
        .map(|p| p.trim())
        .any(|p| match p.strip_suffix('*') {
            Some(prefix) => name.starts_with(prefix),
            None => p == name,
        })
}

/// The names of inherited variables [`scrub`] removes.
pub(crate) fn secret_names(passthrough: &[String]) -> Vec<String> {
    std::env::vars_os()
        .filter_map(|(k, _)| k.into_string().ok())
        .filter(|k| is_secret_name(k) && !passes_through(k, passthrough))
        .collect()
}

/// Removes inherited secrets from `cmd`'s environment (explicitly set
/// variables are left alone).
pub(crate) fn scrub(cmd: &mut Command, passthrough: &[String]) {
    let explicit: Vec<String> = cmd
        .as_std()
        .get_envs()
        .filter(|(_, v)| v.is_some())
        .filter_map(|(k, _)| k.to_str().map(String::from))
        .collect();
    for name in secret_names(passthrough) {
        if !explicit.contains(&name) {
            cmd.env_remove(OsStr::new(&name));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_are_recognised() {
        for s in [
            "OPENAI_API_KEY",
            "ANTHROPIC_API_KEY",
            "GITHUB_TOKEN",
            "NAVI_TOKEN",
            "NAVI_OPENAI_API_KEY",
            "AWS_SECRET_ACCESS_KEY",
            "AWS_ACCESS_KEY_ID",
            "DB_PASSWORD",
            "MYSQL_PWD_PASSWORD",
            "client_secret",
            "HF_TOKEN",
            "SOME_APIKEY",
            "GOOGLE_APPLICATION_CREDENTIALS",
        ] {
            assert!(is_secret_name(s), "{s}");
        }
        for s in [
            "PATH",
            "HOME",
            "SSH_AUTH_SOCK",
            "LANG",
            "NAVI_SESSION_ID",
            "TERM",
            "KEYBOARD",
        ] {
            assert!(!is_secret_name(s), "{s}");
        }
    }

    /// Every provider's key variable (the presets', and any name a
    /// `[providers]` table may give: the config refuses others) is scrubbed.
    #[test]
    fn provider_key_variables_are_secrets() {
        for p in crate::config::providers::PRESETS {
            if let Some(v) = p.key_env {
                assert!(is_secret_name(v), "{}: {v}", p.name);
            }
        }
        for v in ["WORK_LLM_KEY", "MY_PROXY_TOKEN", "LLM_SECRET", "X_API_KEY"] {
            assert!(crate::config::providers::key_env_name_ok(v), "{v}");
            assert!(is_secret_name(v), "{v}");
        }
    }

    #[test]
    fn passthrough_exact_and_prefix() {
        let list = vec!["GITHUB_TOKEN".to_string(), "MY_*".to_string()];
        assert!(passes_through("GITHUB_TOKEN", &list));
        assert!(passes_through("MY_API_KEY", &list));
        assert!(!passes_through("OPENAI_API_KEY", &list));
        assert!(!passes_through("github_token", &list));
    }
}
