//! Word wrapping of styled spans, for every front end.
//!
//! Invariants:
//! - Every output line is at most `width` columns wide (measured with
//!   `unicode-width`), except a single character wider than the line itself.
//! - Lines break at spaces (and tabs); the spaces at a break are dropped.
//!   Leading spaces of the first line are kept (code indent).
//! - A word longer than its line goes to a fresh line and is split at
//!   character boundaries there; a word the whole line can hold is never
//!   split.
//! - Styles are kept; adjacent pieces of one style are merged. Continuation
//!   lines start with the given prefix (dropped when it would leave fewer
//!   than 8 columns).
//!
//! The line filling is textwrap's first-fit algorithm over our own
//! fragments, so styles, the first-line/continuation widths and Unicode
//! widths stay under our control.
use super::Span;
use std::ops::Range;
use textwrap::core::Fragment;
use textwrap::wrap_algorithms::wrap_first_fit;
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// Display width of a string.
pub(crate) fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// Display width of a line of spans.
pub(crate) fn spans_width<S>(spans: &[Span<S>]) -> usize {
    spans.iter().map(|s| width(&s.text)).sum()
}

/// Pieces of spans: (span index, byte range in its text).
type Pieces = Vec<(usize, Range<usize>)>;

/// A word and the spaces after it.
#[derive(Debug, Default)]
struct Frag {
    word: Pieces,
    space: Pieces,
    w: usize,
    space_w: usize,
    /// Width of the rest of a split word: this piece only stays on a line
    /// the whole word would fit on (it never does), so a split word starts
    /// on a fresh line.
    rest_w: usize,
}

impl Fragment for Frag {
    fn width(&self) -> f64 {
        self.w as f64
    }
    fn whitespace_width(&self) -> f64 {
        self.space_w as f64
    }
    fn penalty_width(&self) -> f64 {
        self.rest_w as f64
    }
}

fn add(pieces: &mut Pieces, span: usize, r: Range<usize>) {
    match pieces.last_mut() {
        Some((s, last)) if *s == span && last.end == r.start => last.end = r.end,
        _ => pieces.push((span, r)),
    }
}

/// Splits the spans into words with their trailing spaces.
fn fragments<S>(line: &[Span<S>]) -> Vec<Frag> {
    let mut out: Vec<Frag> = Vec::new();
    let mut cur = Frag::default();
    for (si, span) in line.iter().enumerate() {
        for (i, ch) in span.text.char_indices() {
            let r = i..i + ch.len_utf8();
            if ch == ' ' || ch == '\t' {
                add(&mut cur.space, si, r);
            } else {
                if !cur.space.is_empty() {
                    out.push(std::mem::take(&mut cur));
                }
                add(&mut cur.word, si, r);
            }
        }
    }
    if !cur.word.is_empty() || !cur.space.is_empty() {
        out.push(cur);
    }
    // Measured per piece, so a grapheme (emoji with modifiers) counts once.
    let measure = |p: &Pieces| -> usize {
        p.iter()
            .map(|(si, r)| width(&line[*si].text[r.clone()]))
            .sum()
    };
    for f in &mut out {
        f.w = measure(&f.word);
        f.space_w = measure(&f.space);
    }
    out
}

/// The columns `ch` adds after `win` (the last few characters of its
/// line): an emoji modifier or a joined emoji adds none, a variation
/// selector may widen the character before it.
fn added_width(win: &str, ch: char) -> usize {
    let before = width(win);
    let mut with = String::with_capacity(win.len() + 4);
    with.push_str(win);
    with.push(ch);
    width(&with).saturating_sub(before)
}

/// How many characters of context `added_width` looks at (a family emoji
/// is 7 characters).
const WINDOW: usize = 8;

