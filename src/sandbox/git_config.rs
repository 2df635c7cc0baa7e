//! Reading and rewriting the git configuration of a repository a sandboxed
//! process created, keeping only keys that cannot make git run a program.
//!
//! Invariant: [`safe_text`] is generated from the parsed entries, never
//! copied from the input, and holds only keys on [`is_safe_key`] with
//! values escaped as git reads them. However the input was crafted (odd
//! escapes, keys after a section header on the same line, continuation
//! lines, bytes this parser does not accept), what git reads back from the
//! output is only what is listed there; text this parser cannot read is
//! replaced by a minimal configuration.

/// One `section[.subsection].key = value`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) section: String,
    pub(crate) subsection: Option<String>,
    pub(crate) key: String,
    /// `None`: the key was written without `=` (boolean true).
    pub(crate) value: Option<String>,
}

impl Entry {
    /// `section.subsection.key` as git names it (section and key lowercased).
    pub(crate) fn name(&self) -> String {
        match &self.subsection {
            Some(s) => format!(
                "{}.{s}.{}",
                self.section.to_ascii_lowercase(),
                self.key.to_ascii_lowercase()
            ),
            None => format!(
                "{}.{}",
                self.section.to_ascii_lowercase(),
                self.key.to_ascii_lowercase()
            ),
        }
    }
}

/// The configuration of a new repository when the original cannot be read.
pub(crate) const MINIMAL: &str =
    "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n";

/// Keys that only hold data (no command, hook, program, pager, include or
/// path that git would run or read configuration from).
pub(crate) fn is_safe_key(e: &Entry) -> bool {
    let section = e.section.to_ascii_lowercase();
    let key = e.key.to_ascii_lowercase();
    let k = key.as_str();
    match (section.as_str(), e.subsection.is_some()) {
        ("core", false) => matches!(
            k,
            "repositoryformatversion"
                | "filemode"
                | "bare"
                | "logallrefupdates"
                | "ignorecase"
                | "precomposeunicode"
                | "symlinks"
                | "autocrlf"
                | "eol"
                | "safecrlf"
                | "quotepath"
                | "compression"
                | "loosecompression"
                | "bigfilethreshold"
                | "sparsecheckout"
                | "sparsecheckoutcone"
                | "checkstat"
                | "trustctime"
                | "abbrev"
                | "commentchar"
                | "worktree"
        ),
        ("extensions", false) => true,
        ("remote", true) => matches!(
            k,
            "url" | "pushurl" | "fetch" | "push" | "tagopt" | "prune" | "mirror" | "promisor"
        ),
        ("branch", true) => matches!(k, "remote" | "merge" | "rebase" | "pushremote"),
        ("submodule", true) => matches!(k, "url" | "active" | "branch" | "ignore" | "shallow"),
        ("submodule", false) => matches!(k, "active" | "recurse"),
        ("user", false) => matches!(k, "name" | "email"),
        ("init", false) => k == "defaultbranch",
        ("pull", false) => matches!(k, "rebase" | "ff"),
        ("push", false) => k == "default",
        ("fetch", false) => matches!(k, "prune" | "prunetags"),
        ("index", false) => k == "version",
        ("gc", false) => k == "auto",
        ("lfs", false) => k == "repositoryformatversion",
        _ => false,
    }
}

struct Reader<'a> {
    b: &'a [u8],
    i: usize,
}

type Parsed = Result<Vec<Entry>, String>;

