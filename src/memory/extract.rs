//! Extraction: a finished session's new messages → `category: key = value`
//! facts, via one model call with thinking off.
//!
//! Invariants: the model's answer is untrusted text — lines that are not
//! facts are skipped (and logged), never fatal; at most [`MAX_FACTS`] facts
//! are taken from one answer; the conversation sent is bounded (the latest
//! `[memory].max_messages` messages, each and all capped in size); a session
//! is marked extracted only after its facts are stored, and released (to be
//! tried again later) when the call fails.
use super::NewFact;
use super::store::{MemoryStore, Upserted};
use crate::config::{MemoryConfig, ThinkSetting};
use crate::llm::guard::{self, GuardConfig};
use crate::llm::{ChatChunk, ChatMessage, ChatRequest, LlmBackend, LlmError, Role};
use crate::session::StoreError;
use std::time::Duration;
use tokio_util::sync::CancellationToken;

/// Facts taken from one extraction answer at most.
pub(crate) const MAX_FACTS: usize = 40;
/// The generation cap of an extraction answer ([`MAX_FACTS`] short lines).
pub(crate) const MAX_ANSWER_TOKENS: u32 = 1_200;
/// One message is cut to this many characters in the extraction prompt.
const MESSAGE_CHARS: usize = 2_000;
/// The whole conversation text is cut to this many characters (newest kept).
const WINDOW_CHARS: usize = 24_000;
/// How long a claim holds before another process may take the session over.
const LEASE: Duration = Duration::from_secs(300);

pub(crate) const EXTRACTION_PROMPT: &str = "You maintain a long-term memory about the user. Read the conversation and list durable facts the user shared about themselves: identity, preferences, projects, environment (OS, tools, machines), recurring tasks. Skip passing details, secrets (passwords, keys, tokens) and anything only about the assistant.

