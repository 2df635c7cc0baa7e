//! The arguments of `/diff [N]`, `/undo [--force]` and `/rewind [N]
//! [--files] [--force]` (both front ends). What they do is the session's:
//! `/diff` and `/rewind` alone are reads of it, the rest are
//! [`Op`](crate::protocol::Op)s.

pub(crate) const REWIND_USAGE: &str =
    "usage: /rewind N [--files] [--force] — /rewind alone lists your messages";

pub(crate) fn number(arg: &str, what: &str) -> Result<usize, String> {
    arg.parse()
        .ok()
        .filter(|n| *n > 0)
        .ok_or_else(|| format!("'{arg}' is not a {what} number (1, 2, …)"))
}

/// `/undo [--force]`: whether to force.
pub(crate) fn parse_undo(args: &[String]) -> Result<bool, String> {
    match args {
        [] => Ok(false),
        [f] if f == "--force" => Ok(true),
        _ => Err("usage: /undo [--force]".into()),
    }
}

/// What `/rewind` asks for.
pub(crate) enum Rewind {
    List,
    To { n: usize, files: bool, force: bool },
}

pub(crate) fn parse_rewind(args: &[String]) -> Result<Rewind, String> {
    let mut n = None;
    let (mut files, mut force) = (false, false);
    for a in args {
        match a.as_str() {
            "--files" | "-f" => files = true,
            "--force" => force = true,
            s if n.is_none() => {
                n = Some(number(s, "message").map_err(|e| format!("{e}; {REWIND_USAGE}"))?)
            }
            s => return Err(format!("unexpected '{s}'; {REWIND_USAGE}")),
        }
    }
    match n {
        None if files || force => Err(REWIND_USAGE.into()),
        None => Ok(Rewind::List),
        Some(n) => Ok(Rewind::To { n, files, force }),
    }
}