impl Reader<'_> {
    fn peek(&self) -> Option<u8> {
        self.b.get(self.i).copied()
    }

    /// The next byte, with `\r\n` read as `\n`.
    fn next(&mut self) -> Option<u8> {
        let c = self.peek()?;
        self.i += 1;
        if c == b'\r' && self.peek() == Some(b'\n') {
            self.i += 1;
            return Some(b'\n');
        }
        Some(c)
    }

    fn skip_blanks(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t')) {
            self.i += 1;
        }
    }

    fn skip_line(&mut self) {
        while let Some(c) = self.next() {
            if c == b'\n' {
                break;
            }
        }
    }

    fn header(&mut self) -> Result<(String, Option<String>), String> {
        let mut name = String::new();
        loop {
            match self.next() {
                Some(b']') => {
                    // Legacy `[section.sub]`: the subsection is lowercased.
                    return Ok(match name.split_once('.') {
                        Some((s, sub)) => (s.to_string(), Some(sub.to_ascii_lowercase())),
                        None => (name, None),
                    });
                }
                Some(c) if c.is_ascii_alphanumeric() || c == b'-' || c == b'.' => {
                    name.push(c as char)
                }
                Some(b' ' | b'\t') if !name.is_empty() => break,
                _ => return Err("bad section header".into()),
            }
        }
        self.skip_blanks();
        if self.next() != Some(b'"') {
            return Err("bad subsection".into());
        }
        let mut sub = Vec::new();
        loop {
            match self.next() {
                Some(b'"') => break,
                Some(b'\\') => match self.next() {
                    Some(b'\n') | None => return Err("bad subsection".into()),
                    Some(c) => sub.push(c),
                },
                Some(b'\n') | None | Some(0) => return Err("bad subsection".into()),
                Some(c) => sub.push(c),
            }
        }
        if self.next() != Some(b']') {
            return Err("bad section header".into());
        }
        let sub = String::from_utf8(sub).map_err(|_| "subsection is not UTF-8".to_string())?;
        Ok((name, Some(sub)))
    }

    fn value(&mut self) -> Result<String, String> {
        let mut out = Vec::new();
        let mut quoted = false;
        // Length of `out` up to the last byte that is not trailing blank.
        let mut keep = 0;
        loop {
            let Some(c) = self.next() else {
                if quoted {
                    return Err("unterminated quote".into());
                }
                break;
            };
            match c {
                b'\n' if !quoted => break,
                b'\n' => return Err("newline inside quotes".into()),
                b'#' | b';' if !quoted => {
                    self.skip_line();
                    break;
                }
                b'"' => {
                    quoted = !quoted;
                    keep = out.len();
                }
                b'\\' => {
                    let e = match self.next() {
                        Some(b'\n') => continue,
                        Some(b'n') => b'\n',
                        Some(b't') => b'\t',
                        Some(b'b') => 8,
                        Some(b'\\') => b'\\',
                        Some(b'"') => b'"',
                        _ => return Err("bad escape".into()),
                    };
                    out.push(e);
                    keep = out.len();
                }
                0 => return Err("NUL byte".into()),
                b' ' | b'\t' if !quoted => {
                    if !out.is_empty() {
                        out.push(c);
                    }
                }
                _ => {
                    out.push(c);
                    keep = out.len();
                }
            }
        }
        out.truncate(keep);
        String::from_utf8(out).map_err(|_| "value is not UTF-8".into())
    }

    fn entries(&mut self) -> Parsed {
        if self.b.starts_with(b"\xef\xbb\xbf") {
            self.i = 3;
        }
        let mut out = Vec::new();
        let mut section: Option<(String, Option<String>)> = None;
        loop {
            self.skip_blanks();
            let Some(c) = self.peek() else {
                return Ok(out);
            };
            match c {
                b'\n' | b'\r' => {
                    self.next();
                }
                b'#' | b';' => self.skip_line(),
                b'[' => {
                    self.i += 1;
                    section = Some(self.header()?);
                }
                c if c.is_ascii_alphabetic() => {
                    let Some((s, sub)) = &section else {
                        return Err("key outside a section".into());
                    };
                    let mut key = String::new();
                    while let Some(k) = self
                        .peek()
                        .filter(|k| k.is_ascii_alphanumeric() || *k == b'-')
                    {
                        key.push(k as char);
                        self.i += 1;
                    }
                    self.skip_blanks();
                    let value = match self.peek() {
                        Some(b'=') => {
                            self.i += 1;
                            self.skip_blanks();
                            Some(self.value()?)
                        }
                        None | Some(b'\n' | b'\r' | b'#' | b';') => {
                            self.skip_line();
                            None
                        }
                        _ => return Err(format!("bad character after key {key:?}")),
                    };
                    out.push(Entry {
                        section: s.clone(),
                        subsection: sub.clone(),
                        key,
                        value,
                    });
                }
                _ => return Err("unexpected character".into()),
            }
        }
    }
}

/// Every entry of a configuration file, in order; `Err` for text this
/// parser does not read with certainty.
pub(crate) fn parse(bytes: &[u8]) -> Parsed {
    Reader { b: bytes, i: 0 }.entries()
}

fn escape_value(v: &str) -> Option<String> {
    if v.chars()
        .any(|c| c.is_control() && !matches!(c, '\n' | '\t' | '\u{8}'))
    {
        return None;
    }
    let mut s = String::with_capacity(v.len() + 2);
    for c in v.chars() {
        match c {
            '\\' => s.push_str("\\\\"),
            '"' => s.push_str("\\\""),
            '\n' => s.push_str("\\n"),
            '\t' => s.push_str("\\t"),
            '\u{8}' => s.push_str("\\b"),
            c => s.push(c),
        }
    }
    let quote = v.starts_with([' ', '\t']) || v.ends_with([' ', '\t']) || v.contains(['#', ';']);
    Some(if quote { format!("\"{s}\"") } else { s })
}

fn plain_name(s: &str) -> bool {
    !s.is_empty() && s.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
}