Answer with one fact per line, exactly in this form, and nothing else:
category: key = value [#N]
where category and key are short lowercase words (use _ between words), value is brief, and N is the number of the message the fact comes from. Example:
environment: editor = helix [#12]
If there is nothing worth remembering, answer NONE.";

#[derive(Debug, thiserror::Error)]
pub(crate) enum ExtractError {
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Llm(#[from] LlmError),
}

/// What one pass did.
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct ExtractReport {
    /// Sessions extracted in this pass.
    pub(crate) sessions: Vec<String>,
    /// Stale sessions open in another navi, or that another process was
    /// already extracting.
    pub(crate) skipped_claimed: usize,
    pub(crate) added: usize,
    pub(crate) updated: usize,
    /// Lines of the answers that were not facts.
    pub(crate) malformed: usize,
    /// Sessions whose extraction failed (id, why); they are tried again later.
    pub(crate) failed: Vec<(String, String)>,
}

/// The result of parsing one answer.
#[derive(Debug, Default, PartialEq)]
pub(crate) struct Parsed {
    pub(crate) facts: Vec<NewFact>,
    pub(crate) malformed: Vec<String>,
}

fn clean_word(s: &str) -> Option<String> {
    let w = s
        .trim()
        .trim_matches(|c: char| c == '*' || c == '`' || c == '"')
        .trim()
        .to_lowercase()
        .replace([' ', '-'], "_");
    let ok = !w.is_empty()
        && w.len() <= 60
        && w.chars()
            .all(|c| c.is_alphanumeric() || c == '_' || c == '.');
    ok.then_some(w)
}

/// Parses `category: key = value [#N]` lines. Bullets and numbering are
/// tolerated; `NONE`, blank lines and prose are not facts. Within one answer
/// a repeated (category, key) keeps its last value.
pub(crate) fn parse(answer: &str, known_ids: &[i64]) -> Parsed {
    let mut out = Parsed::default();
    for raw in answer.lines() {
        let line = raw.trim();
        if line.is_empty() || line.eq_ignore_ascii_case("none") || line.starts_with("```") {
            continue;
        }
        let line = line
            .trim_start_matches(['-', '*', '•'])
            .trim_start_matches(|c: char| c.is_ascii_digit())
            .trim_start_matches(['.', ')'])
            .trim();
        let fact = (|| {
            let (cat, rest) = line.split_once(':')?;
            let (key, value) = rest.split_once('=')?;
            let (value, source) = match value.trim_end().strip_suffix(']') {
                Some(v) => match v.rsplit_once("[#") {
                    Some((v, n)) => (v, n.trim().parse::<i64>().ok()),
                    None => (value, None),
                },
                None => (value, None),
            };
            let value: String = value
                .trim()
                .trim_matches('"')
                .trim()
                .chars()
                .take(300)
                .collect();
            if value.is_empty() {
                return None;
            }
            Some(NewFact {
                category: clean_word(cat)?,
                key: clean_word(key)?,
                value,
                source_message: source.filter(|n| known_ids.contains(n)),
            })
        })();
        match fact {
            Some(f) => {
                out.facts
                    .retain(|g| !(g.category == f.category && g.key == f.key));
                out.facts.push(f);
            }
            None => out.malformed.push(raw.trim().chars().take(120).collect()),
        }
    }
    out
}

/// The conversation as the extraction call reads it: `[#id] user: text`,
/// newest messages kept when it is too long.
pub fn render_window(window: &[(i64, Role, String)]) -> String {
    let mut parts: Vec<String> = Vec::new();
    let mut used = 0;
    for (id, role, text) in window.iter().rev() {
        let mut t: String = text.chars().take(MESSAGE_CHARS).collect();
        if text.chars().count() > MESSAGE_CHARS {
            t.push_str(" […]");
        }
        let who = if *role == Role::User {
            "user"
        } else {
            "assistant"
        };
        let line = format!("[#{id}] {who}: {t}");
        used += line.len() + 2;
        if used > WINDOW_CHARS && !parts.is_empty() {
            break;
        }
        parts.push(line);
    }
    parts.reverse();
    parts.join("\n\n")
}

/// Everything one extraction pass needs.
pub(crate) struct Extractor<'a> {
    pub(crate) memory: &'a MemoryStore,
    pub(crate) backend: &'a dyn LlmBackend,
    pub(crate) model: &'a str,
    pub(crate) guard: &'a GuardConfig,
    pub(crate) config: &'a MemoryConfig,
    /// Who claims sessions (unique per process).
    pub(crate) owner: &'a str,
    pub(crate) cancel: &'a CancellationToken,
}

impl Extractor<'_> {
    /// Extracts every stale session except `exclude`.
    pub(crate) async fn run(&self, exclude: &[&str]) -> Result<ExtractReport, ExtractError> {
        let idle = (self.config.idle_minutes as i64).saturating_mul(60_000);
        let mut report = ExtractReport::default();
        for id in self.memory.stale_sessions(idle, exclude)? {
            if self.cancel.is_cancelled() {
                break;
            }
            // Open in another navi (a TUI left idle): it is not finished.
            if self.memory.open_elsewhere(&id) || !self.memory.claim(&id, self.owner, LEASE)? {
                report.skipped_claimed += 1;
                continue;
            }
            match self.one(&id, &mut report).await {
                Ok(last) => {
                    self.memory.finish(&id, self.owner, last)?;
                    report.sessions.push(id);
                }
                Err(e) => {
                    tracing::warn!("memory: extracting session {id} failed: {e}");
                    self.memory.release(&id, self.owner)?;
                    report.failed.push((id, e.to_string()));
                }
            }
        }
        if report.added + report.updated > 0 {
            self.memory.rebuild_summary()?;
        }
        Ok(report)
    }

    /// Extracts one claimed session; returns the last message id covered.
    async fn one(&self, id: &str, report: &mut ExtractReport) -> Result<i64, ExtractError> {
        let window = self.memory.window(id, self.config.max_messages)?;
        let last = self.memory.last_display_id(id)?;
        if !window.iter().any(|(_, r, _)| *r == Role::User) {
            return Ok(last);
        }
        let ids: Vec<i64> = window.iter().map(|(i, _, _)| *i).collect();
        let mut req = ChatRequest::new(
            self.model,
            vec![
                ChatMessage::system(EXTRACTION_PROMPT),
                ChatMessage::user(render_window(&window)),
            ],
        );
        req.temperature = Some(0.1);
        req.think = Some(ThinkSetting::Bool(false));
        // A fact line is short: the answer never needs more than this, and a
        // model that rambles is cut off instead of generating for minutes.
        req.max_tokens = Some(MAX_ANSWER_TOKENS);
        let mut stream = guard::open(self.backend, &req, self.guard, self.cancel).await?;
        let mut answer = String::new();
        while let Some(c) = stream.next().await {
            match c? {
                ChatChunk::Text(t) => answer.push_str(&t),
                ChatChunk::Done { .. } => break,
                _ => {}
            }
        }
        let parsed = parse(&answer, &ids);
        for bad in &parsed.malformed {
            tracing::warn!("memory: skipping a line that is not a fact (session {id}): {bad:?}");
        }
        report.malformed += parsed.malformed.len();
        if parsed.facts.len() > MAX_FACTS {
            tracing::warn!(
                "memory: session {id} gave {} facts; keeping the first {MAX_FACTS}",
                parsed.facts.len()
            );
        }
        let fallback = window
            .iter()
            .rev()
            .find(|(_, r, _)| *r == Role::User)
            .map(|(i, _, _)| *i);
        for mut f in parsed.facts.into_iter().take(MAX_FACTS) {
            f.source_message = f.source_message.or(fallback);
            match self.memory.upsert(&f, Some(id), self.config.auto_accept)? {
                Upserted::Added => report.added += 1,
                Upserted::Updated => report.updated += 1,
                Upserted::Unchanged | Upserted::Tombstoned => {}
            }
        }
        Ok(last)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_facts_and_skips_the_rest() {
        let answer = "Here are the facts:\nenvironment: editor = helix [#12]\n- home: City = Lyon\n\nNONE\nprefs: shell = fish [#999]\nbroken line = x\n: k = v\nprefs: shell = zsh [#12]";
        let p = parse(answer, &[12]);
        assert_eq!(p.facts.len(), 3);
        assert_eq!(p.facts[0].key, "editor");
        assert_eq!(p.facts[0].source_message, Some(12));
        assert_eq!(p.facts[1].key, "city");
        assert_eq!(p.facts[1].value, "Lyon");
        // Repeated key: the last value wins; an unknown message id is dropped.
        assert_eq!(p.facts[2].value, "zsh");
        assert_eq!(p.malformed.len(), 3, "{:?}", p.malformed);
    }

    #[test]
    fn window_keeps_the_newest_messages() {
        let big = "x".repeat(5_000);
        let w: Vec<(i64, Role, String)> = (1..=40).map(|i| (i, Role::User, big.clone())).collect();
        let text = render_window(&w);
        assert!(text.len() <= WINDOW_CHARS + MESSAGE_CHARS + 40);
        assert!(text.contains("[#40] user:"));
        assert!(!text.contains("[#1] user:"));
    }
}
