//! When the planner cannot pay off. A greeting ("hi", "thanks"), a short
//! question ("What is the capital of France?", "why is the sky blue") or a
//! short imperative ("Name a large river in Germany.", "list the files here")
//! is one step: the model answers it, with a tool call or two at most, and a
//! plan — a whole extra request or three on a local model — adds nothing.
//!
//! The rule: a message is *short and single-step* when it has at most
//! `max_words` words (`[planning].skip_question_words`; 0 turns skipping off)
//! and shows no multi-step cue:
//! - more than one line, or a list (`1.`, `2)`, `-`, `*`, `•` items, inline
//!   `1) … 2) …` too);
//! - more than one sentence (`.`, `!`, `?` or `;` followed by more text),
//!   not counting greetings and thanks ("Hi! What time is it in Tokyo?");
//! - a sequencing word ([`SEQUENCE_WORDS`]: *then*, *after that*, *finally*,
//!   *step by step*, …);
//! - a second action joined on: *and*, `&`, `+` or a comma followed by an
//!   action verb ([`ACTION_VERBS`]: "fix the bug and run the tests",
//!   "read a.txt, summarise it").
//!
//! Paths, file names and tool words do not count: "what is in src/main.rs?"
//! needs a tool call, not a plan.

/// Words and phrases that order several steps.
pub(crate) const SEQUENCE_WORDS: &[&str] = &[
    "then",
    "after that",
    "afterwards",
    "afterward",
    "after which",
    "and also",
    "as well as",
    "followed by",
    "before that",
    "once done",
    "once that",
    "when done",
    "when that",
    "finally",
    "first,",
    "firstly",
    "secondly",
    "thirdly",
    "lastly",
    "step by step",
    "step-by-step",
    "in parallel",
];

/// Verbs that start a second action when joined on with "and" or a comma.
pub(crate) const ACTION_VERBS: &[&str] = &[
    "add",
    "analyse",
    "analyze",
    "build",
    "change",
    "check",
    "clean",
    "clone",
    "commit",
    "compare",
    "compile",
    "configure",
    "convert",
    "copy",
    "create",
    "debug",
    "delete",
    "deploy",
    "document",
    "download",
    "draft",
    "edit",
    "email",
    "export",
    "extract",
    "fix",
    "format",
    "generate",
    "implement",
    "import",
    "install",
    "list",
    "make",
    "merge",
    "migrate",
    "move",
    "open",
    "optimise",
    "optimize",
    "organise",
    "organize",
    "push",
    "read",
    "refactor",
    "remove",
    "rename",
    "render",
    "replace",
    "restart",
    "review",
    "rewrite",
    "run",
    "save",
    "search",
    "send",
    "set",
    "sort",
    "start",
    "stop",
    "summarise",
    "summarize",
    "test",
    "translate",
    "update",
    "upgrade",
    "upload",
    "verify",
    "write",
];

/// Whole sentences that are courtesy, not work ("Hi!", "Thanks.", "Please.").
const COURTESY: &[&str] = &[
    "hi",
    "hello",
    "hey",
    "hallo",
    "yo",
    "thanks",
    "thank you",
    "thank you very much",
    "thanks a lot",
    "many thanks",
    "cheers",
    "please",
    "ok",
    "okay",
    "good morning",
    "good afternoon",
    "good evening",
    "great",
    "cool",
    "nice",
    "sorry",
];

/// True when a planner call for `message` cannot pay off (see the module docs).
pub(crate) fn skip_planner(message: &str, max_words: u32) -> bool {
    let text = message.trim();
    if max_words == 0 {
        return false;
    }
    let words = text.split_whitespace().count();
    if words > max_words as usize {
        return false;
    }
    if text.lines().filter(|l| !l.trim().is_empty()).count() > 1 {
        return false;
    }
    let lower = text.to_lowercase();
    if inline_list_items(&lower) >= 2 || lower.starts_with(['-', '*', '•']) {
        return false;
    }
    if work_sentences(&lower) > 1 {
        return false;
    }
    let padded = format!(" {} ", squash(&lower));
    if SEQUENCE_WORDS.iter().any(|w| contains_phrase(&padded, w)) {
        return false;
    }
    !joins_second_action(&lower)
}

