//! Streaming Markdown → terminal text for line output: the renderer's
//! append-only mode (`ui::render::stream`) with its semantic styles written
//! as SGR sequences.
//!
//! Invariants:
//! - Without colour the output is byte-for-byte the input (Markdown is
//!   meant to read well as plain text; screen readers and pipes get exactly
//!   what the model wrote).
//! - With colour, text is written as soon as the renderer gives it out;
//!   nothing written is ever taken back.
//! - Every styled line ends with styles reset; `finish` flushes whatever is
//!   held. Colours are the terminal's 16 ANSI colours, except code
//!   highlighting (RGB, or the 256-colour cube without true colour).
use super::highlight::CodeStyle;
use super::style::{BOLD, CODE, DIM, RESET};
use crate::ui::color_depth::{ColorDepth, sgr_fg};
use crate::ui::render::stream::{Piece, Stream};
use crate::ui::render::{Role, Style};
use std::borrow::Cow;

/// The SGR look of one role (empty: the terminal's own).
fn role_sgr(role: Role, depth: ColorDepth) -> Cow<'static, str> {
    Cow::Borrowed(match role {
        Role::Heading(1) => "\x1b[1;4;35m",
        Role::Heading(2) => "\x1b[1;36m",
        Role::Heading(_) | Role::Strong => BOLD,
        Role::Emphasis => "\x1b[3m",
        Role::Strike => "\x1b[9m",
        Role::Link => "\x1b[4m",
        Role::CodeInline => CODE,
        Role::ListMarker => "\x1b[36m",
        Role::Quote | Role::Dim | Role::Rule | Role::CodeLang => DIM,
        Role::Text | Role::CodeBlock => "",
        Role::Syntax(s) => return Cow::Owned(sgr_fg(s.rgb.0, s.rgb.1, s.rgb.2, depth)),
    })
}

/// Writes styled pieces as text with SGR changes: a nested role adds its
/// sequence; leaving a role resets and re-applies the outer ones (a syntax
/// colour just replaces the previous one).
struct Sgr {
    depth: ColorDepth,
    active: Style,
}

impl Sgr {
    fn switch(&mut self, to: Style, out: &mut String) {
        if to == self.active {
            return;
        }
        let old: Vec<Role> = self.active.roles().collect();
        let new: Vec<Role> = to.roles().collect();
        let common = old.iter().zip(&new).take_while(|(a, b)| a == b).count();
        let colour = |r: &Role| matches!(r, Role::Syntax(_));
        let keep = old[common..].is_empty()
            || (old[common..].iter().all(colour) && new.get(common).is_some_and(colour));
        let from = if keep {
            common
        } else {
            out.push_str(RESET);
            0
        };
        for r in &new[from..] {
            out.push_str(&role_sgr(*r, self.depth));
        }
        self.active = to;
    }

    fn write(&mut self, pieces: Vec<Piece>) -> String {
        let mut out = String::new();
        for p in pieces {
            match p {
                Piece::Text(span) => {
                    self.switch(span.style, &mut out);
                    out.push_str(&span.text);
                }
                Piece::End => {
                    if self.active != Style::plain() {
                        out.push_str(RESET);
                    }
                    self.active = Style::plain();
                }
            }
        }
        out
    }
}

/// A streaming Markdown renderer for one answer.
pub(crate) struct Markdown {
    color: bool,
    stream: Stream,
    sgr: Sgr,
}

impl Markdown {
    pub(crate) fn new(color: bool, code: CodeStyle) -> Self {
        Markdown {
            color,
            stream: Stream::new(code.syntax_theme, rule_width),
            sgr: Sgr {
                depth: code.depth,
                active: Style::plain(),
            },
        }
    }

    /// Renders a whole text at once (history, non-streamed answers).
    pub(crate) fn render(text: &str, color: bool, code: &CodeStyle) -> String {
        let mut md = Markdown::new(color, code.clone());
        let mut out = md.push(text);
        out.push_str(&md.finish());
        out
    }

    /// Feeds a piece of the answer; returns what can be written now.
    pub(crate) fn push(&mut self, delta: &str) -> String {
        if !self.color {
            return delta.to_string();
        }
        let pieces = self.stream.push(delta);
        self.sgr.write(pieces)
    }

    /// Flushes held text and closes open styles (the answer ended or is
    /// interrupted by other output). The next `push` starts a fresh line.
    pub(crate) fn finish(&mut self) -> String {
        if !self.color {
            return String::new();
        }
        let pieces = self.stream.finish();
        self.sgr.write(pieces)
    }

    /// True when nothing is held back and no line is open.
    pub(crate) fn is_idle(&self) -> bool {
        self.stream.is_idle()
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
