//! Token accounting: the server's own figures when it gives them (its count
//! of a request, its usage after a call), else an estimate that errs high:
//! ~4 characters per token of text, 6 tokens of framing per message (the
//! chat template's role markers), and tool schemas as a template renders
//! them into the prompt — JSON at ~3.5 characters per token, plus the lines
//! a template wraps each tool and the whole list in.
//!
//! The ratio real / estimated that a server's figures show is learnt and
//! applied to every later estimate (`scale`), so all figures follow the
//! server's count.
use crate::llm::{ChatMessage, ChatRequest, Role, ToolSchema, Usage};

/// 6 tokens of framing per message, in estimate characters.
pub(crate) const FRAMING_CHARS_PER_MESSAGE: usize = 24;
/// Tokens a chat template adds around the tool list (its instructions on
/// how to call a tool), once per request that has tools.
pub(crate) const TOOLS_PREAMBLE_TOKENS: u64 = 100;
/// Tokens a template adds around each tool's schema.
pub(crate) const PER_TOOL_TOKENS: u64 = 4;
/// Tokens a server may read beyond the new message of a turn and still
/// count as having kept the previous answer: the turn markers around it
/// and what a template rewrites at the answer's end.
const KEPT_SLACK: u64 = 16;

/// Estimated tokens of a list of messages.
pub(crate) fn estimate(messages: &[ChatMessage]) -> u64 {
    let chars: usize = messages
        .iter()
        .map(|m| {
            m.text().len()
                + m.thinking().map_or(0, |t| t.len())
                + m.tool_calls()
                    .map(|c| c.name.len() + c.arguments.to_string().len())
                    .sum::<usize>()
                + FRAMING_CHARS_PER_MESSAGE
        })
        .sum();
    (chars / 4) as u64
}

/// Estimated tokens of tool schemas as a chat template renders them into
/// the prompt: JSON (with the spaces templates put after `:` and `,`) at
/// ~3.5 characters per token, plus the template's framing per tool and once
/// around the list. Without tools, nothing.
pub(crate) fn estimate_tools(tools: &[ToolSchema]) -> u64 {
    if tools.is_empty() {
        return 0;
    }
    TOOLS_PREAMBLE_TOKENS + tools.iter().map(estimate_tool).sum::<u64>()
}

/// One tool's share of `estimate_tools` (without the list's preamble).
pub(crate) fn estimate_tool(tool: &ToolSchema) -> u64 {
    let text = tool.to_wire().to_string();
    // Compact JSON has no spaces after separators; templates add them.
    let separators = text.matches([':', ',']).count();
    ((text.len() + separators) as u64 * 2).div_ceil(7) + PER_TOOL_TOKENS
}

/// Estimated tokens of a whole request: messages plus tool schemas.
pub(crate) fn estimate_request(messages: &[ChatMessage], tools: &[ToolSchema]) -> u64 {
    estimate(messages) + estimate_tools(tools)
}

/// Estimates are scaled by what the server's real counts showed: up for a
/// tokenizer that needs more tokens than the estimate, down (not below
/// `MIN_RATIO`) where the estimate's margins were too generous.
pub(crate) const MAX_RATIO: f64 = 2.0;
pub(crate) const MIN_RATIO: f64 = 0.5;

/// The ratio as it is applied: clamped, 1.0 when not a number.
pub(crate) fn clamp_ratio(ratio: f64) -> f64 {
    if ratio.is_finite() {
        ratio.clamp(MIN_RATIO, MAX_RATIO)
    } else {
        1.0
    }
}

/// `estimate` scaled by a learned ratio (clamped to MIN_RATIO..=MAX_RATIO).
pub(crate) fn scale(estimate: u64, ratio: f64) -> u64 {
    (estimate as f64 * clamp_ratio(ratio)).ceil() as u64
}

/// Characters of plain text that make about `tokens` real tokens at
/// `ratio` (the inverse of `scale` over the ~4 characters per token).
pub(crate) fn chars_for(tokens: u64, ratio: f64) -> usize {
    (tokens as f64 * 4.0 / clamp_ratio(ratio)) as usize
}

/// The ratio that makes `estimate` scale to the server's `real` count.
pub(crate) fn ratio_of(real: u64, estimate: u64) -> Option<f64> {
    (estimate > 0 && real > 0).then(|| clamp_ratio(real as f64 / estimate as f64))
}

