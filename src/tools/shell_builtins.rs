//! Builtins the terminal allow-list runs without an entry (`read`, `export`,
//! `unset`, `printf -v`, `wait -p`, `test -v`, `set`) may still set or look
//! up variables by name. bash evaluates a subscript in such a name as
//! arithmetic, and arithmetic on a variable holding `a[$(cmd)]` runs `cmd`.
//!
//! Invariant: every variable name these builtins receive is a literal
//! without `[`, and none of them sets a protected variable
//! ([`super::shell_check::is_protected_var`]).

use super::shell_check::is_protected_var;
use super::shell_parse::Word;

/// Checks one variable-name argument of `builtin`.
fn name_ok(builtin: &str, w: &Word, may_be_protected: bool) -> Result<(), String> {
    let name = w.text.split('=').next().unwrap_or("");
    if w.glob {
        // bash brace-expands builtin arguments: `export {PATH,x}=.` is
        // `export PATH=. x=.`; a wildcard could match any name.
        return Err(format!(
            "`{builtin} {}`: a brace expansion, wildcard or `~` in a variable name can become other names in bash; write each name literally",
            w.text
        ));
    }
    if w.expanded && w.assignment_name().is_none() {
        return Err(format!(
            "`{builtin} {}` sets a variable whose name is computed; write it literally",
            w.text
        ));
    }
    if name.contains('[') {
        return Err(format!(
            "`{builtin} {}` could run code through a bash array subscript; not allowed with a command allow-list",
            w.text
        ));
    }
    if !may_be_protected && is_protected_var(name) {
        return Err(format!(
            "`{builtin} {name}` would set {name}, which can change which program runs; not allowed with a command allow-list"
        ));
    }
    Ok(())
}

/// Splits `args` into (values of the options in `name_opts`, operands)
/// given the option letters that take an argument (`with_arg`).
fn options<'a>(args: &'a [Word], with_arg: &str, name_opts: &str) -> (Vec<Word>, &'a [Word]) {
    let mut names = Vec::new();
    let mut i = 0;
    while let Some(a) = args.get(i) {
        let t = a.text.as_str();
        if t == "--" {
            i += 1;
            break;
        }
        if !(t.len() > 1 && t.starts_with('-')) || a.expanded {
            break;
        }
        i += 1;
        for (k, c) in t.char_indices().skip(1) {
            if with_arg.contains(c) {
                let attached = &t[k + c.len_utf8()..];
                let value = if attached.is_empty() {
                    i += 1;
                    args.get(i - 1).cloned().unwrap_or_default()
                } else {
                    let mut v = a.clone();
                    v.text = attached.to_string();
                    v
                };
                if name_opts.contains(c) {
                    names.push(value);
                }
                break;
            }
        }
    }
    (names, args.get(i..).unwrap_or(&[]))
}

/// Checks the arguments of a harmless builtin that handles variable names.
pub(crate) fn check_builtin_args(builtin: &str, args: &[Word]) -> Result<(), String> {
    match builtin {
        "read" => {
            let (opts, operands) = options(args, "adinNptu", "a");
            opts.iter()
                .chain(operands)
                .try_for_each(|w| name_ok(builtin, w, false))
        }
        "export" => {
            let (_, operands) = options(args, "", "");
            operands.iter().try_for_each(|w| name_ok(builtin, w, false))
        }
        "unset" => {
            // Unsetting PATH, IFS, … changes lookup and splitting too.
            let (_, operands) = options(args, "", "");
            operands.iter().try_for_each(|w| name_ok(builtin, w, false))
        }
        "getopts" => match args.get(1) {
            Some(w) => name_ok(builtin, w, false),
            None => Ok(()),
        },
        "mapfile" | "readarray" => {
            let (_, operands) = options(args, "dnOsuCc", "");
            operands.iter().try_for_each(|w| name_ok(builtin, w, false))
        }
        "printf" | "wait" => {
            let letter = if builtin == "printf" { "v" } else { "p" };
            let (opts, _) = options(args, letter, letter);
            for w in &opts {
                if w.text.is_empty() {
                    return Err(format!("`{builtin} -{letter}` needs a variable name"));
                }
                name_ok(&format!("{builtin} -{letter}"), w, false)?;
            }
            Ok(())
        }
        "test" | "[" => {
            for pair in args.windows(2) {
                if pair[0].is_literal() && matches!(pair[0].text.as_str(), "-v" | "-R") {
                    name_ok(builtin, &pair[1], true)?;
                }
            }
            Ok(())
        }
        _ => Ok(()),
    }
}
