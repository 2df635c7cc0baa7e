//! Thinking in line mode: streamed in full (`│ ` lines) or as a one-line
//! summary (`thinking… N words: …`), per agent.
use super::{LineRenderer, Owner, Piece, Stream, Summary, ThinkingView, indent, key};
use crate::protocol::AgentOrigin;
use crate::ui::format::preview;

impl LineRenderer {
    pub(super) fn thinking_delta(
        &mut self,
        out: &mut Vec<Piece>,
        agent: &Option<AgentOrigin>,
        delta: &str,
    ) {
        let p = self.pal;
        let k = key(agent);
        if !self.streamed_thinking.contains(&k) {
            self.streamed_thinking.push(k.clone());
        }
        match self.opts.thinking {
            ThinkingView::Full => {
                let owner = Owner::Thinking(k);
                if self.open.as_ref().map(|o| &o.1) != Some(&owner) {
                    let head = format!("{}thinking:", indent(agent));
                    self.line(out, Stream::Info, p.dim(&head));
                }
                let prefix = format!("{}│ ", indent(agent));
                self.prefixed(out, owner, &prefix, delta);
            }
            ThinkingView::Summary => {
                let owner = Owner::Summary(k.clone());
                let entry = self.thinking_words.entry(k).or_default();
                entry.words += delta.split_whitespace().count();
                entry.text.push_str(delta);
                if entry.words > 0 && !entry.shown {
                    entry.shown = true;
                    self.break_line(out);
                    let text = p.dim(&format!("{}thinking… ", indent(agent)));
                    out.push(Piece {
                        stream: Stream::Info,
                        text,
                    });
                    self.open = Some((Stream::Info, owner));
                }
            }
        }
    }

    pub(super) fn thinking_end(&mut self, out: &mut Vec<Piece>, agent: &Option<AgentOrigin>) {
        let p = self.pal;
        let k = key(agent);
        match self.opts.thinking {
            ThinkingView::Full => {
                if self.open.as_ref().map(|o| &o.1) == Some(&Owner::Thinking(k)) {
                    self.break_line(out);
                }
            }
            ThinkingView::Summary => {
                let Summary { words, text, .. } =
                    self.thinking_words.remove(&k).unwrap_or_default();
                let owner = Owner::Summary(k);
                let note = format!("{words} words: {}", preview(&text, 60));
                if self.open.as_ref().map(|o| &o.1) == Some(&owner) {
                    out.push(Piece {
                        stream: Stream::Info,
                        text: p.dim(&note) + "\n",
                    });
                    self.open = None;
                } else if words > 0 {
                    let t = format!("{}thinking… {note}", indent(agent));
                    self.line(out, Stream::Info, p.dim(&t));
                }
            }
        }
    }
}
