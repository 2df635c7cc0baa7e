//! Syntax highlighting of code with syntect (pure-Rust regex engine), for
//! both front ends: code comes out as neutral [`Role::Syntax`] spans.
//!
//! Invariants:
//! - The syntax and theme sets load at most once per process, only when
//!   asked: [`warm_up`] (on a background thread; the TUI calls it after the
//!   first frame, plain mode via [`warm`] before a turn) or a plain-mode
//!   highlighter that needs them now. Start-up never pays for them.
//! - The TUI highlights only once [`ready`] says the sets are loaded and the
//!   common syntaxes compiled, so a frame never waits; until then code is
//!   shown plain and the event loop redraws when they are ready.
use super::{Role, Span, Style, Syntax};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, Ordering};
use syntect::easy::HighlightLines;
use syntect::highlighting::{FontStyle, Theme, ThemeSet};
use syntect::parsing::SyntaxSet;
use syntect::util::LinesWithEndings;

struct Assets {
    syntaxes: SyntaxSet,
    themes: ThemeSet,
}

static ASSETS: OnceLock<Assets> = OnceLock::new();
/// Set when `warm_up` finished.
static WARM: AtomicBool = AtomicBool::new(false);

fn assets() -> &'static Assets {
    ASSETS.get_or_init(|| Assets {
        syntaxes: SyntaxSet::load_defaults_newlines(),
        themes: ThemeSet::load_defaults(),
    })
}

/// The syntect theme used when a colour theme names none that exists
/// (plain mode falls back to it; the TUI shows such code plain).
pub(crate) const DEFAULT_THEME: &str = "base16-ocean.dark";

/// Whether the sets are loaded and the common syntaxes compiled.
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
    let a = assets();
    if let Some(theme) = a.themes.themes.values().next() {
        for (lang, code) in SAMPLES {
            if let Some(syntax) = a.syntaxes.find_syntax_by_token(lang) {
                let mut h = HighlightLines::new(syntax, theme);
                for line in LinesWithEndings::from(code) {
                    let _ = h.highlight_line(line, &a.syntaxes);
                }
            }
        }
    }
    WARM.store(true, Ordering::Release);
}

/// Runs [`warm_up`] on a background thread unless it already ran.
pub(crate) fn warm() {
    if !ready() {
        let _ = std::thread::Builder::new()
            .name("navi-syntect".into())
            .spawn(warm_up);
    }
}

/// Whether syntect knows a theme of this name (loads the sets).
pub(crate) fn has_theme(name: &str) -> bool {
    assets().themes.themes.contains_key(name)
}

/// Highlights the lines of one code block, one line at a time (so a
/// streaming block can be coloured line by line).
pub(crate) struct Highlighter {
    lines: HighlightLines<'static>,
}

impl Highlighter {
    /// A highlighter for a fence's info string (`rust`, `rust,ignore`,
    /// `python {.class}`) in syntect theme `theme`; `None` for a missing or
    /// unknown language or theme. Loads the sets if they are not loaded.
    pub(crate) fn new(info: &str, theme: &str) -> Option<Self> {
        let lang = info.split([',', ' ', '{']).next().unwrap_or("").trim();
        if lang.is_empty() {
            return None;
        }
        let a = assets();
        let syntax = a
            .syntaxes
            .find_syntax_by_token(lang)
            .or_else(|| a.syntaxes.find_syntax_by_name(lang))?;
        let th: &'static Theme = a.themes.themes.get(theme)?;
        Some(Highlighter {
            lines: HighlightLines::new(syntax, th),
        })
    }

    /// One line (without its newline) as spans of `base` with a syntax
    /// colour nested inside; `None` if syntect failed on it.
    pub(crate) fn line(&mut self, line: &str, base: Style) -> Option<Vec<Span>> {
        let with_nl = format!("{line}\n");
        let ranges = self
            .lines
            .highlight_line(&with_nl, &assets().syntaxes)
            .ok()?;
        Some(
            ranges
                .into_iter()
                .filter_map(|(st, text)| {
                    let text = text.trim_end_matches(['\n', '\r']);
                    if text.is_empty() {
                        return None;
                    }
                    let c = st.foreground;
                    let syn = Syntax {
                        rgb: (c.r, c.g, c.b),
                        bold: st.font_style.contains(FontStyle::BOLD),
                        italic: st.font_style.contains(FontStyle::ITALIC),
                        underline: st.font_style.contains(FontStyle::UNDERLINE),
                    };
                    Some(Span::new(text, base.with(Role::Syntax(syn))))
                })
                .collect(),
        )
    }
}

/// Highlights a whole block for the TUI: `None` until [`ready`], and for an
/// unknown language or theme (the caller shows the code plain).
pub(crate) fn block(code: &str, info: &str, theme: &str, base: Style) -> Option<Vec<Vec<Span>>> {
    if !ready() {
        return None;
    }
    let mut h = Highlighter::new(info, theme)?;
    code.lines().map(|l| h.line(l, base)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn highlights_known_languages_only() {
        warm_up();
        let base = Style::of(Role::CodeBlock);
        let lines = block("fn main() {}\n", "rust", DEFAULT_THEME, base).unwrap();
        assert_eq!(lines.len(), 1);
        assert!(lines[0].len() > 1, "{:?}", lines[0]);
        assert!(lines[0].iter().all(|s| {
            let roles: Vec<Role> = s.style.roles().collect();
            roles.len() == 2 && roles[0] == Role::CodeBlock && matches!(roles[1], Role::Syntax(_))
        }));
        assert_eq!(crate::ui::render::line_text(&lines[0]), "fn main() {}");
        assert!(block("x", "no-such-language", DEFAULT_THEME, base).is_none());
        assert!(block("x", "rust", "no-such-theme", base).is_none());
        assert!(block("x", "", DEFAULT_THEME, base).is_none());
        // Info strings with attributes still name the language.
        assert!(Highlighter::new("rust,ignore", DEFAULT_THEME).is_some());
        assert!(Highlighter::new("python {.x}", DEFAULT_THEME).is_some());
        assert!(has_theme(DEFAULT_THEME) && !has_theme("no-such-theme"));
    }
}