/// Running totals for one run.
#[derive(Clone, Debug)]
pub(crate) struct TokenTracker {
    pub(crate) total_prompt: u64,
    pub(crate) total_completion: u64,
    /// Tokens the context occupies after the last call (the whole request:
    /// system prompt, tools, history, plus the answer).
    pub(crate) context_tokens: u64,
    pub(crate) window: u64,
    /// Real / estimated tokens, learned from the server's usage.
    pub(crate) ratio: f64,
    /// How many context messages `context_tokens` covers, when it was
    /// measured in this run (messages after that are estimated).
    pub(crate) measured_len: Option<usize>,
    /// The server's count of the base request (system message and tools),
    /// with the estimate it was counted for: (estimate, count).
    pub(crate) base_count: Option<(u64, u64)>,
    /// Context length when the server last counted the next request.
    pub(crate) counted_len: Option<usize>,
    /// The first call of this run, after a plain question and answer, on
    /// a server that reports its prompt cache: whether it read only the
    /// new message (`Some(true)`) or the previous answer again
    /// (`cache_warm.rs`).
    pub(crate) first_reuse: Option<bool>,
    warned: bool,
}

impl Default for TokenTracker {
    fn default() -> Self {
        TokenTracker {
            total_prompt: 0,
            total_completion: 0,
            context_tokens: 0,
            window: 0,
            ratio: 1.0,
            measured_len: None,
            base_count: None,
            counted_len: None,
            first_reuse: None,
            warned: false,
        }
    }
}

impl TokenTracker {
    pub(crate) fn new(window: u64, context_tokens: u64) -> Self {
        TokenTracker {
            window,
            context_tokens,
            ..Default::default()
        }
    }

    /// Records one call: server usage if given, else the estimate of the
    /// whole request (messages and tools) plus the answer.
    pub(crate) fn record(&mut self, usage: Option<Usage>, req: &ChatRequest, answer: &ChatMessage) {
        let est_prompt = estimate_request(&req.messages, &req.tools);
        match usage {
            Some(u) if u.prompt_tokens > 0 => {
                if self.total_prompt == 0 && u.cache_read_tokens > 0 {
                    self.first_reuse = self.answer_kept(&req.messages, u);
                }
                self.total_prompt += u.prompt_tokens;
                self.total_completion += u.completion_tokens;
                self.context_tokens = u.prompt_tokens + u.completion_tokens;
                if let Some(r) = ratio_of(u.prompt_tokens, est_prompt) {
                    self.ratio = r;
                }
            }
            _ => {
                let p = scale(est_prompt, self.ratio);
                let c = scale(estimate(std::slice::from_ref(answer)), self.ratio);
                self.total_prompt += p;
                self.total_completion += c;
                self.context_tokens = p + c;
            }
        }
    }

    /// Whether a call that follows a plain answer (user, assistant, then
    /// the new message and notes) read no more than the new part; `None`
    /// for any other shape (after tools, or a first message).
    fn answer_kept(&self, messages: &[ChatMessage], u: Usage) -> Option<bool> {
        let last = messages.iter().rposition(|m| m.role == Role::Assistant)?;
        let answer = &messages[last];
        let asked = messages.get(last.checked_sub(1)?)?;
        if answer.has_tool_calls() || asked.role != Role::User {
            return None;
        }
        let new = self.scaled(estimate(&messages[last + 1..]));
        let read = u.prompt_tokens.saturating_sub(u.cache_read_tokens);
        Some(read <= new + new / 2 + KEPT_SLACK)
    }

    /// A scaled estimate, in the units of `context_tokens`.
    pub(crate) fn scaled(&self, estimate: u64) -> u64 {
        scale(estimate, self.ratio)
    }

    pub(crate) fn fraction(&self) -> f64 {
        if self.window == 0 {
            return 0.0;
        }
        self.context_tokens as f64 / self.window as f64
    }

