//! The repetition guard: notices a model that has been emitting the same
//! passage over and over (a runaway loop small local models fall into) so
//! the call can be stopped instead of running to the token cap.
//!
//! Invariants:
//! - Cheap and incremental: the text is checked at most once per
//!   [`CHECK_EVERY`] new bytes, and only its tail is looked at.
//! - It fires only on exact repetition: the last [`MIN_STRETCH`] bytes (and
//!   at least [`MIN_REPEATS`] whole periods) are one span repeated back to
//!   back. Code and tables repeat their shape, not their exact bytes (names,
//!   numbers and cells differ), so they do not trigger it.

/// Longest repeated span looked for, in bytes.
pub(crate) const MAX_PERIOD: usize = 1_000;
/// How long the exact repetition must go on, in bytes (~500 tokens).
pub(crate) const MIN_STRETCH: usize = 2_000;
/// The span must repeat at least this many times.
pub(crate) const MIN_REPEATS: usize = 4;
const CHECK_EVERY: usize = 200;
/// Bytes of tail kept: enough for the longest period at its longest stretch.
const KEEP: usize = MAX_PERIOD * (MIN_REPEATS + 1) + MIN_STRETCH;

/// What the guard found.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Runaway {
    /// Length of the repeated span, in bytes.
    pub(crate) period: usize,
    /// Length of the repeating stretch, in bytes.
    pub(crate) stretch: usize,
}

#[derive(Debug, Default)]
pub(crate) struct RepetitionGuard {
    tail: Vec<u8>,
    since_check: usize,
}

impl RepetitionGuard {
    pub(crate) fn new() -> Self {
        Self::default()
    }

    /// Feeds new output; `Some` once the output has become a runaway loop.
    pub(crate) fn push(&mut self, piece: &str) -> Option<Runaway> {
        self.tail.extend_from_slice(piece.as_bytes());
        if self.tail.len() > 2 * KEEP {
            self.tail.drain(..self.tail.len() - KEEP);
        }
        self.since_check += piece.len();
        if self.since_check < CHECK_EVERY {
            return None;
        }
        self.since_check = 0;
        detect(&self.tail)
    }
}

/// The smallest period `p` such that the tail is `p`-periodic over a long
/// enough stretch, measured back from the end.
pub(crate) fn detect(text: &[u8]) -> Option<Runaway> {
    let n = text.len();
    for p in 1..=MAX_PERIOD.min(n / 2) {
        let need = MIN_STRETCH.max(p * MIN_REPEATS);
        if n < need + p {
            continue;
        }
        // text[i] == text[i - p] for every i in the last `need` bytes.
        if text[n - need..] == text[n - need - p..n - p] {
            let mut stretch = need;
            while stretch + p < n && text[n - stretch - 1] == text[n - stretch - 1 - p] {
                stretch += 1;
            }
            return Some(Runaway { period: p, stretch });
        }
    }
    None
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn feed(text: &str) -> Option<Runaway> {
        let mut g = RepetitionGuard::new();
        let mut hit = None;
        // Stream it in small pieces, like tokens.
        let bytes: Vec<char> = text.chars().collect();
        for chunk in bytes.chunks(7) {
            let s: String = chunk.iter().collect();
            if let Some(r) = g.push(&s) {
                hit = Some(r);
                break;
            }
        }
        hit
    }

    #[test]
    fn a_looping_sentence_is_caught() {
        let sentence = "The capital of France is Paris, which is also its largest city. ";
        let text = format!("Here is the answer. {}", sentence.repeat(80));
        let r = feed(&text).expect("runaway");
        assert_eq!(r.period, sentence.len());
        assert!(r.stretch >= MIN_STRETCH);
    }

    #[test]
    fn code_and_tables_are_not_runaways() {
        let mut code = String::from("fn table() -> Vec<u32> {\n    let mut v = Vec::new();\n");
        for i in 0..300 {
            code.push_str(&format!("    v.push({i} * {i} + 1); // entry {i}\n"));
        }
        code.push_str("    v\n}\n");
        assert_eq!(feed(&code), None);
        let mut table = String::from("| id | name | size |\n|---|---|---|\n");
        for i in 0..400 {
            table.push_str(&format!("| {i} | file_{i}.txt | {} KB |\n", i * 3 % 97));
        }
        assert_eq!(feed(&table), None);
        let prose = "Paris is the capital of France. ".repeat(3) + &"x".repeat(100);
        assert_eq!(feed(&prose), None);
    }

    #[test]
    fn one_character_runs_count_too() {
        assert!(feed(&"=".repeat(3000)).is_some());
        assert!(feed(&"=".repeat(80)).is_none());
    }
}
