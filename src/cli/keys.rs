//! `navi keys set|list|remove PROVIDER`: API keys in Navi's key file
//! (`<data dir>/keys.json`, readable only by the user).
//!
//! Invariants: no key is ever printed, logged or echoed: `set` reads it
//! with the terminal's echo off (or from standard input when that is not a
//! terminal), `list` says only where each provider's key comes from.
use super::{Failure, GlobalArgs, load_config, out};
use crate::config::keys::KeyFile;
use crate::config::{Config, KeySource, Provider, Secret};
use clap::Subcommand;
use std::io::{BufRead, IsTerminal, Write};

#[derive(Subcommand, Debug)]
pub(crate) enum KeysCommand {
    /// Store the API key of a provider (asked for with the input hidden, or
    /// read from standard input when it is not a terminal).
    Set {
        /// The provider (anthropic, openai, openrouter, groq, … or a [providers.NAME]).
        #[arg(value_name = "PROVIDER")]
        name: String,
    },
    /// List the providers and where each one's key comes from (never the key).
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Forget the stored key of a provider.
    Remove {
        /// The provider.
        #[arg(value_name = "PROVIDER")]
        name: String,
    },
}

pub(crate) fn run(g: &GlobalArgs, command: KeysCommand) -> Result<u8, Failure> {
    let (config, paths, _) = load_config(g)?;
    let file = KeyFile::in_data_dir(&paths.data_dir);
    match command {
        KeysCommand::Set { name } => {
            let p = known(&config, &name)?;
            let key = read_key(&p.name)?;
            file.set(&p.name, &key).map_err(Failure::runtime)?;
            eprintln!(
                "stored the key of {} in {} (readable only by you)",
                p.name,
                file.path().display()
            );
            if let Some(v) = p
                .key_env
                .as_deref()
                .filter(|v| std::env::var(v).is_ok_and(|k| !k.trim().is_empty()))
            {
                eprintln!("note: {v} is set here, and wins over the stored key");
            }
            Ok(0)
        }
        KeysCommand::Remove { name } => {
            let p = known(&config, &name)?;
            if file.remove(&p.name).map_err(Failure::runtime)? {
                eprintln!("removed the stored key of {}", p.name);
            } else {
                eprintln!("no key of {} is stored; nothing to remove", p.name);
            }
            Ok(0)
        }
        KeysCommand::List { json } => list(&config, json),
    }
}

/// The provider `name` names, or a usage error listing the known ones.
fn known(config: &Config, name: &str) -> Result<Provider, Failure> {
    config.provider(name).ok_or_else(|| {
        let names = crate::config::providers::names(config);
        Failure::usage(format!(
            "unknown provider '{name}'{}; use one of {}, or add [providers.{name}] to the config",
            crate::config::suggest_name(name, &names),
            names.join(", ")
        ))
    })
}

/// Where a provider's key comes from, for people.
fn source(config: &Config, p: &Provider) -> String {
    match config.credentials.get(&p.name).map(|(_, s)| s) {
        Some(KeySource::Env(v)) => format!("{v} (environment)"),
        Some(KeySource::Stored) => "stored (navi keys)".into(),
        Some(KeySource::Config) => "[llm].openai_api_key".into(),
        None if p.key_required => "none: needed".into(),
        None => "-".into(),
    }
}

fn list(config: &Config, json: bool) -> Result<u8, Failure> {
    let providers = config.providers();
    if json {
        let v: Vec<serde_json::Value> = providers
            .iter()
            .map(|p| {
                serde_json::json!({"provider": p.name, "protocol": p.protocol.as_str(),
                    "base_url": crate::app::words::shown_url(&p.base_url),
                    "key_env": p.key_env, "key_required": p.key_required,
                    "has_key": config.credentials.get(&p.name).is_some(),
                    "key_source": source(config, p)})
            })
            .collect();
        let s = serde_json::to_string_pretty(&v).map_err(Failure::runtime)?;
        out::line(&s)?;
        return Ok(0);
    }
    let w = providers
        .iter()
        .map(|p| p.name.len())
        .max()
        .unwrap_or(8)
        .max(8);
    crate::outln!("{:<w$}  {:<9}  {:<28}  URL", "PROVIDER", "PROTOCOL", "KEY")?;
    for p in &providers {
        crate::outln!(
            "{:<w$}  {:<9}  {:<28}  {}",
            p.name,
            p.protocol.as_str(),
            source(config, p),
            crate::app::words::shown_url(&p.base_url)
        )?;
    }
    Ok(0)
}

