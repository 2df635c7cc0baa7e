//! Token accounting: the server's usage when it reports one, else an estimate
//! of ~4 characters per token plus 16 characters of framing per message.
use crate::llm::{ChatMessage, ChatRequest, ToolSchema, Usage};

pub(crate) const FRAMING_CHARS_PER_MESSAGE: usize = 16;

/// Estimated tokens of a list of messages.
pub(crate) fn estimate(messages: &[ChatMessage]) -> u64 {
    let chars: usize = messages
        .iter()
        .map(|m| {
            m.content.len()
                + m.thinking.as_ref().map_or(0, String::len)
                + m.tool_calls
                    .iter()
                    .map(|c| c.name.len() + c.arguments.to_string().len())
                    .sum::<usize>()
                + FRAMING_CHARS_PER_MESSAGE
        })
        .sum();
    (chars / 4) as u64
}

/// Estimated tokens of tool schemas as they go on the wire (JSON text / 4).
pub(crate) fn estimate_tools(tools: &[ToolSchema]) -> u64 {
    let chars: usize = tools.iter().map(|t| t.to_wire().to_string().len()).sum();
    (chars / 4) as u64
}

/// Estimated tokens of a whole request: messages plus tool schemas.
pub(crate) fn estimate_request(messages: &[ChatMessage], tools: &[ToolSchema]) -> u64 {
    estimate(messages) + estimate_tools(tools)
}

/// Estimates are scaled up by what the server's real counts showed (a model
/// whose tokenizer needs more tokens than ~4 chars each); never scaled down,
/// so a scaled estimate is never below the plain one.
pub(crate) const MAX_RATIO: f64 = 2.0;

/// `estimate` scaled by a learned ratio (clamped to 1.0..=MAX_RATIO).
pub(crate) fn scale(estimate: u64, ratio: f64) -> u64 {
    let r = if ratio.is_finite() {
        ratio.clamp(1.0, MAX_RATIO)
    } else {
        1.0
    };
    (estimate as f64 * r).ceil() as u64
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
                self.total_prompt += u.prompt_tokens;
                self.total_completion += u.completion_tokens;
                self.context_tokens = u.prompt_tokens + u.completion_tokens;
                if est_prompt > 0 {
                    self.ratio = (u.prompt_tokens as f64 / est_prompt as f64).clamp(1.0, MAX_RATIO);
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
    fn estimate_counts_chars_and_framing() {
        let msgs = vec![
            ChatMessage::user("a".repeat(400)),
            ChatMessage::assistant(""),
        ];
        // (400 + 16 + 0 + 16) / 4
        assert_eq!(estimate(&msgs), 108);
    }

    #[test]
    fn server_usage_wins_and_warns_once() {
        let mut t = TokenTracker::new(1000, 0);
        let u = Usage {
            prompt_tokens: 790,
            completion_tokens: 20,
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
    fn scale_never_shrinks_and_ignores_nan() {
        assert_eq!(scale(100, 0.5), 100);
        assert_eq!(scale(100, f64::NAN), 100);
        assert_eq!(scale(100, 1.5), 150);
    }
}
