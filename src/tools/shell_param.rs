//! What the terminal allow-list accepts inside `${…}` and `$'…'`.
//!
//! Invariant: a parameter expansion passes only if bash evaluates nothing in
//! it as code or arithmetic. Indirection (`${!x}`), transformations
//! (`${x@P}`), computed subscripts (`${a[i]}`) and substring offsets that are
//! not plain numbers (`${v:i}`) are refused: bash evaluates those as
//! arithmetic, and an arithmetic variable holding `a[$(cmd)]` runs `cmd`.

use super::shell_check::is_protected_var;

/// Checks the text between `${` and `}` (the caller has already refused
/// nested `$`, backquotes, quotes, backslashes, `(` and `{`).
pub(crate) fn check_param(inner: &str) -> Result<(), String> {
    let shown = format!("${{{inner}}}");
    let mut rest = inner;
    if rest.starts_with('!') {
        return Err(format!(
            "indirect expansion `{shown}` can evaluate a subscript as code, so it is not allowed with a command allow-list"
        ));
    }
    // `${#}` is the parameter `#`; `${#x}` is the length of x.
    if rest.len() > 1 && rest.starts_with('#') {
        rest = &rest[1..];
    }
    let name_len = if rest.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_') {
        rest.find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(rest.len())
    } else if rest.starts_with(|c: char| c.is_ascii_digit()) {
        rest.find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len())
    } else if rest.starts_with(['@', '*', '#', '?', '-', '$', '!']) {
        1
    } else {
        return Err(format!(
            "`{shown}` is not a parameter expansion this checker can read"
        ));
    };
    let name = &rest[..name_len];
    rest = &rest[name_len..];
    if let Some(sub) = rest.strip_prefix('[') {
        let Some(end) = sub.find(']') else {
            return Err(format!("`{shown}` has an unclosed subscript"));
        };
        let index = &sub[..end];
        let fine = index == "@"
            || index == "*"
            || (!index.is_empty() && index.chars().all(|c| c.is_ascii_digit()));
        if !fine {
            return Err(format!(
                "the subscript in `{shown}` is evaluated as arithmetic (which can run code); only numbers, @ and * are allowed with a command allow-list"
            ));
        }
        rest = &sub[end + 1..];
    }
    let Some(op) = rest.chars().next() else {
        return Ok(());
    };
    match op {
        '@' => Err(format!(
            "the transformation in `{shown}` (like @P) can run code, so it is not allowed with a command allow-list"
        )),
        ':' | '-' | '=' | '+' | '?' => {
            let word_op = if op == ':' {
                rest[1..].chars().next()
            } else {
                Some(op)
            };
            match word_op {
                Some('=') if is_protected_var(name) => Err(format!(
                    "`{shown}` assigns {name}, which can change what runs; not allowed with a command allow-list"
                )),
                Some('-' | '=' | '+' | '?') => Ok(()),
                _ => {
                    let offsets = &rest[1..];
                    if offsets
                        .chars()
                        .all(|c| c.is_ascii_digit() || c == ' ' || c == '-' || c == ':')
                    {
                        Ok(())
                    } else {
                        Err(format!(
                            "the substring offsets in `{shown}` are evaluated as arithmetic (which can run code); write plain numbers"
                        ))
                    }
                }
            }
        }
        '#' | '%' | '/' | '^' | ',' => Ok(()),
        _ => Err(format!(
            "`{shown}` is not a parameter expansion this checker can read"
        )),
    }
}

/// The value of an ANSI-C quoted `$'…'` body, when it has no escapes
/// (`None`: the value needs decoding and is treated as unknown).
pub(crate) fn ansi_c_value(body: &str) -> Option<String> {
    (!body.contains('\\')).then(|| body.to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn plain_forms_pass_and_arithmetic_forms_do_not() {
        for ok in [
            "HOME", "#", "#x", "x:-a b", "x#*/", "a[@]", "a[0]", "v:1:2", "v: -1", "1", "@",
            "PATH%%:*", "x/a/b", "x^^", "HOME:=x",
        ] {
            assert!(check_param(ok).is_ok(), "{ok}");
        }
        for bad in [
            "!x",
            "x@P",
            "a[i]",
            "v:i",
            "#a[x]",
            "PATH:=/tmp",
            "IFS=x",
            "x@Q",
            "@:x",
            "%x",
        ] {
            assert!(check_param(bad).is_err(), "{bad}");
        }
    }
}
