//! Allowed programs whose options start other programs or write files, for
//! the terminal allow-list: `rg --pre CMD` / `--hostname-bin CMD` and `rg -z`
//! (runs decompressors), `sort --compress-program CMD` and `sort -o FILE`.
//! An allowed shell's own options: `-l`/`-i`/`--login`/`--rcfile` read
//! start-up files, `-k` / `-o keyword` turn on keyword assignments.
//! (`find -exec`/`-fprint…` are in `shell_check`.)
//!
//! Invariant: a program named by such an option must itself pass the list;
//! an option that writes a file needs `terminal_allow_file_redirects`; and a
//! computed or wildcard argument before `--` (which could expand into such an
//! option) is refused.
use super::shell_check::{AllowList, MAX_WRAP_DEPTH, check_command_words, check_text};
use super::shell_parse::Word;

/// Decompressors `rg -z` may start.
const DECOMPRESSORS: [&str; 8] = [
    "gzip",
    "bzip2",
    "xz",
    "lz4",
    "lzma",
    "brotli",
    "zstd",
    "uncompress",
];

struct Spec {
    /// Long options whose value is a program to run.
    runs: &'static [&'static str],
    /// Long options whose value is a file written.
    writes: &'static [&'static str],
    /// Short letters whose value is a file written.
    short_writes: &'static str,
    /// Short letters that take a value (the rest of the bundle or the next word).
    short_values: &'static str,
}

fn spec(program: &str) -> Spec {
    match program {
        "rg" => Spec {
            runs: &["--pre", "--hostname-bin"],
            writes: &[],
            short_writes: "",
            short_values: "efgmABCMjrtTEd",
        },
        _ => Spec {
            runs: &["--compress-program"],
            writes: &["--output"],
            short_writes: "o",
            short_values: "ktST",
        },
    }
}

fn named_program(
    program: &str,
    option: &str,
    value: Option<&Word>,
    list: &AllowList,
    found: &mut Vec<String>,
    depth: usize,
) -> Result<(), String> {
    let Some(v) = value.filter(|v| v.is_literal()) else {
        return Err(format!(
            "`{program} {option}` runs a program named by a computed value; write it literally"
        ));
    };
    check_command_words(std::slice::from_ref(v), list, found, depth + 1)
}

fn writes_file(program: &str, option: &str, list: &AllowList) -> Result<(), String> {
    if list.file_redirects {
        return Ok(());
    }
    Err(format!(
        "`{program} {option}` writes to a file; set [security].terminal_allow_file_redirects = true to allow files"
    ))
}

/// Checks the options of `rg` or `sort` (see the module doc).
pub(crate) fn check_program_options(
    program: &str,
    args: &[Word],
    list: &AllowList,
    found: &mut Vec<String>,
    depth: usize,
) -> Result<(), String> {
    let s = spec(program);
    let mut i = 0;
    while let Some(a) = args.get(i) {
        i += 1;
        if !a.is_literal() {
            return Err(format!(
                "`{program}` with a computed or wildcard argument (`{}`) before `--` cannot be checked: it might expand to an option that runs a program; put `--` before patterns and files",
                a.text
            ));
        }
        let t = a.text.as_str();
        if t == "--" {
            break;
        }
        if let Some(long) = t.strip_prefix("--") {
            let (key, inline) = match long.split_once('=') {
                Some((k, v)) => (format!("--{k}"), Some(v)),
                None => (t.to_string(), None),
            };
            if s.runs.contains(&key.as_str()) {
                let value = match inline {
                    Some(v) => {
                        let mut w = a.clone();
                        w.text = v.to_string();
                        Some(w)
                    }
                    None => {
                        i += 1;
                        args.get(i - 1).cloned()
                    }
                };
                named_program(program, &key, value.as_ref(), list, found, depth)?;
            } else if s.writes.contains(&key.as_str()) {
                writes_file(program, &key, list)?;
            } else if program == "rg" && key == "--search-zip" {
                decompressors(list)?;
            }
            continue;
        }
        if t.len() > 1 && t.starts_with('-') {
            for c in t.chars().skip(1) {
                if s.short_writes.contains(c) {
                    writes_file(program, &format!("-{c}"), list)?;
                }
                if program == "rg" && c == 'z' {
                    decompressors(list)?;
                }
                if s.short_values.contains(c) || s.short_writes.contains(c) {
                    if t.ends_with(c) {
                        i += 1;
                    }
                    break;
                }
            }
        }
    }
    Ok(())
}