/// The key, from a hidden prompt on a terminal or from standard input.
fn read_key(provider: &str) -> Result<Secret, Failure> {
    let stdin = std::io::stdin();
    let line = if stdin.is_terminal() {
        eprint!("API key for {provider} (input hidden): ");
        let _ = std::io::stderr().flush();
        let line = without_echo(&stdin, || hidden_line(&mut stdin.lock()));
        eprintln!();
        line
    } else {
        let mut s = String::new();
        stdin.lock().read_line(&mut s).map(|_| Ok(s))
    }
    .map_err(|e| Failure::runtime(format!("cannot read the key: {e}")))??;
    let key = Secret::new(line);
    if key.is_empty() {
        return Err(Failure::usage(format!(
            "no key given for {provider}; nothing was stored"
        )));
    }
    Ok(key)
}

/// One line typed with echo and signals off, byte by byte: Enter ends it,
/// Backspace takes back a character, Ctrl-C and Ctrl-D on an empty line
/// end it unset. Ctrl-C is read here rather than raised as a signal, so the
/// terminal is always given its echo back.
fn hidden_line(input: &mut impl std::io::Read) -> std::io::Result<Result<String, Failure>> {
    let mut bytes = Vec::new();
    let mut b = [0u8; 1];
    loop {
        if input.read(&mut b)? == 0 {
            break;
        }
        match b[0] {
            b'\n' | b'\r' => break,
            3 => {
                return Ok(Err(Failure {
                    code: 130,
                    message: "interrupted; no key was stored".into(),
                }));
            }
            4 if bytes.is_empty() => break,
            8 | 127 => {
                // Drop a whole UTF-8 character.
                while let Some(last) = bytes.pop() {
                    if last & 0xC0 != 0x80 {
                        break;
                    }
                }
            }
            c => bytes.push(c),
        }
    }
    Ok(Ok(String::from_utf8_lossy(&bytes).into_owned()))
}

/// Runs `f` with the terminal's echo, line editing and signal keys off,
/// restoring them afterwards.
fn without_echo<T>(stdin: &std::io::Stdin, f: impl FnOnce() -> T) -> T {
    use rustix::termios::{LocalModes, OptionalActions, SpecialCodeIndex, tcgetattr, tcsetattr};
    let Ok(saved) = tcgetattr(stdin) else {
        return f();
    };
    let mut quiet = saved.clone();
    quiet
        .local_modes
        .remove(LocalModes::ECHO | LocalModes::ICANON | LocalModes::ISIG);
    quiet.special_codes[SpecialCodeIndex::VMIN] = 1;
    quiet.special_codes[SpecialCodeIndex::VTIME] = 0;
    let _ = tcsetattr(stdin, OptionalActions::Now, &quiet);
    let result = f();
    let _ = tcsetattr(stdin, OptionalActions::Now, &saved);
    result
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::hidden_line;

    fn typed(bytes: &[u8]) -> Result<String, u8> {
        hidden_line(&mut &bytes[..]).unwrap().map_err(|f| f.code)
    }

    #[test]
    fn a_hidden_line_is_edited_and_ended_by_its_keys() {
        assert_eq!(typed(b"sk-abc\r").unwrap(), "sk-abc");
        assert_eq!(typed(b"sk-abx\x7fc\nrest").unwrap(), "sk-abc");
        assert_eq!(typed("ké\x08e\n".as_bytes()).unwrap(), "ke");
        assert_eq!(typed(b"\x04").unwrap(), "");
        assert_eq!(typed(b"").unwrap(), "");
        assert_eq!(typed(b"sk-\x03abc\n").unwrap_err(), 130);
    }
}
