//! Markdown → wrapped ratatui lines (pulldown-cmark), code blocks highlighted.
//!
//! Invariants: output lines are at most `width` columns; every style comes
//! from the theme (or the theme's syntect theme for code); an unclosed code
//! block at the end of a streaming text is shown plain, so highlighting runs
//! only on complete blocks (`stream_doc` renders a growing text).
use super::highlight;
use super::theme::Theme;
use super::wrap::{self, wrap};
use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};
use ratatui::style::Style;
use ratatui::text::{Line, Span};

struct Container {
    first: Vec<Span<'static>>,
    rest: Vec<Span<'static>>,
    used: bool,
}

struct Renderer<'t> {
    theme: &'t Theme,
    width: usize,
    out: Vec<Line<'static>>,
    cur: Vec<Span<'static>>,
    styles: Vec<Style>,
    containers: Vec<Container>,
    lists: Vec<Option<u64>>,
    code: Option<(String, String)>,
    code_blocks_left: usize,
    highlight_last: bool,
    link: Option<String>,
    table: Option<Vec<Vec<String>>>,
    cell: String,
    need_blank: bool,
}

impl<'t> Renderer<'t> {
    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or(self.theme.s.text)
    }

    fn push_style(&mut self, s: Style) {
        let base = self.style();
        self.styles.push(base.patch(s));
    }

    fn prefixes(&mut self) -> (Vec<Span<'static>>, Vec<Span<'static>>) {
        let mut first = Vec::new();
        let mut rest = Vec::new();
        for c in &mut self.containers {
            if c.used {
                first.extend(c.rest.iter().cloned());
            } else {
                first.extend(c.first.iter().cloned());
                c.used = true;
            }
            rest.extend(c.rest.iter().cloned());
        }
        (first, rest)
    }

    fn emit(&mut self, spans: Vec<Span<'static>>, extra_cont: &[Span<'static>]) {
        let (mut first, mut rest) = self.prefixes();
        first.extend(spans);
        rest.extend(extra_cont.iter().cloned());
        let line = Line::from(first);
        self.out.extend(wrap(&line, self.width, &rest));
    }

    fn blank_if_needed(&mut self) {
        if self.need_blank && !self.out.is_empty() {
            let (_, rest) = self.prefixes();
            let trimmed: Vec<Span<'static>> = rest
                .into_iter()
                .map(|s| Span::styled(s.content.trim_end().to_string(), s.style))
                .collect();
            self.out.push(Line::from(trimmed));
        }
        self.need_blank = false;
    }

    fn flush(&mut self) {
        if self.cur.is_empty() {
            return;
        }
        let spans = std::mem::take(&mut self.cur);
        self.emit(spans, &[]);
    }

    fn text(&mut self, t: &str) {
        if self.table.is_some() {
            self.cell.push_str(t);
            return;
        }
        if let Some((_, buf)) = &mut self.code {
            buf.push_str(t);
            return;
        }
        let s = self.style();
        self.cur.push(Span::styled(t.to_string(), s));
    }

    fn code_block(&mut self, lang: String, code: String) {
        self.code_blocks_left = self.code_blocks_left.saturating_sub(1);
        let th = &self.theme.s;
        let base = th.code_block;
        if !lang.is_empty() {
            self.emit(vec![Span::styled(format!("  {lang}"), th.code_lang)], &[]);
        }
        let highlighted = match (
            &self.theme.syntax,
            self.highlight_last || self.code_blocks_left > 0,
        ) {
            (Some(syn), true) => highlight::highlight(&code, &lang, syn, base),
            _ => None,
        };
        let lines = highlighted.unwrap_or_else(|| {
            code.lines()
                .map(|l| Line::from(Span::styled(l.replace('\t', "    "), base)))
                .collect()
        });
        let indent = Span::styled("  ", base);
        for l in lines {
            let mut spans = vec![indent.clone()];
            spans.extend(l.spans);
            self.emit(spans, std::slice::from_ref(&indent));
        }
    }

    fn table_end(&mut self) {
        let Some(rows) = self.table.take() else {
            return;
        };
        let (_, rest) = self.prefixes();
        let prefix_w: usize = rest.iter().map(|s| wrap::width(&s.content)).sum();
        let width = self.width.saturating_sub(prefix_w);
        for line in super::table::render(&rows, width, &self.theme.s) {
            self.emit(line.spans, &[]);
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        let th = self.theme.s.clone();
        match tag {
            Tag::Paragraph => self.blank_if_needed(),
            Tag::Heading { level, .. } => {
                self.blank_if_needed();
                let mut s = th.heading;
                if level == HeadingLevel::H1 {
                    s = s.add_modifier(ratatui::style::Modifier::UNDERLINED);
                }
                self.push_style(s);
            }
            Tag::BlockQuote(_) => {
                self.blank_if_needed();
                let bar = vec![Span::styled("│ ", th.quote)];
                self.containers.push(Container {
                    first: bar.clone(),
                    rest: bar,
                    used: false,
                });
                self.push_style(th.quote);
            }
            Tag::CodeBlock(kind) => {
                self.flush();
                self.blank_if_needed();
                let lang = match kind {
                    CodeBlockKind::Fenced(l) => l.to_string(),
                    CodeBlockKind::Indented => String::new(),
                };
                self.code = Some((lang, String::new()));
            }
            Tag::List(start) => {
                self.flush();
                if self.lists.is_empty() {
                    self.blank_if_needed();
                }
                self.lists.push(start);
            }
            Tag::Item => {
                self.flush();
                let marker = match self.lists.last_mut() {
                    Some(Some(n)) => {
                        let m = format!("{n}. ");
                        *n += 1;
                        m
                    }
                    _ => "• ".to_string(),
                };
                let w = wrap::width(&marker);
                self.containers.push(Container {
                    first: vec![Span::styled(marker, th.list_marker)],
                    rest: vec![Span::raw(" ".repeat(w))],
                    used: false,
                });
                self.need_blank = false;
            }
            Tag::Emphasis => self.push_style(th.emphasis),
            Tag::Strong => self.push_style(th.strong),
            Tag::Strikethrough => self.push_style(th.strike),
            Tag::Link { dest_url, .. } => {
                self.link = Some(dest_url.to_string());
                self.push_style(th.link);
            }
            Tag::Image { dest_url, .. } => {
                self.push_style(th.link);
                self.link = Some(dest_url.to_string());
                self.text("[image: ");
            }
            Tag::Table(_) => {
                self.flush();
                self.blank_if_needed();
                self.table = Some(Vec::new());
            }
            Tag::TableHead | Tag::TableRow => {
                if let Some(t) = &mut self.table {
                    t.push(Vec::new());
                }
            }
            Tag::TableCell => self.cell.clear(),
            _ => {}
        }
    }

    fn end(&mut self, tag: TagEnd) {
        match tag {
            TagEnd::Paragraph => {
                self.flush();
                self.need_blank = true;
            }
            TagEnd::Heading(_) => {
                self.flush();
                self.styles.pop();
                self.need_blank = true;
            }
            TagEnd::BlockQuote(_) => {
                self.flush();
                self.containers.pop();
                self.styles.pop();
                self.need_blank = true;
            }
            TagEnd::CodeBlock => {
                if let Some((lang, code)) = self.code.take() {
                    self.code_block(lang, code);
                }
                self.need_blank = true;
            }
            TagEnd::List(_) => {
                self.flush();
                self.lists.pop();
                self.need_blank = true;
            }
            TagEnd::Item => {
                self.flush();
                self.containers.pop();
            }
            TagEnd::Emphasis | TagEnd::Strong | TagEnd::Strikethrough => {
                self.styles.pop();
            }
            TagEnd::Link => {
                self.styles.pop();
                if let Some(url) = self.link.take() {
                    let shown: String = self.cur.iter().map(|s| s.content.as_ref()).collect();
                    if !url.is_empty() && !shown.ends_with(url.as_str()) {
                        self.cur
                            .push(Span::styled(format!(" ({url})"), self.theme.s.dim));
                    }
                }
            }
            TagEnd::Image => {
                self.text("]");
                self.styles.pop();
                self.link = None;
            }
            TagEnd::TableCell => {
                let c = std::mem::take(&mut self.cell);
                if let Some(row) = self.table.as_mut().and_then(|t| t.last_mut()) {
                    row.push(c.trim().to_string());
                }
            }
            TagEnd::Table => {
                self.table_end();
                self.need_blank = true;
            }
            _ => {}
        }
    }
}

