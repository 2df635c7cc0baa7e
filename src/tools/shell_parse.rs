//! A conservative reader for `sh -c` command strings, used by the terminal
//! allow-list ([`super::shell_check`]).
//!
//! It does not execute or expand anything. It splits a command string into
//! "simple commands" (lists of words) the way dash and bash would, descending
//! into `$(…)`, backticks, subshells and groups, and skipping redirection
//! targets and comments.
//!
//! Invariants:
//! - every word that dash OR bash could run as a command name ends up as the
//!   first non-keyword, non-assignment word of some returned simple command
//!   (when the two shells disagree, both readings are kept: `&` always splits);
//! - anything it cannot read with certainty is an `Err` with the reason:
//!   unbalanced quotes or parentheses, heredocs, process substitution,
//!   arithmetic expansion, `${…}` containing expansions or quotes, bash-only
//!   `$'…'`, nested backticks, function definitions, a trailing backslash.

/// Deepest nesting of `$(…)` / backticks accepted.
const MAX_DEPTH: usize = 16;

/// One shell word after quote removal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Word {
    /// The literal value; expansions are kept in their raw `$…` form.
    pub text: String,
    /// Contains `$VAR`, `${…}`, `$(…)` or backticks: the value is not known.
    pub expanded: bool,
    /// Contains an unquoted `*`, `?`, `[`, a leading `~`, or `{`/`}` in a
    /// longer word (bash brace expansion).
    pub glob: bool,
    /// Byte offset in `text` of the first quoted, escaped or expanded part.
    pub first_special: Option<usize>,
}

impl Word {
    /// Unquoted, unescaped, unexpanded: a candidate for a reserved word.
    pub fn is_plain(&self) -> bool {
        self.first_special.is_none() && !self.glob
    }

    /// A literal value: no expansion and no globbing can change it.
    pub fn is_literal(&self) -> bool {
        !self.expanded && !self.glob
    }

    fn mark_special(&mut self) {
        if self.first_special.is_none() {
            self.first_special = Some(self.text.len());
        }
    }

    /// `NAME=value` with an unquoted valid NAME: the part before `=`.
    pub fn assignment_name(&self) -> Option<&str> {
        let eq = self.text.find('=')?;
        if self.first_special.is_some_and(|s| s < eq) {
            return None;
        }
        let name = &self.text[..eq];
        let mut chars = name.chars();
        let first = chars.next()?;
        if !(first.is_ascii_alphabetic() || first == '_') {
            return None;
        }
        chars
            .all(|c| c.is_ascii_alphanumeric() || c == '_')
            .then_some(name)
    }
}

/// Splits `src` into simple commands. Commands found inside substitutions
/// are returned too (before the command that contains them).
pub fn parse(src: &str) -> Result<Vec<Vec<Word>>, String> {
    let mut p = Parser {
        chars: src.chars().collect(),
        pos: 0,
        out: Vec::new(),
        depth: 0,
    };
    p.list(false)?;
    Ok(p.out)
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    out: Vec<Vec<Word>>,
    depth: usize,
}

