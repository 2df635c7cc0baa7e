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

fn theme(light: bool) -> Option<&'static Theme> {
    let t = &assets().themes.themes;
    let name = if light {
        "InspiredGitHub"
    } else {
        "base16-ocean.dark"
    };
    t.get(name).or_else(|| t.values().next())
}

/// Highlights the lines of one code block.
pub struct CodeHighlighter {
    lines: HighlightLines<'static>,
    truecolor: bool,
}

impl CodeHighlighter {
    /// A highlighter for a fence's language tag; `None` for an unknown or
    /// missing language (the block is then printed as it is).
    pub fn for_lang(lang: &str, light: bool, truecolor: bool) -> Option<Self> {
        let lang = lang.trim();
        if lang.is_empty() {
            return None;
        }
        let a = assets();
        let syntax = a
            .syntaxes
            .find_syntax_by_token(lang)
            .or_else(|| a.syntaxes.find_syntax_by_name(lang))?;
        Some(CodeHighlighter {
            lines: HighlightLines::new(syntax, theme(light)?),
            truecolor,
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
        let mut h =
            CodeHighlighter::for_lang("rust", false, true).expect("rust is a default syntax");
        let s = h.line("fn main() {}");
        assert!(s.contains("\x1b[38;2;"), "{s:?}");
        assert!(s.ends_with(RESET));
        assert_eq!(strip(&s), "fn main() {}");
        assert!(CodeHighlighter::for_lang("no-such-language", false, true).is_none());
        assert!(CodeHighlighter::for_lang("", false, true).is_none());
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