/// Renders `text` as Markdown wrapped to `width`. With `open_code`, the last
/// code block is unterminated (still streaming) and stays unhighlighted.
pub fn render(text: &str, theme: &Theme, width: u16, open_code: bool) -> Vec<Line<'static>> {
    let opts = Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TABLES | Options::ENABLE_TASKLISTS;
    let code_blocks = if open_code {
        Parser::new_ext(text, opts)
            .filter(|e| matches!(e, Event::Start(Tag::CodeBlock(_))))
            .count()
    } else {
        usize::MAX
    };
    let mut r = Renderer {
        theme,
        width: usize::from(width.max(1)),
        out: Vec::new(),
        cur: Vec::new(),
        styles: Vec::new(),
        containers: Vec::new(),
        lists: Vec::new(),
        code: None,
        code_blocks_left: code_blocks,
        highlight_last: !open_code,
        link: None,
        table: None,
        cell: String::new(),
        need_blank: false,
    };
    for ev in Parser::new_ext(text, opts) {
        match ev {
            Event::Start(tag) => r.start(tag),
            Event::End(tag) => r.end(tag),
            Event::Text(t) => r.text(&t),
            Event::Code(t) => {
                if r.table.is_some() {
                    r.cell.push_str(&t);
                } else {
                    let s = r.style().patch(theme.s.code_inline);
                    r.cur.push(Span::styled(t.to_string(), s));
                }
            }
            Event::InlineMath(t) | Event::DisplayMath(t) => r.text(&t),
            Event::Html(t) | Event::InlineHtml(t) => {
                let s = theme.s.dim;
                for (i, l) in t.lines().enumerate() {
                    if i > 0 {
                        r.flush();
                    }
                    r.cur.push(Span::styled(l.to_string(), s));
                }
            }
            // Chat output: a single newline is a line break, as typed.
            Event::SoftBreak => r.flush(),
            Event::HardBreak => r.flush(),
            Event::Rule => {
                r.flush();
                r.blank_if_needed();
                let w = r.width.min(40);
                r.emit(vec![Span::styled("─".repeat(w), theme.s.rule)], &[]);
                r.need_blank = true;
            }
            Event::TaskListMarker(done) => {
                let s = theme.s.list_marker;
                r.cur
                    .push(Span::styled(if done { "[x] " } else { "[ ] " }, s));
            }
            Event::FootnoteReference(t) => r.text(&format!("[{t}]")),
        }
    }
    r.flush();
    r.out
}