/// The text with every run of non-word characters (but `,` and `-`) made one space.
fn squash(lower: &str) -> String {
    let mut out = String::with_capacity(lower.len());
    for c in lower.chars() {
        if c.is_alphanumeric() || c == ',' || c == '-' || c == '\'' {
            out.push(c);
        } else if !out.ends_with(' ') {
            out.push(' ');
        }
    }
    out.trim().to_string()
}

/// `phrase` as whole words in `padded` (which starts and ends with a space).
fn contains_phrase(padded: &str, phrase: &str) -> bool {
    if let Some(stem) = phrase.strip_suffix(',') {
        // "first," — only as an opener of a sequence, with its comma.
        return padded.contains(&format!(" {stem}, "));
    }
    padded.contains(&format!(" {phrase} "))
}

/// Inline list markers: a 1–2 digit number followed by `.` or `)` and a space,
/// at the start or after a space ("1) read it 2) fix it").
fn inline_list_items(lower: &str) -> usize {
    let b = lower.as_bytes();
    let mut n = 0;
    let mut i = 0;
    while i < b.len() {
        let at_start = i == 0 || b[i - 1] == b' ' || b[i - 1] == b'(';
        if at_start && b[i].is_ascii_digit() {
            let mut j = i;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            let marker = j < b.len() && (b[j] == b'.' || b[j] == b')');
            let spaced = j + 1 >= b.len() || b[j + 1] == b' ';
            if j - i <= 2 && marker && spaced && j + 1 < b.len() {
                n += 1;
            }
            i = j;
        }
        i += 1;
    }
    n
}

/// Sentences that are not courtesy. A sentence ends at `.`, `!`, `?` or `;`
/// followed by white space (so "3.5", "v1.2" and "e.g" inside a word do not).
fn work_sentences(lower: &str) -> usize {
    let mut sentences = Vec::new();
    let mut cur = String::new();
    let mut chars = lower.chars().peekable();
    while let Some(c) = chars.next() {
        cur.push(c);
        if matches!(c, '.' | '!' | '?' | ';') && chars.peek().is_none_or(|n| n.is_whitespace()) {
            sentences.push(std::mem::take(&mut cur));
        }
    }
    sentences.push(cur);
    sentences
        .iter()
        .map(|s| {
            s.trim()
                .trim_matches(|c: char| !c.is_alphanumeric())
                .to_string()
        })
        .filter(|s| !s.is_empty())
        .filter(|s| !is_courtesy(s))
        .count()
}

fn is_courtesy(sentence: &str) -> bool {
    let s = squash(sentence).replace(',', "");
    let s = s.trim();
    COURTESY.contains(&s)
        || COURTESY
            .iter()
            .any(|c| s.strip_prefix(c).is_some_and(is_name_like))
}

/// "hi navi", "thanks a lot, bob": a courtesy followed by one short word.
fn is_name_like(rest: &str) -> bool {
    if !rest.starts_with(' ') {
        return false;
    }
    let rest = rest.trim();
    !rest.is_empty() && rest.split_whitespace().count() == 1 && rest.len() <= 12
}

