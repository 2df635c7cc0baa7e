//! A conservative reader for `sh -c` command strings, used by the terminal
//! allow-list ([`super::shell_check`]).
//!
//! It does not execute or expand anything. It splits a command string into
//! "simple commands" (lists of words) the way dash and bash would, descending
//! into `$(…)`, backticks, subshells and groups, and records every
//! redirection (operator and target word) for the redirection policy.
//!
//! Invariants:
//! - it reads exactly the text the shell reads: a backslash-newline is removed
//!   wherever the shell removes it (everywhere except inside single quotes,
//!   `$'…'`, comments and after another backslash), *before* the character
//!   after it is looked at, so `$\<newline>(` is `$(` here too;
//! - every word that dash OR bash could run as a command name ends up as the
//!   first non-keyword, non-assignment word of some returned simple command
//!   (when the two shells disagree, both readings are kept: `&` always splits);
//! - anything it cannot read with certainty is an `Err` with the reason:
//!   unbalanced quotes or parentheses, heredocs and here-strings (dash reads
//!   `<<<` as a heredoc), process substitution, arithmetic expansion,
//!   `${…}` forms that evaluate code ([`super::shell_param`]), `$'…'` with
//!   `\'` (dash and bash end it at different quotes), nested backticks,
//!   function definitions, `;;` outside `case`, empty commands, a trailing
//!   backslash, NUL bytes.

mod expand;

/// Deepest nesting of `$(…)` / backticks accepted.
const MAX_DEPTH: usize = 16;

/// One shell word after quote removal.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Word {
    /// The literal value; expansions are kept in their raw `$…` form.
    pub(crate) text: String,
    /// Contains `$VAR`, `${…}`, `$(…)` or backticks: the value is not known.
    pub(crate) expanded: bool,
    /// Contains an unquoted `*`, `?`, `[`, a leading `~`, or `{`/`}` in a
    /// longer word (bash brace expansion).
    pub(crate) glob: bool,
    /// Byte offset in `text` of the first quoted, escaped or expanded part.
    pub(crate) first_special: Option<usize>,
    /// Holds an unquoted expansion: the shell splits its value into any
    /// number of words (and globs them).
    pub(crate) split: bool,
}

/// One redirection: operator (`>`, `>>`, `>|`, `<`, `<>`, `>&`, `<&`) and
/// its target word (`&>` is read as `&` then `>`, as dash does).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Redirect {
    pub(crate) op: String,
    pub(crate) target: Word,
}

/// Everything the checker needs from one command string.
#[derive(Clone, Debug, Default)]
pub(crate) struct Parsed {
    /// Simple commands, innermost substitutions first.
    pub(crate) commands: Vec<Vec<Word>>,
    pub(crate) redirects: Vec<Redirect>,
    /// Reasons to refuse found while reading, reported after the commands
    /// (so a hidden command is named first): e.g. `((…))`.
    pub(crate) late_refusals: Vec<String>,
}

impl Word {
    /// Unquoted, unescaped, unexpanded: a candidate for a reserved word.
    pub(crate) fn is_plain(&self) -> bool {
        self.first_special.is_none() && !self.glob
    }

    /// A literal value: no expansion and no globbing can change it.
    pub(crate) fn is_literal(&self) -> bool {
        !self.expanded && !self.glob
    }

    fn mark_special(&mut self) {
        if self.first_special.is_none() {
            self.first_special = Some(self.text.len());
        }
    }

