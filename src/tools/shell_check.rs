//! The terminal allow-list: `[security].terminal_allowed_commands`.
//!
//! Invariants:
//! - with `"*"` in the list nothing is parsed and everything is allowed;
//! - otherwise [`check`] returns `Ok` only if every command any shell could
//!   run — in every list, pipeline, substitution, subshell and group, and the
//!   target of every wrapper (`sudo`, `env`, `xargs`, `exec`, `nohup`, `time`,
//!   `nice`, `timeout`, `find -exec`, …) — is a literal name on the list;
//! - a command written with a `/` matches only an entry with the same path;
//!   a bare name matches only a bare entry (no basename tricks);
//! - assignments to variables that change what runs (`PATH`, `LD_*`, `IFS`,
//!   `BASH_ENV`, `*_COMMAND`, `PAGER`, …) are refused, as prefixes, through
//!   `env`/`sudo`, `export`, `read` or `printf -v`;
//! - shell builtins that run strings (`eval`, `.`, `source`, `trap`, `alias`,
//!   `hash`, `enable`, `builtin`, `let`, `declare`…) are refused even if listed,
//!   and so is everything bash evaluates as arithmetic on variable values
//!   (`((…))`, `[[ … ]]`, computed subscripts): a value like `a[$(cmd)]` runs `cmd`;
//! - redirections may only use `/dev/null` or duplicate/close fds 0–2
//!   (`2>&1`, `>&-`) unless `[security].terminal_allow_file_redirects` is on:
//!   `> f`, `< f`, `$(< f)`, `exec 3> f`, `>& f`, `/proc/self/fd/N`,
//!   `/dev/tcp/…` are refused.
//!
//! Limits (documented in `manuals/terminal.md`): an allowed program that
//! runs other programs on its own (an interpreter, `make`, `git` hooks,
//! `awk 'BEGIN{system(…)}'`) is as powerful as `"*"`.

use super::shell_builtins::check_builtin_args;
use super::shell_parse::{Redirect, Word, parse_all};
use super::shell_wrappers::wrapper_target;
use std::collections::BTreeSet;

/// Builtins that change nothing outside the shell and run nothing: allowed
/// without being listed.
const HARMLESS_BUILTINS: [&str; 16] = [
    "cd", "pwd", "true", "false", ":", "echo", "printf", "test", "[", "exit", "export", "unset",
    "set", "wait", "read", "shift",
];

/// Builtins and keywords that execute strings or rebind names (`shopt`
/// changes how bash reads the rest: `extglob`, `expand_aliases`).
const REFUSED: [&str; 21] = [
    "shopt",
    "eval",
    "source",
    ".",
    "trap",
    "alias",
    "hash",
    "enable",
    "builtin",
    "fc",
    "let",
    "declare",
    "typeset",
    "local",
    "readonly",
    "coproc",
    "function",
    "select",
    "[[",
    "mapfile",
    "readarray",
];

/// Programs that run other programs in ways this checker does not follow.
const OPAQUE_RUNNERS: [&str; 17] = [
    "su",
    "runuser",
    "chroot",
    "unshare",
    "nsenter",
    "flock",
    "watch",
    "script",
    "parallel",
    "strace",
    "ltrace",
    "valgrind",
    "busybox",
    "chrt",
    "taskset",
    "systemd-run",
    "pkexec",
];

/// Reserved words skipped in command position.
const KEYWORDS: [&str; 12] = [
    "if", "then", "elif", "else", "fi", "while", "until", "do", "done", "!", "{", "}",
];

pub(crate) const MAX_WRAP_DEPTH: usize = 16;

/// A parsed allow-list.
#[derive(Clone, Debug)]
pub struct AllowList {
    any: bool,
    names: BTreeSet<String>,
    /// `[security].terminal_allow_file_redirects`.
    pub(crate) file_redirects: bool,
}

impl AllowList {
    pub fn new(list: &[String]) -> Self {
        let names: BTreeSet<String> = list
            .iter()
            .map(|s| s.trim().to_string())
            .filter(|s| !s.is_empty())
            .collect();
        AllowList {
            any: names.contains("*"),
            names,
            file_redirects: false,
        }
    }

    /// Also accept redirections from and to files (`< f`, `> f`, `$(< f)`).
    pub fn with_file_redirects(mut self, allowed: bool) -> Self {
        self.file_redirects = allowed;
        self
    }

    pub(crate) fn allows_everything(&self) -> bool {
        self.any
    }

