//! Light or dark terminal background, for `[ui].theme = "auto"`.
//!
//! First `COLORFGBG` (a pure parse, no I/O). Else, once the first frame is
//! on screen, one OSC 11 query (`ESC ] 11 ; ? BEL`) with the terminal input
//! paused, read back from the tty with a short deadline. Nothing here runs
//! before the first frame.
//!
//! Invariants: the parsers never panic on any input; bytes read during the
//! query that are not a reply are turned back into the keys they were and
//! handled as typed; what is not a key is counted and reported, never typed. The only `unsafe` is
//! one `poll(2)` on the tty descriptor opened here.
#![allow(unsafe_code)]

use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use std::time::Duration;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Background {
    Dark,
    Light,
}

impl Background {
    /// The built-in theme for this background.
    pub(crate) fn theme(self) -> &'static str {
        match self {
            Background::Dark => "dark",
            Background::Light => "light",
        }
    }

    /// From a colour's relative luminance (0 black … 1 white).
    pub(crate) fn from_rgb(r: f64, g: f64, b: f64) -> Background {
        if 0.2126 * r + 0.7152 * g + 0.0722 * b > 0.5 {
            Background::Light
        } else {
            Background::Dark
        }
    }
}

/// The theme a configured name stands for without asking the terminal:
/// `auto` is read from `COLORFGBG` (dark when it says nothing); any other
/// name is itself. The TUI may still correct `auto` by an OSC 11 query.
pub(crate) fn theme_without_query(name: &str) -> &str {
    match name {
        "auto" => std::env::var("COLORFGBG")
            .ok()
            .and_then(|v| from_colorfgbg(&v))
            .unwrap_or(Background::Dark)
            .theme(),
        name => name,
    }
}

/// `COLORFGBG` ("fg;bg" or "fg;extra;bg", as rxvt and others set it): the
/// background is the last field, an ANSI colour index. 7 and 9–15 are
/// light, 0–6 and 8 dark; anything else (e.g. "default") says nothing.
pub(crate) fn from_colorfgbg(value: &str) -> Option<Background> {
    let bg = value.rsplit(';').next()?.trim();
    match bg.parse::<u8>().ok()? {
        0..=6 | 8 => Some(Background::Dark),
        7 | 9..=15 => Some(Background::Light),
        _ => None,
    }
}

/// One `rgb:` component of 1–4 hex digits, scaled to 0…1.
fn component(hex: &str) -> Option<f64> {
    if hex.is_empty() || hex.len() > 4 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let v = u32::from_str_radix(hex, 16).ok()?;
    let max = (1u32 << (4 * hex.len() as u32)) - 1;
    Some(f64::from(v) / f64::from(max))
}

/// Finds an OSC 11 reply (`ESC ] 11 ; rgb:RRRR/GGGG/BBBB` ended by BEL or
/// ST `ESC \`) in `buf`: the background it names and the byte range the
/// reply takes (so the bytes around it can be kept). `None` when there is
/// no complete, well-formed reply.
pub(crate) fn parse_osc11(buf: &[u8]) -> Option<(Background, std::ops::Range<usize>)> {
    const START: &[u8] = b"\x1b]11;";
    let start = buf.windows(START.len()).position(|w| w == START)?;
    let body_from = start + START.len();
    let rest = &buf[body_from..];
    let (body_len, term_len) = rest.iter().enumerate().find_map(|(i, b)| match b {
        0x07 => Some((i, 1)),
        0x1b if rest.get(i + 1) == Some(&b'\\') => Some((i, 2)),
        _ => None,
    })?;
    let body = std::str::from_utf8(&rest[..body_len]).ok()?;
    let spec = body
        .strip_prefix("rgb:")
        .or_else(|| body.strip_prefix("rgba:"))?;
    let mut parts = spec.split('/');
    let r = component(parts.next()?)?;
    let g = component(parts.next()?)?;
    let b = component(parts.next()?)?;
    Some((
        Background::from_rgb(r, g, b),
        start..body_from + body_len + term_len,
    ))
}

