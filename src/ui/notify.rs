//! A word when a long turn ends: the terminal bell or a desktop
//! notification escape (OSC 9, OSC 777), for a user in another window.
//!
//! `[ui] notify` picks the kind (`bell`, `osc9`, `osc777`, `off`) and
//! `[ui] notify_after_secs` how long a turn must have taken; the full-screen
//! UI and plain mode on a terminal send it, `navi run` never does. Inside
//! tmux the OSC forms are wrapped in its passthrough sequence.
pub(crate) use crate::config::NotifyKind;
use std::time::Duration;

/// What to write to the terminal for a turn that took `took` and ended
/// with `what` (`None`: nothing, the turn was short or notifying is off).
pub(crate) fn escape(
    kind: NotifyKind,
    after_secs: u64,
    took: Duration,
    what: &str,
) -> Option<String> {
    if kind == NotifyKind::Off || took < Duration::from_secs(after_secs) {
        return None;
    }
    // No control characters from the text reach the terminal.
    let text: String = format!("navi: {what} ({}s)", took.as_secs())
        .chars()
        .filter(|c| !c.is_control())
        .take(200)
        .collect();
    let seq = match kind {
        NotifyKind::Off => return None,
        NotifyKind::Bell => return Some("\x07".into()),
        NotifyKind::Osc9 => format!("\x1b]9;{text}\x07"),
        NotifyKind::Osc777 => format!("\x1b]777;notify;navi;{text}\x07"),
    };
    Some(if std::env::var_os("TMUX").is_some() {
        format!("\x1bPtmux;{}\x1b\\", seq.replace('\x1b', "\x1b\x1b"))
    } else {
        seq
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_long_turns_and_never_control_characters() {
        let long = Duration::from_secs(40);
        assert_eq!(
            escape(NotifyKind::Bell, 30, Duration::from_secs(5), "x"),
            None
        );
        assert_eq!(escape(NotifyKind::Off, 0, long, "x"), None);
        assert_eq!(
            escape(NotifyKind::Bell, 30, long, "x").as_deref(),
            Some("\x07")
        );
        let o = escape(NotifyKind::Osc9, 30, long, "done\x1b]evil").unwrap();
        if std::env::var_os("TMUX").is_none() {
            assert_eq!(o, "\x1b]9;navi: done]evil (40s)\x07");
        }
        let o = escape(NotifyKind::Osc777, 30, long, "done").unwrap();
        assert!(o.contains("777;notify;navi;navi: done (40s)"), "{o:?}");
    }
}
