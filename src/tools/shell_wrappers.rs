//! Option grammars of wrapper commands (`sudo`, `env`, `xargs`, `nice`,
//! `timeout`, `exec`, `command`, `time`, …) for the terminal allow-list:
//! where does the wrapped command start?
//!
//! Invariant: an option this table does not know, or a non-literal word before
//! the wrapped command, is an error — guessing wrong would let the real target
//! pass as an argument.

use super::shell_parse::Word;

/// Option grammar of a wrapper command.
struct Spec {
    /// Short options that take no argument.
    flags: &'static str,
    /// Short options that take an argument (attached or next word).
    with_arg: &'static str,
    /// Short options that make the wrapper run a shell or a string.
    refused: &'static str,
    long_flags: &'static [&'static str],
    long_with_arg: &'static [&'static str],
    long_refused: &'static [&'static str],
    /// Positional words before the target (`timeout DURATION cmd`).
    positional: usize,
    /// `-NUM` is a flag (`nice -10`).
    numeric_flag: bool,
    /// These short flags mean "do not run anything" (`command -v`).
    no_exec: &'static str,
}

const NONE: Spec = Spec {
    flags: "",
    with_arg: "",
    refused: "",
    long_flags: &[],
    long_with_arg: &[],
    long_refused: &[],
    positional: 0,
    numeric_flag: false,
    no_exec: "",
};

fn spec_for(wrapper: &str) -> Option<Spec> {
    Some(match wrapper {
        "sudo" => Spec {
            flags: "AbEHKklnPSVvB",
            with_arg: "CgpRrTtUuD",
            refused: "iseh",
            long_flags: &[
                "--askpass",
                "--background",
                "--bell",
                "--preserve-env",
                "--set-home",
                "--remove-timestamp",
                "--reset-timestamp",
                "--list",
                "--non-interactive",
                "--preserve-groups",
                "--stdin",
                "--validate",
                "--version",
                "--help",
            ],
            long_with_arg: &[
                "--close-from",
                "--chdir",
                "--group",
                "--host",
                "--prompt",
                "--chroot",
                "--role",
                "--type",
                "--command-timeout",
                "--other-user",
                "--user",
            ],
            long_refused: &["--shell", "--login", "--edit"],
            ..NONE
        },
        "doas" => Spec {
            flags: "n",
            with_arg: "u",
            refused: "sC",
            ..NONE
        },
        "env" => Spec {
            flags: "i0v",
            with_arg: "uC",
            refused: "SP",
            long_flags: &[
                "--ignore-environment",
                "--null",
                "--debug",
                "--help",
                "--version",
                "--block-signal",
                "--default-signal",
                "--ignore-signal",
                "--list-signal-handling",
            ],
            long_with_arg: &["--unset", "--chdir"],
            long_refused: &["--split-string"],
            ..NONE
        },
        "nohup" => Spec {
            long_flags: &["--help", "--version"],
            ..NONE
        },
        "nice" => Spec {
            with_arg: "n",
            long_with_arg: &["--adjustment"],
            long_flags: &["--help", "--version"],
            numeric_flag: true,
            ..NONE
        },
        "timeout" => Spec {
            flags: "v",
            with_arg: "sk",
            long_flags: &["--preserve-status", "--foreground", "--verbose", "--help"],
            long_with_arg: &["--signal", "--kill-after"],
            positional: 1,
            ..NONE
        },
        "stdbuf" => Spec {
            with_arg: "ioe",
            long_with_arg: &["--input", "--output", "--error"],
            ..NONE
        },
        "setsid" => Spec {
            flags: "cfw",
            ..NONE
        },
        "ionice" => Spec {
            flags: "t",
            with_arg: "cnpPu",
            ..NONE
        },
        "xargs" => Spec {
            flags: "0rtpxoeil",
            with_arg: "adEILnPs",
            long_flags: &[
                "--null",
                "--no-run-if-empty",
                "--verbose",
                "--interactive",
                "--exit",
                "--open-tty",
                "--show-limits",
                "--help",
                "--version",
                "--replace",
                "--eof",
                "--max-lines",
            ],
            long_with_arg: &[
                "--arg-file",
                "--delimiter",
                "--max-args",
                "--max-procs",
                "--max-chars",
                "--process-slot-var",
            ],
            ..NONE
        },
        "exec" => Spec {
            flags: "cl",
            with_arg: "a",
            ..NONE
        },
        "command" => Spec {
            flags: "pvV",
            no_exec: "vV",
            ..NONE
        },
        "time" => Spec {
            flags: "paqv",
            with_arg: "fo",
            long_flags: &[
                "--append",
                "--portability",
                "--quiet",
                "--verbose",
                "--help",
            ],
            long_with_arg: &["--format", "--output"],
            ..NONE
        },
        _ => return None,
    })
}

