//! When the planner cannot pay off. A short plain question ("What is the
//! capital of France?") is answered DIRECT by any sensible planner, so the
//! call — a whole extra request on a local model — is skipped.
//!
//! The rule: the message ends with `?`, has at most `max_words` words
//! (`[planning].skip_question_words`; 0 turns skipping off) and shows no cue
//! that tools will be needed: no path, backticks, URL, `~`, file name with an
//! extension, and none of the [`TOOL_WORDS`].

/// Words that suggest files, commands or fresh facts from the web.
pub(crate) const TOOL_WORDS: &[&str] = &[
    "file",
    "files",
    "folder",
    "directory",
    "dir",
    "repo",
    "repository",
    "project",
    "code",
    "script",
    "run",
    "install",
    "build",
    "compile",
    "test",
    "tests",
    "fix",
    "debug",
    "create",
    "write",
    "edit",
    "change",
    "delete",
    "remove",
    "search",
    "find",
    "download",
    "deploy",
    "server",
    "ssh",
    "commit",
    "git",
    "log",
    "logs",
    "latest",
    "today",
    "current",
    "now",
    "news",
    "price",
    "weather",
    "website",
    "page",
    "link",
    "todo",
    "plan",
    "steps",
];

/// True when a planner call for `message` cannot pay off (see the module docs).
pub(crate) fn skip_planner(message: &str, max_words: u32) -> bool {
    let text = message.trim();
    if max_words == 0 || !text.ends_with('?') {
        return false;
    }
    let words: Vec<&str> = text.split_whitespace().collect();
    if words.is_empty() || words.len() > max_words as usize {
        return false;
    }
    if text.contains(['/', '\\', '`', '~', '$', '|']) || text.to_ascii_lowercase().contains("http")
    {
        return false;
    }
    !words.iter().any(|w| {
        let w = w.trim_matches(|c: char| !c.is_alphanumeric() && c != '.' && c != '_');
        let lower = w.to_ascii_lowercase();
        let bare = lower.trim_end_matches('.');
        has_extension(bare) || TOOL_WORDS.contains(&bare)
    })
}

/// `name.ext` with a short alphabetic extension (main.rs, notes.txt).
fn has_extension(w: &str) -> bool {
    match w.rsplit_once('.') {
        Some((stem, ext)) => {
            !stem.is_empty()
                && (1..=5).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphanumeric())
                && ext.chars().any(|c| c.is_ascii_alphabetic())
        }
        None => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_plain_questions_skip() {
        assert!(skip_planner("What is the capital of France?", 12));
        assert!(skip_planner("And of Spain?", 12));
        assert!(skip_planner("  why is the sky blue?  ", 12));
    }

    #[test]
    fn everything_else_plans() {
        for m in [
            "hello",
            "fix the bug",
            "What is in src/main.rs?",
            "Can you read notes.txt?",
            "What does `ls -la` print?",
            "What is the latest Rust version?",
            "Which files are in this folder?",
            "Is https://example.com up?",
            "What is the weather in Paris today?",
            "Could you please tell me, in some detail and with examples, why the sky is blue?",
        ] {
            assert!(!skip_planner(m, 12), "{m}");
        }
        assert!(!skip_planner("What is the capital of France?", 0));
    }
}
