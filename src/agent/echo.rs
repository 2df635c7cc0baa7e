//! The echo guard of the lean preset: a tiny model that reads navi's own
//! prompt back (Gemma 3 270M continues the first user turn, which its
//! template fills with the system prompt) never shows that text as its
//! answer (docs/small-models.md).
//!
//! Invariants:
//! - Word-level and fuzzy: the answer's words (lower case, punctuation
//!   dropped; a CJK character is a word of its own) are aligned with the
//!   prompt's words (system prompt and tool line, then the user's message)
//!   by an edit-distance score: a shared word gains, a changed, added or
//!   skipped word costs. A few changed words ("navi" → "a modeler") do not
//!   break an echo.
//! - Incremental and cheap: each complete answer word advances the live
//!   candidates (one row over the prompt's words each); a candidate starts
//!   at the answer's start, a sentence or line start, or a content word an
//!   echo could begin with, and ends once its score falls `DROP` below its
//!   best. Only the text a live candidate covers is held back; everything
//!   before it is shown at once.
//! - An echo is a candidate that reaches `CONFIRM`; one that repeats the
//!   whole user message from its first word (at the answer's or a line's
//!   start, or right after an echo); or a short sentence that opens like
//!   the system prompt ("You are a modeler." for "You are navi, a …").
//!   A quoted part of the user's message is not an echo (it may start only
//!   at its first word).
//! - The first echo at the start of the answer is dropped and the rest
//!   streams on (after an echo, up to [`QUARANTINE_WORDS`] are held: the
//!   model most likely loops). An echo after real text, or one that goes
//!   back in the prompt, stops the call (the model has looped) and is never
//!   shown; a few junk tokens between two echoes go with them.
//! - The caller shows [`ONLY_ECHO`] when nothing but echo was said, and
//!   stores exactly what was shown.
use super::echo_align::{
    Candidate, MAX_CANDIDATES, OPENING_WORDS, Reference, has_word, is_word_char, norm, word_spans,
};

/// Words after an echo held back (the model most likely loops)...
const QUARANTINE_WORDS: usize = 30;
/// ...and dropped with the next echo when they are this few (split at
/// white space: Gemma's junk is tokens like "言行model").
const JUNK_WORDS: usize = 3;
/// Said instead of an answer that was nothing but navi's own prompt.
pub(crate) const ONLY_ECHO: &str = "(The model only repeated navi's instructions and gave no answer; \
try rephrasing, or a larger model.)";

/// One answer word: its bytes in the text, normalised form, and whether a
/// sentence or line starts with it.
#[derive(Debug)]
struct Word {
    start: usize,
    end: usize,
    norm: String,
    opens: bool,
    /// It starts the answer or a line.
    line: bool,
}

/// The echo being read: answer words `start..=end`, up to prompt word
/// `prompt_end`.
#[derive(Debug)]
struct Echo {
    start: usize,
    end: usize,
    prompt_end: usize,
}

impl Echo {
    /// Whether echo candidate `c` reads on in this echo: it overlaps it, or
    /// follows it in the prompt (the persona, then the question); an echo
    /// that goes back in the prompt is the model looping.
    fn continued_by(&self, c: &Candidate) -> bool {
        c.echo_start() <= self.end || c.peak_from + 2 >= self.prompt_end
    }

    fn absorb(&mut self, c: &Candidate) {
        self.start = self.start.min(c.echo_start());
        self.end = self.end.max(c.peak_at);
        self.prompt_end = self.prompt_end.max(c.peak_end);
    }
}

/// What one piece of streamed text gives.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Step {
    /// Text to show now.
    pub(crate) show: String,
    /// The model went back into the prompt: stop the call.
    pub(crate) stop: bool,
}

