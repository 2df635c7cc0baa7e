use super::*;

fn plain(lines: &[Line]) -> Vec<String> {
    lines
        .iter()
        .map(|l| crate::ui::render::line_text(l))
        .collect()
}

fn at(width: usize) -> Opts<'static> {
    Opts {
        width,
        syntax: None,
        open_code: false,
    }
}

#[test]
fn blocks_lists_and_code() {
    let md = "# Title\n\nSome *text* and `code`.\n\n- one\n- two\n  wrapped\n\n1. first\n2. second\n\n> quoted\n\n```rust\nfn x() {}\n```\n";
    let out = plain(&render(md, at(40)));
    assert_eq!(
        out,
        vec![
            "Title",
            "",
            "Some text and code.",
            "",
            "• one",
            "• two",
            "  wrapped",
            "",
            "1. first",
            "2. second",
            "",
            "│ quoted",
            "",
            "  rust",
            "  fn x() {}",
        ]
    );
}

#[test]
fn list_items_wrap_under_their_text() {
    let out = plain(&render("- alpha beta gamma delta", at(12)));
    assert_eq!(out, vec!["• alpha beta", "  gamma", "  delta"]);
}

#[test]
fn tables_links_and_tasks() {
    let md = "| a | bb |\n|---|---|\n| 1 | 2 |\n\nSee [docs](https://x.org) and <https://y.org>.\n\n- [x] done\n- [ ] todo";
    let out = plain(&render(md, at(60)));
    assert_eq!(
        out,
        vec![
            "a │ bb",
            "──┼───",
            "1 │ 2 ",
            "",
            "See docs (https://x.org) and https://y.org.",
            "",
            "• [x] done",
            "• [ ] todo",
        ]
    );
}

#[test]
fn split_points_skip_fences() {
    assert_eq!(split_point("a\n\nb"), (3, false));
    assert_eq!(split_point("a\n\n```\nx\n\ny"), (3, true));
    assert_eq!(split_point("```\nx\n```\n\nz"), (11, false));
}
