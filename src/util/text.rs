//! Text shortened for one-line displays.

/// The first non-blank line of `s`, at most `max` characters, with `…` when
/// anything was left out.
pub(crate) fn preview(s: &str, max: usize) -> String {
    let line = s
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let more = s.lines().filter(|l| !l.trim().is_empty()).count() > 1;
    let mut out: String = line.chars().take(max).collect();
    if line.chars().count() > max || more {
        out.push('…');
    }
    out
}