/// The guard over one streamed answer.
#[derive(Debug)]
pub(crate) struct EchoGuard {
    reference: Reference,
    text: String,
    /// Bytes of `text` decided (shown or dropped).
    released: usize,
    /// Words are complete up to here.
    scanned: usize,
    words: Vec<Word>,
    cands: Vec<Candidate>,
    /// The echo being read: (first word, last word).
    echo: Option<Echo>,
    /// The word right after a dropped echo.
    after_echo: Option<usize>,
    /// Punctuation and space after a dropped echo are dropped too.
    skip_gap: bool,
    shown: String,
    echoes: u32,
    stopped: bool,
}

impl EchoGuard {
    pub(crate) fn new(reference: Reference) -> EchoGuard {
        EchoGuard {
            reference,
            text: String::new(),
            released: 0,
            scanned: 0,
            words: Vec::new(),
            cands: Vec::new(),
            echo: None,
            after_echo: None,
            skip_gap: false,
            shown: String::new(),
            echoes: 0,
            stopped: false,
        }
    }

    /// Feeds a piece of the answer.
    pub(crate) fn push(&mut self, piece: &str) -> Step {
        if self.stopped {
            return Step::default();
        }
        if self.reference.is_empty() {
            self.shown.push_str(piece);
            return Step {
                show: piece.to_string(),
                stop: false,
            };
        }
        self.text.push_str(piece);
        let before = self.shown.len();
        let base = self.scanned;
        for (s, e) in word_spans(&self.text[base..], false) {
            self.add_word(base + s, base + e);
            if self.stopped {
                break;
            }
        }
        if !self.stopped {
            let pending = self.pending_start();
            self.release_to(self.hold_from().min(pending));
        }
        Step {
            show: self.shown[before..].to_string(),
            stop: self.stopped,
        }
    }

    /// The end of the answer: what is still held and not echo.
    pub(crate) fn finish(&mut self) -> String {
        let before = self.shown.len();
        if self.stopped || self.reference.is_empty() {
            return String::new();
        }
        if self.scanned < self.text.len() {
            let base = self.scanned;
            for (s, e) in word_spans(&self.text[base..], true) {
                self.add_word(base + s, base + e);
                if self.stopped {
                    break;
                }
            }
        }
        // An echo cut off in a word (the token cap): that word goes with it.
        let last = self.words.len().saturating_sub(1);
        if let Some(echo) = self.echo.as_mut()
            && last == echo.end + 1
            && let Some(next) = self.reference.words.get(echo.prompt_end)
            && next.starts_with(self.words[last].norm.as_str())
            && self.text[self.words[last].start..].trim_end().len()
                == self.words[last].end - self.words[last].start
        {
            echo.end = last;
        }
        while !self.stopped && self.echo.is_some() {
            self.cands.clear();
            self.close_echo();
        }
        if !self.stopped {
            self.release_to(self.text.len());
        }
        self.shown[before..].to_string()
    }

    /// Echoes found and dropped.
    pub(crate) fn echoes(&self) -> u32 {
        self.echoes
    }

    /// The call was stopped at an echo.
    pub(crate) fn stopped(&self) -> bool {
        self.stopped
    }

    /// Everything the model said was echo.
    pub(crate) fn only_echo(&self) -> bool {
        self.echoes > 0 && !has_word(&self.shown)
    }

    fn add_word(&mut self, s: usize, e: usize) {
        let prev_end = self.words.last().map_or(0, |w| w.end);
        let gap = &self.text[prev_end.min(s)..s];
        let line = self.words.is_empty() || gap.contains('\n');
        let opens = line || gap.contains(['.', '!', '?', ':', ';']);
        self.words.push(Word {
            start: s,
            end: e,
            norm: norm(&self.text[s..e]),
            opens,
            line,
        });
        self.scanned = e;
        self.process(self.words.len() - 1);
    }

