//! `AgentEvent`s as lines of text: shared by plain mode and `navi run`.
//!
//! Invariants:
//! - Output is append-only: nothing printed is ever moved over or redrawn,
//!   so it works on dumb terminals, over SSH, in pipes and screen readers.
//! - Every block (tool line, notice, thinking block) starts on a fresh line:
//!   the renderer tracks whether a line is open and on which stream, and
//!   closes it before writing anything else.
//! - With `color: false` no escape sequence is produced.
//! - Subagent events are indented by two spaces per nesting level.
pub(crate) mod highlight;
pub(crate) mod markdown;
mod plan;
pub(crate) mod style;
mod thinking;
mod tool_result;
mod whole;

use super::format::{args_preview, tokens_short};
use crate::protocol::{AgentEvent, AgentOrigin, PINNED_NOTE, TodoStatus};
pub(crate) use highlight::CodeStyle;
use markdown::Markdown;
use std::collections::HashMap;
pub(crate) use style::Palette;

/// Code highlighting as colour theme `name` asks for (its `syntax` key);
/// user themes in `config_dir/themes` first, then the built-in ones; `auto`
/// follows `COLORFGBG` (line mode never queries the terminal).
pub(crate) fn code_style_for(
    name: &str,
    config_dir: &std::path::Path,
) -> Result<CodeStyle, String> {
    let name = crate::ui::tui::background::theme_without_query(name);
    let theme = crate::ui::tui::theme::Theme::load(name, Some(config_dir), false)?;
    Ok(CodeStyle {
        syntax_theme: theme.syntax,
        depth: style::depth(),
    })
}

/// Where a piece of output goes: the answer (stdout) or progress (stdout in
/// plain mode, stderr for `navi run`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Stream {
    Answer,
    Info,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Piece {
    pub(crate) stream: Stream,
    pub(crate) text: String,
}

/// How thinking is shown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ThinkingView {
    /// Streamed in a dimmed, marked block.
    Full,
    /// One line per block: `thinking… 120 words: first words…`.
    Summary,
}

#[derive(Clone, Debug)]
pub(crate) struct LineOptions {
    pub(crate) color: bool,
    pub(crate) thinking: ThinkingView,
    /// Stream answer text as it arrives; otherwise print it at `stream_end`.
    pub(crate) live_answer: bool,
    /// Render the answer as terminal Markdown (only matters with colour).
    pub(crate) markdown: bool,
    /// How code blocks are highlighted (with colour and Markdown on).
    pub(crate) code: CodeStyle,
}

/// Who owns the line that is currently open.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Owner {
    Answer,
    Thinking(Option<String>),
    Summary(Option<String>),
    SubText(String),
    /// "planning… " waiting for its "done".
    Planning,
}

/// A thinking block seen in summary mode.
#[derive(Default)]
struct Summary {
    words: usize,
    text: String,
    /// The `thinking… ` opener was printed.
    shown: bool,
}

#[derive(Default)]
struct Usage {
    completion: u64,
    context: u64,
    window: u64,
}

pub(crate) struct LineRenderer {
    pub(crate) opts: LineOptions,
    pal: Palette,
    open: Option<(Stream, Owner)>,
    /// True while the open line has no text yet after its prefix.
    at_line_start: bool,
    md: Markdown,
    thinking_words: HashMap<Option<String>, Summary>,
    streamed_thinking: Vec<Option<String>>,
    todos: HashMap<u32, TodoStatus>,
    usage: Usage,
    model: String,
    answered: bool,
    saw_error: bool,
    saw_stop: bool,
    /// When the open planning phase began.
    planning_since: Option<std::time::Instant>,
}

fn indent(agent: &Option<AgentOrigin>) -> String {
    "  ".repeat(agent.as_ref().map_or(0, |a| a.depth as usize))
}

fn key(agent: &Option<AgentOrigin>) -> Option<String> {
    agent.as_ref().map(|a| a.id.clone())
}

impl LineRenderer {
    /// The model chosen by the last turn (or the one announced before, see
    /// [`set_model`](Self::set_model)).
    pub(crate) fn model(&self) -> &str {
        &self.model
    }

    /// A model already announced: its `model: …` line is not printed again.
    pub(crate) fn set_model(&mut self, model: &str) {
        self.model = model.to_string();
    }

