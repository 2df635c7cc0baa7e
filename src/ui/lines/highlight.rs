//! Code-block highlighting with syntect, loaded lazily.
//!
//! Invariants: the syntax and theme sets are loaded at most once per process,
//! and only when a coloured code block needs them (or [`warm`] is called);
//! start-up never pays for them. Output is foreground colour only, and every
//! highlighted line ends in a reset.
use super::style::{RESET, rgb_fg};
use std::sync::OnceLock;
use syntect::easy::HighlightLines;
use syntect::highlighting::{Theme, ThemeSet};
use syntect::parsing::SyntaxSet;

struct Assets {
    syntaxes: SyntaxSet,
    themes: ThemeSet,
}

static ASSETS: OnceLock<Assets> = OnceLock::new();

fn assets() -> &'static Assets {
    ASSETS.get_or_init(|| Assets {
        syntaxes: SyntaxSet::load_defaults_newlines(),
        themes: ThemeSet::load_defaults(),
    })
}

/// Loads the syntax definitions on a background thread, so the first code
/// block of an answer does not stall the stream.
pub fn warm() {
    if ASSETS.get().is_none() {
        let _ = std::thread::Builder::new()
            .name("navi-syntect".into())
            .spawn(|| {
                assets();
            });
    }
}

/// How code blocks are coloured: the syntect theme the colour theme names
/// (its `syntax` key; `None` = no highlighting) and the colour depth.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CodeStyle {
    pub syntax_theme: Option<String>,
    pub truecolor: bool,
}

impl Default for CodeStyle {
    fn default() -> Self {
        CodeStyle {
            syntax_theme: Some(DEFAULT_THEME.into()),
            truecolor: false,
        }
    }
}

const DEFAULT_THEME: &str = "base16-ocean.dark";

/// A syntect theme by name; an unknown name falls back to the default.
fn theme(name: &str) -> Option<&'static Theme> {
    let t = &assets().themes.themes;
    t.get(name)
        .or_else(|| t.get(DEFAULT_THEME))
        .or_else(|| t.values().next())
}

/// Highlights the lines of one code block.
pub struct CodeHighlighter {
    lines: HighlightLines<'static>,
    truecolor: bool,
}

impl CodeHighlighter {
    /// A highlighter for a fence's language tag; `None` for an unknown or
    /// missing language, or no syntax theme (the block is printed as it is).
    pub fn for_lang(lang: &str, style: &CodeStyle) -> Option<Self> {
        let lang = lang.trim();
        let name = style.syntax_theme.as_deref()?;
        if lang.is_empty() {
            return None;
        }
        let a = assets();
        let syntax = a
            .syntaxes
            .find_syntax_by_token(lang)
            .or_else(|| a.syntaxes.find_syntax_by_name(lang))?;
        Some(CodeHighlighter {
            lines: HighlightLines::new(syntax, theme(name)?),
            truecolor: style.truecolor,
        })
    }

    /// One line (without its newline), coloured.
    pub fn line(&mut self, line: &str) -> String {
        let with_nl = format!("{line}\n");
        let Ok(ranges) = self.lines.highlight_line(&with_nl, &assets().syntaxes) else {
            return line.to_string();
        };
        let mut out = String::with_capacity(line.len() * 2);
        for (style, text) in ranges {
            let text = text.trim_end_matches('\n');
            if text.is_empty() {
                continue;
            }
            let c = style.foreground;
            out.push_str(&rgb_fg(c.r, c.g, c.b, self.truecolor));
            out.push_str(text);
        }
        out.push_str(RESET);
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highlights_known_languages_only() {
        let tc = CodeStyle {
            truecolor: true,
            ..CodeStyle::default()
        };
        let mut h = CodeHighlighter::for_lang("rust", &tc).expect("rust is a default syntax");
        let s = h.line("fn main() {}");
        assert!(s.contains("\x1b[38;2;"), "{s:?}");
        assert!(s.ends_with(RESET));
        assert_eq!(strip(&s), "fn main() {}");
        assert!(CodeHighlighter::for_lang("no-such-language", &tc).is_none());
        assert!(CodeHighlighter::for_lang("", &tc).is_none());
        let none = CodeStyle {
            syntax_theme: None,
            truecolor: true,
        };
        assert!(CodeHighlighter::for_lang("rust", &none).is_none());
        let unknown = CodeStyle {
            syntax_theme: Some("no-such-theme".into()),
            truecolor: false,
        };
        let mut h = CodeHighlighter::for_lang("rust", &unknown).expect("falls back");
        assert!(h.line("let x = 1;").contains("\x1b[38;5;"));
    }

    fn strip(s: &str) -> String {
        let mut out = String::new();
        let mut esc = false;
        for c in s.chars() {
            match (esc, c) {
                (false, '\x1b') => esc = true,
                (true, 'm') => esc = false,
                (true, _) => {}
                (false, c) => out.push(c),
            }
        }
        out
    }
}
