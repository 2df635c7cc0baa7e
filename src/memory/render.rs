//! Text forms of memory: the summary the model reads, and the lines the
//! front ends and `navi memory` print.
use super::{Fact, FactStatus};

/// Longest summary put into a request (characters); the rest is reachable
/// through `memory_search`.
pub(crate) const SUMMARY_LIMIT: usize = 1200;

/// The summary of the accepted facts: one line per category, stable order
/// (category, then key), so the same facts always give the same bytes.
pub(crate) fn summary(facts: &[Fact]) -> String {
    let mut active: Vec<&Fact> = facts
        .iter()
        .filter(|f| f.status == FactStatus::Active)
        .collect();
    active.sort_by(|a, b| (&a.category, &a.key).cmp(&(&b.category, &b.key)));
    let mut lines: Vec<String> = Vec::new();
    let mut shown = 0usize;
    let mut used = 0usize;
    for f in &active {
        let item = format!("{} = {}", f.key, f.value);
        let head = format!("- {}: ", f.category);
        let fits = used + item.len() + head.len() + 2 <= SUMMARY_LIMIT;
        if !fits {
            break;
        }
        match lines.last_mut() {
            Some(last) if last.starts_with(&head) => {
                last.push_str("; ");
                last.push_str(&item);
                used += item.len() + 2;
            }
            _ => {
                used += head.len() + item.len() + 1;
                lines.push(format!("{head}{item}"));
            }
        }
        shown += 1;
    }
    if shown < active.len() {
        lines.push(format!(
            "(+{} more facts: use memory_search)",
            active.len() - shown
        ));
    }
    lines.join("\n")
}

/// `#12 [proposed] home: city = Lyon  (from 3f2a1b4c #57)`.
pub(crate) fn fact_line(f: &Fact) -> String {
    let source = match (&f.source_session, f.source_message) {
        (Some(s), Some(m)) => format!("  (from session {} message #{m})", short(s)),
        (Some(s), None) => format!("  (from session {})", short(s)),
        _ => String::new(),
    };
    format!(
        "#{} [{}] {}: {} = {}{source}",
        f.id,
        f.status.as_str(),
        f.category,
        f.key,
        f.value
    )
}

fn short(id: &str) -> &str {
    &id[..8.min(id.len())]
}

/// Facts as lines, or one line saying there are none.
pub(crate) fn fact_lines(facts: &[Fact], empty: &str) -> Vec<String> {
    if facts.is_empty() {
        return vec![empty.to_string()];
    }
    facts.iter().map(fact_line).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fact(c: &str, k: &str, v: &str, status: FactStatus) -> Fact {
        Fact {
            id: 1,
            category: c.into(),
            key: k.into(),
            value: v.into(),
            status,
            source_session: None,
            source_message: None,
            updated_at: 0,
        }
    }

    #[test]
    fn summary_groups_by_category_and_skips_proposed() {
        let facts = vec![
            fact("prefs", "editor", "helix", FactStatus::Active),
            fact("home", "city", "Lyon", FactStatus::Active),
            fact("prefs", "shell", "fish", FactStatus::Active),
            fact("prefs", "os", "arch", FactStatus::Proposed),
        ];
        assert_eq!(
            summary(&facts),
            "- home: city = Lyon\n- prefs: editor = helix; shell = fish"
        );
    }

    #[test]
    fn summary_is_capped_and_points_to_search() {
        let facts: Vec<Fact> = (0..200)
            .map(|i| {
                fact(
                    "notes",
                    &format!("k{i:03}"),
                    "some value here",
                    FactStatus::Active,
                )
            })
            .collect();
        let s = summary(&facts);
        assert!(s.len() <= SUMMARY_LIMIT + 60, "{}", s.len());
        assert!(s.ends_with("more facts: use memory_search)"));
    }
}