/// Whether an OSC 11 query is worth sending: a terminal on stdout, not
/// `TERM=dumb`, and not GNU screen (which does not answer; tmux answers
/// with its own default background, which is what the user sees).
pub(crate) fn should_query(term: Option<&str>, in_tmux: bool, stdout_tty: bool) -> bool {
    let term = term.unwrap_or("");
    stdout_tty && !term.is_empty() && term != "dumb" && (in_tmux || !term.starts_with("screen"))
}

/// What a query found: the background (if the terminal answered) and any
/// other bytes read meanwhile (keys typed during the query).
#[derive(Debug, Default, PartialEq)]
pub struct Probe {
    pub(crate) background: Option<Background>,
    pub(crate) other: Vec<u8>,
}

/// Finds a primary device attributes reply (`ESC [ ? … c`), which every
/// terminal sends: it ends the wait when OSC 11 goes unanswered.
pub(crate) fn find_da1(buf: &[u8]) -> Option<std::ops::Range<usize>> {
    let start = buf.windows(3).position(|w| w == b"\x1b[?")?;
    let rest = &buf[start + 3..];
    let len = rest
        .iter()
        .position(|b| !(b.is_ascii_digit() || *b == b';'))?;
    (rest[len] == b'c').then_some(start..start + 3 + len + 1)
}

/// Splits what was read into the replies (OSC 11, DA1) and the rest.
pub fn split_reply(read: &[u8]) -> Probe {
    let mut other = read.to_vec();
    let mut background = None;
    if let Some((bg, range)) = parse_osc11(&other) {
        background = Some(bg);
        other.drain(range);
    }
    if let Some(range) = find_da1(&other) {
        other.drain(range);
    }
    Probe { background, other }
}

fn key(code: KeyCode, m: KeyModifiers) -> Event {
    Event::Key(KeyEvent::new(code, m))
}

/// The final byte of a CSI / SS3 sequence (with CSI's first parameter) as
/// a key, when it is one the composer uses.
fn csi_key(param: &str, last: u8) -> Option<KeyCode> {
    Some(match (last, param) {
        (b'A', _) => KeyCode::Up,
        (b'B', _) => KeyCode::Down,
        (b'C', _) => KeyCode::Right,
        (b'D', _) => KeyCode::Left,
        (b'H', _) => KeyCode::Home,
        (b'F', _) => KeyCode::End,
        (b'~', "1" | "7") => KeyCode::Home,
        (b'~', "4" | "8") => KeyCode::End,
        (b'~', "2") => KeyCode::Insert,
        (b'~', "3") => KeyCode::Delete,
        (b'~', "5") => KeyCode::PageUp,
        (b'~', "6") => KeyCode::PageDown,
        _ => return None,
    })
}

/// Bytes read during a query turned back into the keys they were (typed
/// text, Enter, Tab, Backspace, Ctrl-letter, arrows and the like), in
/// order, plus how many bytes were not a key the UI knows (left out).
pub(crate) fn key_events(bytes: &[u8]) -> (Vec<Event>, usize) {
    let none = KeyModifiers::NONE;
    let mut out = Vec::new();
    let mut dropped = 0;
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        match b {
            0x1b => {
                let next = bytes.get(i + 1).copied();
                match next {
                    None => {
                        out.push(key(KeyCode::Esc, none));
                        i += 1;
                    }
                    Some(b'[') | Some(b'O') => {
                        // CSI: parameters, intermediates, one final byte.
                        let mut j = i + 2;
                        while j < bytes.len() && (0x20..=0x3f).contains(&bytes[j]) {
                            j += 1;
                        }
                        let Some(&last) = bytes.get(j) else {
                            dropped += bytes.len() - i;
                            break;
                        };
                        let param = std::str::from_utf8(&bytes[i + 2..j]).unwrap_or("");
                        match csi_key(param.split(';').next().unwrap_or(""), last) {
                            Some(code) => out.push(key(code, none)),
                            None => dropped += j + 1 - i,
                        }
                        i = j + 1;
                    }
                    Some(b']') | Some(b'P') | Some(b'_') => {
                        // OSC / DCS / APC: up to BEL or ST, never typed.
                        let mut j = i + 2;
                        while j < bytes.len()
                            && bytes[j] != 0x07
                            && !(bytes[j] == 0x1b && bytes.get(j + 1) == Some(&b'\\'))
                        {
                            j += 1;
                        }
                        let end = if bytes.get(j) == Some(&0x07) {
                            j + 1
                        } else {
                            j + 2
                        };
                        let end = end.min(bytes.len());
                        dropped += end - i;
                        i = end;
                    }
                    Some(c) if (0x20..0x7f).contains(&c) => {
                        out.push(key(KeyCode::Char(c as char), KeyModifiers::ALT));
                        i += 2;
                    }
                    Some(_) => {
                        out.push(key(KeyCode::Esc, none));
                        i += 1;
                    }
                }
            }
            b'\r' | b'\n' => {
                out.push(key(KeyCode::Enter, none));
                i += 1;
            }
            b'\t' => {
                out.push(key(KeyCode::Tab, none));
                i += 1;
            }
            0x7f | 0x08 => {
                out.push(key(KeyCode::Backspace, none));
                i += 1;
            }
            0x01..=0x1a => {
                out.push(key(
                    KeyCode::Char((b'a' + b - 1) as char),
                    KeyModifiers::CONTROL,
                ));
                i += 1;
            }
            0x00..=0x1f => {
                dropped += 1;
                i += 1;
            }
            _ => {
                // One UTF-8 character (invalid bytes are left out, counted).
                let len = match b {
                    0xc0..=0xdf => 2,
                    0xe0..=0xef => 3,
                    0xf0..=0xf7 => 4,
                    _ => 1,
                };
                let end = (i + len).min(bytes.len());
                match std::str::from_utf8(&bytes[i..end])
                    .ok()
                    .and_then(|t| t.chars().next())
                {
                    Some(c) if !c.is_control() => {
                        out.push(key(KeyCode::Char(c), none));
                        i = end;
                    }
                    _ => {
                        dropped += 1;
                        i += 1;
                    }
                }
            }
        }
    }
    (out, dropped)
}

