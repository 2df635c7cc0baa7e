//! The last resort before a window refusal: when the turn in progress is
//! itself too big for the window (a paste, tool calls and their results
//! added up) and compaction cannot help — older turns are already gone —
//! its biggest items are cut further, largest first, each to half its size
//! (head and tail kept, the rest in a session file), until the request fits
//! or nothing is left to cut. A turn is refused only when what is left of
//! it after that, plus the fixed prompt, still cannot fit.
//!
//! An item already cut keeps its note (where the full text is) and loses
//! part of its head and tail; an item not cut yet is stored and cut as
//! `oversize.rs` does. The transcript keeps everything whole.
use super::AgentError;
use super::oversize::head_tail;
use super::turn::Run;
use crate::llm::Role;
use crate::session::MessageKind;

/// No item is cut below this many characters.
const FLOOR_CHARS: usize = 800;
/// At most this many cuts before the refusal stands.
const MAX_CUTS: usize = 12;

/// `text` with an existing "[navi: …]" note kept whole and its head and
/// tail shrunk so the whole is about `max` bytes; `None` when there is no
/// note (the caller stores and cuts it) or nothing would change.
pub(crate) fn shrink_cut(text: &str, max: usize) -> Option<String> {
    let start = text.find("\n\n[navi: ")?;
    let end = start + text[start..].find("]\n\n")? + 3;
    let (head, note, tail) = (&text[..start], &text[start..end], &text[end..]);
    let room = max.saturating_sub(note.len());
    let whole = format!("{head}{tail}");
    let (h, t) = head_tail(&whole, room)?;
    // Keep the split where it was: the head from the head, the tail from
    // the tail.
    let h = &h[..h.len().min(head.len())];
    let t = &t[t.len().saturating_sub(tail.len())..];
    let out = format!("{h}{note}{t}");
    (out.len() < text.len()).then_some(out)
}

impl Run<'_> {
    /// Cuts the biggest item of the turn in progress to half its size.
    /// False when there is nothing left to cut.
    pub(super) fn squeeze_turn(&mut self) -> Result<bool, AgentError> {
        let Some(start) = self
            .conv
            .context
            .iter()
            .rposition(|m| m.msg.role == Role::User && m.kind == MessageKind::Message)
        else {
            return Ok(false);
        };
        let Some((idx, len)) = self.conv.context[start..]
            .iter()
            .enumerate()
            .filter(|(_, m)| matches!(m.msg.role, Role::User | Role::Tool))
            .map(|(i, m)| (start + i, m.msg.text().len()))
            .filter(|(_, len)| *len > FLOOR_CHARS * 2)
            .max_by_key(|(_, len)| *len)
        else {
            return Ok(false);
        };
        let max = (len / 2).max(FLOOR_CHARS);
        let m = &self.conv.context[idx];
        let cut = match shrink_cut(&m.msg.text(), max) {
            Some(c) => c,
            None => {
                let (name, what) = match (&m.msg.role, m.msg.tool_name()) {
                    (Role::Tool, Some(tool)) => (
                        format!(
                            "output-{tool}-{}.txt",
                            m.msg.tool_call_id().unwrap_or("call")
                        ),
                        format!("output of {tool}"),
                    ),
                    _ => ("message.txt".to_string(), "user's message".to_string()),
                };
                let session = self.state_session();
                self.agent
                    .fit_text(&session, &name, &what, &m.msg.text(), max)
            }
        };
        if cut.len() >= len {
            return Ok(false);
        }
        let (row, thinking) = (m.id, m.msg.thinking().map(String::from));
        if let Some(store) = self.conv.store()
            && row > 0
        {
            store.update_content(&[row], &cut, thinking.as_deref())?;
        }
        self.conv.context[idx].msg.set_text(cut);
        self.tracker.counted_len = None;
        Ok(true)
    }

    /// Squeezes the turn until `req` would pass the window check (or
    /// nothing is left to cut); true when something was cut.
    pub(super) async fn squeeze_to_fit(&mut self, notes: &[String]) -> Result<bool, AgentError> {
        let mut cut = false;
        for _ in 0..MAX_CUTS {
            let req = self.request(self.messages(notes), true);
            if self.check_room(&req).is_ok() || !self.squeeze_turn()? {
                break;
            }
            cut = true;
            self.count_next().await;
        }
        Ok(cut)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_text_keeps_its_note_and_shrinks_around_it() {
        let head: String = (0..100).map(|i| format!("head line {i}\n")).collect();
        let tail: String = (0..100).map(|i| format!("tail line {i}\n")).collect();
        let note = "\n\n[navi: the user's message is 99999 bytes; the full text is in /x/message.txt.]\n\n";
        let text = format!("{head}{note}{tail}");
        let out = shrink_cut(&text, text.len() / 2).unwrap();
        assert!(out.len() <= text.len() / 2 + 40, "{}", out.len());
        assert!(out.contains(note));
        assert!(out.starts_with("head line 0\n"));
        assert!(out.ends_with("tail line 99\n"));
        assert!(shrink_cut("no note here", 3).is_none());
        assert!(shrink_cut(&text, text.len() * 2).is_none());
    }
}
