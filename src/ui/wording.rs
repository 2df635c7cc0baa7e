//! Words every front end shows the same way: the line after a compaction
//! and the approval question with its answers. One place each, so the TUI,
//! plain mode and `navi run` never drift apart.
use crate::protocol::Decision;

/// `context compacted: 40 → 12 messages, …` after a compaction.
pub(crate) fn compacted(
    before: usize,
    after: usize,
    tokens_before: u64,
    tokens_after: u64,
) -> String {
    format!(
        "context compacted: {}",
        crate::app::words::compressed_line(before, after, tokens_before, tokens_after)
    )
}

/// `allow terminal: rm -rf build? [y]es/[s]ession/[N]o ` (terminal-safe).
pub(crate) fn approval_question(tool: &str, summary: &str) -> String {
    format!(
        "allow {}: {}? [y]es/[s]ession/[N]o ",
        super::neutral::visible(tool),
        super::neutral::visible(summary)
    )
}

/// A typed answer to [`approval_question`]: anything but yes or session
/// denies.
pub(crate) fn decision(answer: &str) -> Decision {
    match answer.trim().to_ascii_lowercase().as_str() {
        "y" | "yes" => Decision::Once,
        "s" | "session" => Decision::Session,
        _ => Decision::Deny,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn approval_answers() {
        assert_eq!(decision("y"), Decision::Once);
        assert_eq!(decision(" YES "), Decision::Once);
        assert_eq!(decision("s"), Decision::Session);
        assert_eq!(decision("Session"), Decision::Session);
        assert_eq!(decision(""), Decision::Deny);
        assert_eq!(decision("nope"), Decision::Deny);
    }

    #[test]
    fn the_question_hides_control_characters() {
        let q = approval_question("terminal", "rm -rf build\x1b[2J");
        assert!(q.starts_with("allow terminal: rm -rf build"), "{q}");
        assert!(!q.contains('\x1b'), "{q:?}");
        assert!(q.ends_with("[y]es/[s]ession/[N]o "));
    }
}
