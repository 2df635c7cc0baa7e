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

#[test]
fn soft_breaks_are_line_breaks_and_stars_between_digits_are_kept() {
    let out = plain(&render("one\ntwo\n\n2 * 3 * 4 = 24", at(40)));
    assert_eq!(out, vec!["one", "two", "", "2 * 3 * 4 = 24"]);
}

#[test]
fn spans_carry_semantic_roles() {
    let doc = render("# T\n\n> **b** [l](https://e.org)\n\n- x", at(40));
    let find = |t: &str| {
        doc.iter()
            .flatten()
            .find(|s| s.text == t)
            .map(|s| s.style.roles().collect::<Vec<_>>())
    };
    assert_eq!(find("T"), Some(vec![Role::Text, Role::Heading(1)]));
    assert_eq!(find("b"), Some(vec![Role::Text, Role::Quote, Role::Strong]));
    assert_eq!(find("l"), Some(vec![Role::Text, Role::Quote, Role::Link]));
    assert_eq!(find(" (https://e.org)"), Some(vec![Role::Dim]));
    assert_eq!(find("• "), Some(vec![Role::ListMarker]));
}

#[test]
fn wide_tables_and_cjk_stay_within_the_width() {
    let md = "| Name | Description | 状态 |\n|---|---|---|\n| a | 一个非常长的描述文字需要换行显示在窄终端里面 | ok |\n| b | a long english description that needs wrapping too | 完成 |\n";
    for w in [20usize, 40, 80, 120] {
        let out = render(md, at(w));
        for l in &out {
            assert!(super::wrap::spans_width(l) <= w, "{w}: {l:?}");
        }
        let all: String = plain(&out).concat();
        for word in ["Description", "状态", "wrapping", "完成", "ok"] {
            assert!(all.contains(word), "{w}: {word} missing in {all}");
        }
    }
}

#[test]
fn code_blocks_are_highlighted_only_when_closed() {
    highlight::warm_up();
    let md = "```rust\nfn x() {}\n```\n\n```rust\nlet y = 2;\n";
    let opts = Opts {
        width: 40,
        syntax: Some(highlight::DEFAULT_THEME),
        open_code: true,
    };
    let out = render(md, opts);
    let syntax = |t: &str| {
        out.iter()
            .flatten()
            .filter(|s| t.contains(s.text.trim()) && !s.text.trim().is_empty())
            .any(|s| s.style.roles().any(|r| matches!(r, Role::Syntax(_))))
    };
    assert!(syntax("fn x() {}"), "{out:?}");
    assert!(!syntax("let y = 2;"), "{out:?}");
}