    /// Runs word `i` through the candidates.
    fn process(&mut self, i: usize) {
        if self.words[i].opens && self.close_openings(i) {
            return;
        }
        let glued = self.after_echo == Some(i);
        let w = &self.words[i];
        let spawn = glued || w.opens || self.reference.openers.contains(&w.norm);
        if spawn && self.cands.len() < MAX_CANDIDATES {
            let line = self.words[i].line;
            self.cands
                .push(Candidate::new(&self.reference, i, glued, line || glued));
        }
        let norm = self.words[i].norm.clone();
        let mut ended_echo = false;
        let mut k = 0;
        while k < self.cands.len() {
            if self.cands[k].at_line && i == self.cands[k].anchor + 2 {
                self.cands[k].opening = self.opens_like_prompt(i - 2);
            }
            let was = self.cands[k].confirmed;
            let alive = self.cands[k].advance(&self.reference, i, &norm);
            let c = &self.cands[k];
            if c.confirmed && !was {
                self.on_confirm(k);
                if self.stopped {
                    return;
                }
            }
            let c = &self.cands[k];
            if c.confirmed
                && let Some(echo) = self.echo.as_mut()
                && echo.continued_by(c)
            {
                echo.absorb(c);
            }
            if alive {
                k += 1;
            } else {
                ended_echo |= self.cands[k].confirmed;
                self.cands.remove(k);
            }
        }
        if ended_echo && !self.cands.iter().any(|c| c.confirmed) {
            self.cands.clear();
            self.close_echo();
        }
    }

    /// Whether answer words `i..i + 3` open like the system prompt: its
    /// first two words, then its third or fourth ("You are a modeler" for
    /// "You are navi, a helpful assistant").
    fn opens_like_prompt(&self, i: usize) -> bool {
        let r = &self.reference.words;
        let a = |k: usize| self.words.get(i + k).map(|w| w.norm.as_str());
        r.len() > 3
            && a(0) == Some(r[0].as_str())
            && a(1) == Some(r[1].as_str())
            && (a(2) == Some(r[2].as_str()) || a(2) == Some(r[3].as_str()))
    }

    /// A short sentence that opened like the prompt and ended (word `i`
    /// starts the next) with its candidate alive is an echo of the
    /// opening ("You are a river user in Germany."); the candidate reads
    /// on (the rest of the prompt may follow). Whether the call stopped.
    fn close_openings(&mut self, i: usize) -> bool {
        for k in 0..self.cands.len() {
            let c = &mut self.cands[k];
            if c.opening && !c.confirmed && i > c.anchor && i - c.anchor <= OPENING_WORDS {
                c.confirmed = true;
                c.peak_at = i - 1;
                c.first = c.anchor;
                self.on_confirm(k);
                if self.stopped {
                    return true;
                }
            }
        }
        false
    }

    /// Candidate `k` just became an echo.
    fn on_confirm(&mut self, k: usize) {
        let c = &self.cands[k];
        if let Some(echo) = self.echo.as_mut() {
            if echo.continued_by(c) {
                echo.absorb(c);
                return;
            }
            // The prompt again from an earlier point: drop the echo read
            // so far; this one is a loop.
            let (s, e) = (echo.start, echo.end);
            self.drop_echo(s, e);
        }
        let c = &self.cands[k];
        // Where a first echo starts: the earliest live candidate that still
        // reads as echo (Gemma rewrites the persona's first sentence). A
        // later one starts where it does; the junk rule below decides on
        // the words before it.
        let start = if self.echoes == 0 {
            self.cands
                .iter()
                .filter(|o| o.peak > 0.0)
                .map(Candidate::echo_start)
                .min()
                .unwrap_or(c.anchor)
        } else {
            c.echo_start()
        }
        .max(self.first_undecided())
        .min(self.words.len().saturating_sub(1));
        let Some(start_byte) = self.words.get(start).map(|w| w.start) else {
            return;
        };
        let before = &self.text[self.released.min(start_byte)..start_byte];
        if self.echoes > 0 || has_word(&self.shown) || has_word(before) {
            // Looped back into the prompt after an answer or an echo. A few
            // words between two echoes are the model's junk, not an answer.
            let junk = self.after_echo.is_some() && before.split_whitespace().count() <= JUNK_WORDS;
            if !junk {
                self.release_to(start_byte);
            }
            self.released = self.text.len();
            self.echoes += 1;
            self.stopped = true;
            self.cands.clear();
            return;
        }
        self.echo = Some(Echo {
            start,
            end: c.peak_at,
            prompt_end: c.peak_end,
        });
    }

