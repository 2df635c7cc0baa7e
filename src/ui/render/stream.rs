//! Streaming Markdown → neutral styled pieces, one line at a time, never
//! taking anything back: the append-only mode of the renderer, for output
//! that is printed as it arrives (plain mode, `navi run`).
//!
//! Invariants:
//! - Text is given out as soon as its line's kind is known: prose, list
//!   items and quotes stream character by character; headings, fences,
//!   rules and code lines are held until their newline (they are short) and
//!   then given out whole. Nothing given out is ever revised.
//! - Every line ends with a [`Piece::End`] when a style is open, so a front
//!   end closes its styles before the newline; `finish` flushes what is held.
//! - Styles are the same semantic [`Role`]s the whole-document renderer
//!   uses; prose itself is unstyled (the terminal's own colour).
//!
//! pulldown-cmark needs a whole block to parse, so streaming uses this small
//! line state machine; the constructs it knows are the ones models emit.
//! (The terminal wraps streamed lines; nothing here measures width.)
use super::highlight::{self, Highlighter};
use super::{Role, Span, Style};

/// One piece of streamed output.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Piece {
    /// Text in a style. Empty text still switches the style (a front end
    /// writes the style change at once).
    Text(Span),
    /// Close every open style (end of a styled line, or of the stream).
    End,
}

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
    code: Option<Highlighter>,
}

fn emit(out: &mut Vec<Piece>, text: &str, style: Style) {
    if let Some(Piece::Text(last)) = out.last_mut()
        && last.style == style
    {
        last.text.push_str(text);
        return;
    }
    out.push(Piece::Text(Span::new(text, style)));
}

/// `**bold**` and `` `code` `` while streaming.
#[derive(Default)]
struct Inline {
    bold: bool,
    code: bool,
    star: bool,
    base: Style,
}

impl Inline {
    fn style(&self) -> Style {
        let mut s = self.base;
        if self.bold {
            s = s.with(Role::Strong);
        }
        if self.code {
            s = s.with(Role::CodeInline);
        }
        s
    }

    fn push(&mut self, ch: char, out: &mut Vec<Piece>) {
        if self.code {
            if ch == '`' {
                self.code = false;
                emit(out, "", self.style());
            } else {
                emit(out, ch.encode_utf8(&mut [0; 4]), self.style());
            }
            return;
        }
        if self.star {
            self.star = false;
            if ch == '*' {
                self.bold = !self.bold;
                emit(out, "", self.style());
                return;
            }
            emit(out, "*", self.style());
        }
        match ch {
            '`' => {
                self.code = true;
                emit(out, "", self.style());
            }
            '*' => self.star = true,
            c => emit(out, c.encode_utf8(&mut [0; 4]), self.style()),
        }
    }

    fn end_line(&mut self, out: &mut Vec<Piece>) {
        if self.star {
            emit(out, "*", self.style());
        }
        out.push(Piece::End);
        *self = Inline::default();
    }
}

/// What the start of a line says about it.
enum Kind {
    Undecided,
    Whole,
    /// Stream it; the first `usize` bytes are a marker shown as these
    /// spans; the rest of the line is in the style.
    Flow(usize, Vec<Span>, Style),
}

/// A streaming Markdown renderer for one answer.
pub(crate) struct Stream {
    /// The syntect theme for code blocks; `None`: no highlighting.
    syntax: Option<String>,
    /// Columns of a thematic break, asked when one is rendered.
    rule_width: fn() -> usize,
    mode: Mode,
    held: String,
    fence: Option<Fence>,
    inline: Inline,
}

impl Stream {
    /// A renderer highlighting code with syntect theme `syntax` (an unknown
    /// name falls back to the default theme).
    pub(crate) fn new(syntax: Option<String>, rule_width: fn() -> usize) -> Self {
        Stream {
            syntax,
            rule_width,
            mode: Mode::Start,
            held: String::new(),
            fence: None,
            inline: Inline::default(),
        }
    }

