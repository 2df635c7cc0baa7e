//! `@path` mentions in the composer: the `@word` under the cursor, the
//! files under the working directory that fuzzily match it, and the edit
//! that completes it. What a mention sends is decided at send time by
//! [`crate::attach`] (the file's content, image or a stored copy).
//!
//! Invariants: the scan is bounded (`MAX_FILES` entries, `MAX_DEPTH`
//! levels, hidden and build directories skipped) and runs once per mention
//! (the list is cached while the popup stays open), so typing never waits
//! on a large tree; matching is a case-insensitive subsequence match,
//! ranked by where the letters fall (file name first, runs, short paths).
use std::path::Path;

/// Entries looked at, at most, per scan.
pub(crate) const MAX_FILES: usize = 20_000;
const MAX_DEPTH: usize = 8;
/// Candidates kept for the popup.
pub(crate) const MAX_MATCHES: usize = 50;
const SKIP_DIRS: &[&str] = &["target", "node_modules", "__pycache__", "dist", "build"];

/// The `@word` ending at `cursor`: (byte start of `@`, the text after it).
pub(crate) fn at_cursor(text: &str, cursor: usize) -> Option<(usize, &str)> {
    let before = text.get(..cursor)?;
    let start = before
        .rfind(char::is_whitespace)
        .map(|i| i + before[i..].chars().next().map_or(1, char::len_utf8))
        .unwrap_or(0);
    let word = &before[start..];
    let rest = word.strip_prefix('@')?;
    // An e-mail address or `a@b` is not a mention.
    Some((start, rest))
}

/// Relative paths of the files under `root` (bounded, sorted).
pub(crate) fn scan(root: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![(root.to_path_buf(), 0usize)];
    let mut seen = 0usize;
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            seen += 1;
            if seen > MAX_FILES {
                out.sort();
                return out;
            }
            let name = e.file_name().to_string_lossy().into_owned();
            if name.starts_with('.') {
                continue;
            }
            let Ok(ft) = e.file_type() else { continue };
            let path = e.path();
            if ft.is_dir() {
                if depth + 1 < MAX_DEPTH && !SKIP_DIRS.contains(&name.as_str()) {
                    stack.push((path, depth + 1));
                }
            } else if let Ok(rel) = path.strip_prefix(root) {
                out.push(rel.to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

/// A score for `query` as a subsequence of `path` (higher is better), or
/// `None` when it does not match.
pub(crate) fn score(query: &str, path: &str) -> Option<i64> {
    if query.is_empty() {
        return Some(-(path.len() as i64));
    }
    let name_at = path.rfind('/').map_or(0, |i| i + 1);
    let hay: Vec<char> = path.chars().flat_map(char::to_lowercase).collect();
    let mut s = 0i64;
    let mut pos = 0usize;
    let mut last: Option<usize> = None;
    // Byte offset of the file name in chars (paths are mostly ASCII).
    let name_char = path[..name_at].chars().count();
    for q in query.chars().flat_map(char::to_lowercase) {
        let i = (pos..hay.len()).find(|&i| hay[i] == q)?;
        s += 1;
        if last.is_some_and(|l| l + 1 == i) {
            s += 5;
        }
        if i >= name_char {
            s += 3;
        }
        if i == name_char
            || i == 0
            || matches!(hay.get(i.wrapping_sub(1)), Some('/' | '_' | '-' | '.'))
        {
            s += 4;
        }
        last = Some(i);
        pos = i + 1;
    }
    Some(s * 100 - path.len() as i64)
}

/// The best matches of `query` among `files`, best first.
pub(crate) fn matches(query: &str, files: &[String]) -> Vec<String> {
    let mut scored: Vec<(i64, &String)> = files
        .iter()
        .filter_map(|f| score(query, f).map(|s| (s, f)))
        .collect();
    scored.sort_by(|a, b| b.0.cmp(&a.0).then_with(|| a.1.cmp(b.1)));
    scored
        .into_iter()
        .take(MAX_MATCHES)
        .map(|(_, f)| f.clone())
        .collect()
}

/// The composer text with the mention at `start..cursor` replaced by
/// `@path ` (a path with spaces cannot be a mention word: it is left out).
pub(crate) fn complete(text: &str, start: usize, cursor: usize, path: &str) -> (String, usize) {
    let ins = format!("@{path} ");
    let mut t = String::with_capacity(text.len() + ins.len());
    t.push_str(&text[..start]);
    t.push_str(&ins);
    let cur = t.len();
    t.push_str(text[cursor..].trim_start_matches(' '));
    (t, cur)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn finds_the_word_and_ranks_file_names_first() {
        assert_eq!(at_cursor("read @src/ma", 12), Some((5, "src/ma")));
        assert_eq!(at_cursor("mail me@x.org", 13), None);
        assert_eq!(at_cursor("@", 1), Some((0, "")));
        let files: Vec<String> = [
            "docs/main.md",
            "src/main.rs",
            "src/mod.rs",
            "tests/x_main_test.rs",
        ]
        .map(String::from)
        .to_vec();
        assert_eq!(matches("main.rs", &files)[0], "src/main.rs");
        assert_eq!(matches("sma", &files)[0], "src/main.rs");
        assert!(matches("zzz", &files).is_empty());
        assert_eq!(
            complete("see @src/ma now", 4, 11, "src/main.rs"),
            ("see @src/main.rs now".to_string(), 17)
        );
    }

    #[test]
    fn scan_skips_hidden_and_build_dirs() {
        let d = tempfile::tempdir().unwrap();
        for p in ["a.txt", "src/b.rs", ".git/c", "target/d", "node_modules/e"] {
            let f = d.path().join(p);
            std::fs::create_dir_all(f.parent().unwrap()).unwrap();
            std::fs::write(f, "x").unwrap();
        }
        assert_eq!(scan(d.path()), vec!["a.txt", "src/b.rs"]);
    }
}
