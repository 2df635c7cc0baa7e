//! Streaming Markdown → terminal text, one line at a time, never redrawing.
//!
//! Invariants:
//! - Without colour the output is byte-for-byte the input (Markdown is
//!   meant to read well as plain text; screen readers and pipes get exactly
//!   what the model wrote).
//! - With colour, text is written as soon as its line's kind is known:
//!   prose, list items and quotes stream character by character; headings,
//!   fences, rules and code lines are held until their newline (they are
//!   short) and then written whole. Nothing written is ever taken back.
//! - Every line ends with styles reset; `finish` flushes whatever is held.
//!
//! pulldown-cmark needs a whole block to parse, so streaming uses this small
//! line state machine; the constructs it knows are the ones models emit.
use super::highlight::{CodeHighlighter, CodeStyle};
use super::style::{BOLD, CODE, DIM, RESET};

/// How the current line is being handled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Mode {
    /// Nothing decided yet: characters wait in `held`.
    Start,
    /// Held until the newline, then rendered whole.
    Whole,
    /// Streamed through the inline styler.
    Flow,
}

struct Fence {
    marker: char,
    len: usize,
    code: Option<CodeHighlighter>,
}

/// `**bold**` and `` `code` `` while streaming.
#[derive(Default)]
struct Inline {
    bold: bool,
    code: bool,
    star: bool,
    base: &'static str,
}

impl Inline {
    fn restore(&self, out: &mut String) {
        out.push_str(RESET);
        out.push_str(self.base);
        if self.bold {
            out.push_str(BOLD);
        }
    }

    fn push(&mut self, ch: char, out: &mut String) {
        if self.code {
            if ch == '`' {
                self.code = false;
                self.restore(out);
            } else {
                out.push(ch);
            }
            return;
        }
        if self.star {
            self.star = false;
            if ch == '*' {
                self.bold = !self.bold;
                if self.bold {
                    out.push_str(BOLD);
                } else {
                    self.restore(out);
                }
                return;
            }
            out.push('*');
        }
        match ch {
            '`' => {
                self.code = true;
                out.push_str(CODE);
            }
            '*' => self.star = true,
            c => out.push(c),
        }
    }

    fn end_line(&mut self, out: &mut String) {
        if self.star {
            out.push('*');
        }
        if self.bold || self.code || !self.base.is_empty() {
            out.push_str(RESET);
        }
        *self = Inline::default();
    }
}

/// What the start of a line says about it.
enum Kind {
    Undecided,
    Whole,
    /// Stream it; the first `usize` bytes are a marker rendered as `String`.
    Flow(usize, String, &'static str),
}

/// A streaming Markdown renderer for one answer.
pub struct Markdown {
    color: bool,
    code: CodeStyle,
    mode: Mode,
    held: String,
    fence: Option<Fence>,
    inline: Inline,
}

impl Markdown {
    pub fn new(color: bool, code: CodeStyle) -> Self {
        Markdown {
            color,
            code,
            mode: Mode::Start,
            held: String::new(),
            fence: None,
            inline: Inline::default(),
        }
    }

    /// Renders a whole text at once (history, non-streamed answers).
    pub fn render(text: &str, color: bool, code: &CodeStyle) -> String {
        let mut md = Markdown::new(color, code.clone());
        let mut out = md.push(text);
        out.push_str(&md.finish());
        out
    }

    /// Feeds a piece of the answer; returns what can be written now.
    pub fn push(&mut self, delta: &str) -> String {
        if !self.color {
            return delta.to_string();
        }
        let mut out = String::with_capacity(delta.len() + 16);
        for ch in delta.chars() {
            match self.mode {
                Mode::Flow if ch == '\n' => {
                    self.inline.end_line(&mut out);
                    out.push('\n');
                    self.mode = Mode::Start;
                }
                Mode::Flow => self.inline.push(ch, &mut out),
                Mode::Whole if ch == '\n' => {
                    self.line_done(&mut out);
                    out.push('\n');
                }
                Mode::Whole => self.held.push(ch),
                Mode::Start if ch == '\n' => {
                    self.line_done(&mut out);
                    out.push('\n');
                }
                Mode::Start => {
                    self.held.push(ch);
                    self.decide(&mut out);
                }
            }
        }
        out
    }

    /// Flushes held text and closes open styles (the answer ended or is
    /// interrupted by other output). The next `push` starts a fresh line.
    pub fn finish(&mut self) -> String {
        if !self.color {
            return String::new();
        }
        let mut out = String::new();
        match self.mode {
            Mode::Flow => self.inline.end_line(&mut out),
            Mode::Whole | Mode::Start if !self.held.is_empty() => self.line_done(&mut out),
            _ => {}
        }
        self.mode = Mode::Start;
        out
    }

    /// True when nothing is held back and no line is open.
    pub fn is_idle(&self) -> bool {
        self.mode == Mode::Start && self.held.is_empty()
    }

