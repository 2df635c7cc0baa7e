//! How code blocks are highlighted in line output. The highlighting itself
//! is shared with the TUI (`ui::render::highlight`): syntect sets load at
//! most once per process, only when a coloured code block needs them or
//! [`warm`] runs on a background thread; start-up never pays for them.
use crate::ui::render::highlight::DEFAULT_THEME;

pub(crate) use crate::ui::render::highlight::warm;

/// How code blocks are coloured: the syntect theme the colour theme names
/// (its `syntax` key; `None` = no highlighting) and the colour depth.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct CodeStyle {
    pub(crate) syntax_theme: Option<String>,
    pub(crate) depth: crate::ui::color_depth::ColorDepth,
}

impl Default for CodeStyle {
    fn default() -> Self {
        CodeStyle {
            syntax_theme: Some(DEFAULT_THEME.into()),
            depth: crate::ui::color_depth::ColorDepth::Ansi256,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::lines::markdown::Markdown;
    use crate::ui::lines::style::RESET;

    /// The code line of a one-line fenced block in `lang`.
    fn code_line(lang: &str, code: &str, style: &CodeStyle) -> String {
        let s = Markdown::render(&format!("```{lang}\n{code}\n```\n"), true, style);
        s.lines().nth(1).unwrap_or("").to_string()
    }

    #[test]
    fn highlights_known_languages_only() {
        let tc = CodeStyle {
            depth: crate::ui::color_depth::ColorDepth::True,
            ..CodeStyle::default()
        };
        let s = code_line("rust", "fn main() {}", &tc);
        assert!(s.contains("\x1b[38;2;"), "{s:?}");
        assert!(s.ends_with(RESET));
        assert_eq!(strip(&s), "fn main() {}");
        assert_eq!(code_line("no-such-language", "x", &tc), "x");
        assert_eq!(code_line("", "x", &tc), "x");
        let none = CodeStyle {
            syntax_theme: None,
            depth: crate::ui::color_depth::ColorDepth::True,
        };
        assert_eq!(code_line("rust", "let x = 1;", &none), "let x = 1;");
        let unknown = CodeStyle {
            syntax_theme: Some("no-such-theme".into()),
            depth: crate::ui::color_depth::ColorDepth::Ansi256,
        };
        // An unknown theme falls back to the default; no true colour: 256 colours.
        let s = code_line("rust", "let x = 1;", &unknown);
        assert!(s.contains("\x1b[38;5;"), "{s:?}");
        assert!(!s.contains("\x1b[38;2;"), "{s:?}");
        // 16 colours: plain SGR 30–37 / 90–97, no palette index.
        let sixteen = CodeStyle {
            depth: crate::ui::color_depth::ColorDepth::Ansi16,
            ..CodeStyle::default()
        };
        let s = code_line("rust", "let x = 1;", &sixteen);
        assert!(!s.contains("\x1b[38;"), "{s:?}");
        assert!(s.contains("\x1b[3") || s.contains("\x1b[9"), "{s:?}");
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
