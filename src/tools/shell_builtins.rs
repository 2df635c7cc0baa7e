//! Builtins the terminal allow-list runs without an entry (`read`, `export`,
//! `unset`, `printf -v`, `wait -p`, `test -v`, `set`) may still set or look
//! up variables by name. bash evaluates a subscript in such a name as
//! arithmetic, and arithmetic on a variable holding `a[$(cmd)]` runs `cmd`.
//!
//! Invariant: every variable name these builtins receive is a literal
//! without `[`, and none of them sets a protected variable
//! ([`super::shell_check::is_protected_var`]). Their options are literal
//! words: a computed word, a brace expansion or a wildcard where an option
//! may stand could become `-v NAME` (`printf {-v,'a[x]'} 1`, `X=-v; printf
//! "$X" 'a[x]' 1`), so it is refused unless `--` ended the options; in
//! `test`/`[`, a computed word is never followed by another computed word
//! or one holding `[` (it could be `-v`), and no word is split by the shell.

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

/// Special parameters whose value is always a number (`$!`, `$$`, `$?`,
/// `$#`), quoted or not.
fn numeric_param(w: &Word) -> bool {
    matches!(
        w.text.as_str(),
        "$!" | "$$" | "$?" | "$#" | "${!}" | "${$}" | "${?}" | "${#}"
    )
}

/// The words where options may stand (up to the first operand or `--`)
/// must be literal; an option's value may be a quoted expansion.
fn literal_options(builtin: &str, args: &[Word], with_arg: &str) -> Result<(), String> {
    let mut i = 0;
    while let Some(a) = args.get(i) {
        if a.is_literal() && a.text == "--" {
            return Ok(());
        }
        if !a.is_literal() && !numeric_param(a) {
            return Err(format!(
                "`{builtin} {}`: a computed word, brace expansion or wildcard where an option may stand could become an option such as -v NAME; write options literally (or put -- before computed arguments)",
                a.text
            ));
        }
        if !(a.text.len() > 1 && a.text.starts_with('-')) {
            return Ok(());
        }
        i += 1;
        // An option that takes a value takes the rest of the word or the next one.
        for (k, c) in a.text.char_indices().skip(1) {
            if with_arg.contains(c) {
                if a.text.len() == k + c.len_utf8() {
                    if let Some(v) = args.get(i).filter(|v| v.split || v.glob) {
                        return Err(format!(
                            "`{builtin} -{c} {}`: the value is split by the shell or is a brace expansion or wildcard (several words); quote it",
                            v.text
                        ));
                    }
                    i += 1;
                }
                break;
            }
        }
    }
    Ok(())
}

/// `test`/`[`: a computed word may be `-v`/`-R`, which evaluates the next
/// word as a variable name (subscript included); unquoted expansions split.
fn check_test_args(builtin: &str, args: &[Word]) -> Result<(), String> {
    if let Some(w) = args
        .iter()
        .find(|w| (w.split || w.glob) && !numeric_param(w))
    {
        return Err(format!(
            "`{builtin} {}`: the shell turns this word (an unquoted expansion, a brace expansion or a wildcard) into any number of arguments, which could become -v NAME; quote it",
            w.text
        ));
    }
    for pair in args.windows(2) {
        let computed = !pair[0].is_literal() && !numeric_param(&pair[0]);
        if computed && (!pair[1].is_literal() || pair[1].text.contains('[')) {
            return Err(format!(
                "`{builtin} {} {}`: a computed word followed by a variable-like word could be -v NAME, which evaluates a subscript as code; compare with = or put a literal operator between them",
                pair[0].text, pair[1].text
            ));
        }
    }
    Ok(())
}

/// `set`: options that change how later text is read or what commands get.
fn check_set(args: &[Word]) -> Result<(), String> {
    if let Some(a) = args
        .iter()
        .take_while(|a| !(a.is_literal() && a.text == "--"))
        .find(|a| !a.is_literal())
    {
        return Err(format!(
            "`set {}`: a computed word before -- could be an option (-k, -H, -o …); write options literally",
            a.text
        ));
    }
    // History expansion (`!!`, `!:1`) rewrites later lines.
    let history = args.iter().enumerate().any(|(i, a)| {
        let t = a.text.as_str();
        let short =
            (t.starts_with('-') || t.starts_with('+')) && !t.starts_with("--") && t.contains('H');
        let long = matches!(t, "-o" | "+o")
            && args
                .get(i + 1)
                .is_some_and(|n| matches!(n.text.as_str(), "history" | "histexpand"));
        short || long
    });
    if history {
        return Err(
            "`set -H` / `set -o history`: history expansion rewrites later command lines, so it is not allowed with a command allow-list"
                .into(),
        );
    }
    // `set -k` makes `cmd VAR=x` put VAR in cmd's environment.
    let keyword = args.iter().any(|a| {
        a.text == "keyword"
            || ((a.text.starts_with('-') || a.text.starts_with('+'))
                && !a.text.starts_with("--")
                && a.text.contains('k'))
    });
    if keyword {
        return Err("`set -k` (keyword) is not allowed with a command allow-list".into());
    }
    if let Some(a) = args.iter().find(|a| a.glob) {
        return Err(format!(
            "`set {}`: bash expands braces and wildcards into options; write options literally",
            a.text
        ));
    }
    Ok(())
}

/// Checks the arguments of a harmless builtin that handles variable names.
pub(crate) fn check_builtin_args(builtin: &str, args: &[Word]) -> Result<(), String> {
    match builtin {
        "set" => check_set(args),
        "read" => {
            literal_options(builtin, args, "adinNptu")?;
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
            literal_options(builtin, args, letter)?;
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
            check_test_args(builtin, args)?;
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