    fn allows(&self, name: &str) -> bool {
        self.any || self.names.contains(name)
    }

    /// Whether `name` is on the list (or the list is `*`).
    pub(crate) fn allows_name(&self, name: &str) -> bool {
        self.allows(name)
    }

    fn describe(&self) -> String {
        if self.names.is_empty() {
            "the list is empty".into()
        } else {
            self.names.iter().cloned().collect::<Vec<_>>().join(", ")
        }
    }
}

/// Checks `command` against `list`. `Ok` carries every command name found
/// (empty when the list is `"*"`); `Err` says why the command is refused.
pub fn check(command: &str, list: &AllowList) -> Result<Vec<String>, String> {
    if list.allows_everything() {
        return Ok(Vec::new());
    }
    let mut found = Vec::new();
    check_text(command, list, &mut found, 0).map_err(|why| format!("refused: {why}"))?;
    Ok(found)
}

/// Parses and checks one command string (the top level or an `sh -c` one).
pub(crate) fn check_text(
    text: &str,
    list: &AllowList,
    found: &mut Vec<String>,
    depth: usize,
) -> Result<(), String> {
    if depth > MAX_WRAP_DEPTH {
        return Err("shells are nested too deeply".into());
    }
    let parsed = parse_all(text)?;
    for words in &parsed.commands {
        check_simple(words, list, found, depth)?;
    }
    for r in &parsed.redirects {
        check_redirect(r, list)?;
    }
    match parsed.late_refusals.into_iter().next() {
        Some(why) => Err(why),
        None => Ok(()),
    }
}

/// The redirection policy: `/dev/null`, and duplicating or closing fds 0–2,
/// are always fine; anything that opens a file needs the config switch.
fn check_redirect(r: &Redirect, list: &AllowList) -> Result<(), String> {
    let t = &r.target;
    let dup = matches!(r.op.as_str(), ">&" | "<&");
    if dup && t.is_literal() && matches!(t.text.as_str(), "0" | "1" | "2" | "-") {
        return Ok(());
    }
    if t.is_literal() && t.text == "/dev/null" {
        return Ok(());
    }
    if list.file_redirects {
        return Ok(());
    }
    let what = if dup && t.is_literal() && t.text.chars().all(|c| c.is_ascii_digit()) {
        "duplicates a file descriptor other than 0, 1 or 2"
    } else if r.op.starts_with('<') && r.op != "<>" {
        "reads a file"
    } else {
        "writes to a file"
    };
    Err(format!(
        "the redirection `{}{}` {what}; with a command allow-list only /dev/null and 2>&1-style duplications of fds 0-2 are allowed (set [security].terminal_allow_file_redirects = true to allow files)",
        r.op, t.text
    ))
}

/// Variables whose value decides what program runs or what code it loads.
pub(crate) fn is_protected_var(name: &str) -> bool {
    const EXACT: [&str; 27] = [
        "RANDOM",
        "SRANDOM",
        "OPTIND",
        "HISTCMD",
        "PATH",
        "IFS",
        "ENV",
        "BASH_ENV",
        "SHELLOPTS",
        "BASHOPTS",
        "PS4",
        "PROMPT_COMMAND",
        "GCONV_PATH",
        "BASH_LOADABLES_PATH",
        "EXECIGNORE",
        "PAGER",
        "EDITOR",
        "VISUAL",
        "BROWSER",
        "SHELL",
        "PYTHONSTARTUP",
        "PYTHONPATH",
        "PERL5OPT",
        "PERL5LIB",
        "NODE_OPTIONS",
        "RUBYOPT",
        "LESSOPEN",
    ];
    const PREFIX: [&str; 5] = ["LD_", "DYLD_", "BASH_FUNC_", "GIT_", "LESS"];
    const SUFFIX: [&str; 5] = ["_COMMAND", "_PAGER", "_EDITOR", "_SSH", "_ASKPASS"];
    let upper = name.to_ascii_uppercase();
    EXACT.contains(&upper.as_str())
        || PREFIX.iter().any(|p| upper.starts_with(p))
        || SUFFIX.iter().any(|s| upper.ends_with(s))
}

fn check_assignment(w: &Word) -> Result<(), String> {
    match w.assignment_name() {
        Some(name) if is_protected_var(name) => Err(format!(
            "setting {name} can change which program runs, so it is not allowed with a command allow-list"
        )),
        _ => Ok(()),
    }
}