    pub(crate) fn new(opts: LineOptions) -> Self {
        let md = Markdown::new(opts.color && opts.markdown, opts.code.clone());
        LineRenderer {
            pal: Palette::new(opts.color),
            opts,
            open: None,
            at_line_start: true,
            md,
            thinking_words: HashMap::new(),
            streamed_thinking: Vec::new(),
            todos: HashMap::new(),
            usage: Usage::default(),
            model: String::new(),
            answered: false,
            saw_error: false,
            saw_stop: false,
            planning_since: None,
        }
    }

    pub(crate) fn palette(&self) -> Palette {
        self.pal
    }

    /// Resets per-turn state (call before each turn).
    pub(crate) fn begin_turn(&mut self) {
        self.usage = Usage::default();
        self.answered = false;
        self.saw_error = false;
        self.saw_stop = false;
        self.md = Markdown::new(
            self.opts.color && self.opts.markdown,
            self.opts.code.clone(),
        );
    }

    /// Whether this turn showed an `error` / `stream_stopped` event.
    pub(crate) fn saw_error(&self) -> bool {
        self.saw_error
    }
    pub(crate) fn saw_stop(&self) -> bool {
        self.saw_stop
    }

    /// Closes any open line (before a prompt or other output).
    pub(crate) fn close(&mut self) -> Vec<Piece> {
        let mut out = Vec::new();
        self.break_line(&mut out);
        out
    }

    fn break_line(&mut self, out: &mut Vec<Piece>) {
        let Some((stream, owner)) = self.open.take() else {
            return;
        };
        let mut text = String::new();
        let newline = match owner {
            Owner::Answer => {
                text.push_str(&self.md.finish());
                !self.at_line_start || !text.is_empty()
            }
            Owner::Thinking(_) | Owner::SubText(_) => {
                if self.opts.color && !self.at_line_start {
                    text.push_str(style::RESET);
                }
                !self.at_line_start
            }
            Owner::Summary(_) | Owner::Planning => true,
        };
        if newline {
            text.push('\n');
        }
        self.at_line_start = true;
        out.push(Piece { stream, text });
    }

    fn line(&mut self, out: &mut Vec<Piece>, stream: Stream, text: String) {
        self.break_line(out);
        out.push(Piece {
            stream,
            text: text + "\n",
        });
    }

    /// Streams `delta` as lines each starting with `prefix`, in `sgr` style.
    fn prefixed(&mut self, out: &mut Vec<Piece>, owner: Owner, prefix: &str, delta: &str) {
        let mut text = String::new();
        let sgr = self.pal.open(style::DIM);
        for ch in delta.chars() {
            if self.at_line_start {
                if ch == '\n' {
                    continue;
                }
                text.push_str(sgr);
                text.push_str(prefix);
                self.at_line_start = false;
            }
            if ch == '\n' {
                if !sgr.is_empty() {
                    text.push_str(style::RESET);
                }
                self.at_line_start = true;
            }
            text.push(ch);
        }
        self.open = Some((Stream::Info, owner));
        out.push(Piece {
            stream: Stream::Info,
            text,
        });
    }

