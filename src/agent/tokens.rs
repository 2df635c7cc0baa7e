//! Token accounting: the server's usage when it reports one, else an estimate
//! of ~4 characters per token plus 16 characters of framing per message.
use crate::llm::{ChatMessage, ToolSchema, Usage};

pub const FRAMING_CHARS_PER_MESSAGE: usize = 16;

/// Estimated tokens of a list of messages.
pub fn estimate(messages: &[ChatMessage]) -> u64 {
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
pub fn estimate_tools(tools: &[ToolSchema]) -> u64 {
    let chars: usize = tools.iter().map(|t| t.to_wire().to_string().len()).sum();
    (chars / 4) as u64
}

/// Estimated tokens of a whole request: messages plus tool schemas.
pub fn estimate_request(messages: &[ChatMessage], tools: &[ToolSchema]) -> u64 {
    estimate(messages) + estimate_tools(tools)
}

/// Running totals for one run.
#[derive(Clone, Debug, Default)]
pub struct TokenTracker {
    pub total_prompt: u64,
    pub total_completion: u64,
    /// Tokens the context occupies after the last call.
    pub context_tokens: u64,
    pub window: u64,
    warned: bool,
}

impl TokenTracker {
    pub fn new(window: u64, context_tokens: u64) -> Self {
        TokenTracker {
            window,
            context_tokens,
            ..Default::default()
        }
    }

    /// Records one call: server usage if given, else the estimate.
    pub fn record(&mut self, usage: Option<Usage>, request: &[ChatMessage], answer: &ChatMessage) {
        match usage {
            Some(u) if u.prompt_tokens > 0 => {
                self.total_prompt += u.prompt_tokens;
                self.total_completion += u.completion_tokens;
                self.context_tokens = u.prompt_tokens + u.completion_tokens;
            }
            _ => {
                let p = estimate(request);
                let c = estimate(std::slice::from_ref(answer));
                self.total_prompt += p;
                self.total_completion += c;
                self.context_tokens = p + c;
            }
        }
    }

    pub fn fraction(&self) -> f64 {
        if self.window == 0 {
            return 0.0;
        }
        self.context_tokens as f64 / self.window as f64
    }

    /// True once, the first time use crosses `threshold`.
    pub fn should_warn(&mut self, threshold: f64) -> bool {
        if !self.warned && self.fraction() >= threshold {
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
        t.record(Some(u), &[], &ChatMessage::assistant("x"));
        assert_eq!(t.context_tokens, 810);
        assert!(t.should_warn(0.8));
        assert!(!t.should_warn(0.8));
    }
}
