//! The alignment behind the echo guard (`echo.rs`): the prompt's words,
//! and one candidate echo scored against them word by word (an
//! edit-distance row over the prompt: a shared word gains its weight, a
//! changed, added or skipped word costs).
use std::collections::HashSet;

/// A word the answer has that the prompt does not.
pub(super) const INS: f32 = 1.0;
/// A prompt word the answer changed.
pub(super) const SUB: f32 = 1.0;
/// A prompt word the answer skipped.
pub(super) const DEL: f32 = 0.5;
/// A candidate ends this far below its best score.
pub(super) const DROP: f32 = 3.5;
/// The score that makes a candidate an echo (about seven shared words).
pub(super) const CONFIRM: f32 = 6.0;
/// The whole user message repeated: this share of its weight at least...
pub(super) const SEGMENT_SHARE: f32 = 0.7;
/// ...and a message of at least this many words.
pub(super) const SEGMENT_WORDS: usize = 3;
/// Prompt words kept: the system prompt's first ones, the user message's.
pub(super) const MAX_SYSTEM_WORDS: usize = 2_000;
pub(super) const MAX_USER_WORDS: usize = 400;
/// Live candidates at most; an unconfirmed one held this many words ends.
pub(super) const MAX_CANDIDATES: usize = 12;
pub(super) const MAX_HOLD_WORDS: usize = 60;
/// Junk words right after an echo that cost nothing before the next one.
pub(super) const GLUE_WORDS: usize = 3;
/// A sentence that opens like the prompt ("You are a modeler.") is an
/// echo up to this long.
pub(super) const OPENING_WORDS: usize = 20;
pub(super) const NONE: u32 = u32::MAX;

/// Words that say little alone: half weight.
pub(super) const COMMON: &[&str] = &[
    "a", "an", "the", "of", "to", "in", "on", "at", "is", "are", "was", "be", "and", "or", "it",
    "its", "for", "with", "as", "by", "this", "that", "you", "your", "i", "me", "my", "we", "what",
    "who", "how", "which", "do", "does", "can", "will", "then", "than", "so", "no", "not", "if",
    "from", "use",
];

/// The prompt text an answer is checked against.
#[derive(Debug, Default)]
pub(crate) struct Reference {
    pub(super) words: Vec<String>,
    pub(super) weights: Vec<f32>,
    /// An echo may begin at this word.
    pub(super) start: Vec<bool>,
    /// Content words an echo may begin with.
    pub(super) openers: HashSet<String>,
    /// The user message's words (a range of `words`).
    pub(super) user: Option<(usize, usize)>,
    pub(super) user_weight: f32,
}

impl Reference {
    /// `system`: the system prompt as sent; `user`: the user's message.
    pub(crate) fn new(system: &str, user: &str) -> Reference {
        let mut r = Reference::default();
        for w in word_spans(system, true).into_iter().take(MAX_SYSTEM_WORDS) {
            r.add(norm(&system[w.0..w.1]), true);
        }
        let first = r.words.len();
        for (n, w) in word_spans(user, true)
            .into_iter()
            .take(MAX_USER_WORDS)
            .enumerate()
        {
            r.add(norm(&user[w.0..w.1]), n == 0);
        }
        if r.words.len() > first {
            r.user = Some((first, r.words.len()));
            r.user_weight = r.weights[first..].iter().sum();
        }
        r
    }

    pub(super) fn add(&mut self, w: String, start: bool) {
        let weight = weight(&w);
        if start && weight >= 1.0 {
            self.openers.insert(w.clone());
        }
        self.words.push(w);
        self.weights.push(weight);
        self.start.push(start);
    }

    pub(super) fn is_empty(&self) -> bool {
        self.words.is_empty()
    }

    /// What answer word `a` scores against prompt word `j`, for an
    /// alignment that began at prompt word `from` and has shared a word
    /// (`shared`). An echo of the user's message begins at its first word:
    /// a quoted part of it shares nothing.
    pub(super) fn score(&self, a: &str, j: usize, from: u32, shared: bool) -> f32 {
        if let Some((us, _)) = self.user
            && j > us
            && from as usize >= us
            && !shared
        {
            return -SUB;
        }
        let r = &self.words[j];
        if a == r {
            self.weights[j]
        } else if similar(a, r) {
            self.weights[j] / 2.0
        } else {
            -SUB
        }
    }
}

/// One alignment state: its score, the prompt word it began at and the
/// answer word of its first shared word.
#[derive(Clone, Copy, Debug)]
pub(super) struct Cell {
    pub(super) score: f32,
    pub(super) from: u32,
    pub(super) first: u32,
}

pub(super) const DEAD: Cell = Cell {
    score: f32::NEG_INFINITY,
    from: NONE,
    first: NONE,
};

#[derive(Debug)]
pub(super) struct Candidate {
    /// The answer word it started at.
    pub(super) anchor: usize,
    /// Junk before it counts as echo too (it starts right after an echo).
    pub(super) glued: bool,
    /// It starts the answer or a line.
    pub(super) at_line: bool,
    /// `row[j]`: the best alignment of the answer words since `anchor`
    /// that has used the prompt up to word `j`.
    pub(super) row: Vec<Cell>,
    pub(super) peak: f32,
    /// It opens like the persona: it lives longer.
    pub(super) opening: bool,
    /// The answer word at the best score, and that alignment's first
    /// shared answer word.
    pub(super) peak_at: usize,
    /// The prompt words its best alignment covers (`peak_from..peak_end`).
    pub(super) peak_from: usize,
    pub(super) peak_end: usize,
    pub(super) first: usize,
    pub(super) confirmed: bool,
}