    /// The lines for one event.
    pub(crate) fn event(&mut self, ev: &AgentEvent) -> Vec<Piece> {
        // Model text, tool output and arguments reach the terminal with
        // their control characters shown, never interpreted.
        let clean = super::neutral::event(ev);
        let ev = clean.as_ref();
        let mut out = Vec::new();
        let p = self.pal;
        match ev {
            AgentEvent::StreamStart { .. } => {}
            AgentEvent::ThinkingDelta { delta, agent, .. } => {
                self.thinking_delta(&mut out, agent, delta);
            }
            AgentEvent::ThinkingEnd { agent, .. } => self.thinking_end(&mut out, agent),
            AgentEvent::TurnThinking {
                thinking, agent, ..
            } => {
                let k = key(agent);
                if let Some(i) = self.streamed_thinking.iter().position(|s| *s == k) {
                    self.streamed_thinking.remove(i);
                } else if !thinking.trim().is_empty() {
                    let end = AgentEvent::ThinkingEnd {
                        is_subagent: agent.is_some(),
                        agent: agent.clone(),
                    };
                    let delta = AgentEvent::ThinkingDelta {
                        delta: thinking.clone(),
                        is_subagent: agent.is_some(),
                        agent: agent.clone(),
                    };
                    out.extend(self.event(&delta));
                    out.extend(self.event(&end));
                    self.streamed_thinking.retain(|s| *s != k);
                }
            }
            AgentEvent::PlanReady { plan } => {
                self.line(&mut out, Stream::Info, p.bold("plan:"));
                for l in plan::plan_lines(plan) {
                    self.line(&mut out, Stream::Info, format!("  {l}"));
                }
            }
            AgentEvent::Planning { active: true } => {
                self.break_line(&mut out);
                self.planning_since = Some(std::time::Instant::now());
                out.push(Piece {
                    stream: Stream::Info,
                    text: p.dim("planning… "),
                });
                self.open = Some((Stream::Info, Owner::Planning));
                self.at_line_start = false;
            }
            AgentEvent::Planning { active: false } => {
                let secs = self
                    .planning_since
                    .take()
                    .map_or(0.0, |t| t.elapsed().as_secs_f64());
                let done = format!("done ({secs:.1} s)");
                if self.open.as_ref().map(|o| &o.1) == Some(&Owner::Planning) {
                    self.open = None;
                    self.at_line_start = true;
                    out.push(Piece {
                        stream: Stream::Info,
                        text: p.dim(&done) + "\n",
                    });
                } else {
                    self.line(&mut out, Stream::Info, p.dim(&format!("planning {done}")));
                }
            }
            AgentEvent::TodoUpdated { items } => self.todos(&mut out, items),
            AgentEvent::ToolStarted {
                tool, args, agent, ..
            } => {
                let who = agent
                    .as_ref()
                    .map(|a| p.dim(&format!("[{}] ", a.profile_id)))
                    .unwrap_or_default();
                let t = format!(
                    "{}{who}{} {}({})",
                    indent(agent),
                    p.cyan("→"),
                    p.bold(tool),
                    args_preview(args, 100)
                );
                self.line(&mut out, Stream::Info, t);
            }
            AgentEvent::ToolCall {
                tool,
                result,
                success,
                agent,
                display,
                ..
            } => {
                let mark = if *success {
                    p.green("✓")
                } else {
                    p.red("✗")
                };
                // A failure says what to do about it: show more of it.
                let max = if *success { 120 } else { 400 };
                let sum = tool_result::summary(display.as_ref(), result, max);
                let t = format!("{}{mark} {tool}: {sum}", indent(agent));
                self.line(&mut out, Stream::Info, t);
                // The sandbox stopped it: the user sees why, not only the model.
                for l in tool_result::sandbox_lines(result) {
                    let t = format!("{}  {}", indent(agent), p.yellow(&l));
                    self.line(&mut out, Stream::Info, t);
                }
            }
            AgentEvent::ToolProgress {
                tool,
                elapsed_ms,
                progress,
                total,
                message,
                ..
            } => {
                let what = crate::mcp::progress::describe(
                    Some(*elapsed_ms),
                    *progress,
                    *total,
                    message.as_deref(),
                );
                let t = p.dim(&format!("  … {tool}: {what}"));
                self.line(&mut out, Stream::Info, t);
            }
            AgentEvent::ApprovalRequest { .. } => self.break_line(&mut out),
            AgentEvent::StreamDelta { delta, agent, .. } => match agent {
                Some(a) => {
                    let prefix = format!("{}  ", indent(agent));
                    let owner = Owner::SubText(a.id.clone());
                    if self.open.as_ref().map(|o| &o.1) != Some(&owner) {
                        self.break_line(&mut out);
                    }
                    self.prefixed(&mut out, owner, &prefix, delta);
                }
                None if self.opts.live_answer => {
                    if self.open.as_ref().map(|o| &o.1) != Some(&Owner::Answer) {
                        self.break_line(&mut out);
                    }
                    self.answered = true;
                    let text = self.md.push(delta);
                    if !text.is_empty() {
                        self.at_line_start = text.ends_with('\n');
                    }
                    let open = !self.at_line_start || !self.md.is_idle();
                    self.open = open.then_some((Stream::Answer, Owner::Answer));
                    out.push(Piece {
                        stream: Stream::Answer,
                        text,
                    });
                }
                None => {}
            },
            AgentEvent::StreamEnd {
                content,
                context_tokens,
                max_context_tokens,
            } => {
                self.usage.context = *context_tokens;
                self.usage.window = *max_context_tokens;
                if self.opts.live_answer {
                    if self.open.as_ref().map(|o| &o.1) == Some(&Owner::Answer) {
                        self.break_line(&mut out);
                    } else {
                        let rest = self.md.finish();
                        if !rest.is_empty() {
                            out.push(Piece {
                                stream: Stream::Answer,
                                text: rest + "\n",
                            });
                        }
                    }
                } else {
                    self.answer(&mut out, content);
                }
            }
            AgentEvent::StreamStopped => {
                self.saw_stop = true;
                self.line(&mut out, Stream::Info, p.yellow("stopped"));
            }
            AgentEvent::TokenUsage {
                completion_tokens,
                context_tokens,
                max_context_tokens,
                ..
            } => {
                self.usage.completion += completion_tokens;
                self.usage.context = *context_tokens;
                self.usage.window = *max_context_tokens;
            }
            AgentEvent::ContextCompressed {
                messages_before,
                messages_after,
                ..
            } if messages_before == messages_after => {
                let t = format!(
                    "nothing to compact: the context ({messages_before} messages) holds only recent turns"
                );
                self.line(&mut out, Stream::Info, p.dim(&t));
            }
            AgentEvent::ContextCompressed {
                messages_before,
                messages_after,
                tokens_before,
                tokens_after,
                max_context_tokens,
            } => {
                self.usage.context = *tokens_after;
                if *max_context_tokens > 0 {
                    self.usage.window = *max_context_tokens;
                }
                let t = super::wording::compacted(
                    *messages_before,
                    *messages_after,
                    *tokens_before,
                    *tokens_after,
                );
                self.line(&mut out, Stream::Info, p.dim(&t));
            }
            AgentEvent::CompactionPlanned {
                summary,
                messages_replaced,
                turns_kept,
                pinned_kept,
                tokens_before,
                tokens_after,
            } => {
                for l in crate::app::words::preview_lines(
                    summary,
                    *messages_replaced,
                    *turns_kept,
                    *pinned_kept,
                    *tokens_before,
                    *tokens_after,
                ) {
                    self.line(&mut out, Stream::Info, p.cyan(&l));
                }
            }
            AgentEvent::ProfileSwitched {
                profile_id,
                profile_name,
            } => {
                let t = format!("profile switched to {profile_name} ({profile_id})");
                self.line(&mut out, Stream::Info, p.cyan(&t));
            }
            AgentEvent::ModelSelected { model, reason } => {
                if *model != self.model {
                    self.model = model.clone();
                    let t = format!("model: {reason}");
                    self.line(&mut out, Stream::Info, p.dim(&t));
                }
            }
            AgentEvent::UserSteer { message } => {
                let t = format!("steer (after the tool batch): {message}");
                self.line(&mut out, Stream::Info, p.dim(&t));
            }
            AgentEvent::FilesChanged { turn, files } => {
                let t = crate::app::words::files_line(*turn, files);
                self.line(&mut out, Stream::Info, p.cyan(&t));
                let hint = crate::app::words::FILES_HINT;
                self.line(&mut out, Stream::Info, p.dim(hint));
            }
            AgentEvent::Warning { message } => {
                self.line(
                    &mut out,
                    Stream::Info,
                    p.yellow(&format!("warning: {message}")),
                );
            }
            // Plain mode keeps the refused message itself (see `plain/turn.rs`).
            AgentEvent::InputReturned => {}
            AgentEvent::Error { message } => {
                self.saw_error = true;
                self.line(&mut out, Stream::Info, p.red(&format!("error: {message}")));
            }
            AgentEvent::UserMessage {
                message, pinned, ..
            } => {
                let t = format!("{}{}", p.bold("you> "), message.trim_end());
                self.line(&mut out, Stream::Info, t);
                if *pinned {
                    self.line(&mut out, Stream::Info, p.dim(PINNED_NOTE));
                }
            }
            AgentEvent::AgentMessage { content, pinned } => {
                self.answer(&mut out, content);
                if *pinned {
                    self.line(&mut out, Stream::Info, p.dim(PINNED_NOTE));
                }
            }
            AgentEvent::Notice { message } => {
                let t = format!("· {}", message.trim_end());
                self.line(&mut out, Stream::Info, p.dim(&t));
            }
            AgentEvent::ContextSummary { .. } => {
                self.line(
                    &mut out,
                    Stream::Info,
                    p.dim("· (summary of older context)"),
                );
            }
            AgentEvent::SubagentStarted { agent } => {
                let id = agent.id.strip_prefix("subagent_").unwrap_or(&agent.id);
                let t = format!(
                    "{}· subagent {} started ({})",
                    indent(&Some(agent.clone())),
                    &id[..6.min(id.len())],
                    agent.profile_id
                );
                self.line(&mut out, Stream::Info, p.dim(&t));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
