//! Large pastes in the composer: shown as a placeholder with their size
//! (`[pasted 18,204 chars, 312 lines]`); the text sent is the pasted text
//! unchanged. Alt-V puts the pasted text itself into the composer.
//!
//! Invariant: a paste is expanded where its placeholder still stands (the
//! first unexpanded occurrence, in paste order); a placeholder the user
//! edited away takes its paste with it.

/// Pastes longer than this (chars), or with more lines, get a placeholder.
const MAX_INLINE_CHARS: usize = 1_000;
const MAX_INLINE_LINES: usize = 10;

#[derive(Default, Debug, Clone)]
pub(crate) struct Pastes {
    /// (placeholder, text), in paste order.
    items: Vec<(String, String)>,
}

/// `18204` → `18,204`.
fn grouped(n: usize) -> String {
    let s = n.to_string();
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if i > 0 && (s.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

impl Pastes {
    /// What to insert for a paste: the text itself when short, else a
    /// placeholder (the text is kept here).
    pub(crate) fn insertion(&mut self, text: String) -> String {
        let chars = text.chars().count();
        let lines = text.lines().count();
        if chars <= MAX_INLINE_CHARS && lines <= MAX_INLINE_LINES {
            return text;
        }
        let p = format!(
            "[pasted {} chars, {} line{}]",
            grouped(chars),
            grouped(lines),
            if lines == 1 { "" } else { "s" }
        );
        self.items.push((p.clone(), text));
        p
    }

    /// `text` with every placeholder still in it replaced by its paste.
    pub(crate) fn expand(&self, text: &str) -> String {
        let mut out = text.to_string();
        let mut from = 0;
        for (p, t) in &self.items {
            if let Some(i) = out[from..].find(p.as_str()).map(|i| i + from) {
                out.replace_range(i..i + p.len(), t);
                from = i + t.len();
            }
        }
        out
    }

    pub(crate) fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    pub(crate) fn clear(&mut self) {
        self.items.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn large_paste_is_a_placeholder_and_expands_unchanged() {
        let mut p = Pastes::default();
        assert_eq!(p.insertion("short".into()), "short");
        let big: String = (0..312).map(|i| format!("line {i:>52}\n")).collect();
        let ph = p.insertion(big.clone());
        assert_eq!(
            ph,
            format!("[pasted {} chars, 312 lines]", grouped(big.len()))
        );
        assert_eq!(grouped(18_204), "18,204");
        let text = format!("see {ph} and {ph}");
        // The same placeholder typed twice: only the first is the paste.
        assert_eq!(p.expand(&text), format!("see {big} and {ph}"));
        assert_eq!(p.expand("edited away"), "edited away");
    }
}
