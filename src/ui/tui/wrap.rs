//! Word wrapping of ratatui lines: the shared wrapper (`ui::render::wrap`,
//! textwrap's first-fit over styled spans) with ratatui styles.
//!
//! Invariants: as the shared wrapper's (every line at most `width` columns,
//! styles kept, long words split at character boundaries, continuation lines
//! start with the given prefix); the line's own style is kept on every line.
use crate::ui::render::{self, wrap as shared};
use ratatui::text::{Line, Span};

pub(crate) use shared::{truncate, width};

/// Display width of a line.
pub(crate) fn line_width(line: &Line<'_>) -> usize {
    line.spans.iter().map(|s| width(&s.content)).sum()
}

/// Wraps `line` to `width` columns; continuation lines start with `cont`.
/// (The shared wrapper, `ui::render::wrap`, on ratatui spans.)
pub(crate) fn wrap(
    line: &Line<'static>,
    width: usize,
    cont: &[Span<'static>],
) -> Vec<Line<'static>> {
    if width == 0 || line_width(line) <= width {
        return vec![line.clone()];
    }
    let conv = |spans: &[Span<'static>]| -> Vec<render::Span<ratatui::style::Style>> {
        spans
            .iter()
            .map(|s| render::Span::new(s.content.as_ref(), s.style))
            .collect()
    };
    shared::wrap(&conv(&line.spans), width, &conv(cont))
        .into_iter()
        .map(|l| {
            let spans: Vec<Span<'static>> = l
                .into_iter()
                .map(|s| Span::styled(s.text, s.style))
                .collect();
            Line::from(spans).style(line.style)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn wraps_words_and_keeps_styles() {
        let bold = ratatui::style::Style::default().add_modifier(ratatui::style::Modifier::BOLD);
        let line = Line::from(vec![
            Span::raw("hello "),
            Span::styled("wonderful", bold),
            Span::raw(" world of wrapping text"),
        ]);
        let out = wrap(&line, 12, &[Span::raw("  ")]);
        assert_eq!(
            texts(&out),
            vec!["hello", "  wonderful", "  world of", "  wrapping", "  text"]
        );
        assert_eq!(out[1].spans[1].style, bold);
        for l in &out {
            assert!(line_width(l) <= 12);
        }
    }

    #[test]
    fn splits_long_words_and_wide_chars() {
        let out = wrap(&Line::from("abcdefghijklmnop"), 5, &[]);
        assert_eq!(texts(&out), vec!["abcde", "fghij", "klmno", "p"]);
        let out = wrap(&Line::from("日本語のテキスト"), 5, &[]);
        assert!(out.iter().all(|l| line_width(l) <= 5));
        assert_eq!(out.concat_text(), "日本語のテキスト");
        assert_eq!(
            texts(&wrap(&Line::from("    indented"), 40, &[])),
            vec!["    indented"]
        );
        assert_eq!(truncate("abcdef", 4), "abc…");
    }

    trait Concat {
        fn concat_text(&self) -> String;
    }
    impl Concat for Vec<Line<'static>> {
        fn concat_text(&self) -> String {
            self.iter().map(|l| l.to_string()).collect()
        }
    }
}
