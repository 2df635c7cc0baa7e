//! Oversized items are made to fit, not refused: a tool result, a user
//! message or a tool argument bigger than its budget is stored in full as a
//! session file (`<session_files>/<session id>/`) and the context gets a
//! head-and-tail preview plus the file's path. The display history keeps the
//! full text; the model can page through the file with the filesystem tool
//! (reads of the session's own files dir are always allowed).
//!
//! Budget: `[context].item_max_share` of the window (estimated at ~4
//! characters per token), at least `MIN_ITEM_CHARS`; an unknown window
//! counts as `FALLBACK_WINDOW`.
use super::Agent;
use crate::attach::FilesPolicy;
use serde_json::Value;
use std::path::PathBuf;

pub(crate) const MIN_ITEM_CHARS: usize = 2_000;
pub(crate) const FALLBACK_WINDOW: u64 = 8_192;

/// Characters one item may take in the context.
pub(crate) fn budget_chars(window: u64, share: f64) -> usize {
    let window = if window == 0 { FALLBACK_WINDOW } else { window };
    let share = if share.is_finite() {
        share.clamp(0.01, 1.0)
    } else {
        0.25
    };
    ((window as f64 * share * 4.0) as usize).max(MIN_ITEM_CHARS)
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn ceil_boundary(s: &str, mut i: usize) -> usize {
    i = i.min(s.len());
    while !s.is_char_boundary(i) {
        i += 1;
    }
    i
}

/// The first ~3/4 and last ~1/4 of `text` within `max` bytes, cut at line
/// ends where one is near, else at a character boundary. `None` when it
/// already fits.
pub(crate) fn head_tail(text: &str, max: usize) -> Option<(String, String)> {
    if text.len() <= max {
        return None;
    }
    let head_len = max * 3 / 4;
    let tail_len = max - head_len;
    let mut h = floor_boundary(text, head_len);
    if let Some(nl) = text[..h].rfind('\n').filter(|nl| *nl > h / 2) {
        h = nl + 1;
    }
    let mut t = ceil_boundary(text, text.len() - tail_len);
    if let Some(nl) = text[t..].find('\n').filter(|nl| *nl < tail_len / 2) {
        t += nl + 1;
    }
    let t = t.max(h);
    Some((text[..h].to_string(), text[t..].to_string()))
}

/// Line count of a text (for the paging hint).
fn lines(text: &str) -> usize {
    text.lines().count().max(1)
}

impl Agent {
    fn files_policy(&self) -> FilesPolicy {
        FilesPolicy::from_config(&self.config, &self.env.paths)
    }

    /// Stores `text` as a session file named after `name`.
    pub(crate) fn store_session_text(
        &self,
        session_id: &str,
        name: &str,
        text: &str,
    ) -> Result<PathBuf, String> {
        crate::attach::store(&self.files_policy(), session_id, name, text.as_bytes())
            .map_err(|e| e.to_string())
    }

    /// `text` as it goes into the context: itself when within `max`, else
    /// head + note + tail, the whole stored under `name`. `what` names the
    /// item in the note ("output of terminal", "your message").
    pub(crate) fn fit_text(
        &self,
        session_id: &str,
        name: &str,
        what: &str,
        text: &str,
        max: usize,
    ) -> String {
        let Some((head, tail)) = head_tail(text, max) else {
            return text.to_string();
        };
        let total = text.len();
        let shown = head.len() + tail.len();
        let note = match self.store_session_text(session_id, name, text) {
            Ok(path) => format!(
                "[navi: the {what} is {total} bytes ({} lines); {shown} are shown, the middle is cut. The full text is in {} — read it in parts with the filesystem tool (action \"read\", path as given, offset = first line, limit = number of lines).]",
                lines(text),
                path.display()
            ),
            Err(e) => format!(
                "[navi: the {what} is {total} bytes; {shown} are shown, the middle is cut (it could not be stored: {e}).]"
            ),
        };
        format!("{head}\n\n{note}\n\n{tail}")
    }

    /// Tool arguments as kept in the context: every string value longer than
    /// `max` is stored and replaced by a reference. `None` when nothing was
    /// too long.
    pub(crate) fn fit_arguments(
        &self,
        session_id: &str,
        call_id: &str,
        args: &Value,
        max: usize,
    ) -> Option<Value> {
        let mut changed = false;
        let mut out = args.clone();
        self.shrink_value(session_id, call_id, &mut out, max, &mut changed);
        changed.then_some(out)
    }

    fn shrink_value(
        &self,
        session_id: &str,
        call_id: &str,
        v: &mut Value,
        max: usize,
        changed: &mut bool,
    ) {
        match v {
            Value::String(s) if s.len() > max => {
                let name = format!("arg-{call_id}.txt");
                let preview: String = s.chars().take(300).collect();
                *v = Value::String(match self.store_session_text(session_id, &name, s) {
                    Ok(path) => format!(
                        "{preview}… [navi: {} bytes, stored in {}]",
                        s.len(),
                        path.display()
                    ),
                    Err(_) => format!("{preview}… [navi: {} bytes, cut]", s.len()),
                });
                *changed = true;
            }
            Value::Array(items) => {
                for i in items {
                    self.shrink_value(session_id, call_id, i, max, changed);
                }
            }
            Value::Object(map) => {
                for (_, i) in map.iter_mut() {
                    self.shrink_value(session_id, call_id, i, max, changed);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_and_tail_cut_on_lines_and_char_boundaries() {
        let text: String = (0..200).map(|i| format!("line {i} ✓ ünï\n")).collect();
        let (h, t) = head_tail(&text, 400).unwrap();
        assert!(h.len() + t.len() <= 400);
        assert!(h.starts_with("line 0 ") && h.ends_with('\n'));
        assert!(t.ends_with("line 199 ✓ ünï\n"));
        assert!(t.starts_with("line "), "{t}");
        // One long line of multi-byte characters: no panic, boundaries hold.
        let one = "é".repeat(5_000);
        let (h, t) = head_tail(&one, 1001).unwrap();
        assert!(h.chars().all(|c| c == 'é') && t.chars().all(|c| c == 'é'));
        assert!(head_tail("short", 10).is_none());
    }

    #[test]
    fn budget_has_a_floor_and_a_fallback_window() {
        assert_eq!(budget_chars(8_192, 0.25), 8_192);
        assert_eq!(budget_chars(0, 0.25), 8_192);
        assert_eq!(budget_chars(1_000, 0.25), MIN_ITEM_CHARS);
        assert_eq!(budget_chars(8_192, f64::NAN), 8_192);
    }
}
