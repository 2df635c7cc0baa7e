//! The imports between the top-level modules of `src/`, read from the
//! source the way rustc resolves them (for `tests/layering.rs`): the module
//! tree from `src/lib.rs` through `mod x;` and `#[path]`, without anything
//! under `#[cfg(test)]`; in each file, `crate::m…`, `crate::{m…, …}` and
//! `super::` paths that reach the crate root. Comments and string literals
//! are not code.
use std::path::Path;

#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    Ident(String),
    Str(String),
    Punct(char),
}

/// The tokens of Rust source that matter here (comments dropped, string
/// literals kept whole, char literals and lifetimes skipped), with lines.
pub fn lex(src: &str) -> Vec<(Tok, usize)> {
    let c: Vec<char> = src.chars().collect();
    let (mut i, mut line, mut out) = (0, 1, Vec::new());
    let ident = |ch: char| ch.is_alphanumeric() || ch == '_';
    while i < c.len() {
        let ch = c[i];
        let next = c.get(i + 1).copied();
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ch == '/' && next == Some('/') {
            while i < c.len() && c[i] != '\n' {
                i += 1;
            }
        } else if ch == '/' && next == Some('*') {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    line += usize::from(c[i] == '\n');
                    i += 1;
                }
            }
        } else if ch == '"' || ((ch == 'b' || ch == 'c') && next == Some('"')) {
            i += if ch == '"' { 1 } else { 2 };
            let (start, at) = (i, line);
            while i < c.len() && c[i] != '"' {
                let skip = if c[i] == '\\' { 2 } else { 1 };
                line += c[i..(i + skip).min(c.len())]
                    .iter()
                    .filter(|&&x| x == '\n')
                    .count();
                i += skip;
            }
            out.push((Tok::Str(c[start..i.min(c.len())].iter().collect()), at));
            i += 1;
        } else if (ch == 'r' || (ch == 'b' && next == Some('r')))
            && c[i + if ch == 'r' { 1 } else { 2 }..]
                .iter()
                .position(|&x| x != '#')
                .is_some_and(|n| c.get(i + if ch == 'r' { 1 } else { 2 } + n) == Some(&'"'))
        {
            i += if ch == 'r' { 1 } else { 2 };
            let hashes = c[i..].iter().take_while(|&&x| x == '#').count();
            i += hashes + 1;
            let (start, at) = (i, line);
            let close: String = std::iter::once('"')
                .chain("#".repeat(hashes).chars())
                .collect();
            while i < c.len() && !c[i..].iter().take(close.len()).copied().eq(close.chars()) {
                line += usize::from(c[i] == '\n');
                i += 1;
            }
            out.push((Tok::Str(c[start..i.min(c.len())].iter().collect()), at));
            i += close.len();
        } else if ch == '\'' {
            // A char literal ('x', '\n', '\u{1F600}') or a lifetime ('a).
            if next == Some('\\') {
                i += 2;
                while i < c.len() && c[i] != '\'' {
                    i += 1;
                }
                i += 1;
            } else if c.get(i + 2) == Some(&'\'') {
                i += 3;
            } else {
                i += 1;
            }
        } else if ident(ch) {
            let start = i;
            while i < c.len() && ident(c[i]) {
                i += 1;
            }
            out.push((Tok::Ident(c[start..i].iter().collect()), line));
        } else {
            out.push((Tok::Punct(ch), line));
            i += 1;
        }
    }
    out
}

