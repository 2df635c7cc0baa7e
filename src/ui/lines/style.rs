//! SGR styling for line output. Invariant: with colour off, nothing here
//! emits a byte of escape sequence; with colour on, every styled span ends in
//! a reset, so styles never leak into the next line or the prompt.
//!
//! Colours are the terminal's own 16 ANSI colours (they follow the user's
//! terminal palette, light or dark, and work over any SSH link); only code
//! highlighting uses RGB, downgraded to the 256-colour cube unless the
//! terminal says it does true colour (`COLORTERM=truecolor|24bit`).

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

/// Whether the terminal announces 24-bit colour.
pub(crate) fn truecolor() -> bool {
    std::env::var("COLORTERM").is_ok_and(|v| v == "truecolor" || v == "24bit")
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

/// An RGB foreground as an SGR sequence (24-bit, or the nearest of the
/// 256-colour cube/grey ramp).
pub(crate) fn rgb_fg(r: u8, g: u8, b: u8, truecolor: bool) -> String {
    if truecolor {
        return format!("\x1b[38;2;{r};{g};{b}m");
    }
    format!("\x1b[38;5;{}m", ansi256(r, g, b))
}

fn ansi256(r: u8, g: u8, b: u8) -> u8 {
    let (ri, gi, bi) = (i32::from(r), i32::from(g), i32::from(b));
    if (ri - gi).abs() < 10 && (gi - bi).abs() < 10 && (ri - bi).abs() < 10 {
        let avg = (ri + gi + bi) / 3;
        if avg < 8 {
            return 16;
        }
        if avg > 246 {
            return 231;
        }
        return (232 + (avg - 8) * 24 / 239) as u8;
    }
    let q = |c: i32| -> i32 {
        if c < 48 {
            0
        } else if c < 115 {
            1
        } else {
            (c - 35) / 40
        }
    };
    (16 + 36 * q(ri) + 6 * q(gi) + q(bi)) as u8
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

    #[test]
    fn cube_mapping() {
        assert_eq!(ansi256(0, 0, 0), 16);
        assert_eq!(ansi256(255, 255, 255), 231);
        assert_eq!(ansi256(255, 0, 0), 196);
        assert_eq!(rgb_fg(1, 2, 3, true), "\x1b[38;2;1;2;3m");
    }
}
