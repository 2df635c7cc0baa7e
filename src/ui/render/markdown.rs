//! Markdown → a neutral styled document (pulldown-cmark), wrapped to a
//! width: the one Markdown renderer of both front ends.
//!
//! Invariants: output lines are at most `width` columns; styles are
//! semantic [`Role`]s; a single newline is a line break (chat text is
//! written as typed); an unclosed code block at the end of a streaming text
//! is shown plain, so highlighting runs only on complete blocks.
use super::highlight;
use super::table;
use super::wrap::{self, wrap};
use super::{Line, Role, Span, Style};
use pulldown_cmark::{CodeBlockKind, Event, HeadingLevel, Options, Parser, Tag, TagEnd};

/// What the document needs from its front end.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Opts<'a> {
    /// Columns to wrap to.
    pub(crate) width: usize,
    /// The syntect theme for code blocks; `None`: no highlighting.
    pub(crate) syntax: Option<&'a str>,
    /// The last code block is unterminated (still streaming): not highlighted.
    pub(crate) open_code: bool,
}

struct Container {
    first: Vec<Span>,
    rest: Vec<Span>,
    used: bool,
}

struct Renderer<'t> {
    syntax: Option<&'t str>,
    width: usize,
    out: Vec<Line>,
    cur: Vec<Span>,
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

impl Renderer<'_> {
    fn style(&self) -> Style {
        self.styles.last().copied().unwrap_or(Style::of(Role::Text))
    }

    fn push_style(&mut self, role: Role) {
        let base = self.style();
        self.styles.push(base.with(role));
    }

    fn prefixes(&mut self) -> (Vec<Span>, Vec<Span>) {
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

    fn emit(&mut self, spans: Vec<Span>, extra_cont: &[Span]) {
        let (mut first, mut rest) = self.prefixes();
        first.extend(spans);
        rest.extend(extra_cont.iter().cloned());
        self.out.extend(wrap(&first, self.width, &rest));
    }

    fn blank_if_needed(&mut self) {
        if self.need_blank && !self.out.is_empty() {
            let (_, rest) = self.prefixes();
            let trimmed: Vec<Span> = rest
                .into_iter()
                .map(|s| Span::new(s.text.trim_end(), s.style))
                .collect();
            self.out.push(trimmed);
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
        self.cur.push(Span::new(t, s));
    }

    fn code_block(&mut self, lang: String, code: String) {
        self.code_blocks_left = self.code_blocks_left.saturating_sub(1);
        let base = Style::of(Role::CodeBlock);
        if !lang.is_empty() {
            self.emit(
                vec![Span::new(format!("  {lang}"), Style::of(Role::CodeLang))],
                &[],
            );
        }
        let highlighted = match (
            self.syntax,
            self.highlight_last || self.code_blocks_left > 0,
        ) {
            (Some(syn), true) => highlight::block(&code, &lang, syn, base),
            _ => None,
        };
        let lines =
            highlighted.unwrap_or_else(|| code.lines().map(|l| vec![Span::new(l, base)]).collect());
        let indent = Span::new("  ", base);
        for l in lines {
            let mut spans = vec![indent.clone()];
            spans.extend(
                l.into_iter()
                    .map(|s| Span::new(s.text.replace('\t', "    "), s.style)),
            );
            self.emit(spans, std::slice::from_ref(&indent));
        }
    }

    fn table_end(&mut self) {
        let Some(rows) = self.table.take() else {
            return;
        };
        let (_, rest) = self.prefixes();
        let width = self.width.saturating_sub(wrap::spans_width(&rest));
        for line in table::render(&rows, width) {
            self.emit(line, &[]);
        }
    }

    fn start(&mut self, tag: Tag<'_>) {
        match tag {
            Tag::Paragraph => self.blank_if_needed(),
            Tag::Heading { level, .. } => {
                self.blank_if_needed();
                self.push_style(Role::Heading(heading_level(level)));
            }
            Tag::BlockQuote(_) => {
                self.blank_if_needed();
                let bar = vec![Span::new("│ ", Style::of(Role::Quote))];
                self.containers.push(Container {
                    first: bar.clone(),
                    rest: bar,
                    used: false,
                });
                self.push_style(Role::Quote);
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
                    first: vec![Span::new(marker, Style::of(Role::ListMarker))],
                    rest: vec![Span::new(" ".repeat(w), Style::plain())],
                    used: false,
                });
                self.need_blank = false;
            }
            Tag::Emphasis => self.push_style(Role::Emphasis),
            Tag::Strong => self.push_style(Role::Strong),
            Tag::Strikethrough => self.push_style(Role::Strike),
            Tag::Link { dest_url, .. } => {
                self.link = Some(dest_url.to_string());
                self.push_style(Role::Link);
            }
            Tag::Image { dest_url, .. } => {
                self.push_style(Role::Link);
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
                    let shown: String = self.cur.iter().map(|s| s.text.as_str()).collect();
                    if !url.is_empty() && !shown.ends_with(url.as_str()) {
                        self.cur
                            .push(Span::new(format!(" ({url})"), Style::of(Role::Dim)));
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
pub(crate) fn render(text: &str, o: Opts<'_>) -> Vec<Line> {
    let open_code = o.open_code;
    let opts = Options::ENABLE_STRIKETHROUGH | Options::ENABLE_TABLES | Options::ENABLE_TASKLISTS;
    let code_blocks = if open_code {
        Parser::new_ext(text, opts)
            .filter(|e| matches!(e, Event::Start(Tag::CodeBlock(_))))
            .count()
    } else {
        usize::MAX
    };
    let mut r = Renderer {
        syntax: o.syntax,
        width: o.width.max(1),
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
                    let s = r.style().with(Role::CodeInline);
                    r.cur.push(Span::new(t.as_ref(), s));
                }
            }
            Event::InlineMath(t) | Event::DisplayMath(t) => r.text(&t),
            Event::Html(t) | Event::InlineHtml(t) => {
                let s = Style::of(Role::Dim);
                for (i, l) in t.lines().enumerate() {
                    if i > 0 {
                        r.flush();
                    }
                    r.cur.push(Span::new(l, s));
                }
            }
            // Chat output: a single newline is a line break, as typed.
            Event::SoftBreak => r.flush(),
            Event::HardBreak => r.flush(),
            Event::Rule => {
                r.flush();
                r.blank_if_needed();
                let w = r.width.min(40);
                r.emit(vec![Span::new("─".repeat(w), Style::of(Role::Rule))], &[]);
                r.need_blank = true;
            }
            Event::TaskListMarker(done) => {
                let s = Style::of(Role::ListMarker);
                r.cur.push(Span::new(if done { "[x] " } else { "[ ] " }, s));
            }
            Event::FootnoteReference(t) => r.text(&format!("[{t}]")),
        }
    }
    r.flush();
    r.out
}

/// Byte offset after the last blank line outside a code fence (0 if none),
/// and whether `text` ends inside an open fence.
pub(crate) fn split_point(text: &str) -> (usize, bool) {
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

fn heading_level(level: HeadingLevel) -> u8 {
    match level {
        HeadingLevel::H1 => 1,
        HeadingLevel::H2 => 2,
        HeadingLevel::H3 => 3,
        HeadingLevel::H4 => 4,
        HeadingLevel::H5 => 5,
        HeadingLevel::H6 => 6,
    }
}

#[cfg(test)]
#[path = "markdown_tests.rs"]
mod tests;