/// The end (exclusive) of the item starting at `i`: after its `;`, or after
/// the `}` matching its first `{`.
pub fn item_end(toks: &[(Tok, usize)], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < toks.len() {
        match toks[i].0 {
            Tok::Punct(';') if depth == 0 => return i + 1,
            Tok::Punct('{') | Tok::Punct('(') | Tok::Punct('[') => depth += 1,
            Tok::Punct('}') | Tok::Punct(')') | Tok::Punct(']') => {
                depth = depth.saturating_sub(1);
                if depth == 0 && toks[i].0 == Tok::Punct('}') {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    i
}

/// The index after the bracket that closes the one at `i`.
pub fn matching(toks: &[(Tok, usize)], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < toks.len() {
        match toks[i].0 {
            Tok::Punct('{') | Tok::Punct('(') | Tok::Punct('[') => depth += 1,
            Tok::Punct('}') | Tok::Punct(')') | Tok::Punct(']') => {
                depth = depth.saturating_sub(1);
                if depth == 0 {
                    return i + 1;
                }
            }
            _ => {}
        }
        i += 1;
    }
    i
}

/// A `use`/path reference from one top-level module to another.
#[derive(Debug)]
pub struct Import {
    pub from: String,
    pub to: String,
    pub at: String,
}

/// The crate modules `toks` names as `crate::m…`, `crate::{m…, …}` or
/// through enough `super::` to reach the crate root from `depth`.
pub fn named_modules(toks: &[(Tok, usize)], depth: usize) -> Vec<(String, usize)> {
    let id = |i: usize| match toks.get(i) {
        Some((Tok::Ident(s), _)) => Some(s.as_str()),
        _ => None,
    };
    let sep = |i: usize| {
        toks.get(i).map(|t| &t.0) == Some(&Tok::Punct(':'))
            && toks.get(i + 1).map(|t| &t.0) == Some(&Tok::Punct(':'))
    };
    let mut out = Vec::new();
    for i in 0..toks.len() {
        let mut j = match id(i) {
            Some("crate") if sep(i + 1) => i + 3,
            Some("super") if i < 2 || !sep(i - 2) => {
                let mut j = i;
                let mut ups = 0;
                while id(j) == Some("super") && sep(j + 1) {
                    ups += 1;
                    j += 3;
                }
                if ups != depth {
                    continue;
                }
                j
            }
            _ => continue,
        };
        let line = toks[i].1;
        let macro_call = |k: usize| toks.get(k + 1).map(|t| &t.0) == Some(&Tok::Punct('!'));
        match toks.get(j).map(|t| &t.0) {
            Some(Tok::Ident(m)) if !macro_call(j) => out.push((m.clone(), line)),
            Some(Tok::Punct('{')) => {
                // Each entry of the group at its top level.
                let mut level = 0;
                let mut expect = true;
                j += 1;
                while let Some((t, _)) = toks.get(j) {
                    match t {
                        Tok::Punct('{') => level += 1,
                        Tok::Punct('}') if level == 0 => break,
                        Tok::Punct('}') => level -= 1,
                        Tok::Punct(',') if level == 0 => expect = true,
                        Tok::Ident(m) if expect && level == 0 => {
                            if m != "self" {
                                out.push((m.clone(), line));
                            }
                            expect = false;
                        }
                        _ => expect = false,
                    }
                    j += 1;
                }
            }
            _ => {}
        }
    }
    out
}

/// The imports between top-level modules in the non-test code of the
/// module tree rooted at `file` (module path `path`). Follows `mod x;`
/// declarations (and `#[path]`); skips every item under `#[cfg(test)]`.
pub fn walk(file: &Path, path: &[String], mod_rs: bool, out: &mut Vec<Import>) {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let toks = lex(&text);
    let dir = file.parent().unwrap();
    let child_dir = if mod_rs {
        dir.to_path_buf()
    } else {
        dir.join(file.file_stem().unwrap())
    };
    // Drop the test-only items, follow `mod x;`.
    let mut kept: Vec<(Tok, usize)> = Vec::new();
    let (mut i, mut test_only, mut path_attr) = (0, false, None::<String>);
    while i < toks.len() {
        if toks[i].0 == Tok::Punct('#') && toks.get(i + 1).map(|t| &t.0) == Some(&Tok::Punct('[')) {
            let end = matching(&toks, i + 1);
            let attr: Vec<&Tok> = toks[i + 2..end - 1].iter().map(|t| &t.0).collect();
            let word = |w: &str| attr.contains(&&Tok::Ident(w.into()));
            if attr.first() == Some(&&Tok::Ident("cfg".into())) && word("test") && !word("not") {
                test_only = true;
            }
            if attr.first() == Some(&&Tok::Ident("path".into())) {
                path_attr = attr.iter().find_map(|t| match t {
                    Tok::Str(s) => Some(s.clone()),
                    _ => None,
                });
            }
            i = end;
            continue;
        }
        if test_only {
            i = item_end(&toks, i);
            test_only = false;
            path_attr = None;
            continue;
        }
        if toks[i].0 == Tok::Ident("mod".into())
            && let Some((Tok::Ident(name), _)) = toks.get(i + 1)
            && toks.get(i + 2).map(|t| &t.0) == Some(&Tok::Punct(';'))
        {
            let (child, child_mod_rs) = match path_attr.take() {
                Some(p) => (dir.join(p), true),
                None if child_dir.join(format!("{name}.rs")).is_file() => {
                    (child_dir.join(format!("{name}.rs")), false)
                }
                None => (child_dir.join(name).join("mod.rs"), true),
            };
            let mut sub = path.to_vec();
            sub.push(name.clone());
            walk(&child, &sub, child_mod_rs, out);
            i += 3;
            continue;
        }
        if matches!(toks[i].0, Tok::Punct(';' | '{' | '}')) {
            path_attr = None;
        }
        kept.push(toks[i].clone());
        i += 1;
    }
    let Some(from) = path.first() else {
        return;
    };
    for (to, line) in named_modules(&kept, path.len()) {
        if &to != from {
            out.push(Import {
                from: from.clone(),
                to,
                at: format!("{}:{line}", shown(file)),
            });
        }
    }
}

/// `file` relative to the repository.
pub fn shown(file: &Path) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    file.strip_prefix(root)
        .unwrap_or(file)
        .display()
        .to_string()
}

/// Every import between top-level modules of the crate's non-test code.
pub fn crate_imports() -> Vec<Import> {
    let lib = Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs");
    let mut out = Vec::new();
    walk(&lib, &[], true, &mut out);
    out
}

/// A cycle in the graph `imports`, as the modules along it (the first one
/// repeated at the end), or `None`.
pub fn find_cycle(imports: &[Import]) -> Option<Vec<String>> {
    use std::collections::BTreeMap;
    let mut next: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for im in imports {
        next.entry(&im.from).or_default().push(&im.to);
        next.entry(&im.to).or_default();
    }
    // 0 unseen, 1 on the path, 2 done.
    fn visit<'a>(
        m: &'a str,
        next: &BTreeMap<&'a str, Vec<&'a str>>,
        state: &mut BTreeMap<&'a str, u8>,
        stack: &mut Vec<&'a str>,
    ) -> Option<Vec<String>> {
        state.insert(m, 1);
        stack.push(m);
        for &n in &next[m] {
            match state.get(n).copied().unwrap_or(0) {
                1 => {
                    let from = stack.iter().position(|&s| s == n).unwrap();
                    let mut cycle: Vec<String> =
                        stack[from..].iter().map(|s| s.to_string()).collect();
                    cycle.push(n.to_string());
                    return Some(cycle);
                }
                0 => {
                    if let Some(c) = visit(n, next, state, stack) {
                        return Some(c);
                    }
                }
                _ => {}
            }
        }
        stack.pop();
        state.insert(m, 2);
        None
    }
    let mut state = BTreeMap::new();
    for &m in next.keys() {
        if state.get(m).copied().unwrap_or(0) == 0
            && let Some(c) = visit(m, &next, &mut state, &mut Vec::new())
        {
            return Some(c);
        }
    }
    None
}

/// `a -> b (where)` for each step of `cycle`.
pub fn explain(cycle: &[String], imports: &[Import]) -> String {
    cycle
        .windows(2)
        .map(|w| {
            let at = imports.iter().find(|im| im.from == w[0] && im.to == w[1]);
            format!(
                "  {} -> {} ({})",
                w[0],
                w[1],
                at.map_or("?", |im| im.at.as_str())
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Every file of the module tree rooted at `file` (itself included), through
/// `mod x;` and `#[path]` declarations whatever their `cfg`.
pub fn module_files(file: &Path, mod_rs: bool, out: &mut Vec<std::path::PathBuf>) {
    out.push(file.to_path_buf());
    let Ok(text) = std::fs::read_to_string(file) else {
        return;
    };
    let toks = lex(&text);
    let dir = file.parent().unwrap_or(Path::new("."));
    let child_dir = if mod_rs {
        dir.to_path_buf()
    } else {
        dir.join(file.file_stem().unwrap_or_default())
    };
    let mut path_attr: Option<String> = None;
    let mut i = 0;
    while i < toks.len() {
        match &toks[i].0 {
            Tok::Punct('#') if toks.get(i + 1).map(|t| &t.0) == Some(&Tok::Punct('[')) => {
                let end = matching(&toks, i + 1);
                let attr = &toks[i + 2..end.saturating_sub(1)];
                if attr.first().map(|t| &t.0) == Some(&Tok::Ident("path".into())) {
                    path_attr = attr.iter().find_map(|t| match &t.0 {
                        Tok::Str(s) => Some(s.clone()),
                        _ => None,
                    });
                }
                i = end;
                continue;
            }
            Tok::Ident(m) if m == "mod" => {
                if let (Some((Tok::Ident(name), _)), Some((Tok::Punct(';'), _))) =
                    (toks.get(i + 1), toks.get(i + 2))
                {
                    let flat = child_dir.join(format!("{name}.rs"));
                    let (child, child_mod_rs) = match path_attr.take() {
                        Some(p) => (dir.join(p), true),
                        None if flat.is_file() => (flat, false),
                        None => (child_dir.join(name).join("mod.rs"), true),
                    };
                    module_files(&child, child_mod_rs, out);
                }
            }
            Tok::Punct(';' | '{' | '}') => path_attr = None,
            _ => {}
        }
        i += 1;
    }
}