/// The configuration rewritten with only safe keys, and the names of the
/// keys left out. Unreadable text gives [`MINIMAL`] and one reason.
pub(crate) fn safe_text(bytes: &[u8]) -> (String, Vec<String>) {
    let entries = match parse(bytes) {
        Ok(e) => e,
        Err(why) => return (MINIMAL.to_string(), vec![format!("unreadable ({why})")]),
    };
    let mut out = String::new();
    let mut dropped = Vec::new();
    let mut current: Option<(String, Option<String>)> = None;
    for e in entries {
        let escaped = match &e.value {
            Some(v) => escape_value(v).map(Some),
            None => Some(None),
        };
        let Some(value) = escaped.filter(|_| is_safe_key(&e)) else {
            dropped.push(e.name());
            continue;
        };
        if !plain_name(&e.section) || !plain_name(&e.key) {
            dropped.push(e.name());
            continue;
        }
        let here = (e.section.clone(), e.subsection.clone());
        if current.as_ref() != Some(&here) {
            match &e.subsection {
                Some(sub) => {
                    let sub = sub.replace('\\', "\\\\").replace('"', "\\\"");
                    if sub.contains(['\n', '\0']) {
                        dropped.push(e.name());
                        continue;
                    }
                    out.push_str(&format!("[{} \"{sub}\"]\n", e.section));
                }
                None => out.push_str(&format!("[{}]\n", e.section)),
            }
            current = Some(here);
        }
        match value {
            Some(v) => out.push_str(&format!("\t{} = {v}\n", e.key)),
            None => out.push_str(&format!("\t{}\n", e.key)),
        }
    }
    (out, dropped)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    const CLONED: &str = "[core]\n\trepositoryformatversion = 0\n\tfilemode = true\n\tbare = false\n\tlogallrefupdates = true\n[remote \"origin\"]\n\turl = https://example.com/x.git\n\tfetch = +refs/heads/*:refs/remotes/origin/*\n[branch \"main\"]\n\tremote = origin\n\tmerge = refs/heads/main\n";

    #[test]
    fn a_freshly_cloned_config_is_kept_as_it_is() {
        let (text, dropped) = safe_text(CLONED.as_bytes());
        assert_eq!(text, CLONED);
        assert!(dropped.is_empty());
    }

    #[test]
    fn every_spelling_of_a_command_key_is_dropped() {
        for evil in [
            "[core]\n\tfsmonitor = touch /tmp/x\n",
            "[core] fsmonitor = touch /tmp/x\n",
            "[CORE]\n\tFsMonitor = x\n",
            "[core]\n\thooksPath = /tmp/h\n",
            "[core]\n\tpager = x\n",
            "[core]\n\tsshCommand = x\n",
            "[include]\n\tpath = /tmp/evil\n",
            "[includeIf \"gitdir:/\"]\n\tpath = /tmp/evil\n",
            "[filter \"x\"]\n\tclean = evil\n",
            "[diff \"x\"]\n\ttextconv = evil\n",
            "[alias]\n\tst = !evil\n",
            "[core]\n\tbare = false\n\tfsmonitor = \"a\\\nb\"\n",
            "[core.x]\n\tfsmonitor = y\n",
            "[submodule \"s\"]\n\tupdate = !evil\n",
            "[credential]\n\thelper = evil\n",
        ] {
            let (text, dropped) = safe_text(evil.as_bytes());
            assert!(!dropped.is_empty(), "{evil:?}");
            let lower = text.to_ascii_lowercase();
            for bad in [
                "fsmonitor",
                "hookspath",
                "pager",
                "sshcommand",
                "path",
                "clean",
                "textconv",
                "evil",
                "update",
                "helper",
            ] {
                assert!(!lower.contains(bad), "{evil:?} -> {text:?}");
            }
        }
    }

    #[test]
    fn unreadable_text_becomes_the_minimal_config() {
        for bad in [
            "fsmonitor = x\n",
            "[core\nfsmonitor=x\n",
            "[core]\n\tx = \"open\n",
            "[core]\n\tx = a\\qb\n",
            "[core]\n\tx = a\0b\n",
            "[core]\n\t%x = 1\n",
        ] {
            let (text, dropped) = safe_text(bad.as_bytes());
            assert_eq!(text, MINIMAL, "{bad:?}");
            assert_eq!(dropped.len(), 1);
        }
    }

    #[test]
    fn values_keep_their_meaning() {
        let (text, _) = safe_text(b"[user]\n\tname = \" A  B \" ; comment\n\temail = a@b#c\n");
        let back = parse(text.as_bytes()).unwrap();
        assert_eq!(back[0].value.as_deref(), Some(" A  B "));
        assert_eq!(back[1].value.as_deref(), Some("a@b"));
    }
}