    fn decide(&mut self, out: &mut String) {
        match self.classify() {
            Kind::Undecided => {}
            Kind::Whole => self.mode = Mode::Whole,
            Kind::Flow(skip, marker, base) => {
                out.push_str(&marker);
                let rest: String = self.held[skip..].to_string();
                self.held.clear();
                self.mode = Mode::Flow;
                self.inline.base = base;
                if !base.is_empty() {
                    out.push_str(base);
                }
                for c in rest.chars() {
                    self.inline.push(c, out);
                }
            }
        }
    }

    fn classify(&self) -> Kind {
        if self.fence.is_some() {
            return Kind::Whole;
        }
        let h = self.held.as_str();
        let t = h.trim_start_matches(' ');
        let indent = h.len() - t.len();
        let mut chars = t.chars();
        let Some(first) = chars.next() else {
            return Kind::Undecided;
        };
        let second = chars.next();
        let plain = Kind::Flow(0, String::new(), "");
        match first {
            '#' => match t.trim_start_matches('#') {
                "" if t.len() <= 6 => Kind::Undecided,
                r if r.starts_with(' ') && t.len() - r.len() <= 6 => Kind::Whole,
                _ => plain,
            },
            '`' | '~' => {
                if t.chars().all(|c| c == first) && t.len() < 3 {
                    Kind::Undecided
                } else if t.starts_with("```") || t.starts_with("~~~") {
                    Kind::Whole
                } else {
                    plain
                }
            }
            '-' | '*' | '+' | '_' => match second {
                None => Kind::Undecided,
                Some(' ') if first != '_' => {
                    let marker = format!("{}\x1b[36m•{RESET} ", " ".repeat(indent));
                    Kind::Flow(indent + 2, marker, "")
                }
                Some(_) if t.chars().all(|c| c == first) && first != '+' => Kind::Undecided,
                Some(_) => plain,
            },
            '0'..='9' => {
                let digits = t.chars().take_while(char::is_ascii_digit).count();
                let after = &t[digits..];
                match after.chars().next() {
                    None if digits < 10 => Kind::Undecided,
                    Some('.' | ')') => match after.chars().nth(1) {
                        None => Kind::Undecided,
                        Some(' ') => {
                            let n = &t[..digits + 1];
                            let marker = format!("{}\x1b[36m{n}{RESET} ", " ".repeat(indent));
                            Kind::Flow(indent + digits + 2, marker, "")
                        }
                        Some(_) => plain,
                    },
                    _ => plain,
                }
            }
            '>' => {
                let skip = indent + 1 + usize::from(second == Some(' '));
                if second.is_none() {
                    Kind::Undecided
                } else {
                    Kind::Flow(skip, format!("{DIM}│{RESET} "), DIM)
                }
            }
            _ => plain,
        }
    }

    /// Renders a held line at its newline (or at `finish`).
    fn line_done(&mut self, out: &mut String) {
        let line = std::mem::take(&mut self.held);
        self.mode = Mode::Start;
        if let Some(f) = self.fence.as_mut() {
            let t = line.trim();
            if t.len() >= f.len && t.chars().all(|c| c == f.marker) {
                self.fence = None;
                out.push_str(&format!("{DIM}{line}{RESET}"));
            } else if let Some(h) = f.code.as_mut() {
                out.push_str(&h.line(&line));
            } else {
                out.push_str(&line);
            }
            return;
        }
        let t = line.trim_start_matches(' ');
        if t.starts_with("```") || t.starts_with("~~~") {
            let marker = t.chars().next().unwrap_or('`');
            let len = t.chars().take_while(|c| *c == marker).count();
            let lang = t[len..].split_whitespace().next().unwrap_or("");
            self.fence = Some(Fence {
                marker,
                len,
                code: CodeHighlighter::for_lang(lang, &self.code),
            });
            out.push_str(&format!("{DIM}{line}{RESET}"));
            return;
        }
        let hashes = t.chars().take_while(|c| *c == '#').count();
        if (1..=6).contains(&hashes) && t[hashes..].starts_with(' ') {
            let text = t[hashes..].trim().trim_end_matches('#').trim_end();
            let style = match hashes {
                1 => "\x1b[1;4;35m",
                2 => "\x1b[1;36m",
                _ => BOLD,
            };
            let mut inline = Inline {
                base: style,
                ..Inline::default()
            };
            out.push_str(style);
            text.chars().for_each(|c| inline.push(c, out));
            inline.end_line(out);
            return;
        }
        let rule_char = t.chars().next().unwrap_or(' ');
        if t.len() >= 3 && "-*_".contains(rule_char) && t.chars().all(|c| c == rule_char) {
            out.push_str(&format!("{DIM}{}{RESET}", "─".repeat(rule_width())));
            return;
        }
        // A short line that never showed its kind (e.g. "-" or "12."): prose.
        let mut inline = Inline::default();
        line.chars().for_each(|c| inline.push(c, out));
        inline.end_line(out);
    }
}

#[cfg(test)]
#[path = "markdown_tests.rs"]
mod tests;

/// A thematic break is 40 columns, or the terminal's width when narrower,
/// asked when the rule is printed (so it follows a resize; never wraps).
fn rule_width() -> usize {
    rustix::termios::tcgetwinsize(std::io::stdout())
        .ok()
        .map(|w| usize::from(w.ws_col))
        .filter(|c| *c > 0)
        .map_or(40, |c| c.min(40))
}
