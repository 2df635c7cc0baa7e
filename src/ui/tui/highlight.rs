//! Syntax highlighting of code blocks with syntect (pure-Rust regex engine).
//!
//! Invariants: the syntax and theme sets load once, from `warm_up` on a
//! background thread after the first frame — never on the render path, so a
//! frame never waits for them. Until they are loaded, and for unknown
//! languages or themes, code is shown plain; the event loop redraws once they
//! are ready.
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, ThemeSet};
use syntect::parsing::SyntaxSet;
use syntect::util::LinesWithEndings;

static SYNTAXES: OnceLock<SyntaxSet> = OnceLock::new();
static THEMES: OnceLock<ThemeSet> = OnceLock::new();
/// Set when `warm_up` finished: only then does rendering highlight.
static WARM: AtomicBool = AtomicBool::new(false);

fn syntaxes() -> &'static SyntaxSet {
    SYNTAXES.get_or_init(SyntaxSet::load_defaults_newlines)
}

fn themes() -> &'static ThemeSet {
    THEMES.get_or_init(ThemeSet::load_defaults)
}

/// Whether highlighting is available (the sets are loaded).
pub fn ready() -> bool {
    WARM.load(Ordering::Acquire)
}

/// Code in the languages answers use most, highlighted once in `warm_up`:
/// syntect compiles a syntax's regexes on first use (tens of milliseconds),
/// which must not happen inside a frame.
const SAMPLES: &[(&str, &str)] = &[
    ("rust", "fn main() { let x: u32 = 1; println!(\"{x}\"); }\n"),
    ("python", "def f(x):\n    return [i for i in x if i]  # c\n"),
    ("bash", "for f in *.txt; do echo \"$f\" | grep -v x; done\n"),
    ("json", "{\"a\": [1, true, null, \"s\"]}\n"),
    (
        "js",
        "const f = async (x) => { await x; return `t${x}`; };\n",
    ),
    ("toml", "[a]\nb = \"c\"\n"),
    ("yaml", "a:\n  - b: c\n"),
    ("c", "#include <stdio.h>\nint main(void) { return 0; }\n"),
    ("diff", "--- a\n+++ b\n@@ -1 +1 @@\n-x\n+y\n"),
];

/// Loads the sets and compiles the common syntaxes now (call from a
/// background thread).
pub fn warm_up() {
    let ss = syntaxes();
    let ts = themes();
    if let Some(theme) = ts.themes.values().next() {
        for (lang, code) in SAMPLES {
            if let Some(syntax) = ss.find_syntax_by_token(lang) {
                let mut h = HighlightLines::new(syntax, theme);
                for line in LinesWithEndings::from(code) {
                    let _ = h.highlight_line(line, ss);
                }
            }
        }
    }
    WARM.store(true, Ordering::Release);
}

/// Highlights `code` as `lang` with syntect theme `theme`, on top of `base`.
/// `None` when the language or theme is unknown.
pub fn highlight(code: &str, lang: &str, theme: &str, base: Style) -> Option<Vec<Line<'static>>> {
    let lang = lang.split([',', ' ', '{']).next().unwrap_or("").trim();
    if lang.is_empty() || !ready() {
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
        warm_up();
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
