use super::*;

fn tc() -> CodeStyle {
    CodeStyle {
        depth: crate::ui::color_depth::ColorDepth::True,
        ..CodeStyle::default()
    }
}

const DOC: &str = "# Title\n\nSome **bold** and `code` here, 2 * 3 = 6.\n\n- one\n- two\n  * nested\n1. first\n12) twelfth\n> quoted\n---\n```rust\nfn main() {}\n```\n```\nplain code\n```\n#tag and 2024 was\n";

fn strip(s: &str) -> String {
    let mut out = String::new();
    let mut esc = false;
    for c in s.chars() {
        match (esc, c) {
            (false, '\x1b') => esc = true,
            (true, c) if c.is_ascii_alphabetic() => esc = false,
            (true, _) => {}
            (false, c) => out.push(c),
        }
    }
    out
}

fn color(text: &str) -> String {
    Markdown::render(text, true, &tc())
}

#[test]
fn without_colour_output_is_the_input() {
    let mut md = Markdown::new(false, CodeStyle::default());
    let mut out = String::new();
    for piece in DOC.as_bytes().chunks(3) {
        out.push_str(&md.push(std::str::from_utf8(piece).unwrap_or("")));
    }
    out.push_str(&md.finish());
    assert_eq!(out, DOC);
    assert!(!out.contains('\x1b'));
}

#[test]
fn chunking_does_not_change_the_result() {
    let whole = color(DOC);
    let mut md = Markdown::new(true, tc());
    let mut out = String::new();
    for ch in DOC.chars() {
        out.push_str(&md.push(&ch.to_string()));
    }
    out.push_str(&md.finish());
    assert_eq!(out, whole);
}

#[test]
fn headings_lose_their_hashes_and_get_styled() {
    let s = color("# Title\n## Sub ##\n### Third\n");
    assert_eq!(strip(&s), "Title\nSub\nThird\n");
    assert!(s.starts_with("\x1b[1;4;35mTitle\x1b[0m\n"), "{s:?}");
    assert!(s.contains("\x1b[1;36mSub\x1b[0m"));
}

#[test]
fn lists_get_bullets_and_numbers() {
    let s = color("- one\n  * nested\n3. three\n");
    assert_eq!(strip(&s), "• one\n  • nested\n3. three\n");
    assert!(s.contains("\x1b[36m3.\x1b[0m three"));
}

#[test]
fn bold_and_inline_code() {
    let s = color("a **b** `c` d\n");
    assert_eq!(s, "a \x1b[1mb\x1b[0m \x1b[33mc\x1b[0m d\n");
}

#[test]
fn lone_stars_and_snake_case_stay() {
    assert_eq!(color("2 * 3 = 6 and a_b\n"), "2 * 3 = 6 and a_b\n");
    // An unclosed `**` cannot be taken back once streamed: bold to the end of the line.
    assert_eq!(color("**a\n"), "\x1b[1ma\x1b[0m\n");
}

#[test]
fn styles_close_at_end_of_line() {
    let s = color("open **bold\nnext\n");
    assert_eq!(s, "open \x1b[1mbold\x1b[0m\nnext\n");
}

#[test]
fn code_blocks_are_highlighted_and_fences_dimmed() {
    let s = color("```rust\nlet x = 1;\n```\nafter **b**\n");
    let lines: Vec<&str> = s.lines().collect();
    assert_eq!(lines[0], "\x1b[2m```rust\x1b[0m");
    assert!(lines[1].contains("\x1b[38;2;"), "{:?}", lines[1]);
    assert_eq!(strip(lines[1]), "let x = 1;");
    assert_eq!(lines[2], "\x1b[2m```\x1b[0m");
    // Markdown inside a code block is not interpreted; after it, it is again.
    assert_eq!(lines[3], "after \x1b[1mb\x1b[0m");
    let s = color("```\n# not a heading **x**\n```\n");
    assert_eq!(s.lines().nth(1), Some("# not a heading **x**"));
}

#[test]
fn unknown_language_prints_code_as_is() {
    let s = color("```nosuchlang\nx := 1\n```\n");
    assert_eq!(s.lines().nth(1), Some("x := 1"));
}

#[test]
fn quotes_and_rules() {
    let s = color("> said\n---\n");
    assert_eq!(strip(&s), format!("│ said\n{}\n", "─".repeat(40)));
}

#[test]
fn finish_flushes_held_text() {
    let mut md = Markdown::new(true, tc());
    let mut out = md.push("## Head");
    assert_eq!(out, "", "a heading is held until its line ends");
    out.push_str(&md.finish());
    assert_eq!(strip(&out), "Head");
    let mut md = Markdown::new(true, tc());
    let mut out = md.push("ends with *");
    out.push_str(&md.finish());
    assert_eq!(out, "ends with *");
}

#[test]
fn prose_streams_without_waiting_for_the_newline() {
    let mut md = Markdown::new(true, tc());
    assert_eq!(md.push("Hello wor"), "Hello wor");
    assert_eq!(md.push("ld"), "ld");
    assert_eq!(md.push("\n- it"), "\n\x1b[36m•\x1b[0m it");
}
