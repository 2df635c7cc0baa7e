//! Syntax highlighting of code blocks with syntect (pure-Rust regex engine).
//!
//! Invariants: the syntax and theme sets load once, lazily, on first use (or
//! from `warm_up` on a background thread after the first frame), never before
//! the first frame. Unknown languages or themes fall back to plain text.
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use std::sync::OnceLock;
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, ThemeSet};
use syntect::parsing::SyntaxSet;
use syntect::util::LinesWithEndings;

static SYNTAXES: OnceLock<SyntaxSet> = OnceLock::new();
static THEMES: OnceLock<ThemeSet> = OnceLock::new();

fn syntaxes() -> &'static SyntaxSet {
    SYNTAXES.get_or_init(SyntaxSet::load_defaults_newlines)
}

fn themes() -> &'static ThemeSet {
    THEMES.get_or_init(ThemeSet::load_defaults)
}

/// Loads the sets now (call from a background thread).
pub fn warm_up() {
    let _ = syntaxes();
    let _ = themes();
}

/// Highlights `code` as `lang` with syntect theme `theme`, on top of `base`.
/// `None` when the language or theme is unknown.
pub fn highlight(code: &str, lang: &str, theme: &str, base: Style) -> Option<Vec<Line<'static>>> {
    let lang = lang.split([',', ' ', '{']).next().unwrap_or("").trim();
    if lang.is_empty() {
        return None;
    }
    let ss = syntaxes();
    let syntax = ss
        .find_syntax_by_token(lang)
        .or_else(|| ss.find_syntax_by_name(lang))?;
    let th = themes().themes.get(theme)?;
    let mut h = HighlightLines::new(syntax, th);
    let mut out = Vec::new();
    for line in LinesWithEndings::from(code) {
        let ranges = h.highlight_line(line, ss).ok()?;
        let spans: Vec<Span<'static>> = ranges
            .into_iter()
            .filter_map(|(st, text)| {
                let text = text.trim_end_matches(['\n', '\r']);
                if text.is_empty() {
                    return None;
                }
                let mut s = base.fg(Color::Rgb(
                    st.foreground.r,
                    st.foreground.g,
                    st.foreground.b,
                ));
                if st.font_style.contains(FontStyle::BOLD) {
                    s = s.add_modifier(Modifier::BOLD);
                }
                if st.font_style.contains(FontStyle::ITALIC) {
                    s = s.add_modifier(Modifier::ITALIC);
                }
                if st.font_style.contains(FontStyle::UNDERLINE) {
                    s = s.add_modifier(Modifier::UNDERLINED);
                }
                Some(Span::styled(text.replace('\t', "    "), s))
            })
            .collect();
        out.push(Line::from(spans));
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highlights_known_languages_only() {
        let lines = highlight(
            "fn main() {}\n",
            "rust",
            "base16-ocean.dark",
            Style::default(),
        )
        .unwrap();
        assert_eq!(lines.len(), 1);
        assert!(lines[0].spans.len() > 1, "{:?}", lines[0]);
        assert!(lines[0].spans.iter().all(|s| s.style.fg.is_some()));
        assert!(
            highlight(
                "x",
                "no-such-language",
                "base16-ocean.dark",
                Style::default()
            )
            .is_none()
        );
        assert!(highlight("x", "rust", "no-such-theme", Style::default()).is_none());
    }
}