/// An option's argument must be literal too: `nice -n {1,rm} ls` would
/// otherwise shift the command position under brace expansion.
fn literal_arg(wrapper: &str, arg: Option<&Word>) -> Result<(), String> {
    match arg {
        Some(a) if !a.is_literal() => Err(format!(
            "the arguments of `{wrapper}` before its command must be literal (`{}` is not), or the command it runs cannot be checked",
            a.text
        )),
        _ => Ok(()),
    }
}

/// For a wrapper, the index in `args` where the wrapped command starts
/// (`None`: not a wrapper, or it runs nothing).
pub(crate) fn wrapper_target(wrapper: &str, args: &[Word]) -> Result<Option<usize>, String> {
    let Some(spec) = spec_for(wrapper) else {
        return Ok(None);
    };
    let mut positional = spec.positional;
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if !a.is_literal() {
            return Err(format!(
                "the arguments of `{wrapper}` before its command must be literal (`{}` is not), or the command it runs cannot be checked",
                a.text
            ));
        }
        let t = a.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if let Some(long) = t.strip_prefix("--").filter(|l| !l.is_empty()) {
            let opt = format!("--{}", long.split('=').next().unwrap_or(long));
            if spec.long_refused.contains(&opt.as_str()) {
                return Err(format!("`{wrapper} {opt}` starts a shell or runs a string"));
            }
            if spec.long_with_arg.contains(&opt.as_str()) {
                if !long.contains('=') {
                    literal_arg(wrapper, args.get(i + 1))?;
                }
                i += if long.contains('=') { 1 } else { 2 };
            } else if spec.long_flags.contains(&opt.as_str()) {
                i += 1;
            } else {
                return Err(format!(
                    "unknown option `{opt}` for `{wrapper}`: cannot tell where its command starts"
                ));
            }
            continue;
        }
        if t.len() > 1 && t.starts_with('-') {
            let body = &t[1..];
            if spec.numeric_flag && body.chars().all(|c| c.is_ascii_digit()) {
                i += 1;
                continue;
            }
            let mut consumed = 1;
            for (k, c) in body.char_indices() {
                if spec.refused.contains(c) {
                    return Err(format!("`{wrapper} -{c}` starts a shell or runs a string"));
                }
                if spec.no_exec.contains(c) {
                    return Ok(None);
                }
                if spec.with_arg.contains(c) {
                    if k + c.len_utf8() == body.len() {
                        literal_arg(wrapper, args.get(i + 1))?;
                        consumed = 2;
                    }
                    break;
                }
                if !spec.flags.contains(c) {
                    return Err(format!(
                        "unknown option `-{c}` for `{wrapper}`: cannot tell where its command starts"
                    ));
                }
            }
            i += consumed;
            continue;
        }
        if positional == 0 {
            break;
        }
        positional -= 1;
        i += 1;
    }
    if matches!(wrapper, "sudo" | "doas") && i >= args.len() {
        return Ok(None);
    }
    Ok((i < args.len()).then_some(i))
}
