//! Quotes and expansions for [`super::Parser`]: `"…"`, `$…`, `${…}`,
//! `$(…)`, `$'…'` and backquotes. Same invariants as the parent module:
//! continuations are removed by `peek`/`bump`, never inside `$'…'` or
//! after a backslash (those read with `raw`).

use super::{MAX_DEPTH, Parsed, Parser, Word};

impl Parser {
    pub(super) fn double_quoted(&mut self, w: &mut Word) -> Result<(), String> {
        w.mark_special();
        self.bump();
        loop {
            match self.peek() {
                None => return Err("unbalanced double quote (\")".into()),
                Some('"') => {
                    self.bump();
                    return Ok(());
                }
                Some('\\') => {
                    self.bump();
                    match self.raw() {
                        Some(e @ ('$' | '`' | '"' | '\\')) => w.text.push(e),
                        Some(e) => {
                            w.text.push('\\');
                            w.text.push(e);
                        }
                        None => return Err("unbalanced double quote (\")".into()),
                    }
                    self.pos += 1;
                }
                Some('$') => self.dollar(w)?,
                Some('`') => self.backtick(w)?,
                Some(c) => {
                    w.text.push(c);
                    self.bump();
                }
            }
        }
    }

    pub(super) fn dollar(&mut self, w: &mut Word) -> Result<(), String> {
        match self.peek_at(1) {
            Some('(') if self.peek_at(2) == Some('(') => Err(
                "arithmetic expansion `$((…))` is not supported with a command allow-list".into(),
            ),
            Some('[') => {
                Err("arithmetic expansion `$[…]` is not supported with a command allow-list".into())
            }
            Some('(') => {
                w.mark_special();
                w.expanded = true;
                w.text.push_str("$(…)");
                self.bump();
                self.bump();
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
                self.bump();
                self.bump();
                let mut inner = String::new();
                loop {
                    match self.peek() {
                        None => return Err("unterminated ${…}".into()),
                        Some('}') => {
                            self.bump();
                            break;
                        }
                        Some(c @ ('$' | '`' | '\'' | '"' | '\\' | '(' | '{')) => {
                            return Err(format!(
                                "`${{…}}` containing `{c}` is not supported with a command allow-list"
                            ));
                        }
                        Some(c) => {
                            inner.push(c);
                            self.bump();
                        }
                    }
                }
                crate::tools::shell_param::check_param(&inner)?;
                w.text.push_str(&format!("${{{inner}}}"));
                Ok(())
            }
            Some('\'') => self.ansi_c(w),
            Some('"') => {
                Err("bash-only quoting `$\"…\"` is not supported with a command allow-list".into())
            }
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                w.mark_special();
                w.expanded = true;
                w.text.push('$');
                self.bump();
                while let Some(c) = self.peek() {
                    if !(c.is_ascii_alphanumeric() || c == '_') {
                        break;
                    }
                    w.text.push(c);
                    self.bump();
                }
                Ok(())
            }
            Some(c) if c.is_ascii_digit() || "@*#?-$!".contains(c) => {
                w.mark_special();
                w.expanded = true;
                w.text.push('$');
                w.text.push(c);
                self.bump();
                self.bump();
                Ok(())
            }
            _ => {
                w.text.push('$');
                self.bump();
                Ok(())
            }
        }
    }

    /// `$'…'`: bash decodes escapes, dash reads `$` and a single-quoted
    /// string. The two agree on where it ends unless it contains `\'`;
    /// they never agree on the value (`$'ls'` is `ls` to bash, `$ls` to
    /// dash), so the word counts as expanded: never a command name, never
    /// an option of a builtin or wrapper.
    fn ansi_c(&mut self, w: &mut Word) -> Result<(), String> {
        w.mark_special();
        w.expanded = true;
        self.bump();
        self.bump();
        let mut body = String::new();
        loop {
            match self.raw() {
                None => return Err("unbalanced quote in `$'…'`".into()),
                Some('\'') => {
                    self.pos += 1;
                    break;
                }
                Some('\\') => {
                    let e = self.chars.get(self.pos + 1).copied();
                    if e == Some('\'') {
                        return Err(
                            "bash-only quoting `$'…'` with `\\'` is not supported with a command allow-list: bash and dash end the string at different places"
                                .into(),
                        );
                    }
                    body.push('\\');
                    if let Some(e) = e {
                        body.push(e);
                    }
                    self.pos += 2;
                }
                Some(c) => {
                    body.push(c);
                    self.pos += 1;
                }
            }
        }
        match crate::tools::shell_param::ansi_c_value(&body) {
            Some(v) => {
                w.text.push_str(&v);
                Ok(())
            }
            None => Err(format!(
                "bash-only quoting `$'{body}'` with escapes is not supported with a command allow-list (dash reads it differently); use plain quotes or printf"
            )),
        }
    }

    pub(super) fn backtick(&mut self, w: &mut Word) -> Result<(), String> {
        w.mark_special();
        w.expanded = true;
        w.text.push_str("`…`");
        self.bump();
        let mut inner = String::new();
        loop {
            match self.peek() {
                None => return Err("unbalanced backquote (`)".into()),
                Some('`') => {
                    self.bump();
                    break;
                }
                Some('\\') => {
                    self.bump();
                    match self.raw() {
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
                    self.pos += 1;
                }
                Some(c) => {
                    inner.push(c);
                    self.bump();
                }
            }
        }
        if self.depth + 1 > MAX_DEPTH {
            return Err("command substitutions are nested too deeply".into());
        }
        let mut sub = Parser {
            chars: inner.chars().collect(),
            pos: 0,
            out: Parsed::default(),
            depth: self.depth + 1,
        };
        sub.list(false)?;
        self.out.commands.append(&mut sub.out.commands);
        self.out.redirects.append(&mut sub.out.redirects);
        self.out.late_refusals.append(&mut sub.out.late_refusals);
        Ok(())
    }
}
