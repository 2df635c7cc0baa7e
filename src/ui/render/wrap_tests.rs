use super::*;

type L = Vec<Span<u8>>;

fn s(t: &str) -> L {
    vec![Span::new(t, 0)]
}

fn texts(lines: &[L]) -> Vec<String> {
    lines.iter().map(|l| super::super::line_text(l)).collect()
}

#[test]
fn wraps_words_and_keeps_styles() {
    let line = vec![
        Span::new("hello ", 0u8),
        Span::new("wonderful", 1),
        Span::new(" world of wrapping text", 0),
    ];
    let out = wrap(&line, 12, &[Span::new("  ", 0)]);
    assert_eq!(
        texts(&out),
        vec!["hello", "  wonderful", "  world of", "  wrapping", "  text"]
    );
    assert_eq!(out[1][1], Span::new("wonderful", 1));
    for l in &out {
        assert!(spans_width(l) <= 12);
    }
}

#[test]
fn splits_long_words_and_wide_chars() {
    let out = wrap(&s("abcdefghijklmnop"), 5, &[]);
    assert_eq!(texts(&out), vec!["abcde", "fghij", "klmno", "p"]);
    let out = wrap(&s("日本語のテキスト"), 5, &[]);
    assert!(out.iter().all(|l| spans_width(l) <= 5), "{out:?}");
    assert_eq!(texts(&out).concat(), "日本語のテキスト");
    assert_eq!(
        texts(&wrap(&s("    indented"), 40, &[])),
        vec!["    indented"]
    );
    assert_eq!(truncate("abcdef", 4), "abc…");
}

#[test]
fn cjk_and_emoji_are_two_columns() {
    // "日本" is 4 columns; a thumbs-up with a skin tone is one 2-column glyph.
    let out = wrap(&s("ab 日本 語の 👍🏽👍🏽 x"), 6, &[]);
    for l in &out {
        assert!(spans_width(l) <= 6, "{out:?}");
    }
    assert_eq!(texts(&out), vec!["ab", "日本", "語の", "👍🏽👍🏽 x"]);
}

#[test]
fn a_long_word_after_a_prefix_starts_a_fresh_line() {
    let line = vec![Span::new("• ", 1u8), Span::new("x".repeat(30), 0)];
    let out = wrap(&line, 20, &[Span::new("  ", 0)]);
    assert_eq!(
        texts(&out),
        vec![
            "•".to_string(),
            format!("  {}", "x".repeat(18)),
            format!("  {}", "x".repeat(12)),
        ]
    );
    // The first word of a line splits at the first line's full width.
    let out = wrap(&s(&"y".repeat(25)), 20, &[Span::new("    ", 0)]);
    assert_eq!(
        texts(&out),
        vec!["y".repeat(20), format!("    {}", "y".repeat(5))]
    );
}

#[test]
fn spaces_at_breaks_are_dropped_and_tails_kept() {
    assert_eq!(
        texts(&wrap(&s("aaaa   bbbb"), 5, &[])),
        vec!["aaaa", "bbbb"]
    );
    assert_eq!(texts(&wrap(&s("ab cd "), 5, &[])), vec!["ab cd"]);
    assert_eq!(
        texts(&wrap(&s("abcdef gh "), 8, &[])),
        vec!["abcdef", "gh "]
    );
    assert_eq!(texts(&wrap(&s("abc     "), 4, &[])), vec!["abc"]);
    // A prefix that would leave under 8 columns is dropped.
    let out = wrap(&s("one two three"), 9, &[Span::new("  ", 0)]);
    assert_eq!(texts(&out), vec!["one two", "three"]);
}

#[test]
fn emoji_sequences_are_measured_and_kept_whole() {
    // ❤️ (heart + VS16) is 2 columns, not 1: the line must break before it.
    let out = wrap(&s("éword❤\u{fe0f}"), 6, &[]);
    assert_eq!(texts(&out), vec!["éword", "❤\u{fe0f}"]);
    // A long word is cut between glyphs: never inside a ZWJ family, a
    // skin-tone sequence, a keycap or before a combining accent.
    let family = "👨\u{200d}👩\u{200d}👧";
    for glyph in [family, "👍🏽", "1\u{fe0f}\u{20e3}", "e\u{301}"] {
        let word = glyph.repeat(7);
        for w in 2..9 {
            let out = wrap(&s(&word), w, &[]);
            for l in &out {
                assert!(spans_width(l) <= w, "{glyph:?} at {w}: {out:?}");
                let t = super::super::line_text(l);
                assert_eq!(t.replace(glyph, ""), "", "{glyph:?} cut at {w}: {out:?}");
            }
        }
    }
}
