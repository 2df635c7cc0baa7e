use super::*;

fn forty() -> usize {
    40
}

fn run(text: &str) -> Vec<Piece> {
    let mut s = Stream::new(None, forty);
    let mut out = s.push(text);
    out.extend(s.finish());
    out
}

/// (text, roles) of the non-empty text pieces.
fn spans(pieces: &[Piece]) -> Vec<(String, Vec<Role>)> {
    pieces
        .iter()
        .filter_map(|p| match p {
            Piece::Text(s) if !s.text.is_empty() => {
                Some((s.text.clone(), s.style.roles().collect()))
            }
            _ => None,
        })
        .collect()
}

fn text(pieces: &[Piece]) -> String {
    spans(pieces).into_iter().map(|(t, _)| t).collect()
}

#[test]
fn lines_get_the_same_roles_as_whole_documents() {
    let out = run("# Title\n- item **b**\n> said\n---\n");
    assert_eq!(
        text(&out),
        format!("Title\n• item b\n│ said\n{}\n", "─".repeat(40))
    );
    let s = spans(&out);
    let role_of = |t: &str| s.iter().find(|(x, _)| x == t).map(|(_, r)| r.clone());
    assert_eq!(role_of("Title"), Some(vec![Role::Heading(1)]));
    assert_eq!(role_of("•"), Some(vec![Role::ListMarker]));
    assert_eq!(role_of("b"), Some(vec![Role::Strong]));
    assert_eq!(role_of("│"), Some(vec![Role::Quote]));
    assert_eq!(role_of("said"), Some(vec![Role::Quote]));
    assert_eq!(role_of(&"─".repeat(40)), Some(vec![Role::Rule]));
}

#[test]
fn every_styled_line_is_closed_before_its_newline() {
    let out = run("a **b\n`c\nplain\n");
    let mut open = false;
    for p in &out {
        match p {
            Piece::End => open = false,
            Piece::Text(s) if s.text.contains('\n') => assert!(!open, "{out:?}"),
            Piece::Text(s) => open = s.style != Style::plain(),
        }
    }
}

#[test]
fn prose_is_given_out_before_its_line_ends() {
    let mut s = Stream::new(None, forty);
    assert_eq!(text(&s.push("Hello wor")), "Hello wor");
    assert_eq!(text(&s.push("ld **x")), "ld x");
    assert!(!s.is_idle());
    // A heading waits for its newline.
    let mut s = Stream::new(None, forty);
    assert!(spans(&s.push("## Head")).is_empty());
    assert_eq!(text(&s.finish()), "Head");
    assert!(s.is_idle());
}

#[test]
fn code_lines_are_highlighted_or_shown_as_they_are() {
    highlight::warm_up();
    let mut s = Stream::new(Some(highlight::DEFAULT_THEME.into()), forty);
    let out = s.push("```rust\nlet x = 1; // **no**\n```\n");
    let body: Vec<_> = spans(&out)
        .into_iter()
        .filter(|(_, r)| r.first() == Some(&Role::CodeBlock))
        .collect();
    let joined: String = body.iter().map(|(t, _)| t.as_str()).collect();
    assert_eq!(joined, "let x = 1; // **no**");
    assert!(
        body.iter()
            .all(|(_, r)| matches!(r.get(1), Some(Role::Syntax(_))))
    );
    // Unknown language: the line as it is, unstyled.
    let out = run("```nosuchlang\nx := *1*\n```\n");
    assert!(
        spans(&out).contains(&("\nx := *1*".to_string(), vec![])),
        "{out:?}"
    );
}