fn is_op_char(c: char) -> bool {
    matches!(c, ';' | '&' | '|' | '(' | ')' | '<' | '>')
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

impl Parser {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, off: usize) -> Option<char> {
        self.chars.get(self.pos + off).copied()
    }

    fn finish(&mut self, cur: &mut Vec<Word>) {
        if !cur.is_empty() {
            self.out.push(std::mem::take(cur));
        }
    }

    /// Reads a command list until EOF, or until the `)` closing a `$(` when
    /// `in_subst` (that `)` is consumed).
    fn list(&mut self, in_subst: bool) -> Result<(), String> {
        let mut cur: Vec<Word> = Vec::new();
        let mut parens = 0usize;
        loop {
            let Some(c) = self.peek() else {
                self.finish(&mut cur);
                if in_subst {
                    return Err("unterminated $( … ): a ')' is missing".into());
                }
                if parens > 0 {
                    return Err("unbalanced parentheses: a ')' is missing".into());
                }
                return Ok(());
            };
            match c {
                _ if is_blank(c) => self.pos += 1,
                '\\' if self.peek_at(1) == Some('\n') => self.pos += 2,
                '\n' | ';' | '&' | '|' => {
                    self.pos += 1;
                    self.finish(&mut cur);
                }
                '(' => {
                    if cur.last().is_some_and(|w| w.is_plain() && w.text == "for") {
                        return Err(
                            "arithmetic loops `for ((…))` are not supported with a command allow-list"
                                .into(),
                        );
                    }
                    if !cur.is_empty() {
                        return Err(
                            "function definitions (`name() …`) are not supported with a command allow-list"
                                .into(),
                        );
                    }
                    self.pos += 1;
                    parens += 1;
                }
                ')' => {
                    self.pos += 1;
                    self.finish(&mut cur);
                    if parens > 0 {
                        parens -= 1;
                    } else if in_subst {
                        return Ok(());
                    } else {
                        return Err("unbalanced parentheses: unexpected ')'".into());
                    }
                }
                '<' | '>' => self.redirection()?,
                '#' => {
                    while self.peek().is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                _ => {
                    let word = self.word()?;
                    // `2>file`: a word of digits right before `<`/`>` is an fd number.
                    let io_number = matches!(self.peek(), Some('<' | '>'))
                        && word.is_plain()
                        && !word.text.is_empty()
                        && word.text.chars().all(|c| c.is_ascii_digit());
                    let in_command_position = cur.iter().all(|w| {
                        w.is_plain()
                            && matches!(
                                w.text.as_str(),
                                "if" | "then"
                                    | "elif"
                                    | "else"
                                    | "while"
                                    | "until"
                                    | "do"
                                    | "!"
                                    | "{"
                            )
                    });
                    if in_command_position && word.is_plain() && word.text == "case" {
                        return Err(
                            "`case` statements are not supported with a command allow-list; use if/test"
                                .into(),
                        );
                    }
                    if !io_number {
                        cur.push(word);
                    }
                }
            }
        }
    }

    /// Reads a redirection operator and its target word (whose
    /// substitutions are parsed; the target itself is not a command).
    fn redirection(&mut self) -> Result<(), String> {
        let first = self.peek().unwrap_or('>');
        self.pos += 1;
        let next = self.peek();
        if next == Some('(') {
            return Err(format!(
                "process substitution `{first}(…)` is not supported with a command allow-list"
            ));
        }
        if first == '<' && next == Some('<') {
            return Err(
                "heredocs and here-strings (`<<`, `<<<`) are not supported with a command allow-list; write the text to a file first"
                    .into(),
            );
        }
        if matches!(
            (first, next),
            ('>', Some('>' | '|' | '&')) | ('<', Some('>' | '&'))
        ) {
            self.pos += 1;
        }
        while self.peek().is_some_and(is_blank) {
            self.pos += 1;
        }
        match self.peek() {
            Some(c) if !is_op_char(c) && c != '\n' => {
                self.word()?;
                Ok(())
            }
            _ => Err(format!("redirection `{first}` has no target")),
        }
    }

    /// Reads one word (stops at blanks, newlines and operators).
    fn word(&mut self) -> Result<Word, String> {
        let mut w = Word::default();
        let start = self.pos;
        let mut open_bracket = false;
        while let Some(c) = self.peek() {
            if is_blank(c) || c == '\n' || is_op_char(c) {
                break;
            }
            match c {
                '\\' => {
                    self.pos += 1;
                    match self.peek() {
                        None => return Err("the command ends with a lone backslash".into()),
                        Some('\n') => self.pos += 1,
                        Some(e) => {
                            w.mark_special();
                            w.text.push(e);
                            self.pos += 1;
                        }
                    }
                }
                '\'' => {
                    w.mark_special();
                    self.pos += 1;
                    loop {
                        match self.peek() {
                            None => return Err("unbalanced single quote (')".into()),
                            Some('\'') => {
                                self.pos += 1;
                                break;
                            }
                            Some(q) => {
                                w.text.push(q);
                                self.pos += 1;
                            }
                        }
                    }
                }
                '"' => self.double_quoted(&mut w)?,
                '$' => self.dollar(&mut w)?,
                '`' => self.backtick(&mut w)?,
                '*' | '?' => {
                    w.glob = true;
                    w.text.push(c);
                    self.pos += 1;
                }
                '[' => {
                    open_bracket = true;
                    w.text.push(c);
                    self.pos += 1;
                }
                ']' if open_bracket => {
                    // `[…]` is a pattern; a lone `[` (the test command) is not.
                    w.glob = true;
                    w.text.push(c);
                    self.pos += 1;
                }
                '~' if self.pos == start => {
                    w.glob = true;
                    w.text.push(c);
                    self.pos += 1;
                }
                _ => {
                    w.text.push(c);
                    self.pos += 1;
                }
            }
        }
        // bash brace expansion needs `{` … `,` or `..` … `}`; `{}` and `{x}` stay.
        let raw: String = self.chars[start..self.pos].iter().collect();
        if raw.len() > 1 && raw.contains('{') && (raw.contains(',') || raw.contains("..")) {
            w.glob = true;
        }
        Ok(w)
    }

    fn double_quoted(&mut self, w: &mut Word) -> Result<(), String> {
        w.mark_special();
        self.pos += 1;
        loop {
            match self.peek() {
                None => return Err("unbalanced double quote (\")".into()),
                Some('"') => {
                    self.pos += 1;
                    return Ok(());
                }
                Some('\\') => {
                    match self.peek_at(1) {
                        Some('\n') => {}
                        Some(e @ ('$' | '`' | '"' | '\\')) => w.text.push(e),
                        Some(e) => {
                            w.text.push('\\');
                            w.text.push(e);
                        }
                        None => return Err("unbalanced double quote (\")".into()),
                    }
                    self.pos += 2;
                }
                Some('$') => self.dollar(w)?,
                Some('`') => self.backtick(w)?,
                Some(c) => {
                    w.text.push(c);
                    self.pos += 1;
                }
            }
        }
    }

    fn dollar(&mut self, w: &mut Word) -> Result<(), String> {
        match self.peek_at(1) {
            Some('(') if self.peek_at(2) == Some('(') => Err(
                "arithmetic expansion `$((…))` is not supported with a command allow-list".into(),
            ),
            Some('(') => {
                w.mark_special();
                w.expanded = true;
                w.text.push_str("$(…)");
                self.pos += 2;
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    return Err("command substitutions are nested too deeply".into());
                }
                self.list(true)?;
                self.depth -= 1;
                Ok(())
            }
            Some('{') => {
                w.mark_special();
                w.expanded = true;
                self.pos += 2;
                let mut inner = String::new();
                loop {
                    match self.peek() {
                        None => return Err("unterminated ${…}".into()),
                        Some('}') => {
                            self.pos += 1;
                            break;
                        }
                        Some(c @ ('$' | '`' | '\'' | '"' | '\\' | '(' | '{')) => {
                            return Err(format!(
                                "`${{…}}` containing `{c}` is not supported with a command allow-list"
                            ));
                        }
                        Some(c) => {
                            inner.push(c);
                            self.pos += 1;
                        }
                    }
                }
                w.text.push_str(&format!("${{{inner}}}"));
                Ok(())
            }
            Some('\'' | '"') => Err(
                "bash-only quoting `$'…'` / `$\"…\"` is not supported with a command allow-list"
                    .into(),
            ),
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                w.mark_special();
                w.expanded = true;
                w.text.push('$');
                self.pos += 1;
                while let Some(c) = self.peek() {
                    if !(c.is_ascii_alphanumeric() || c == '_') {
                        break;
                    }
                    w.text.push(c);
                    self.pos += 1;
                }
                Ok(())
            }
            Some(c) if c.is_ascii_digit() || "@*#?-$!".contains(c) => {
                w.mark_special();
                w.expanded = true;
                w.text.push('$');
                w.text.push(c);
                self.pos += 2;
                Ok(())
            }
            _ => {
                w.text.push('$');
                self.pos += 1;
                Ok(())
            }
        }
    }

    fn backtick(&mut self, w: &mut Word) -> Result<(), String> {
        w.mark_special();
        w.expanded = true;
        w.text.push_str("`…`");
        self.pos += 1;
        let mut inner = String::new();
        loop {
            match self.peek() {
                None => return Err("unbalanced backquote (`)".into()),
                Some('`') => {
                    self.pos += 1;
                    break;
                }
                Some('\\') => {
                    match self.peek_at(1) {
                        Some('`') => {
                            return Err(
                                "nested backquotes are not supported with a command allow-list; use $( … )"
                                    .into(),
                            );
                        }
                        Some(e @ ('$' | '\\')) => inner.push(e),
                        Some(e) => {
                            inner.push('\\');
                            inner.push(e);
                        }
                        None => return Err("unbalanced backquote (`)".into()),
                    }
                    self.pos += 2;
                }
                Some(c) => {
                    inner.push(c);
                    self.pos += 1;
                }
            }
        }
        if self.depth + 1 > MAX_DEPTH {
            return Err("command substitutions are nested too deeply".into());
        }
        let mut sub = Parser {
            chars: inner.chars().collect(),
            pos: 0,
            out: Vec::new(),
            depth: self.depth + 1,
        };
        sub.list(false)?;
        self.out.append(&mut sub.out);
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn names(src: &str) -> Vec<Vec<String>> {
        parse(src)
            .unwrap()
            .into_iter()
            .map(|c| c.into_iter().map(|w| w.text).collect())
            .collect()
    }

    #[test]
    fn splits_lists_and_substitutions() {
        assert_eq!(
            names("ls -l | grep x && echo \"$(date +%s)\"; 2>/dev/null cat f"),
            vec![
                vec!["ls", "-l"],
                vec!["grep", "x"],
                vec!["date", "+%s"],
                vec!["echo", "$(…)"],
                vec!["cat", "f"],
            ]
        );
    }

    #[test]
    fn quotes_are_removed() {
        assert_eq!(names("'l's \"a b\" c\\ d"), vec![vec!["ls", "a b", "c d"]]);
    }

    #[test]
    fn assignment_detection() {
        let cmds = parse("FOO=1 \"BAR\"=2 ls").unwrap();
        assert_eq!(cmds[0][0].assignment_name(), Some("FOO"));
        assert_eq!(cmds[0][1].assignment_name(), None);
    }
}
