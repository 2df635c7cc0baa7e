//! Shell completion of option values: `navi completions bash` completes
//! `--profile`/`-p` with profile ids, `--model`/`-m` with model names and
//! `--session`/`-s` with session ids. The generated script asks the hidden
//! `navi __complete profiles|models|sessions`, which reads local files (the
//! profiles, the config, the session database). Models are the profiles'
//! and every configured provider's (`provider/model`): the latter from the
//! list kept in the data dir (`app::model_cache`), asked of the providers
//! again (at once, [`LIST_WAIT`] in all) only when that list is missing or
//! older than ten minutes.
//!
//! Invariant: a completion script offers only what `navi --help` shows —
//! never a hidden subcommand (`__complete`) or a hidden flag (`memory
//! extract --auto`): the scripts are generated from [`public`], the command
//! tree without them.
use super::{Cli, Failure, GlobalArgs, load_config, out};
use crate::app::model_cache;
use clap::{Command, CommandFactory};
use std::time::Duration;

/// How long completion waits for the providers when it has no list.
const LIST_WAIT: Duration = Duration::from_secs(3);

/// The completion script for `shell`.
pub(crate) fn script(shell: clap_complete::Shell) -> String {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut public(&Cli::command()), "navi", &mut buf);
    let script = String::from_utf8_lossy(&buf);
    match shell {
        clap_complete::Shell::Bash => patch_bash(&script),
        _ => script.into_owned(),
    }
}

/// `cmd` without its hidden subcommands and arguments, at every level
/// (names, help texts, value hints and aliases kept: all a script needs).
fn public(cmd: &Command) -> Command {
    let mut out = Command::new(cmd.get_name().to_string());
    if let Some(about) = cmd.get_about() {
        out = out.about(about.clone());
    }
    if let Some(version) = cmd.get_version() {
        out = out.version(version.to_string());
    }
    out = out.visible_aliases(cmd.get_visible_aliases().map(str::to_string));
    for arg in cmd.get_arguments().filter(|a| !a.is_hide_set()) {
        out = out.arg(arg.clone());
    }
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        out = out.subcommand(public(sub));
    }
    out
}

/// What the bash script asks for after an option.
const VALUE_OPTIONS: &[(&str, &str)] = &[
    ("--profile", "profiles"),
    ("-p", "profiles"),
    ("--model", "models"),
    ("-m", "models"),
    ("--session", "sessions"),
    ("-s", "sessions"),
];

/// Replaces clap's file-name completion after the value options with a
/// call of `navi __complete`.
fn patch_bash(script: &str) -> String {
    let mut out = script.to_string();
    for (opt, what) in VALUE_OPTIONS {
        let from = format!(
            "                {opt})\n                    COMPREPLY=($(compgen -f \"${{cur}}\"))"
        );
        let to = format!(
            "                {opt})\n                    COMPREPLY=($(compgen -W \"$(\"${{COMP_WORDS[0]}}\" __complete {what} 2>/dev/null)\" -- \"${{cur}}\"))"
        );
        out = out.replace(&from, &to);
    }
    out
}

/// `navi __complete WHAT`: one candidate a line.
pub(crate) async fn values(g: &GlobalArgs, what: &str) -> Result<u8, Failure> {
    let (config, paths, _) = load_config(g)?;
    let list: Vec<String> = match what {
        "profiles" => {
            let reg =
                crate::profile::ProfileRegistry::load(Some(&paths.config_dir.join("profiles")));
            reg.ids()
        }
        "models" => {
            let reg =
                crate::profile::ProfileRegistry::load(Some(&paths.config_dir.join("profiles")));
            let served = match model_cache::read(&paths.data_dir, model_cache::MAX_AGE) {
                Some(names) => names,
                None => model_cache::refresh(&config, &paths.data_dir, LIST_WAIT).await,
            };
            let mut v: Vec<String> = std::iter::once(config.llm.default_model.clone())
                .chain(reg.all().flat_map(|p| p.model.clone()))
                .chain(served)
                .filter(|m| !m.is_empty())
                .collect();
            v.sort();
            v.dedup();
            v
        }
        "sessions" => crate::app::stored_session_ids(&paths).map_err(Failure::runtime)?,
        other => {
            return Err(Failure::usage(format!(
                "__complete: unknown list '{other}'; use profiles, models or sessions"
            )));
        }
    };
    for v in list {
        out::line(&v)?;
    }
    Ok(0)
}
