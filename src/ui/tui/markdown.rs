//! Markdown in the TUI: the shared renderer (`ui::render::markdown`) with its
//! semantic styles mapped to the theme's ratatui styles.
//!
//! Invariants: every style comes from the theme (or, for code, the theme's
//! syntect colours); a role nested inside another is patched over it, in
//! order, so e.g. a link inside a quote keeps the quote's look where the
//! link style leaves it unset.
use super::theme::{Styles, Theme};
use crate::ui::render::{self, Role};
use ratatui::style::{Color, Modifier, Style};
use ratatui::text::{Line, Span};

pub(crate) use crate::ui::render::markdown::split_point;

/// The theme's look for one role.
fn role_style(role: Role, th: &Styles) -> Style {
    match role {
        Role::Text => th.text,
        Role::Heading(1) => th.heading.add_modifier(Modifier::UNDERLINED),
        Role::Heading(_) => th.heading,
        Role::Emphasis => th.emphasis,
        Role::Strong => th.strong,
        Role::Strike => th.strike,
        Role::CodeInline => th.code_inline,
        Role::CodeBlock => th.code_block,
        Role::CodeLang => th.code_lang,
        Role::Quote => th.quote,
        Role::ListMarker => th.list_marker,
        Role::Link => th.link,
        Role::Dim => th.dim,
        Role::Rule => th.rule,
        Role::Syntax(s) => {
            let mut st = Style::default().fg(Color::Rgb(s.rgb.0, s.rgb.1, s.rgb.2));
            if s.bold {
                st = st.add_modifier(Modifier::BOLD);
            }
            if s.italic {
                st = st.add_modifier(Modifier::ITALIC);
            }
            if s.underline {
                st = st.add_modifier(Modifier::UNDERLINED);
            }
            st
        }
    }
}

/// A semantic style as a ratatui style: its roles patched in order.
pub(crate) fn style(st: render::Style, th: &Styles) -> Style {
    st.roles()
        .fold(Style::default(), |acc, r| acc.patch(role_style(r, th)))
}

/// A document line as a ratatui line.
pub(crate) fn line(l: render::Line, th: &Styles) -> Line<'static> {
    Line::from(
        l.into_iter()
            .map(|s| Span::styled(s.text, style(s.style, th)))
            .collect::<Vec<_>>(),
    )
}

/// Renders `text` as Markdown wrapped to `width`. With `open_code`, the last
/// code block is unterminated (still streaming) and stays unhighlighted.
pub(crate) fn render(text: &str, theme: &Theme, width: u16, open_code: bool) -> Vec<Line<'static>> {
    let opts = render::markdown::Opts {
        width: usize::from(width),
        syntax: theme.syntax.as_deref(),
        open_code,
    };
    render::markdown::render(text, opts)
        .into_iter()
        .map(|l| line(l, &theme.s))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn theme() -> Theme {
        Theme::load("dark", None, false).unwrap()
    }

    #[test]
    fn nested_roles_patch_in_order() {
        let t = theme();
        let th = &t.s;
        let quoted_link = render::Style::of(Role::Text)
            .with(Role::Quote)
            .with(Role::Link);
        assert_eq!(
            style(quoted_link, th),
            th.text.patch(th.quote).patch(th.link)
        );
        assert_eq!(style(render::Style::plain(), th), Style::default());
        let h1 = style(render::Style::of(Role::Text).with(Role::Heading(1)), th);
        assert!(h1.add_modifier.contains(Modifier::UNDERLINED));
    }

    #[test]
    fn lines_carry_theme_styles() {
        let t = theme();
        let out = render("**b** `c`", &t, 40, false);
        assert_eq!(out[0].to_string(), "b c");
        assert_eq!(out[0].spans[0].style, t.s.text.patch(t.s.strong));
        let code = out[0].spans.last().map(|s| s.style);
        assert_eq!(code, Some(t.s.text.patch(t.s.code_inline)));
    }
}