/// Sends the OSC 11 query to the controlling terminal and reads until a
/// complete reply or `deadline`. The terminal must be in raw mode and
/// nobody else may be reading it (pause the event reader first).
#[cfg(unix)]
pub(crate) fn query_tty(deadline: Duration) -> Probe {
    use std::io::{Read, Write};
    use std::os::fd::AsRawFd;
    let Ok(mut tty) = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/dev/tty")
    else {
        return Probe::default();
    };
    if tty
        .write_all(b"\x1b]11;?\x07")
        .and_then(|()| tty.flush())
        .is_err()
    {
        return Probe::default();
    }
    let until = std::time::Instant::now() + deadline;
    let mut read = Vec::new();
    let mut buf = [0u8; 256];
    loop {
        let left = until.saturating_duration_since(std::time::Instant::now());
        if left.is_zero() || find_da1(&read).is_some() {
            break;
        }
        let mut pfd = libc::pollfd {
            fd: tty.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = left.as_millis().clamp(1, 1000) as libc::c_int;
        // SAFETY: one valid pollfd for the duration of the call.
        let n = unsafe { libc::poll(&mut pfd, 1, ms) };
        if n <= 0 || pfd.revents & libc::POLLIN == 0 {
            if n < 0 && std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted {
                continue;
            }
            break;
        }
        match tty.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(k) => read.extend_from_slice(&buf[..k]),
        }
    }
    split_reply(&read)
}

#[cfg(not(unix))]
pub(crate) fn query_tty(_deadline: Duration) -> Probe {
    Probe::default()
}

