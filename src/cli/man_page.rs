//! `navi man`: one man page, navi(1), with everything in it. clap_mangen
//! draws the title, synopsis and global options; the subcommands are folded
//! in (with their own options, recursively) instead of pointing at
//! navi-run(1) and friends, which are not installed. Then the slash
//! commands (from the command table), the environment (from the config's
//! list of variables), the files and the exit status.
use super::Cli;
use clap::CommandFactory;
use std::fmt::Write as _;

/// Escapes text for roff (backslashes, leading dots and quotes, dashes).
fn roff(s: &str) -> String {
    let s = s.replace('\\', "\\\\").replace('-', "\\-");
    if s.starts_with('.') || s.starts_with('\'') {
        format!("\\&{s}")
    } else {
        s
    }
}

/// One option or positional argument of a subcommand.
fn arg_line(a: &clap::Arg) -> Option<String> {
    if a.is_hide_set() || a.get_id() == "help" || a.get_id() == "version" {
        return None;
    }
    let value = a
        .get_value_names()
        .and_then(|v| v.first())
        .map(|v| v.to_string())
        .unwrap_or_else(|| a.get_id().to_string().to_uppercase());
    let takes = a.get_action().takes_values();
    let name = match (a.get_short(), a.get_long()) {
        (Some(s), Some(l)) => format!("-{s}, --{l}"),
        (None, Some(l)) => format!("--{l}"),
        (Some(s), None) => format!("-{s}"),
        (None, None) => return Some(format!("{value}\t{}", help_of(a))),
    };
    let name = if takes {
        format!("{name} {value}")
    } else {
        name
    };
    Some(format!("{name}\t{}", help_of(a)))
}

fn help_of(a: &clap::Arg) -> String {
    a.get_help().map(|h| h.to_string()).unwrap_or_default()
}

/// The COMMANDS section: every visible subcommand, nested ones under their
/// parent's name, each with its arguments.
fn commands(out: &mut String, cmd: &clap::Command, path: &str) {
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        if sub.get_name() == "help" {
            continue;
        }
        let full = format!("{path} {}", sub.get_name());
        let _ = writeln!(out, ".TP\n\\fB{}\\fR", roff(&full));
        let about = sub.get_about().map(|a| a.to_string()).unwrap_or_default();
        let _ = writeln!(out, "{}", roff(&about));
        let args: Vec<String> = sub.get_arguments().filter_map(arg_line).collect();
        if !args.is_empty() {
            let _ = writeln!(out, ".RS");
            for a in args {
                let (name, help) = a.split_once('\t').unwrap_or((&a, ""));
                let _ = writeln!(out, ".TP\n\\fB{}\\fR\n{}", roff(name), roff(help));
            }
            let _ = writeln!(out, ".RE");
        }
        commands(out, sub, &full);
    }
}

const FILES: &[(&str, &str)] = &[
    (
        "~/.config/navi/config.toml",
        "the configuration (or --config FILE, $NAVI_CONFIG; the directory is $NAVI_CONFIG_DIR); see config.example.toml",
    ),
    (
        "~/.config/navi/profiles/ID/",
        "your profiles (config.json, system_prompt.txt), added to or replacing the built-in ones",
    ),
    ("~/.config/navi/themes/NAME.toml", "your colour themes"),
    (
        "~/.config/navi/persona.txt",
        "your persona (or $NAVI_PERSONA_FILE)",
    ),
    (
        "~/.local/share/navi/navi.db",
        "the session database (the data directory is $NAVI_DATA_DIR; the file $DB_PATH)",
    ),
    (
        "~/.local/share/navi/logs/",
        "daily log files (never written to the terminal)",
    ),
    (
        "~/.local/share/navi/history.txt",
        "the input history of the TUI and plain mode",
    ),
];

const EXIT: &[(&str, &str)] = &[
    ("0", "success (also when the reader of stdout went away)"),
    (
        "1",
        "failure: the turn or the command failed, or the session is busy in another navi",
    ),
    ("2", "usage or configuration error"),
    ("129", "hang-up (SIGHUP, the terminal went away)"),
    ("130", "interrupted (Ctrl-C)"),
    ("143", "terminated (SIGTERM)"),
];

/// Other variables navi reads besides those that feed a config key.
const MORE_ENV: &[(&str, &str)] = &[
    ("NAVI_CONFIG", "the configuration file"),
    ("NAVI_CONFIG_DIR", "the configuration directory"),
    ("NAVI_DATA_DIR", "the data directory"),
    ("NAVI_PERSONA_FILE", "the persona file"),
    (
        "OPENAI_API_KEY",
        "the API key of an OpenAI-compatible server",
    ),
    ("SSH_HOSTS_FILE", "the hosts ssh_exec may reach"),
    ("NO_COLOR", "set and not empty: no colour anywhere"),
    (
        "COLORTERM",
        "truecolor or 24bit: 24-bit colour; otherwise 256 colours (TERM *256color*) or 16",
    ),
    ("VISUAL, EDITOR", "the editor Ctrl-G opens in the TUI"),
];

/// The whole page.
pub(crate) fn render() -> Result<String, std::io::Error> {
    let cmd = Cli::command();
    let man = clap_mangen::Man::new(cmd.clone());
    let mut head = Vec::new();
    man.render_title(&mut head)?;
    man.render_name_section(&mut head)?;
    man.render_synopsis_section(&mut head)?;
    man.render_description_section(&mut head)?;
    man.render_options_section(&mut head)?;
    let mut out = String::from_utf8_lossy(&head).into_owned();
    out.push_str(".SH COMMANDS\n");
    commands(&mut out, &cmd, "navi");
    out.push_str(".SH SLASH COMMANDS\nIn the full\\-screen UI and in plain mode (\\fB/help\\fR lists them there):\n");
    for (usage, what) in crate::ui::commands::COMMANDS {
        let _ = writeln!(out, ".TP\n\\fB{}\\fR\n{}", roff(usage), roff(what));
    }
    out.push_str(".SH ENVIRONMENT\n");
    for (var, key) in crate::config::env::FEEDS {
        let _ = writeln!(
            out,
            ".TP\n\\fB{var}\\fR\nsets [{}] in the configuration",
            roff(key)
        );
    }
    for (var, what) in MORE_ENV {
        let _ = writeln!(out, ".TP\n\\fB{var}\\fR\n{}", roff(what));
    }
    out.push_str(
        ".SH FILES\nThe Linux locations (other systems use their platform directories):\n",
    );
    for (file, what) in FILES {
        let _ = writeln!(out, ".TP\n\\fI{}\\fR\n{}", roff(file), roff(what));
    }
    out.push_str(".SH EXIT STATUS\n");
    for (code, what) in EXIT {
        let _ = writeln!(out, ".TP\n\\fB{code}\\fR\n{}", roff(what));
    }
    let mut tail = Vec::new();
    man.render_version_section(&mut tail)?;
    out.push_str(&String::from_utf8_lossy(&tail));
    Ok(out)
}