    /// `NAME=value` with an unquoted valid NAME: the part before `=`.
    pub(crate) fn assignment_name(&self) -> Option<&str> {
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
#[cfg(test)]
pub(crate) fn parse(src: &str) -> Result<Vec<Vec<Word>>, String> {
    parse_all(src).map(|p| p.commands)
}

/// Reads `src` completely: commands, redirections and late refusals.
pub(crate) fn parse_all(src: &str) -> Result<Parsed, String> {
    if src.contains('\0') {
        return Err("the command contains a NUL byte".into());
    }
    let mut p = Parser {
        chars: src.chars().collect(),
        pos: 0,
        out: Parsed::default(),
        depth: 0,
    };
    p.list(false)?;
    Ok(p.out)
}

struct Parser {
    chars: Vec<char>,
    pos: usize,
    out: Parsed,
    depth: usize,
}

fn is_op_char(c: char) -> bool {
    matches!(c, ';' | '&' | '|' | '(' | ')' | '<' | '>')
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// Words that leave the next word in command position.
fn opens_command(w: &Word) -> bool {
    w.is_plain()
        && matches!(
            w.text.as_str(),
            "if" | "then" | "elif" | "else" | "while" | "until" | "do" | "!" | "{"
        )
}

impl Parser {
    /// Drops line continuations at the read position (the shell's own
    /// input layer does this before the tokenizer sees anything).
    fn skip_continuations(&mut self) {
        while self.chars.get(self.pos) == Some(&'\\') && self.chars.get(self.pos + 1) == Some(&'\n')
        {
            self.pos += 2;
        }
    }

    fn peek(&mut self) -> Option<char> {
        self.skip_continuations();
        self.chars.get(self.pos).copied()
    }

    /// The character `off` places ahead, continuations removed.
    fn peek_at(&mut self, off: usize) -> Option<char> {
        self.skip_continuations();
        let mut j = self.pos;
        let mut left = off;
        loop {
            while self.chars.get(j) == Some(&'\\') && self.chars.get(j + 1) == Some(&'\n') {
                j += 2;
            }
            if left == 0 {
                return self.chars.get(j).copied();
            }
            j += 1;
            left -= 1;
        }
    }

    /// Consumes the character `peek` returned.
    fn bump(&mut self) {
        self.skip_continuations();
        self.pos += 1;
    }

    /// The next character exactly as written (inside quotes, after `\`).
    fn raw(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn finish(&mut self, cur: &mut Vec<Word>) {
        if !cur.is_empty() {
            self.out.commands.push(std::mem::take(cur));
        }
    }

    /// Reads a command list until EOF, or until the `)` closing a `$(` when
    /// `in_subst` (that `)` is consumed).
    fn list(&mut self, in_subst: bool) -> Result<(), String> {
        let mut cur: Vec<Word> = Vec::new();
        let mut parens = 0usize;
        // Something (word, redirection, group) since the last separator.
        let mut seen = false;
        // After `|`, `&&`, `||`: a command must follow.
        let mut need = None::<&str>;
        // Closers of the compound commands still open (`fi`, `done`, `}`, `)`).
        let mut open: Vec<&'static str> = Vec::new();
        loop {
            let Some(c) = self.peek() else {
                self.finish(&mut cur);
                if let Some(op) = need {
                    return Err(format!("`{op}` is not followed by a command"));
                }
                if let Some(closer) = open.iter().rev().find(|c| **c != ")") {
                    self.out.late_refusals.push(format!(
                        "a compound command is not closed: `{closer}` is missing"
                    ));
                }
                if in_subst {
                    return Err("unterminated $( … ): a ')' is missing".into());
                }
                if parens > 0 {
                    return Err("unbalanced parentheses: a ')' is missing".into());
                }
                return Ok(());
            };
            match c {
                _ if is_blank(c) => self.bump(),
                '\n' => {
                    self.bump();
                    self.finish(&mut cur);
                    seen = false;
                }
                ';' | '&' | '|' => {
                    let next = self.peek_at(1);
                    let op: &'static str = match (c, next) {
                        (';', Some(n @ (';' | '&'))) => {
                            self.out.late_refusals.push(format!(
                                "`;{n}` only belongs in `case`, which is not supported with a command allow-list"
                            ));
                            ";;"
                        }
                        ('&', Some('&')) => "&&",
                        ('|', Some('|')) => "||",
                        ('|', Some('&')) => "|&",
                        ('|', _) => "|",
                        ('&', _) => "&",
                        _ => ";",
                    };
                    if !seen || need.is_some() {
                        return Err(format!("`{op}` has no command before it"));
                    }
                    for _ in 0..op.chars().count() {
                        self.bump();
                    }
                    self.finish(&mut cur);
                    seen = false;
                    need = matches!(op, "&&" | "||" | "|" | "|&").then_some(op);
                }
                '(' => {
                    if cur.last().is_some_and(|w| w.is_plain() && w.text == "for") {
                        return Err(
                            "arithmetic loops `for ((…))` are not supported with a command allow-list"
                                .into(),
                        );
                    }
                    if !cur.iter().all(opens_command) {
                        return Err(
                            "function definitions (`name() …`) and array assignments are not supported with a command allow-list"
                                .into(),
                        );
                    }
                    if self.peek_at(1) == Some('(') {
                        self.out.late_refusals.push(
                            "arithmetic commands `((…))` evaluate variables as code in bash, so they are not allowed with a command allow-list"
                                .into(),
                        );
                    }
                    self.bump();
                    parens += 1;
                    open.push(")");
                    seen = false;
                    need = None;
                }
                ')' => {
                    if need.is_some() || (!seen && cur.is_empty()) {
                        return Err("empty command before `)`".into());
                    }
                    self.bump();
                    self.finish(&mut cur);
                    seen = true;
                    while let Some(closer) = open.pop().filter(|c| *c != ")") {
                        self.out.late_refusals.push(format!(
                            "a compound command is not closed before `)`: `{closer}` is missing"
                        ));
                    }
                    if parens > 0 {
                        parens -= 1;
                    } else if in_subst {
                        return Ok(());
                    } else {
                        return Err("unbalanced parentheses: unexpected ')'".into());
                    }
                }
                '<' | '>' => {
                    self.redirection()?;
                    seen = true;
                    need = None;
                }
                '#' => {
                    // A comment ends at the newline; a backslash does not continue it.
                    while self.raw().is_some_and(|c| c != '\n') {
                        self.pos += 1;
                    }
                }
                _ => {
                    let word = self.word()?;
                    if matches!(need, Some("|" | "|&")) && word.is_plain() && word.text == "!" {
                        return Err("`!` after `|` is a syntax error".into());
                    }
                    seen = true;
                    need = None;
                    let before_redirect = matches!(self.peek(), Some('<' | '>'));
                    // `2>file`: a word of digits right before `<`/`>` is an fd number.
                    let io_number = before_redirect
                        && word.is_plain()
                        && !word.text.is_empty()
                        && word.text.chars().all(|c| c.is_ascii_digit());
                    if before_redirect
                        && word.is_plain()
                        && word.text.starts_with('{')
                        && word.text.ends_with('}')
                    {
                        return Err(format!(
                            "named file descriptors (`{}>…`) assign a variable and are not supported with a command allow-list",
                            word.text
                        ));
                    }
                    let in_command_position = cur.iter().all(opens_command);
                    let for_do = cur.len() == 2
                        && cur[0].is_plain()
                        && cur[0].text == "for"
                        && word.text == "do";
                    if (in_command_position || for_do) && word.is_plain() {
                        self.reserved_word(&word.text, &mut open);
                    }
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

    /// Follows `if … then … fi`, loops and `{ … }` so that text bash would
    /// reject (a comment eating `then`, a stray `fi`) is refused too.
    fn reserved_word(&mut self, word: &str, open: &mut Vec<&'static str>) {
        let top = open.last().copied();
        let (expect, next): (Option<&str>, Option<&'static str>) = match word {
            "if" => (None, Some("then")),
            "while" | "until" | "for" | "select" => (None, Some("do")),
            "{" => (None, Some("}")),
            "then" => (Some("then"), Some("fi")),
            "elif" => (Some("fi"), Some("then")),
            "else" => (Some("fi"), Some("fi")),
            "do" => (Some("do"), Some("done")),
            "fi" | "done" | "}" => (Some(word), None),
            _ => return,
        };
        if let Some(want) = expect {
            if top != Some(want) {
                self.out.late_refusals.push(format!(
                    "`{word}` is out of place (bash would reject the syntax)"
                ));
                return;
            }
            open.pop();
        }
        if let Some(n) = next {
            open.push(n);
        }
    }

    /// Reads a redirection operator and its target word (whose
    /// substitutions are parsed; the target itself is not a command).
    fn redirection(&mut self) -> Result<(), String> {
        let first = self.peek().unwrap_or('>');
        self.bump();
        let next = self.peek();
        if next == Some('(') {
            return Err(format!(
                "process substitution `{first}(…)` is not supported with a command allow-list"
            ));
        }
        if first == '<' && next == Some('<') {
            return Err(
                "heredocs and here-strings (`<<`, `<<<`) are not supported with a command allow-list (their bodies are expanded and dash reads `<<<` as a heredoc); write the text to a file first"
                    .into(),
            );
        }
        let mut op = first.to_string();
        if let ('>', Some(n @ ('>' | '|' | '&'))) | ('<', Some(n @ ('>' | '&'))) = (first, next) {
            op.push(n);
            self.bump();
        }
        while self.peek().is_some_and(is_blank) {
            self.bump();
        }
        match self.peek() {
            Some(c) if !is_op_char(c) && c != '\n' => {
                let target = self.word()?;
                self.out.redirects.push(Redirect { op, target });
                Ok(())
            }
            _ => Err(format!("redirection `{op}` has no target")),
        }
    }

    /// Reads one word (stops at blanks, newlines and operators).
    fn word(&mut self) -> Result<Word, String> {
        let mut w = Word::default();
        let mut raw_text = String::new();
        let mut open_bracket = false;
        let mut first = true;
        while let Some(c) = self.peek() {
            if is_blank(c) || c == '\n' || is_op_char(c) {
                break;
            }
            raw_text.push(c);
            match c {
                '\\' => {
                    self.bump();
                    match self.raw() {
                        None => return Err("the command ends with a lone backslash".into()),
                        Some(e) => {
                            w.mark_special();
                            w.text.push(e);
                            self.pos += 1;
                        }
                    }
                }
                '\'' => {
                    w.mark_special();
                    self.bump();
                    loop {
                        match self.raw() {
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
                '$' | '`' => {
                    let had = std::mem::take(&mut w.expanded);
                    if c == '$' {
                        self.dollar(&mut w)?;
                    } else {
                        self.backtick(&mut w)?;
                    }
                    w.split |= w.expanded;
                    w.expanded |= had;
                }
                '*' | '?' => {
                    w.glob = true;
                    w.text.push(c);
                    self.bump();
                }
                '[' => {
                    open_bracket = true;
                    w.text.push(c);
                    self.bump();
                }
                ']' if open_bracket => {
                    // `[…]` is a pattern; a lone `[` (the test command) is not.
                    w.glob = true;
                    w.text.push(c);
                    self.bump();
                }
                '~' if first => {
                    w.glob = true;
                    w.text.push(c);
                    self.bump();
                }
                _ => {
                    w.text.push(c);
                    self.bump();
                }
            }
            first = false;
        }
        // bash brace expansion needs `{` … `,` or `..` … `}`; `{}` and `{x}` stay.
        if raw_text.contains('{') && (raw_text.contains(',') || raw_text.contains("..")) {
            w.glob = true;
        }
        Ok(w)
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