    /// Feeds a piece of the answer; returns what can be shown now.
    pub(crate) fn push(&mut self, delta: &str) -> Vec<Piece> {
        let mut out = Vec::new();
        let nl = || Piece::Text(Span::new("\n", Style::plain()));
        for ch in delta.chars() {
            match self.mode {
                Mode::Flow if ch == '\n' => {
                    self.inline.end_line(&mut out);
                    out.push(nl());
                    self.mode = Mode::Start;
                }
                Mode::Flow => self.inline.push(ch, &mut out),
                Mode::Whole | Mode::Start if ch == '\n' => {
                    self.line_done(&mut out);
                    out.push(nl());
                }
                Mode::Whole => self.held.push(ch),
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
    pub(crate) fn finish(&mut self) -> Vec<Piece> {
        let mut out = Vec::new();
        match self.mode {
            Mode::Flow => self.inline.end_line(&mut out),
            Mode::Whole | Mode::Start if !self.held.is_empty() => self.line_done(&mut out),
            _ => {}
        }
        self.mode = Mode::Start;
        out
    }

    /// True when nothing is held back and no line is open.
    pub(crate) fn is_idle(&self) -> bool {
        self.mode == Mode::Start && self.held.is_empty()
    }

    fn decide(&mut self, out: &mut Vec<Piece>) {
        match self.classify() {
            Kind::Undecided => {}
            Kind::Whole => self.mode = Mode::Whole,
            Kind::Flow(skip, marker, base) => {
                out.extend(marker.into_iter().map(Piece::Text));
                let rest: String = self.held[skip..].to_string();
                self.held.clear();
                self.mode = Mode::Flow;
                self.inline.base = base;
                if base != Style::plain() {
                    emit(out, "", base);
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
        let plain = Kind::Flow(0, Vec::new(), Style::plain());
        let marker = |m: &str| {
            vec![
                Span::new(" ".repeat(indent), Style::plain()),
                Span::new(m, Style::of(Role::ListMarker)),
                Span::new(" ", Style::plain()),
            ]
        };
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
                Some(' ') if first != '_' => Kind::Flow(indent + 2, marker("•"), Style::plain()),
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
                        Some(' ') => Kind::Flow(
                            indent + digits + 2,
                            marker(&t[..digits + 1]),
                            Style::plain(),
                        ),
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
                    let bar = vec![
                        Span::new("│", Style::of(Role::Quote)),
                        Span::new(" ", Style::plain()),
                    ];
                    Kind::Flow(skip, bar, Style::of(Role::Quote))
                }
            }
            _ => plain,
        }
    }

    /// A highlighter for a fence's language, in the configured theme.
    fn highlighter(&self, lang: &str) -> Option<Highlighter> {
        let name = self.syntax.as_deref()?;
        if lang.trim().is_empty() {
            return None;
        }
        let name = if highlight::has_theme(name) {
            name
        } else {
            highlight::DEFAULT_THEME
        };
        Highlighter::new(lang, name)
    }

    /// Renders a held line at its newline (or at `finish`).
    fn line_done(&mut self, out: &mut Vec<Piece>) {
        let line = std::mem::take(&mut self.held);
        self.mode = Mode::Start;
        let dim = Style::of(Role::Dim);
        if let Some(f) = self.fence.as_mut() {
            let t = line.trim();
            if t.len() >= f.len && t.chars().all(|c| c == f.marker) {
                self.fence = None;
                emit(out, &line, dim);
                out.push(Piece::End);
                return;
            }
            let base = Style::of(Role::CodeBlock);
            match f.code.as_mut().and_then(|h| h.line(&line, base)) {
                Some(spans) => {
                    emit(out, "", base);
                    out.extend(spans.into_iter().map(Piece::Text));
                    out.push(Piece::End);
                }
                None => emit(out, &line, Style::plain()),
            }
            return;
        }
        let t = line.trim_start_matches(' ');
        if t.starts_with("```") || t.starts_with("~~~") {
            let marker = t.chars().next().unwrap_or('`');
            let len = t.chars().take_while(|c| *c == marker).count();
            let lang = t[len..].split_whitespace().next().unwrap_or("");
            let code = self.highlighter(lang);
            self.fence = Some(Fence { marker, len, code });
            emit(out, &line, dim);
            out.push(Piece::End);
            return;
        }
        let hashes = t.chars().take_while(|c| *c == '#').count();
        if (1..=6).contains(&hashes) && t[hashes..].starts_with(' ') {
            let text = t[hashes..].trim().trim_end_matches('#').trim_end();
            let style = Style::of(Role::Heading(hashes as u8));
            let mut inline = Inline {
                base: style,
                ..Inline::default()
            };
            emit(out, "", style);
            text.chars().for_each(|c| inline.push(c, out));
            inline.end_line(out);
            return;
        }
        let rule_char = t.chars().next().unwrap_or(' ');
        if t.len() >= 3 && "-*_".contains(rule_char) && t.chars().all(|c| c == rule_char) {
            emit(out, &"─".repeat((self.rule_width)()), Style::of(Role::Rule));
            out.push(Piece::End);
            return;
        }
        // A short line that never showed its kind (e.g. "-" or "12."): prose.
        let mut inline = Inline::default();
        line.chars().for_each(|c| inline.push(c, out));
        inline.end_line(out);
    }
}

#[cfg(test)]
#[path = "stream_tests.rs"]
mod tests;