/// Byte offset after the last blank line outside a code fence (0 if none),
/// and whether `text` ends inside an open fence.
pub fn split_point(text: &str) -> (usize, bool) {
    let mut in_fence = false;
    let mut split = 0;
    let mut pos = 0;
    for line in text.split_inclusive('\n') {
        pos += line.len();
        let t = line.trim_start();
        if t.starts_with("```") || t.starts_with("~~~") {
            in_fence = !in_fence;
        } else if !in_fence && t.trim().is_empty() && line.ends_with('\n') {
            split = pos;
        }
    }
    (split, in_fence)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    fn theme() -> Theme {
        Theme::load("dark", None, false).unwrap()
    }

    #[test]
    fn blocks_lists_and_code() {
        let md = "# Title\n\nSome *text* and `code`.\n\n- one\n- two\n  wrapped\n\n1. first\n2. second\n\n> quoted\n\n```rust\nfn x() {}\n```\n";
        let out = plain(&render(md, &theme(), 40, false));
        assert_eq!(
            out,
            vec![
                "Title",
                "",
                "Some text and code.",
                "",
                "• one",
                "• two",
                "  wrapped",
                "",
                "1. first",
                "2. second",
                "",
                "│ quoted",
                "",
                "  rust",
                "  fn x() {}",
            ]
        );
    }

    #[test]
    fn list_items_wrap_under_their_text() {
        let out = plain(&render("- alpha beta gamma delta", &theme(), 12, false));
        assert_eq!(out, vec!["• alpha beta", "  gamma", "  delta"]);
    }

    #[test]
    fn tables_links_and_tasks() {
        let md = "| a | bb |\n|---|---|\n| 1 | 2 |\n\nSee [docs](https://x.org) and <https://y.org>.\n\n- [x] done\n- [ ] todo";
        let out = plain(&render(md, &theme(), 60, false));
        assert_eq!(
            out,
            vec![
                "a │ bb",
                "──┼───",
                "1 │ 2 ",
                "",
                "See docs (https://x.org) and https://y.org.",
                "",
                "• [x] done",
                "• [ ] todo",
            ]
        );
    }

    #[test]
    fn split_points_skip_fences() {
        assert_eq!(split_point("a\n\nb"), (3, false));
        assert_eq!(split_point("a\n\n```\nx\n\ny"), (3, true));
        assert_eq!(split_point("```\nx\n```\n\nz"), (11, false));
    }
}