    /// The first word not yet shown or dropped.
    fn first_undecided(&self) -> usize {
        self.words
            .iter()
            .position(|w| w.start >= self.released)
            .unwrap_or(self.words.len())
    }

    /// Drops the echo just read and reads on after it.
    fn close_echo(&mut self) {
        let Some(Echo {
            start: s, end: e, ..
        }) = self.echo.take()
        else {
            return;
        };
        self.drop_echo(s, e);
        // A lone token glued to the echo's last line ("Who wrote Hamlet?
        // mendatanguser") goes with it.
        let mut next = e + 1;
        if let (Some(w), Some(after)) = (self.words.get(next), self.words.get(next + 1)) {
            let before = &self.text[self.words[e].end..w.start];
            let gap = &self.text[w.end..after.start];
            if !before.contains('\n') && gap.contains('\n') && gap.trim().is_empty() {
                self.released = w.end;
                next += 1;
            }
        }
        self.after_echo = Some(next);
        // The words after it go through the candidates again.
        for i in next..self.words.len() {
            self.process(i);
            if self.stopped {
                return;
            }
        }
    }

    /// Drops answer words `s..=e` (an echo).
    fn drop_echo(&mut self, s: usize, e: usize) {
        self.echo = None;
        self.echoes += 1;
        self.release_to(self.words[s].start);
        self.released = self.released.max(self.words[e].end);
        self.skip_gap = true;
        self.after_echo = Some(e + 1);
    }

    /// Text is held from the earliest live candidate on.
    fn hold_from(&self) -> usize {
        // After an echo the model most likely loops: what follows waits.
        let quarantine = self
            .after_echo
            .filter(|a| self.words.len().saturating_sub(*a) < QUARANTINE_WORDS);
        let first = self
            .cands
            .iter()
            .map(|c| c.anchor)
            .chain(self.echo.as_ref().map(|e| e.start))
            .chain(quarantine)
            .min();
        first.map_or(usize::MAX, |i| self.words[i].start)
    }

    /// Where an unfinished word at the end begins (else the text's end).
    fn pending_start(&self) -> usize {
        let tail = &self.text[self.scanned..];
        match tail
            .char_indices()
            .rev()
            .take_while(|(_, c)| is_word_char(*c))
            .last()
        {
            Some((i, _)) => self.scanned + i,
            None => self.text.len(),
        }
    }

    /// Shows the text up to byte `to`.
    fn release_to(&mut self, to: usize) {
        if to <= self.released {
            return;
        }
        let mut piece = &self.text[self.released..to];
        if self.skip_gap {
            let word_at = piece.find(is_word_char);
            piece = &piece[word_at.unwrap_or(piece.len())..];
            if word_at.is_some() {
                self.skip_gap = false;
            }
            if self.shown.is_empty() {
                piece = piece.trim_start();
            }
        }
        self.shown.push_str(piece);
        self.released = to;
    }
}

/// The guard's text when the model repeated the prompt (for tests).
#[cfg(test)]
pub(crate) fn run_all(reference: Reference, pieces: &[&str]) -> (String, bool, u32) {
    let mut g = EchoGuard::new(reference);
    let mut out = String::new();
    for p in pieces {
        let step = g.push(p);
        out.push_str(&step.show);
        if step.stop {
            break;
        }
    }
    out.push_str(&g.finish());
    (out, g.stopped(), g.echoes())
}

#[cfg(test)]
#[path = "echo_tests.rs"]
mod tests;
