//! `StreamDoc`: a Markdown answer that may still be growing.
//!
//! Invariants: while streaming, the text is rendered by committed segments
//! (split at blank lines outside code fences, cached per width) plus the open
//! tail, so each frame re-renders only the tail; an unclosed code block in
//! the tail stays unhighlighted. A finished text is rendered whole, once per
//! width (the cell caches it).
use super::markdown::{render, split_point};
use super::theme::Theme;
use ratatui::text::Line;

/// A Markdown text that may still be growing.
#[derive(Clone, Debug, Default)]
pub struct StreamDoc {
    pub text: String,
    /// Committed segments (byte ranges) while streaming.
    segs: Vec<(usize, usize)>,
    seg_lines: Vec<Vec<Line<'static>>>,
    seg_width: u16,
    pub(crate) finished: bool,
}

impl StreamDoc {
    pub(crate) fn finished(text: String) -> Self {
        StreamDoc {
            text,
            finished: true,
            ..Default::default()
        }
    }

    pub(crate) fn push(&mut self, delta: &str) {
        self.text.push_str(delta);
    }

    pub(crate) fn finish(&mut self) {
        self.finished = true;
        self.segs.clear();
        self.seg_lines.clear();
    }

    /// Drops the per-segment caches (after a theme change).
    pub(crate) fn reset_cache(&mut self) {
        self.segs.clear();
        self.seg_lines.clear();
    }

    /// All lines at `width`. Finished: one whole render. Streaming: cached
    /// committed segments plus a fresh render of the open tail.
    pub(crate) fn render(&mut self, theme: &Theme, width: u16) -> Vec<Line<'static>> {
        if self.finished {
            return render(&self.text, theme, width, false);
        }
        if self.seg_width != width {
            self.seg_width = width;
            for (i, (a, b)) in self.segs.iter().enumerate() {
                if let Some(slot) = self.seg_lines.get_mut(i) {
                    *slot = render(&self.text[*a..*b], theme, width, false);
                }
            }
        }
        let committed = self.segs.last().map_or(0, |s| s.1);
        let (split, _) = split_point(&self.text);
        if split > committed {
            let lines = render(&self.text[committed..split], theme, width, false);
            if !lines.is_empty() {
                self.segs.push((committed, split));
                self.seg_lines.push(lines);
            } else if let Some(last) = self.segs.last_mut() {
                last.1 = split;
            } else {
                self.segs.push((committed, split));
                self.seg_lines.push(Vec::new());
            }
        }
        let start = self.segs.last().map_or(0, |s| s.1);
        let tail = &self.text[start..];
        let (_, open) = split_point(tail);
        let mut out: Vec<Line<'static>> = Vec::new();
        for seg in &self.seg_lines {
            if seg.is_empty() {
                continue;
            }
            if !out.is_empty() {
                out.push(Line::default());
            }
            out.extend(seg.iter().cloned());
        }
        let tail_lines = render(tail, theme, width, open);
        if !tail_lines.is_empty() && !out.is_empty() {
            out.push(Line::default());
        }
        out.extend(tail_lines);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    fn theme() -> Theme {
        Theme::load("dark", None, false).unwrap()
    }

    #[test]
    fn streaming_matches_whole_render_for_simple_text() {
        let text = "Para one is here.\n\nPara two.\n\n```rust\nlet a = 1;\n```\n\nend";
        let t = theme();
        let mut doc = StreamDoc::default();
        let mut last = Vec::new();
        for ch in text.chars() {
            doc.push(&ch.to_string());
            last = doc.render(&t, 30);
        }
        assert_eq!(plain(&last), plain(&render(text, &t, 30, false)));
        doc.finish();
        assert_eq!(plain(&doc.render(&t, 30)), plain(&last));
    }
}