fn check_simple(
    words: &[Word],
    list: &AllowList,
    found: &mut Vec<String>,
    depth: usize,
) -> Result<(), String> {
    let mut i = 0;
    while let Some(w) = words.get(i) {
        if !w.is_plain() {
            break;
        }
        match w.text.as_str() {
            k if KEYWORDS.contains(&k) => i += 1,
            "for" => {
                // `for NAME [in WORDS]` up to the separator or an unquoted `do`.
                // The loop assigns NAME like `NAME=value` does.
                if let Some(name) = words.get(i + 1)
                    && (is_protected_var(&name.text) || name.glob || name.expanded)
                {
                    return Err(format!(
                        "`for {}` assigns a variable that can change which program runs (or a computed name); not allowed with a command allow-list",
                        name.text
                    ));
                }
                i += 1;
                while words
                    .get(i)
                    .is_some_and(|w| !(w.is_plain() && w.text == "do"))
                {
                    i += 1;
                }
                i += 1;
            }
            "case" => {
                return Err(
                    "`case` statements are not supported with a command allow-list; use if/test"
                        .into(),
                );
            }
            _ => break,
        }
    }
    while let Some(w) = words.get(i) {
        if w.assignment_name().is_none() {
            break;
        }
        check_assignment(w)?;
        i += 1;
    }
    match words.get(i..) {
        Some(rest) if !rest.is_empty() => check_command(rest, list, found, depth),
        _ => Ok(()),
    }
}

/// Checks `words[0]` as a command name and, for wrappers, their target.
fn check_command(
    words: &[Word],
    list: &AllowList,
    found: &mut Vec<String>,
    depth: usize,
) -> Result<(), String> {
    if depth > MAX_WRAP_DEPTH {
        return Err("wrappers are nested too deeply".into());
    }
    let Some(w) = words.first() else {
        return Ok(());
    };
    if w.expanded {
        return Err(format!(
            "the command name `{}` comes from an expansion ($VAR, $(…) or `…`), so it cannot be checked; write the command name literally",
            w.text
        ));
    }
    if w.glob {
        return Err(format!(
            "the command name `{}` contains a wildcard, `~` or a brace expansion; write it literally",
            w.text
        ));
    }
    let name = w.text.as_str();
    if name == "[[" {
        return Err(
            "`[[ … ]]` evaluates variable values as arithmetic (which can run code in bash); use `[ … ]` or `test`"
                .into(),
        );
    }
    if name.is_empty() {
        return Err("empty command name".into());
    }
    let base = name.rsplit('/').next().unwrap_or(name);
    let args = &words[1..];
    if REFUSED.contains(&name) {
        return Err(format!(
            "`{name}` runs text as shell code or rebinds command names, so it is never allowed with a command allow-list"
        ));
    }
    found.push(name.to_string());
    if name == "time" {
        check_time_options(args, list)?;
    }
    let transparent = matches!(name, "exec" | "command" | "time");
    if !transparent && !HARMLESS_BUILTINS.contains(&name) && !list.allows(name) {
        let hint = if name.contains('/') {
            format!(
                " (a path only matches an identical entry; `{base}` alone would need the bare name)"
            )
        } else {
            String::new()
        };
        return Err(format!(
            "`{name}` is not on the allow-list{hint}; allowed commands ([security].terminal_allowed_commands): {}",
            list.describe()
        ));
    }
    if OPAQUE_RUNNERS.contains(&base) {
        return Err(format!(
            "`{name}` runs other commands in a way the allow-list cannot follow; it needs terminal_allowed_commands = [\"*\"]"
        ));
    }
    if HARMLESS_BUILTINS.contains(&name) && !matches!(name, "echo" | "cd" | "pwd") {
        // bash evaluates array subscripts in names given to builtins
        // (`test -v 'a[$(cmd)]'`, `read`, `unset`, `printf -v`): code execution.
        if let Some(a) = args
            .iter()
            .find(|a| a.text.contains('[') && (a.text.contains('$') || a.text.contains('`')))
        {
            return Err(format!(
                "`{name} {}` could run code through a bash array subscript; not allowed with a command allow-list",
                a.text
            ));
        }
    }
    match base {
        "set" | "export" | "read" | "unset" | "printf" | "wait" | "test" | "[" | "getopts"
        | "mapfile" | "readarray" => check_builtin_args(name, args),
        "find" => check_find(args, list, found, depth),
        "rg" | "sort" => {
            super::shell_options::check_program_options(base, args, list, found, depth)
        }
        "sh" | "bash" | "dash" | "zsh" | "ksh" | "mksh" | "ash" => {
            super::shell_options::check_shell_c(name, args, list, found, depth)
        }
        _ => match wrapper_target(base, args)? {
            Some(start) => {
                let mut j = start;
                // `env`/`sudo` accept NAME=value before the command.
                while let Some(a) = args.get(j) {
                    if a.assignment_name().is_none() || !matches!(base, "env" | "sudo" | "doas") {
                        break;
                    }
                    check_assignment(a)?;
                    j += 1;
                }
                check_command(&args[j..], list, found, depth + 1)?;
                check_exec_options(name, args)
            }
            None => check_exec_options(name, args),
        },
    }
}

