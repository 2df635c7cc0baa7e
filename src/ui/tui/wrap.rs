//! Word wrapping of styled lines to a column width.
//!
//! Invariants: every output line is at most `width` columns wide (measured
//! with `unicode-width`); styles and the line style are kept; a word longer
//! than a line is split at character boundaries; continuation lines start with
//! the given prefix; leading spaces of the first line are kept (code indent).
use ratatui::style::Style;
use ratatui::text::{Line, Span};
use unicode_width::{UnicodeWidthChar, UnicodeWidthStr};

/// A run of spaces or of non-spaces: (is_space, styled pieces, width).
type Group<'a> = (bool, Vec<(&'a str, Style)>, usize);

/// Display width of a string.
pub fn width(s: &str) -> usize {
    UnicodeWidthStr::width(s)
}

/// Display width of a line.
pub fn line_width(line: &Line<'_>) -> usize {
    line.spans.iter().map(|s| width(&s.content)).sum()
}

struct Out {
    lines: Vec<Line<'static>>,
    cur: Vec<Span<'static>>,
    cur_w: usize,
    base_w: usize,
    line_style: Style,
}

impl Out {
    fn push(&mut self, text: &str, style: Style, w: usize) {
        if let Some(last) = self.cur.last_mut()
            && last.style == style
        {
            last.content.to_mut().push_str(text);
        } else {
            self.cur.push(Span::styled(text.to_string(), style));
        }
        self.cur_w += w;
    }

    fn at_line_start(&self) -> bool {
        self.cur_w <= self.base_w
    }

    fn break_line(&mut self, cont: &[Span<'static>], cont_w: usize) {
        while let Some(last) = self.cur.last_mut() {
            let trimmed = last.content.trim_end().len();
            if trimmed == 0 {
                self.cur.pop();
                continue;
            }
            last.content.to_mut().truncate(trimmed);
            break;
        }
        let spans = std::mem::replace(&mut self.cur, cont.to_vec());
        self.lines.push(Line::from(spans).style(self.line_style));
        self.cur_w = cont_w;
        self.base_w = cont_w;
    }
}

/// Wraps `line` to `width` columns; continuation lines start with `cont`.
pub fn wrap(line: &Line<'static>, width: usize, cont: &[Span<'static>]) -> Vec<Line<'static>> {
    let total = line_width(line);
    if width == 0 || total <= width {
        return vec![line.clone()];
    }
    let mut cont_w: usize = cont.iter().map(|s| self::width(&s.content)).sum();
    let cont: &[Span<'static>] = if cont_w + 8 > width {
        cont_w = 0;
        &[]
    } else {
        cont
    };
    // Groups of pieces: a word may span several styled spans.
    let mut groups: Vec<Group<'_>> = Vec::new();
    for span in &line.spans {
        let s: &str = &span.content;
        let mut start = 0;
        let mut prev_space: Option<bool> = None;
        for (i, ch) in s.char_indices() {
            let sp = ch == ' ' || ch == '\t';
            if let Some(p) = prev_space
                && p != sp
            {
                push_piece(&mut groups, p, &s[start..i], span.style);
                start = i;
            }
            prev_space = Some(sp);
        }
        if let Some(p) = prev_space {
            push_piece(&mut groups, p, &s[start..], span.style);
        }
    }
    let mut out = Out {
        lines: Vec::new(),
        cur: Vec::new(),
        cur_w: 0,
        base_w: 0,
        line_style: line.style,
    };
    let mut first_line = true;
    for (is_space, pieces, w) in groups {
        if is_space {
            if out.at_line_start() && !first_line {
                continue;
            }
            if out.cur_w + w <= width {
                for (t, st) in pieces {
                    out.push(t, st, self::width(t));
                }
            } else {
                out.break_line(cont, cont_w);
                first_line = false;
            }
            continue;
        }
        if out.cur_w + w > width && !out.at_line_start() {
            out.break_line(cont, cont_w);
            first_line = false;
        }
        if out.cur_w + w <= width {
            for (t, st) in pieces {
                out.push(t, st, self::width(t));
            }
            continue;
        }
        // A word longer than the line: split it by characters.
        for (t, st) in pieces {
            let mut buf = [0u8; 4];
            for ch in t.chars() {
                let cw = ch.width().unwrap_or(0);
                if out.cur_w + cw > width && !out.at_line_start() {
                    out.break_line(cont, cont_w);
                    first_line = false;
                }
                out.push(ch.encode_utf8(&mut buf), st, cw);
            }
        }
    }
    if !out.at_line_start() || out.lines.is_empty() {
        let spans = std::mem::take(&mut out.cur);
        out.lines.push(Line::from(spans).style(out.line_style));
    }
    out.lines
}

fn push_piece<'a>(groups: &mut Vec<Group<'a>>, is_space: bool, text: &'a str, style: Style) {
    let w = width(text);
    match groups.last_mut() {
        Some((sp, pieces, gw)) if *sp == is_space => {
            pieces.push((text, style));
            *gw += w;
        }
        _ => groups.push((is_space, vec![(text, style)], w)),
    }
}

/// Cuts a string to at most `max` columns, adding `…` when cut.
pub fn truncate(s: &str, max: usize) -> String {
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
mod tests {
    use super::*;

    fn texts(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn wraps_words_and_keeps_styles() {
        let bold = Style::default().add_modifier(ratatui::style::Modifier::BOLD);
        let line = Line::from(vec![
            Span::raw("hello "),
            Span::styled("wonderful", bold),
            Span::raw(" world of wrapping text"),
        ]);
        let out = wrap(&line, 12, &[Span::raw("  ")]);
        assert_eq!(
            texts(&out),
            vec!["hello", "  wonderful", "  world of", "  wrapping", "  text"]
        );
        assert_eq!(out[1].spans[1].style, bold);
        for l in &out {
            assert!(line_width(l) <= 12);
        }
    }

    #[test]
    fn splits_long_words_and_wide_chars() {
        let out = wrap(&Line::from("abcdefghijklmnop"), 5, &[]);
        assert_eq!(texts(&out), vec!["abcde", "fghij", "klmno", "p"]);
        let out = wrap(&Line::from("日本語のテキスト"), 5, &[]);
        assert!(out.iter().all(|l| line_width(l) <= 5));
        assert_eq!(out.concat_text(), "日本語のテキスト");
        assert_eq!(
            texts(&wrap(&Line::from("    indented"), 40, &[])),
            vec!["    indented"]
        );
        assert_eq!(truncate("abcdef", 4), "abc…");
    }

    trait Concat {
        fn concat_text(&self) -> String;
    }
    impl Concat for Vec<Line<'static>> {
        fn concat_text(&self) -> String {
            self.iter().map(|l| l.to_string()).collect()
        }
    }
}