impl super::state::TuiState {
    /// Applies the background a query found: the light theme on a light
    /// background (dark is what "auto" starts with).
    pub(crate) fn apply_background(&mut self, background: Option<Background>) {
        if background == Some(Background::Light) {
            let name = Background::Light.theme();
            match super::theme::Theme::load(name, self.config_dir.as_deref(), self.no_color) {
                Ok(t) => self.set_theme(t),
                Err(e) => self.hint(format!("light background, but theme {name}: {e}")),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colorfgbg_names_the_background_by_its_last_field() {
        assert_eq!(from_colorfgbg("15;0"), Some(Background::Dark));
        assert_eq!(from_colorfgbg("0;15"), Some(Background::Light));
        assert_eq!(from_colorfgbg("0;7"), Some(Background::Light));
        assert_eq!(from_colorfgbg("7;8"), Some(Background::Dark));
        assert_eq!(from_colorfgbg("12;default;0"), Some(Background::Dark));
        assert_eq!(from_colorfgbg("0;default"), None);
        assert_eq!(from_colorfgbg(""), None);
        assert_eq!(from_colorfgbg("0;200"), None);
        assert_eq!(from_colorfgbg(";;;"), None);
    }

    #[test]
    fn osc11_replies_in_every_form_and_garbage() {
        let light = b"\x1b]11;rgb:ffff/ffff/ffff\x07";
        assert_eq!(
            parse_osc11(light),
            Some((Background::Light, 0..light.len()))
        );
        let dark_st = b"\x1b]11;rgb:1c1c/1c1c/1c1c\x1b\\";
        assert_eq!(
            parse_osc11(dark_st),
            Some((Background::Dark, 0..dark_st.len()))
        );
        // Two-digit components (and one-digit), upper case.
        assert_eq!(
            parse_osc11(b"\x1b]11;rgb:FD/F6/E3\x07").map(|r| r.0),
            Some(Background::Light)
        );
        assert_eq!(
            parse_osc11(b"\x1b]11;rgb:0/0/0\x07").map(|r| r.0),
            Some(Background::Dark)
        );
        // Around other bytes: the range is the reply only.
        let mixed = b"ab\x1b]11;rgb:0000/0000/0000\x07cd";
        let (_, r) = parse_osc11(mixed).unwrap();
        assert_eq!(&mixed[..r.start], b"ab");
        assert_eq!(&mixed[r.end..], b"cd");
        for bad in [
            &b""[..],
            b"\x1b]11;rgb:ffff/ffff\x07",
            b"\x1b]11;rgb:ffff/ffff/ffff",
            b"\x1b]11;rgb:fffff/0/0\x07",
            b"\x1b]11;rgb:zz/00/00\x07",
            b"\x1b]11;?\x07",
            b"\x1b]10;rgb:ffff/ffff/ffff\x07",
            b"\x1b]11;rgb:\xff\xfe/00/00\x07",
            b"\x1b]11;rgb://\x07",
        ] {
            assert_eq!(parse_osc11(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn bytes_around_the_replies_become_the_keys_they_were() {
        let p = split_reply(b"hi\x1b]11;rgb:ffff/ffff/ffff\x1b\\ x\r\x1b[?62;22c");
        assert_eq!(p.background, Some(Background::Light));
        assert_eq!(p.other, b"hi x\r");
        let (keys, dropped) = key_events(&p.other);
        assert_eq!(dropped, 0);
        assert_eq!(keys.len(), 5);
        assert_eq!(keys[4], key(KeyCode::Enter, KeyModifiers::NONE));
        // No OSC 11 answer (DA1 only): everything else is kept.
        let p = split_reply(b"\x1b[?1;2cab");
        assert_eq!((p.background, p.other.as_slice()), (None, &b"ab"[..]));
        let (keys, dropped) =
            key_events(b"\x1b[A\x7f\t\x03\x1bx\xc3\xa9\x1b[99z\x1b]11;junk\x07\xff");
        assert_eq!(
            keys,
            vec![
                key(KeyCode::Up, KeyModifiers::NONE),
                key(KeyCode::Backspace, KeyModifiers::NONE),
                key(KeyCode::Tab, KeyModifiers::NONE),
                key(KeyCode::Char('c'), KeyModifiers::CONTROL),
                key(KeyCode::Char('x'), KeyModifiers::ALT),
                key(KeyCode::Char('\u{e9}'), KeyModifiers::NONE),
            ]
        );
        assert_eq!(dropped, 5 + 10 + 1);
        assert_eq!(
            key_events(b"\x1b"),
            (vec![key(KeyCode::Esc, KeyModifiers::NONE)], 0)
        );
        assert_eq!(key_events(b"\x1b[1").1, 3);
    }

    #[test]
    fn query_only_where_it_can_be_answered() {
        assert!(should_query(Some("xterm-256color"), false, true));
        assert!(should_query(Some("tmux-256color"), true, true));
        assert!(should_query(Some("screen-256color"), true, true));
        assert!(!should_query(Some("screen-256color"), false, true));
        assert!(!should_query(Some("dumb"), false, true));
        assert!(!should_query(None, false, true));
        assert!(!should_query(Some("xterm"), false, false));
    }
}