fn decompressors(list: &AllowList) -> Result<(), String> {
    match DECOMPRESSORS.iter().find(|d| !list.allows_name(d)) {
        Some(d) => Err(format!(
            "`rg -z` (--search-zip) starts decompressors such as `{d}`, which is not on the allow-list"
        )),
        None => Ok(()),
    }
}

/// `sh -c 'STRING'`: the string is checked like a command line of its own.
/// A shell without `-c STRING` would run a script file or its stdin, which
/// the list cannot see into, so that is refused.
pub(crate) fn check_shell_c(
    name: &str,
    args: &[Word],
    list: &AllowList,
    found: &mut Vec<String>,
    depth: usize,
) -> Result<(), String> {
    let mut has_c = false;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if !a.is_literal() {
            return Err(format!(
                "`{name}` with a computed argument (`{}`) cannot be checked",
                a.text
            ));
        }
        let t = a.text.as_str();
        if t == "--" || t == "-" {
            i += 1;
            continue;
        }
        if t.starts_with("--") {
            if matches!(t, "--rcfile" | "--init-file" | "--login")
                || t.starts_with("--rcfile=")
                || t.starts_with("--init-file=")
            {
                return Err(format!(
                    "`{name} {t}` runs a startup file the allow-list cannot see"
                ));
            }
            i += 1;
            continue;
        }
        if (t.starts_with('-') || t.starts_with('+')) && t.len() > 1 {
            if t.contains('s') {
                return Err(format!(
                    "`{name} -s` runs commands from stdin, which cannot be checked"
                ));
            }
            // -l (login) and -i (interactive) read start-up files the list
            // cannot see; -k makes `cmd NAME=value` set NAME for cmd.
            if let Some(c) = t
                .chars()
                .skip(1)
                .find(|c| matches!(c, 'l' | 'i' | 'k' | 'H'))
            {
                return Err(format!(
                    "`{name} {t}`: the -{c} option {} ; not allowed with a command allow-list",
                    if c == 'k' {
                        "puts keyword assignments into the environment of commands"
                    } else if c == 'H' {
                        "turns on history expansion, which rewrites later lines"
                    } else {
                        "runs start-up files the allow-list cannot see"
                    }
                ));
            }
            if (t.contains('o') || t.contains('O'))
                && args.get(i + 1).is_some_and(|n| {
                    !n.is_literal()
                        || matches!(
                            n.text.as_str(),
                            "keyword" | "login_shell" | "history" | "histexpand"
                        )
                })
            {
                return Err(format!(
                    "`{name} {t} {}` is not allowed with a command allow-list",
                    args.get(i + 1).map(|n| n.text.as_str()).unwrap_or("")
                ));
            }
            has_c |= t.contains('c');
            // -o OPTION / -O SHOPT take the next word.
            i += if t.contains('o') || t.contains('O') {
                2
            } else {
                1
            };
            continue;
        }
        if !has_c {
            break;
        }
        if depth > MAX_WRAP_DEPTH {
            return Err("shells are nested too deeply".into());
        }
        return check_text(t, list, found, depth + 1);
    }
    Err(format!(
        "`{name}` without -c 'COMMANDS' runs a script or its stdin, which the allow-list cannot see; pass the commands with -c or allow \"*\""
    ))
}
