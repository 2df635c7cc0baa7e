//! Text rendering shared by the TUI and plain mode: Markdown to a neutral
//! styled document, syntax highlighting, table layout and word wrapping.
//!
//! Invariants:
//! - Nothing here knows about a terminal library: no ratatui, no crossterm,
//!   no escape sequences. A front end maps each [`Style`] to its own output
//!   (a ratatui `Style` from the theme in the TUI, SGR codes in plain mode).
//! - A [`Style`] is semantic: an ordered stack of [`Role`]s, innermost last
//!   (e.g. quote → strong → link). Front ends fold the stack in order, each
//!   role patched over the ones before it, so nesting means the same thing
//!   everywhere.
//! - Widths are display columns (`unicode-width`: CJK and emoji count 2).
pub(crate) mod highlight;
pub(crate) mod markdown;
pub(crate) mod stream;
pub(crate) mod table;
pub(crate) mod wrap;

/// What a piece of text is, for the front end to give it a look.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Role {
    /// Body text of an answer.
    Text,
    /// A heading of level 1–6.
    Heading(u8),
    Emphasis,
    Strong,
    Strike,
    /// Inline `code`.
    CodeInline,
    /// A fenced or indented code block (its text and indent).
    CodeBlock,
    /// The language label above a code block.
    CodeLang,
    /// The bar of a block quote and the text inside it.
    Quote,
    /// A bullet, number or task box of a list item.
    ListMarker,
    /// A link's text (and an image's label).
    Link,
    /// Secondary text: a link's address, raw HTML.
    Dim,
    /// Thematic breaks and table rules/separators.
    Rule,
    /// A syntax-highlighting colour for code.
    Syntax(Syntax),
}

/// One syntect token style: foreground colour and font style.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Syntax {
    pub(crate) rgb: (u8, u8, u8),
    pub(crate) bold: bool,
    pub(crate) italic: bool,
    pub(crate) underline: bool,
}

/// Most roles a style stacks; deeper nesting keeps the outer ones.
const DEPTH: usize = 8;

/// A stack of roles, outermost first. The empty stack is unstyled text.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub(crate) struct Style {
    roles: [Option<Role>; DEPTH],
}

impl Style {
    /// No styling at all (padding, indents).
    pub(crate) fn plain() -> Self {
        Style::default()
    }

    /// A style of one role.
    pub(crate) fn of(role: Role) -> Self {
        Style::plain().with(role)
    }

    /// This style with `role` nested inside it.
    pub(crate) fn with(mut self, role: Role) -> Self {
        if let Some(slot) = self.roles.iter_mut().find(|r| r.is_none()) {
            *slot = Some(role);
        }
        self
    }

    /// The roles, outermost first.
    pub(crate) fn roles(&self) -> impl Iterator<Item = Role> + '_ {
        self.roles.iter().map_while(|r| *r)
    }
}

/// A run of text in one style.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Span<S = Style> {
    pub(crate) text: String,
    pub(crate) style: S,
}

impl<S> Span<S> {
    pub(crate) fn new(text: impl Into<String>, style: S) -> Self {
        Span {
            text: text.into(),
            style,
        }
    }
}

/// One output line of a document.
pub(crate) type Line<S = Style> = Vec<Span<S>>;

/// The text of a line without styles.
pub(crate) fn line_text<S>(line: &[Span<S>]) -> String {
    line.iter().map(|s| s.text.as_str()).collect()
}