/// [`check_command`] for the other checker modules: `words[0]` as a
/// command name (and its wrapper targets).
pub(crate) fn check_command_words(
    words: &[Word],
    list: &AllowList,
    found: &mut Vec<String>,
    depth: usize,
) -> Result<(), String> {
    check_command(words, list, found, depth)
}

/// `exec` takes no option with a command allow-list: bash's `-a NAME` and
/// `-l` change the name a program sees (a login shell reads start-up files,
/// a multi-call program picks a tool by it), and dash runs the option word
/// itself as the program.
fn check_exec_options(name: &str, args: &[Word]) -> Result<(), String> {
    match args.first() {
        Some(a) if name == "exec" && (a.text.starts_with('-') || !a.is_literal()) => Err(format!(
            "`exec {}`: options of exec change the name a program sees (bash) or are the program itself (dash); write `exec COMMAND` only",
            a.text
        )),
        _ => Ok(()),
    }
}

/// `time` is a bash keyword but a program under dash: only `time [-p]` is
/// the same in both; other options need `time` on the list, and `-o`/`-a`
/// (GNU time writes a file) need file redirections.
fn check_time_options(args: &[Word], list: &AllowList) -> Result<(), String> {
    let options = args
        .iter()
        .take_while(|a| a.text.starts_with('-') && a.text != "--")
        .filter(|a| a.text != "-p");
    for a in options {
        if !list.allows("time") {
            return Err(format!(
                "`time {}` runs the time program under sh, and `time` is not on the allow-list",
                a.text
            ));
        }
        let writes = a.text.starts_with("--output")
            || a.text.starts_with("--append")
            || (!a.text.starts_with("--") && (a.text.contains('o') || a.text.contains('a')));
        if writes && !list.file_redirects {
            return Err(format!(
                "`time {}` writes to a file; set [security].terminal_allow_file_redirects = true to allow files",
                a.text
            ));
        }
    }
    Ok(())
}

/// `find … -exec CMD … ;` (and `-execdir`, `-ok`, `-okdir`): checks each CMD.
fn check_find(
    args: &[Word],
    list: &AllowList,
    found: &mut Vec<String>,
    depth: usize,
) -> Result<(), String> {
    let mut i = 0;
    while i < args.len() {
        let a = &args[i];
        if !a.is_literal() {
            return Err(format!(
                "`find` with a computed or wildcard argument (`{}`) cannot be checked: it might expand to -exec; quote patterns like -name '*.rs'",
                a.text
            ));
        }
        if matches!(
            a.text.as_str(),
            "-fprint" | "-fprint0" | "-fprintf" | "-fls"
        ) && !list.file_redirects
        {
            return Err(format!(
                "`find {}` writes to a file; set [security].terminal_allow_file_redirects = true to allow files",
                a.text
            ));
        }
        if matches!(a.text.as_str(), "-exec" | "-execdir" | "-ok" | "-okdir") {
            let end = args[i + 1..]
                .iter()
                .position(|w| w.is_literal() && (w.text == ";" || w.text == "+"))
                .map(|p| i + 1 + p)
                .unwrap_or(args.len());
            check_command(&args[i + 1..end], list, found, depth + 1)?;
            i = end;
        }
        i += 1;
    }
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn list(names: &[&str]) -> AllowList {
        AllowList::new(&names.iter().map(|s| s.to_string()).collect::<Vec<_>>())
    }

    #[test]
    fn star_allows_without_parsing() {
        assert!(check("eval 'unbalanced", &list(&["*"])).is_ok());
    }

    #[test]
    fn finds_every_command() {
        let found = check(
            "ls | grep x && sudo -u bob env A=1 nice -n 5 cat f",
            &list(&["ls", "grep", "sudo", "env", "nice", "cat"]),
        )
        .unwrap();
        assert_eq!(found, vec!["ls", "grep", "sudo", "env", "nice", "cat"]);
    }
}
