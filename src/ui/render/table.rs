//! Markdown tables laid out to the transcript width.
//!
//! Invariants:
//! - Every output line is at most `width` columns wide, whatever the table.
//! - A table that fits is drawn at its natural column widths. One that does
//!   not has its widest columns shrunk (narrow columns keep their natural
//!   width) and its cells wrapped at word boundaries inside their column, so
//!   a row may take several lines; header and separator stay aligned.
//! - When the width cannot give every column a few characters, each row is
//!   drawn as a record instead: `header: value` lines, rows separated by a
//!   rule. No cell text is ever dropped.
use super::wrap::{self, wrap};
use super::{Line, Role, Span, Style, line_text};

const SEP: &str = " │ ";
/// Narrowest a column may become before the table turns into records.
const MIN_COL: usize = 6;

/// Lays out `rows` (the first one is the header) in `width` columns.
pub(crate) fn render(rows: &[Vec<String>], width: usize) -> Vec<Line> {
    let cols = rows.iter().map(Vec::len).max().unwrap_or(0);
    if cols == 0 {
        return Vec::new();
    }
    let width = width.max(1);
    let natural: Vec<usize> = (0..cols)
        .map(|i| {
            rows.iter()
                .filter_map(|r| r.get(i))
                .map(|c| wrap::width(c))
                .max()
                .unwrap_or(0)
                .max(1)
        })
        .collect();
    let seps = wrap::width(SEP) * (cols - 1);
    let avail = width.saturating_sub(seps);
    if natural.iter().sum::<usize>() <= avail {
        return grid(rows, &natural);
    }
    if avail < cols * MIN_COL {
        return records(rows, cols, width);
    }
    grid(rows, &shrink(&natural, avail))
}

/// Column widths summing to at most `avail`: columns narrower than a fair
/// share keep their width; the rest split what is left evenly.
fn shrink(natural: &[usize], avail: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..natural.len()).collect();
    order.sort_by_key(|&i| natural[i]);
    let mut out = vec![0; natural.len()];
    let mut left = avail;
    for (k, &i) in order.iter().enumerate() {
        let share = left / (natural.len() - k);
        let w = natural[i].min(share).max(1);
        out[i] = w;
        left = left.saturating_sub(w);
    }
    out
}

fn cell_lines(text: &str, w: usize, style: Style) -> Vec<String> {
    wrap(&[Span::new(text, style)], w, &[])
        .iter()
        .map(|l| line_text(l))
        .collect()
}

fn grid(rows: &[Vec<String>], widths: &[usize]) -> Vec<Line> {
    let rule = Style::of(Role::Rule);
    let mut out = Vec::new();
    let empty = String::new();
    for (ri, r) in rows.iter().enumerate() {
        let style = Style::of(if ri == 0 { Role::Strong } else { Role::Text });
        let cells: Vec<Vec<String>> = widths
            .iter()
            .enumerate()
            .map(|(i, &w)| cell_lines(r.get(i).unwrap_or(&empty), w, style))
            .collect();
        let height = cells.iter().map(Vec::len).max().unwrap_or(1).max(1);
        for k in 0..height {
            let mut spans = Vec::new();
            for (i, &w) in widths.iter().enumerate() {
                if i > 0 {
                    spans.push(Span::new(SEP, rule));
                }
                let t = cells[i].get(k).map(String::as_str).unwrap_or("");
                let pad = w.saturating_sub(wrap::width(t));
                spans.push(Span::new(format!("{t}{}", " ".repeat(pad)), style));
            }
            out.push(spans);
        }
        if ri == 0 {
            let sep: Vec<String> = widths.iter().map(|w| "─".repeat(*w)).collect();
            out.push(vec![Span::new(sep.join("─┼─"), rule)]);
        }
    }
    out
}

fn records(rows: &[Vec<String>], cols: usize, width: usize) -> Vec<Line> {
    let strong = Style::of(Role::Strong);
    let empty = String::new();
    let header: Vec<&String> = (0..cols)
        .map(|i| rows.first().and_then(|h| h.get(i)).unwrap_or(&empty))
        .collect();
    let mut out = Vec::new();
    for (ri, r) in rows.iter().enumerate().skip(1) {
        if ri > 1 {
            out.push(vec![Span::new(
                "─".repeat(width.min(20)),
                Style::of(Role::Rule),
            )]);
        }
        for (i, h) in header.iter().enumerate() {
            let v = r.get(i).unwrap_or(&empty);
            let line = vec![
                Span::new(format!("{h}: "), strong),
                Span::new(v.clone(), Style::of(Role::Text)),
            ];
            out.extend(wrap(&line, width, &[Span::new("  ", Style::plain())]));
        }
    }
    if rows.len() <= 1 {
        // A header without rows: the header names, one per line.
        for h in header {
            out.extend(wrap(&[Span::new(h.clone(), strong)], width, &[]));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rows(t: &[&[&str]]) -> Vec<Vec<String>> {
        t.iter()
            .map(|r| r.iter().map(|c| c.to_string()).collect())
            .collect()
    }

    fn texts(l: &[Line]) -> Vec<String> {
        l.iter().map(|l| line_text(l)).collect()
    }

    #[test]
    fn fitting_table_keeps_natural_widths() {
        let out = render(&rows(&[&["a", "bb"], &["1", "2"]]), 40);
        assert_eq!(texts(&out), vec!["a │ bb", "──┼───", "1 │ 2 "]);
    }

    #[test]
    fn wide_table_wraps_cells_within_width() {
        let t = rows(&[
            &["Name", "Description of the thing", "Status"],
            &[
                "x",
                "a long description that cannot fit in a narrow terminal at all",
                "ok",
            ],
        ]);
        for w in [30usize, 40, 57] {
            let out = render(&t, w);
            assert!(
                out.iter().all(|l| wrap::spans_width(l) <= w),
                "{w}: {out:?}"
            );
            let all: String = texts(&out).join(" ");
            for word in ["narrow", "terminal", "Description", "Status", "ok"] {
                assert!(all.contains(word), "{w}: {word} missing in {all}");
            }
            // Every line has the same column separators (aligned grid).
            let bars: Vec<usize> = texts(&out)
                .iter()
                .filter(|l| l.contains('│'))
                .map(|l| l.find('│').unwrap_or(0))
                .collect();
            assert!(bars.windows(2).all(|p| p[0] == p[1]), "{out:?}");
        }
    }

    #[test]
    fn very_narrow_table_becomes_records() {
        let t = rows(&[
            &["k", "v", "w", "x"],
            &["1", "2", "3", "4"],
            &["5", "6", "7", "8"],
        ]);
        let out = texts(&render(&t, 12));
        assert_eq!(out[..4], ["k: 1", "v: 2", "w: 3", "x: 4"]);
        assert!(out.contains(&"x: 8".to_string()));
    }

    #[test]
    fn shrink_keeps_narrow_columns() {
        assert_eq!(shrink(&[3, 50, 40], 40), vec![3, 19, 18]);
    }
}
