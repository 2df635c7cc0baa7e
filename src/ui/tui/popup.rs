//! The slash-command completion popup, fed by `ui::commands::complete`.
//!
//! Invariants: candidates come only from the shared command module (no
//! command list here); `selected` is always a valid index; the popup draws
//! inside the area it is given, above the composer.
use super::theme::Theme;
use super::wrap::truncate;
use crate::ui::commands::{COMMANDS, complete};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Widget};

const MAX_ITEMS: usize = 8;

#[derive(Clone, Debug, PartialEq)]
pub struct Popup {
    /// (completion, what it does)
    pub(crate) items: Vec<(String, String)>,
    pub(crate) selected: usize,
    /// An `@path` completion: the byte offset of the `@` in the composer.
    pub(crate) mention: Option<usize>,
}

fn describe(candidate: &str) -> String {
    let words: Vec<&str> = candidate.split_whitespace().collect();
    let matching: Vec<&(&str, &str)> = COMMANDS
        .iter()
        .filter(|(u, _)| {
            let uw: Vec<&str> = u.split_whitespace().collect();
            words.iter().enumerate().all(|(i, w)| {
                uw.get(i)
                    .is_some_and(|x| x == w || x.starts_with('<') || x.starts_with('['))
            })
        })
        .collect();
    match matching.as_slice() {
        [] => String::new(),
        [(_, d)] => d.to_string(),
        many if words.len() == 1 => many
            .iter()
            .filter_map(|(u, _)| u.split_whitespace().nth(1))
            .filter(|w| !w.starts_with('[') && !w.starts_with('<'))
            .collect::<Vec<_>>()
            .join(", "),
        [(_, d), ..] => d.to_string(),
    }
}

impl Popup {
    /// Completions for the composer text, or `None` when there are none.
    #[cfg(test)]
    pub(crate) fn for_line(line: &str, profiles: &[String], themes: &[String]) -> Option<Popup> {
        Self::for_line_with(line, profiles, themes, &[])
    }

    /// [`for_line`](Self::for_line) with the user's own commands (`/name
    /// args`, description) offered for a partial command name too.
    pub(crate) fn for_line_with(
        line: &str,
        profiles: &[String],
        themes: &[String],
        custom: &[(String, String)],
    ) -> Option<Popup> {
        if !line.starts_with('/') || line.contains('\n') {
            return None;
        }
        let mut seen = std::collections::HashSet::new();
        let mut items: Vec<(String, String)> = complete(line, profiles, themes)
            .into_iter()
            .filter(|c| seen.insert(c.clone()))
            .map(|c| {
                let d = describe(&c);
                (c, d)
            })
            .collect();
        if !line.contains(char::is_whitespace) {
            for (usage, d) in custom {
                let name = usage.split_whitespace().next().unwrap_or("");
                if name.starts_with(line) && name != line && seen.insert(name.to_string()) {
                    items.push((name.to_string(), d.clone()));
                }
            }
        }
        (!items.is_empty()).then_some(Popup {
            items,
            selected: 0,
            mention: None,
        })
    }

    /// Argument candidates with their descriptions (`None` when empty).
    pub(crate) fn from_items(items: Vec<(String, String)>) -> Option<Popup> {
        (!items.is_empty()).then_some(Popup {
            items,
            selected: 0,
            mention: None,
        })
    }

    /// Files matching the `@query` that starts at byte `start`.
    pub(crate) fn for_mention(query: &str, start: usize, files: &[String]) -> Option<Popup> {
        let items: Vec<(String, String)> = super::mention::matches(query, files)
            .into_iter()
            .map(|f| (f, String::new()))
            .collect();
        (!items.is_empty()).then_some(Popup {
            items,
            selected: 0,
            mention: Some(start),
        })
    }

    pub(crate) fn step(&mut self, back: bool) {
        let n = self.items.len().max(1);
        self.selected = if back {
            (self.selected + n - 1) % n
        } else {
            (self.selected + 1) % n
        };
    }

    pub(crate) fn current(&self) -> Option<&str> {
        self.items.get(self.selected).map(|(c, _)| c.as_str())
    }

    /// Draws the popup with its bottom edge at `bottom` inside `area`.
    pub(crate) fn render(&self, area: Rect, bottom: u16, buf: &mut Buffer, theme: &Theme) {
        let th = &theme.s;
        let shown = self.items.len().min(MAX_ITEMS);
        let h = (shown as u16 + 2).min(bottom.saturating_sub(area.y));
        let w = area.width.min(72);
        if h < 3 || w < 10 {
            return;
        }
        let rect = Rect::new(area.x, bottom - h, w, h);
        Clear.render(rect, buf);
        let block = Block::default()
            .borders(Borders::ALL)
            .border_style(th.border)
            .style(th.popup)
            .title(Span::styled(
                if self.mention.is_some() {
                    " @file · Tab/Enter completes · ↑↓ choose · Esc closes "
                } else {
                    " Tab completes · ↑↓ choose · Esc closes "
                },
                th.popup_hint,
            ));
        let inner = block.inner(rect);
        block.render(rect, buf);
        let first = (self.selected + 1).saturating_sub(shown);
        let cw = self
            .items
            .iter()
            .map(|(c, _)| c.chars().count())
            .max()
            .unwrap_or(0)
            .min(if self.mention.is_some() {
                usize::from(inner.width)
            } else {
                usize::from(inner.width) / 2
            });
        for (row, (i, (c, d))) in self
            .items
            .iter()
            .enumerate()
            .skip(first)
            .take(shown)
            .enumerate()
        {
            let sel = i == self.selected;
            let (cs, ds) = if sel {
                (th.popup_selected, th.popup_selected)
            } else {
                (th.popup, th.popup_hint)
            };
            let name = format!("{:<cw$}", truncate(c, cw));
            let rest = usize::from(inner.width).saturating_sub(cw + 2);
            let line = Line::from(vec![
                Span::styled(name, cs),
                Span::styled("  ", ds),
                Span::styled(format!("{:<rest$}", truncate(d, rest)), ds),
            ]);
            buf.set_line(inner.x, inner.y + row as u16, &line, inner.width);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn completes_and_describes() {
        let p = Popup::for_line("/ses", &[], &[]).unwrap();
        assert_eq!(p.items[0].0, "/session");
        assert!(p.items[0].1.contains("resume"), "{}", p.items[0].1);
        let p = Popup::for_line("/session r", &[], &[]).unwrap();
        let names: Vec<&str> = p.items.iter().map(|(c, _)| c.as_str()).collect();
        assert_eq!(names, vec!["/session resume", "/session rename"]);
        assert!(p.items[0].1.contains("picker"));
        assert!(Popup::for_line("hello", &[], &[]).is_none());
        let p = Popup::for_line("/theme ", &[], &["dark".into(), "light".into()]).unwrap();
        assert_eq!(p.items.len(), 2);
    }
}
