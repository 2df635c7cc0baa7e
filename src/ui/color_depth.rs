//! How many colours the terminal shows, and RGB colours brought down to
//! that depth. Both front ends use it: line mode for code highlighting, the
//! TUI for everything it draws (its themes are written in `#rrggbb`).
//!
//! Invariant: 24-bit sequences (`38;2;r;g;b`) are sent only when the
//! terminal says it shows them: `COLORTERM=truecolor|24bit`, or a `TERM`
//! whose terminfo entry is a direct-colour one. GNU screen, the Linux
//! console and plain `TERM=xterm` get the 256-colour palette (TERM
//! `*256color*`) or the 16 ANSI colours.

/// The colours a terminal can show.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ColorDepth {
    /// 24-bit RGB.
    True,
    /// The xterm 256-colour palette.
    Ansi256,
    /// The 16 ANSI colours (their RGB is the terminal's own palette).
    #[default]
    Ansi16,
}

/// TERM values (or their prefix before `-`) known to show 24-bit colour
/// even without COLORTERM (it is often lost over SSH and sudo).
const TRUECOLOR_TERMS: &[&str] = &[
    "alacritty",
    "xterm-kitty",
    "wezterm",
    "foot",
    "contour",
    "iterm2",
    "xterm-ghostty",
];

impl ColorDepth {
    /// The depth `COLORTERM` and `TERM` announce.
    pub fn detect(colorterm: Option<&str>, term: Option<&str>) -> ColorDepth {
        if colorterm.is_some_and(|v| v == "truecolor" || v == "24bit") {
            return ColorDepth::True;
        }
        let term = term.unwrap_or("");
        if term.ends_with("-direct") || TRUECOLOR_TERMS.contains(&term) {
            ColorDepth::True
        } else if term.contains("256color") {
            ColorDepth::Ansi256
        } else {
            ColorDepth::Ansi16
        }
    }

    /// The depth of this process's terminal (from its environment).
    pub fn from_env() -> ColorDepth {
        let get = |k: &str| std::env::var(k).ok();
        ColorDepth::detect(get("COLORTERM").as_deref(), get("TERM").as_deref())
    }
}

/// The nearest entry of the 256-colour cube or grey ramp.
pub(crate) fn ansi256(r: u8, g: u8, b: u8) -> u8 {
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

/// The usual RGB of the 16 ANSI colours (xterm's), to pick the nearest.
const ANSI16: [(u8, u8, u8); 16] = [
    (0, 0, 0),
    (205, 0, 0),
    (0, 205, 0),
    (205, 205, 0),
    (0, 0, 238),
    (205, 0, 205),
    (0, 205, 205),
    (229, 229, 229),
    (127, 127, 127),
    (255, 0, 0),
    (0, 255, 0),
    (255, 255, 0),
    (92, 92, 255),
    (255, 0, 255),
    (0, 255, 255),
    (255, 255, 255),
];

/// The nearest of the 16 ANSI colours (0–7 normal, 8–15 bright).
pub(crate) fn ansi16(r: u8, g: u8, b: u8) -> u8 {
    let d = |(pr, pg, pb): (u8, u8, u8)| {
        let (dr, dg, db) = (
            i32::from(r) - i32::from(pr),
            i32::from(g) - i32::from(pg),
            i32::from(b) - i32::from(pb),
        );
        // Weighted as the eye sees it (green counts most).
        3 * dr * dr + 4 * dg * dg + 2 * db * db
    };
    (0..16u8)
        .min_by_key(|i| d(ANSI16[usize::from(*i)]))
        .unwrap_or(7)
}

/// The RGB of a 256-palette index (for bringing it down to 16 colours).
pub(crate) fn rgb_of_256(i: u8) -> (u8, u8, u8) {
    match i {
        0..=15 => ANSI16[usize::from(i)],
        16..=231 => {
            let i = i - 16;
            let level = |v: u8| if v == 0 { 0 } else { 55 + 40 * v };
            (level(i / 36), level((i / 6) % 6), level(i % 6))
        }
        _ => {
            let v = 8 + 10 * (i - 232);
            (v, v, v)
        }
    }
}

/// An RGB foreground as an SGR sequence at `depth`.
pub(crate) fn sgr_fg(r: u8, g: u8, b: u8, depth: ColorDepth) -> String {
    match depth {
        ColorDepth::True => format!("\x1b[38;2;{r};{g};{b}m"),
        ColorDepth::Ansi256 => format!("\x1b[38;5;{}m", ansi256(r, g, b)),
        ColorDepth::Ansi16 => {
            let i = ansi16(r, g, b);
            let code = if i < 8 { 30 + i } else { 90 + i - 8 };
            format!("\x1b[{code}m")
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn terminals_get_the_depth_they_announce() {
        use ColorDepth::*;
        let cases = [
            (Some("truecolor"), Some("xterm-256color"), True),
            (Some("24bit"), Some("screen"), True),
            (None, Some("xterm-256color"), Ansi256),
            (None, Some("screen-256color"), Ansi256),
            (None, Some("tmux-256color"), Ansi256),
            (None, Some("screen"), Ansi16),
            (None, Some("linux"), Ansi16),
            (None, Some("xterm"), Ansi16),
            (None, Some("vt100"), Ansi16),
            (None, None, Ansi16),
            (Some("yes"), Some("xterm"), Ansi16),
            (None, Some("xterm-direct"), True),
            (None, Some("alacritty"), True),
            (None, Some("xterm-kitty"), True),
        ];
        for (ct, term, want) in cases {
            assert_eq!(ColorDepth::detect(ct, term), want, "{ct:?} {term:?}");
        }
    }

    #[test]
    fn colours_come_down_to_the_nearest() {
        assert_eq!(ansi256(0, 0, 0), 16);
        assert_eq!(ansi256(255, 255, 255), 231);
        assert_eq!(ansi256(255, 0, 0), 196);
        assert_eq!(ansi16(250, 10, 10), 9);
        assert_eq!(ansi16(0, 0, 0), 0);
        assert_eq!(ansi16(0x7a, 0xa2, 0xf7), 12);
        assert_eq!(ansi16(0xd4, 0xd4, 0xd4), 7);
        assert_eq!(rgb_of_256(196), (255, 0, 0));
        assert_eq!(rgb_of_256(232), (8, 8, 8));
        assert_eq!(sgr_fg(1, 2, 3, ColorDepth::True), "\x1b[38;2;1;2;3m");
        assert_eq!(sgr_fg(255, 0, 0, ColorDepth::Ansi256), "\x1b[38;5;196m");
        assert_eq!(sgr_fg(255, 0, 0, ColorDepth::Ansi16), "\x1b[91m");
        assert_eq!(sgr_fg(205, 0, 0, ColorDepth::Ansi16), "\x1b[31m");
    }
}