    /// True once, the first time use crosses `threshold`.
    pub(crate) fn should_warn(&mut self, threshold: f64) -> bool {
        if self.window > 0 && !self.warned && self.fraction() >= threshold {
            self.warned = true;
            return true;
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_first_call_after_a_plain_answer_tells_whether_the_server_kept_it() {
        let req = |msgs: Vec<ChatMessage>| ChatRequest::new("m", msgs);
        let plain = req(vec![
            ChatMessage::system("be brief"),
            ChatMessage::user("Who wrote Hamlet?"),
            ChatMessage::assistant("Shakespeare. ".repeat(40)),
            ChatMessage::user("And Macbeth?"),
        ]);
        let usage = |prompt, cached| Usage {
            prompt_tokens: prompt,
            completion_tokens: 5,
            cache_read_tokens: cached,
            ..Usage::default()
        };
        let answer = ChatMessage::assistant("Also Shakespeare.");
        let seen = |req: &ChatRequest, u: Usage| {
            let mut t = TokenTracker::new(4096, 300);
            t.record(Some(u), req, &answer);
            t.first_reuse
        };
        // Only the new message (and its turn markers) read: kept.
        assert_eq!(seen(&plain, usage(300, 290)), Some(true));
        // The 160-token answer read again: not kept.
        assert_eq!(seen(&plain, usage(300, 64)), Some(false));
        // No cache figure, or not the first call of the run: nothing said.
        assert_eq!(seen(&plain, usage(300, 0)), None);
        let mut t = TokenTracker::new(4096, 300);
        t.record(Some(usage(100, 0)), &plain, &answer);
        t.record(Some(usage(300, 64)), &plain, &answer);
        assert_eq!(t.first_reuse, None);
        // After a tool call the shape says nothing about answers.
        let call = crate::llm::ToolCall {
            id: "c1".into(),
            name: "terminal".into(),
            arguments: serde_json::json!({"command": "ls"}),
        };
        let mut asked = ChatMessage::assistant("");
        asked.set_tool_calls(vec![call.clone()]);
        let tools = req(vec![
            ChatMessage::user("list files"),
            asked,
            ChatMessage::tool_result(&call, "a b c"),
        ]);
        assert_eq!(seen(&tools, usage(300, 64)), None);
    }

    #[test]
    fn estimate_counts_chars_and_framing() {
        let msgs = vec![
            ChatMessage::user("a".repeat(400)),
            ChatMessage::assistant(""),
        ];
        // (400 + 24 + 0 + 24) / 4
        assert_eq!(estimate(&msgs), 112);
    }

    #[test]
    fn tools_cost_more_than_their_json_over_four() {
        assert_eq!(estimate_tools(&[]), 0);
        let t = ToolSchema {
            name: "todo".into(),
            description: "Keeps a list of steps".into(),
            parameters: serde_json::json!({"type": "object", "properties": {"op": {"type": "string"}}}),
        };
        let json = t.to_wire().to_string().len() as u64;
        let one = estimate_tools(std::slice::from_ref(&t));
        assert!(
            one > json / 4 + TOOLS_PREAMBLE_TOKENS,
            "{one} for {json} chars"
        );
        let two = estimate_tools(&[t.clone(), t]);
        assert_eq!(two - one, one - TOOLS_PREAMBLE_TOKENS);
    }

    #[test]
    fn server_usage_wins_and_warns_once() {
        let mut t = TokenTracker::new(1000, 0);
        let u = Usage {
            prompt_tokens: 790,
            completion_tokens: 20,
            ..Usage::default()
        };
        let req = ChatRequest::new("m", vec![ChatMessage::user("y".repeat(400))]);
        t.record(Some(u), &req, &ChatMessage::assistant("x"));
        assert_eq!(t.context_tokens, 810);
        assert!(t.should_warn(0.8));
        assert!(!t.should_warn(0.8));
        // 790 real tokens for ~104 estimated: the ratio is capped.
        assert_eq!(t.ratio, MAX_RATIO);
        assert_eq!(t.scaled(100), 200);
    }

    #[test]
    fn scale_is_clamped_and_ignores_nan() {
        assert_eq!(scale(100, 0.8), 80);
        assert_eq!(scale(100, 0.1), 50);
        assert_eq!(scale(100, f64::NAN), 100);
        assert_eq!(scale(100, 1.5), 150);
        assert_eq!(scale(100, 9.0), 200);
        assert_eq!(ratio_of(0, 10), None);
        assert_eq!(ratio_of(120, 100), Some(1.2));
    }
}
