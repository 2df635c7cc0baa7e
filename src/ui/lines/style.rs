//! SGR styling for line output. Invariant: with colour off, nothing here
//! emits a byte of escape sequence; with colour on, every styled span ends in
//! a reset, so styles never leak into the next line or the prompt.
//!
//! Colours are the terminal's own 16 ANSI colours (they follow the user's
//! terminal palette, light or dark, and work over any SSH link); only code
//! highlighting uses RGB, brought down to the terminal's depth
//! (`ui::color_depth`: 24-bit only when the terminal says it shows it).

pub(crate) const RESET: &str = "\x1b[0m";
pub(crate) const BOLD: &str = "\x1b[1m";
pub(crate) const DIM: &str = "\x1b[2m";
pub(crate) const CODE: &str = "\x1b[33m";

/// Whether to colour output going to a stream: a TTY, `NO_COLOR` unset or
/// empty, and a terminal that isn't `TERM=dumb`.
pub(crate) fn color_wanted(is_tty: bool) -> bool {
    let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
    let dumb = std::env::var("TERM").is_ok_and(|t| t == "dumb");
    is_tty && !no_color && !dumb
}

/// The colour depth of the terminal (`COLORTERM`, `TERM`).
pub(crate) fn depth() -> crate::ui::color_depth::ColorDepth {
    crate::ui::color_depth::ColorDepth::from_env()
}

/// Styling on or off.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Palette {
    pub(crate) color: bool,
}

impl Palette {
    pub(crate) fn new(color: bool) -> Self {
        Palette { color }
    }

    /// `s` wrapped in `SGR code … reset`, or `s` as it is without colour.
    pub(crate) fn paint(&self, code: &str, s: &str) -> String {
        if self.color && !s.is_empty() {
            format!("\x1b[{code}m{s}{RESET}")
        } else {
            s.to_string()
        }
    }
    pub(crate) fn dim(&self, s: &str) -> String {
        self.paint("2", s)
    }
    pub(crate) fn bold(&self, s: &str) -> String {
        self.paint("1", s)
    }
    pub(crate) fn red(&self, s: &str) -> String {
        self.paint("31", s)
    }
    pub(crate) fn green(&self, s: &str) -> String {
        self.paint("32", s)
    }
    pub(crate) fn yellow(&self, s: &str) -> String {
        self.paint("33", s)
    }
    pub(crate) fn cyan(&self, s: &str) -> String {
        self.paint("36", s)
    }
    /// A raw SGR opener, or nothing without colour.
    pub(crate) fn open(&self, sgr: &'static str) -> &'static str {
        if self.color { sgr } else { "" }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_escapes_without_colour() {
        let p = Palette::new(false);
        assert_eq!(p.red("x"), "x");
        assert_eq!(p.open(BOLD), "");
        let c = Palette::new(true);
        assert_eq!(c.red("x"), "\x1b[31mx\x1b[0m");
    }
}