/// "…, and run the tests", "…; fix it", "read it & summarise it": a joiner
/// followed by an action verb.
fn joins_second_action(lower: &str) -> bool {
    let spaced: String = lower
        .chars()
        .map(|c| match c {
            ',' | '&' | '+' => ' ',
            c if c.is_alphanumeric() || c == '\'' || c == '-' => c,
            _ => ' ',
        })
        .collect();
    let words: Vec<&str> = spaced.split_whitespace().collect();
    // Commas and `&`/`+` are joiners too: find the word after each.
    let after_joiner = lower
        .match_indices([',', '&', '+'])
        .filter_map(|(i, _)| lower[i + 1..].split_whitespace().next())
        .map(|w| w.trim_matches(|c: char| !c.is_alphanumeric()).to_string());
    let after_and = words
        .windows(2)
        .filter(|p| p[0] == "and" || p[0] == "plus")
        .map(|p| p[1].to_string());
    after_joiner
        .chain(after_and)
        .any(|w| ACTION_VERBS.contains(&w.as_str()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn greetings_and_thanks_skip() {
        for m in [
            "hi",
            "Hi!",
            "hello",
            "Hello there",
            "hey navi",
            "thanks",
            "Thank you!",
            "thanks a lot",
            "ok",
            "Good morning!",
            "cheers",
            "",
            "   ",
        ] {
            assert!(skip_planner(m, 12), "{m:?}");
        }
    }

    #[test]
    fn short_questions_skip_with_or_without_question_mark() {
        for m in [
            "What is the capital of France?",
            "what is the capital of france",
            "And of Spain?",
            "  why is the sky blue?  ",
            "why is the sky blue",
            "How old is the universe",
            "Is Python 3.12 faster than 3.11?",
            "What is the difference between TCP and UDP?",
            "Hi! What time is it in Tokyo?",
            "Thanks. What about Italy?",
            "What is in src/main.rs?",
            "Which files are in this folder?",
            "What is the latest Rust version?",
            "Is https://example.com up?",
            "What does `ls -la` print?",
        ] {
            assert!(skip_planner(m, 12), "{m:?}");
        }
    }

    #[test]
    fn short_imperatives_skip() {
        for m in [
            "Name a large river in Germany.",
            "name a large river in germany",
            "list the files here",
            "List the files in this directory.",
            "Tell me a joke",
            "Explain recursion briefly.",
            "fix the bug",
            "Read notes.txt",
            "Summarise README.md please",
            "Translate 'good night' to French",
            "Compare Rust and Go",
            "Show me the disk usage",
            "run the tests",
        ] {
            assert!(skip_planner(m, 12), "{m:?}");
        }
    }

    #[test]
    fn multi_step_messages_plan() {
        for m in [
            "Read the config, then fix the parser",
            "fix the bug and run the tests",
            "Fix the bug and then run the tests",
            "Read notes.txt, summarise it",
            "download the page & summarise it",
            "Create a project. Add a test.",
            "Find the log file; delete it",
            "First, read the logs",
            "Check the disk, after that restart nginx",
            "Explain it step by step",
            "1. read the file 2. fix the typo",
            "1) build 2) deploy",
            "- read the logs",
            "read the logs\nrestart the server",
            "Install rust, build the project",
            "Write the script and test it",
            "Clone the repo, afterwards build it",
            "Finally deploy it",
            "Read a.txt as well as b.txt",
        ] {
            assert!(!skip_planner(m, 12), "{m:?}");
        }
    }

    #[test]
    fn long_messages_plan_and_zero_turns_skipping_off() {
        assert!(!skip_planner(
            "Could you please tell me, in some detail and with examples, why the sky is blue?",
            12
        ));
        assert!(!skip_planner(
            "Set up a small web server for this folder with TLS and a systemd unit file",
            12
        ));
        assert!(!skip_planner("What is the capital of France?", 0));
        assert!(!skip_planner("hi", 0));
        // The limit is configurable both ways.
        assert!(skip_planner("why is the sky blue", 5));
        assert!(!skip_planner("why is the sky blue", 4));
    }

    #[test]
    fn numbers_and_abbreviations_are_not_list_items_or_sentences() {
        assert!(skip_planner("Is 2.5 bigger than 2.49?", 12));
        assert!(skip_planner("What changed in version 1.2?", 12));
        assert_eq!(inline_list_items("1. a 2) b 10. c"), 3);
        assert_eq!(inline_list_items("version 1.2 is out"), 0);
        assert_eq!(work_sentences("hi! what is it?"), 1);
        assert_eq!(work_sentences("do a. do b."), 2);
        assert_eq!(work_sentences("hey navi. heyday ok."), 1);
    }
}
