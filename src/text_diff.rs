//! Line diffs of two texts, as the approval overlay, `/diff` and
//! `navi sessions diff` show them: `similar`'s Myers diff grouped into hunks
//! with three lines of context. Pure: no I/O, nothing else in the crate.
use similar::{ChangeTag, TextDiff};

const CONTEXT: usize = 3;

/// One line of a diff.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum DiffLine {
    /// `@@ -a,b +c,d @@` or a note such as "new file".
    Header(String),
    Added(String),
    Removed(String),
    Context(String),
}

impl DiffLine {
    /// The line as text, with the marks of a unified diff (`+`, `-`, a
    /// space of context; headers as they are).
    pub(crate) fn text(&self) -> String {
        match self {
            DiffLine::Header(t) => t.clone(),
            DiffLine::Added(t) => format!("+{t}"),
            DiffLine::Removed(t) => format!("-{t}"),
            DiffLine::Context(t) => format!(" {t}"),
        }
    }
}

/// Lines of `old` → `new`; `old` `None`: a new file.
pub(crate) fn diff(old: Option<&str>, new: &str) -> Vec<DiffLine> {
    let Some(old) = old else {
        let mut out = vec![DiffLine::Header(format!(
            "new file, {} line(s)",
            new.lines().count()
        ))];
        out.extend(new.lines().map(|l| DiffLine::Added(l.to_string())));
        return out;
    };
    if old == new {
        return vec![DiffLine::Header(
            "no change: the content is the same".into(),
        )];
    }
    let d = TextDiff::from_lines(old, new);
    let mut out = Vec::new();
    for group in d.grouped_ops(CONTEXT) {
        let (Some(first), Some(last)) = (group.first(), group.last()) else {
            continue;
        };
        let (o, n) = (first.old_range().start, first.new_range().start);
        let (oe, ne) = (last.old_range().end, last.new_range().end);
        out.push(DiffLine::Header(format!(
            "@@ -{},{} +{},{} @@",
            o + 1,
            oe - o,
            n + 1,
            ne - n
        )));
        for op in &group {
            for c in d.iter_changes(op) {
                let text = c.value().trim_end_matches(['\n', '\r']).to_string();
                out.push(match c.tag() {
                    ChangeTag::Delete => DiffLine::Removed(text),
                    ChangeTag::Insert => DiffLine::Added(text),
                    ChangeTag::Equal => DiffLine::Context(text),
                });
            }
        }
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn changed_line_shows_as_removed_and_added_with_context() {
        let d = diff(Some("a\nb\nc\n"), "a\nB\nc\n");
        assert_eq!(
            d,
            vec![
                DiffLine::Header("@@ -1,3 +1,3 @@".into()),
                DiffLine::Context("a".into()),
                DiffLine::Removed("b".into()),
                DiffLine::Added("B".into()),
                DiffLine::Context("c".into()),
            ]
        );
    }
}