impl Candidate {
    pub(super) fn new(r: &Reference, anchor: usize, glued: bool, at_line: bool) -> Candidate {
        let m = r.words.len();
        let mut row = vec![DEAD; m + 1];
        for j in 0..=m {
            if j < m && r.start[j] {
                row[j] = Cell {
                    score: 0.0,
                    from: j as u32,
                    first: NONE,
                };
            }
            if j > 0 && row[j - 1].score - DEL > row[j].score {
                row[j] = Cell {
                    score: row[j - 1].score - DEL,
                    ..row[j - 1]
                };
            }
        }
        Candidate {
            anchor,
            glued,
            at_line,
            row,
            peak: 0.0,
            opening: false,
            peak_at: anchor,
            peak_from: 0,
            peak_end: 0,
            first: anchor,
            confirmed: false,
        }
    }

    /// Advances by answer word `i` (`a`); whether it is still alive.
    pub(super) fn advance(&mut self, r: &Reference, i: usize, a: &str) -> bool {
        let m = r.words.len();
        let mut next = vec![DEAD; m + 1];
        // Right after an echo, a few junk words before the next one are free.
        let ins = |c: &Cell| {
            if self.glued && c.first == NONE && i - self.anchor < GLUE_WORDS {
                0.0
            } else {
                INS
            }
        };
        next[0] = Cell {
            score: self.row[0].score - ins(&self.row[0]),
            ..self.row[0]
        };
        for j in 1..=m {
            let prev = self.row[j - 1];
            let s = r.score(a, j - 1, prev.from, prev.first != NONE);
            let mut best = Cell {
                score: prev.score + s,
                from: prev.from,
                first: if s > 0.0 && prev.first == NONE {
                    i as u32
                } else {
                    prev.first
                },
            };
            let stay = self.row[j].score - ins(&self.row[j]);
            if stay > best.score {
                best = Cell {
                    score: stay,
                    ..self.row[j]
                };
            }
            if next[j - 1].score - DEL > best.score {
                best = Cell {
                    score: next[j - 1].score - DEL,
                    ..next[j - 1]
                };
            }
            next[j] = best;
        }
        self.row = next;
        let (top_j, top) = self
            .row
            .iter()
            .copied()
            .enumerate()
            .max_by(|x, y| x.1.score.total_cmp(&y.1.score))
            .unwrap_or((0, DEAD));
        if top.score > self.peak {
            self.peak = top.score;
            self.peak_at = i;
            self.peak_from = top.from as usize;
            self.peak_end = top_j;
            self.first = if top.first == NONE {
                i
            } else {
                top.first as usize
            };
        }
        if self.peak >= CONFIRM {
            self.confirmed = true;
        }
        // The whole user message from its first word.
        if let Some((us, ue)) = r.user {
            let end = self.row[ue];
            let placed = self.glued || (self.at_line && end.first == self.anchor as u32);
            if !self.confirmed
                && placed
                && ue - us >= SEGMENT_WORDS
                && end.from == us as u32
                && end.score >= SEGMENT_SHARE * r.user_weight
            {
                self.confirmed = true;
                self.peak = self.peak.max(end.score);
                self.peak_at = i;
                self.peak_from = us;
                self.peak_end = ue;
                self.first = if end.first == NONE {
                    i
                } else {
                    end.first as usize
                };
            }
        }
        // A sentence that opens like the prompt is read to its end.
        let opening = self.opening && !self.confirmed && i - self.anchor < OPENING_WORDS;
        opening
            || top.score >= self.peak - DROP
                && (self.confirmed || i - self.anchor < MAX_HOLD_WORDS)
                && top.score > f32::NEG_INFINITY
    }

    /// The first answer word of its echo.
    pub(super) fn echo_start(&self) -> usize {
        if self.glued { self.anchor } else { self.first }
    }
}

pub(super) fn is_cjk(c: char) -> bool {
    matches!(c, '\u{3040}'..='\u{30ff}' | '\u{3400}'..='\u{4dbf}' | '\u{4e00}'..='\u{9fff}'
        | '\u{ac00}'..='\u{d7af}' | '\u{f900}'..='\u{faff}')
}

pub(super) fn is_word_char(c: char) -> bool {
    c.is_alphanumeric()
}

pub(super) fn has_word(s: &str) -> bool {
    s.chars().any(is_word_char)
}

/// The byte spans of the words of `text` (a CJK character is one word).
/// Without `to_end`, a word touching the end is left out (it may go on).
pub(super) fn word_spans(text: &str, to_end: bool) -> Vec<(usize, usize)> {
    let mut out = Vec::new();
    let mut start: Option<usize> = None;
    for (i, c) in text.char_indices() {
        if is_cjk(c) {
            if let Some(s) = start.take() {
                out.push((s, i));
            }
            out.push((i, i + c.len_utf8()));
        } else if is_word_char(c) {
            start.get_or_insert(i);
        } else if let Some(s) = start.take() {
            out.push((s, i));
        }
    }
    if let Some(s) = start
        && to_end
    {
        out.push((s, text.len()));
    }
    out
}

pub(super) fn norm(word: &str) -> String {
    word.to_lowercase()
}

pub(super) fn weight(word: &str) -> f32 {
    if COMMON.contains(&word) || word.chars().count() < 3 {
        0.5
    } else {
        1.0
    }
}

/// Two words that differ in their ending only ("helpful", "helper"; a
/// word with junk glued on, "hotiatrics" for "hot").
pub(super) fn similar(a: &str, b: &str) -> bool {
    let short = a.chars().count().min(b.chars().count());
    let common = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
    (short >= 3 && common == short) || (common >= 4 && common * 5 >= short * 3)
}