/// Cuts a word wider than `first` (its first line) or `rest` (the lines
/// after) into pieces that fit, between characters — never inside an emoji
/// sequence or before a combining mark.
fn split_word<S>(line: &[Span<S>], f: Frag, first: usize, rest: usize) -> Vec<Frag> {
    // Glyphs: a character and those joining it, with the columns they add.
    let mut glyphs: Vec<(Pieces, usize)> = Vec::new();
    let mut win: std::collections::VecDeque<char> = std::collections::VecDeque::new();
    for (si, r) in &f.word {
        let text = &line[*si].text;
        for (i, ch) in text[r.clone()].char_indices() {
            let w: String = win.iter().collect();
            let cw = added_width(&w, ch);
            let alone = ch.width().unwrap_or(0);
            if win.len() == WINDOW {
                win.pop_front();
            }
            win.push_back(ch);
            let start = r.start + i;
            let range = start..start + ch.len_utf8();
            match glyphs.last_mut() {
                Some((pieces, gw)) if alone == 0 || cw != alone => {
                    add(pieces, *si, range);
                    *gw += cw;
                }
                _ => glyphs.push((vec![(*si, range)], cw)),
            }
        }
    }
    let mut out: Vec<Frag> = Vec::new();
    let mut cur = Frag::default();
    let mut limit = first;
    for (pieces, gw) in glyphs {
        if cur.w + gw > limit && !cur.word.is_empty() {
            out.push(std::mem::take(&mut cur));
            limit = rest;
        }
        for (si, r) in pieces {
            add(&mut cur.word, si, r);
        }
        cur.w += gw;
    }
    cur.space = f.space;
    cur.space_w = f.space_w;
    out.push(cur);
    // Measured like every fragment, per piece.
    for p in &mut out {
        p.w = p
            .word
            .iter()
            .map(|(si, r)| width(&line[*si].text[r.clone()]))
            .sum();
    }
    let mut left: usize = out.iter().map(|p| p.w).sum();
    for p in &mut out {
        left -= p.w;
        p.rest_w = left;
    }
    out
}

fn push<S: Clone + PartialEq>(out: &mut Vec<Span<S>>, text: &str, style: &S) {
    if text.is_empty() {
        return;
    }
    match out.last_mut() {
        Some(last) if last.style == *style => last.text.push_str(text),
        _ => out.push(Span::new(text, style.clone())),
    }
}

/// Wraps `line` to `width` columns; continuation lines start with `cont`.
pub(crate) fn wrap<S: Clone + PartialEq>(
    line: &[Span<S>],
    width: usize,
    cont: &[Span<S>],
) -> Vec<Vec<Span<S>>> {
    if width == 0 || spans_width(line) <= width {
        return vec![line.to_vec()];
    }
    let mut cont_w = spans_width(cont);
    let cont: &[Span<S>] = if cont_w + 8 > width {
        cont_w = 0;
        &[]
    } else {
        cont
    };
    let rest = width - cont_w;
    let mut frags = Vec::new();
    for (i, f) in fragments(line).into_iter().enumerate() {
        // Only the very first word can start the first line.
        let first = if i == 0 { width } else { rest };
        if f.w > first {
            frags.extend(split_word(line, f, first, rest));
        } else {
            frags.push(f);
        }
    }
    let widths = [width as f64, rest as f64];
    let rows = wrap_first_fit(&frags, &widths);
    let last_row = rows.len().saturating_sub(1);
    let mut out = Vec::with_capacity(rows.len());
    for (n, row) in rows.iter().enumerate() {
        let mut spans: Vec<Span<S>> = if n == 0 { Vec::new() } else { cont.to_vec() };
        let avail = if n == 0 { width } else { rest };
        let mut used = 0;
        for (k, f) in row.iter().enumerate() {
            for (si, r) in &f.word {
                push(&mut spans, &line[*si].text[r.clone()], &line[*si].style);
            }
            used += f.w;
            // Spaces at a break are dropped; at the very end they stay if they fit.
            let end = k + 1 == row.len();
            if !end || (n == last_row && used + f.space_w <= avail) {
                for (si, r) in &f.space {
                    push(&mut spans, &line[*si].text[r.clone()], &line[*si].style);
                }
                used += f.space_w;
            }
        }
        out.push(spans);
    }
    out
}

/// Cuts a string to at most `max` columns, adding `…` when cut.
pub(crate) fn truncate(s: &str, max: usize) -> String {
    if width(s) <= max {
        return s.to_string();
    }
    let mut out = String::new();
    let mut w = 0;
    for ch in s.chars() {
        let cw = ch.width().unwrap_or(0);
        if w + cw + 1 > max {
            break;
        }
        out.push(ch);
        w += cw;
    }
    out.push('…');
    out
}

#[cfg(test)]
#[path = "wrap_tests.rs"]
mod tests;
