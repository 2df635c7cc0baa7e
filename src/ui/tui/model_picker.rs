//! `/model`: what the server serves, as a picker, and checking a name
//! before switching to it.
//!
//! Invariants:
//! - The list comes from the server (`/api/tags` + `/api/show` for Ollama,
//!   `/models` for OpenAI-compatible servers), fetched off the UI task;
//!   context length and tool/vision support are shown only where the server
//!   said so.
//! - Switching goes through the shared `/model <name>` command, and the
//!   status line shows the new model at once. A name the server does not
//!   serve is refused with the list.
use super::theme::Theme;
use super::wrap::truncate;
use crate::protocol::ModelInfo;
use crossterm::event::{KeyCode, KeyEvent};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::text::{Line, Span};

/// The served name matching `wanted` (exactly, else the same model under a
/// tag-less or tagged name).
pub(crate) fn find<'a>(models: &'a [ModelInfo], wanted: &str) -> Option<&'a ModelInfo> {
    models.iter().find(|m| m.name == wanted).or_else(|| {
        models
            .iter()
            .find(|m| crate::app::same_model(wanted, &m.name))
    })
}

/// `name · 32k context · tools, vision` as far as the server said.
pub fn describe(m: &ModelInfo) -> String {
    let mut parts = vec![m.name.clone()];
    if let Some(n) = m.context_length {
        // Context lengths are powers of two: 32768 reads as 32k.
        let ctx = if n >= 1024 {
            format!("{}k", n / 1024)
        } else {
            n.to_string()
        };
        parts.push(format!("{ctx} context"));
    }
    let caps: Vec<&str> = m
        .capabilities
        .iter()
        .map(String::as_str)
        .filter(|c| matches!(*c, "tools" | "vision" | "thinking"))
        .collect();
    if !caps.is_empty() {
        parts.push(caps.join(", "));
    }
    parts.join(" · ")
}

/// The refusal for a name the server does not serve.
pub(crate) fn unknown(wanted: &str, models: &[ModelInfo]) -> String {
    let names: Vec<&str> = models.iter().map(|m| m.name.as_str()).collect();
    if names.is_empty() {
        return format!("unknown model '{wanted}': the server serves no models");
    }
    format!(
        "unknown model '{wanted}'; the server serves: {} (/model alone opens a picker)",
        names.join(", ")
    )
}

#[derive(Clone, Debug)]
pub(crate) struct ModelPicker {
    pub(crate) models: Vec<ModelInfo>,
    pub(crate) selected: usize,
    pub(crate) current: String,
}

pub(crate) enum ModelPickerAction {
    None,
    Close,
    Choose(ModelInfo),
}

impl ModelPicker {
    pub(crate) fn new(models: Vec<ModelInfo>, current: &str) -> Self {
        let selected = find(&models, current)
            .and_then(|m| models.iter().position(|x| x.name == m.name))
            .unwrap_or(0);
        ModelPicker {
            models,
            selected,
            current: current.to_string(),
        }
    }

    pub(crate) fn handle_key(&mut self, key: &KeyEvent) -> ModelPickerAction {
        let n = self.models.len();
        match key.code {
            KeyCode::Esc | KeyCode::Char('q') => return ModelPickerAction::Close,
            KeyCode::Up | KeyCode::Char('k') => self.selected = self.selected.saturating_sub(1),
            KeyCode::Down | KeyCode::Char('j') => {
                self.selected = (self.selected + 1).min(n.saturating_sub(1))
            }
            KeyCode::Home => self.selected = 0,
            KeyCode::End => self.selected = n.saturating_sub(1),
            KeyCode::Enter => {
                return match self.models.get(self.selected) {
                    Some(m) => ModelPickerAction::Choose(m.clone()),
                    None => ModelPickerAction::Close,
                };
            }
            _ => {}
        }
        ModelPickerAction::None
    }

    pub(crate) fn render(&self, area: Rect, buf: &mut Buffer, theme: &Theme) {
        let th = &theme.s;
        let Some(inner) = super::picker::overlay_frame(
            area,
            buf,
            theme,
            (90, self.models.len()),
            " Choose a model ",
            " ↑↓ choose · Enter switches · Esc closes ",
        ) else {
            return;
        };
        if self.models.is_empty() {
            let l = Line::from(Span::styled("the server serves no models", th.dim));
            buf.set_line(inner.x, inner.y, &l, inner.width);
            return;
        }
        let rows = usize::from(inner.height);
        let first = (self.selected + 1).saturating_sub(rows);
        let iw = usize::from(inner.width);
        for (row, (i, m)) in self
            .models
            .iter()
            .enumerate()
            .skip(first)
            .take(rows)
            .enumerate()
        {
            let mark = if m.name == self.current { "● " } else { "  " };
            let text = format!("{mark}{}", describe(m));
            let st = if i == self.selected {
                th.popup_selected
            } else {
                th.overlay
            };
            let line = Line::from(Span::styled(format!("{:<iw$}", truncate(&text, iw)), st));
            buf.set_line(inner.x, inner.y + row as u16, &line, inner.width);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(name: &str, ctx: Option<u64>, caps: &[&str]) -> ModelInfo {
        ModelInfo {
            name: name.into(),
            context_length: ctx,
            capabilities: caps.iter().map(|c| c.to_string()).collect(),
        }
    }

    #[test]
    fn describes_what_the_server_said() {
        assert_eq!(
            describe(&m(
                "qwen3:8b",
                Some(40960),
                &["completion", "tools", "vision"]
            )),
            "qwen3:8b · 40k context · tools, vision"
        );
        assert_eq!(describe(&m("x", None, &[])), "x");
    }

    #[test]
    fn unknown_names_are_refused_with_the_list() {
        let list = vec![m("a:1b", None, &[]), m("b", None, &[])];
        assert!(find(&list, "a:1b").is_some());
        assert!(find(&list, "zzz").is_none());
        let e = unknown("zzz", &list);
        assert!(e.contains("'zzz'") && e.contains("a:1b, b"), "{e}");
    }
}
