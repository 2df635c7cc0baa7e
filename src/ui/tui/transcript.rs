//! The transcript pane: the cells, the scroll position, the selection.
//!
//! Invariants:
//! - Frame cost does not grow with the transcript: a frame renders (or takes
//!   from cache) only the cells that intersect the viewport. The scroll
//!   position is an anchor — (cell, line in cell) of the top visible line —
//!   so no total height is ever needed.
//! - `anchor == None` means "follow the bottom": new output stays in view.
//!   Scrolling up sets an anchor that stays put while output arrives below;
//!   reaching the bottom again turns following back on.
//! - A cell path (`[top, child, …]`) addresses a nested cell; changing one
//!   touches every ancestor so their caches rebuild.
use super::cells::{Cell, CellKind, RenderCtx};
use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use ratatui::style::{Modifier, Style};
use ratatui::text::{Line, Span};

/// Columns the transcript keeps for itself: the selection mark on the left,
/// one blank column on the right.
pub(crate) const MARGIN: u16 = 2;

/// The width cells are rendered at in a transcript pane `pane_width` wide.
pub(crate) fn content_width(pane_width: u16) -> u16 {
    pane_width.saturating_sub(MARGIN)
}

#[derive(Default)]
pub struct Transcript {
    pub cells: Vec<Cell>,
    anchor: Option<(usize, usize)>,
    pub selected: Option<usize>,
    /// Output arrived below while the user was scrolled up.
    pub(crate) unseen: bool,
    /// The search match to highlight (`search.rs`).
    pub(crate) mark: Option<super::search::Hit>,
}

impl Transcript {
    pub(crate) fn push(&mut self, cell: Cell) -> usize {
        self.cells.push(cell);
        if self.anchor.is_some() {
            self.unseen = true;
        }
        self.cells.len() - 1
    }

    pub(crate) fn clear(&mut self) {
        self.cells.clear();
        self.anchor = None;
        self.selected = None;
        self.unseen = false;
    }

    pub fn following(&self) -> bool {
        self.anchor.is_none()
    }

    pub(crate) fn cell_mut(&mut self, path: &[usize]) -> Option<&mut Cell> {
        let (first, rest) = path.split_first()?;
        let mut cell = self.cells.get_mut(*first)?;
        for i in rest {
            cell = match &mut cell.kind {
                CellKind::Tool(t) => t.children.get_mut(*i)?,
                _ => return None,
            };
        }
        Some(cell)
    }

    /// Invalidates the cell at `path` and every ancestor.
    pub(crate) fn touch(&mut self, path: &[usize]) {
        for n in 1..=path.len() {
            if let Some(c) = self.cell_mut(&path[..n]) {
                c.touch();
            }
        }
        if self.anchor.is_some() {
            self.unseen = true;
        }
    }

    /// Drops every cached render (theme or width-independent option change).
    pub(crate) fn touch_all(&mut self) {
        fn rec(c: &mut Cell) {
            c.touch();
            match &mut c.kind {
                CellKind::Tool(t) => t.children.iter_mut().for_each(rec),
                CellKind::Assistant(d) => d.reset_cache(),
                _ => {}
            }
        }
        self.cells.iter_mut().for_each(rec);
    }

    /// Lines of cell `i` including the gap line above it.
    fn height(&mut self, i: usize, ctx: &RenderCtx<'_>) -> usize {
        let Some(c) = self.cells.get_mut(i) else {
            return 0;
        };
        let n = c.lines(ctx).len();
        if n > 0 && i > 0 { n + 1 } else { n }
    }

    /// The top visible position when following the bottom.
    fn bottom_top(&mut self, h: usize, ctx: &RenderCtx<'_>) -> (usize, usize) {
        let mut sum = 0;
        let mut i = self.cells.len();
        while i > 0 {
            i -= 1;
            let ch = self.height(i, ctx);
            sum += ch;
            if sum >= h {
                return (i, sum - h);
            }
        }
        (0, 0)
    }

    /// Whether fewer than `h` lines remain from `pos` to the end.
    fn short_from(&mut self, pos: (usize, usize), h: usize, ctx: &RenderCtx<'_>) -> bool {
        let mut sum = 0;
        for i in pos.0..self.cells.len() {
            sum += self.height(i, ctx);
            if i == pos.0 {
                sum = sum.saturating_sub(pos.1);
            }
            if sum >= h {
                return false;
            }
        }
        true
    }

    fn top(&mut self, h: usize, ctx: &RenderCtx<'_>) -> (usize, usize) {
        match self.anchor {
            Some(a) if a.0 < self.cells.len() => a,
            _ => self.bottom_top(h, ctx),
        }
    }

    pub(crate) fn scroll_up(&mut self, n: usize, h: usize, ctx: &RenderCtx<'_>) {
        let mut pos = self.top(h, ctx);
        let mut n = n;
        loop {
            if pos.1 >= n {
                pos.1 -= n;
                break;
            }
            n -= pos.1;
            if pos.0 == 0 {
                pos = (0, 0);
                break;
            }
            pos.0 -= 1;
            pos.1 = self.height(pos.0, ctx);
        }
        self.anchor = Some(pos);
        self.settle(h, ctx);
    }

    pub(crate) fn scroll_down(&mut self, n: usize, h: usize, ctx: &RenderCtx<'_>) {
        let Some(mut pos) = self.anchor else {
            return;
        };
        pos.1 += n;
        while pos.0 < self.cells.len() {
            let ch = self.height(pos.0, ctx);
            if pos.1 < ch {
                break;
            }
            pos.1 -= ch;
            pos.0 += 1;
        }
        if pos.0 >= self.cells.len() {
            self.follow();
            return;
        }
        self.anchor = Some(pos);
        self.settle(h, ctx);
    }

    /// Turns following back on when the anchor shows the end anyway.
    fn settle(&mut self, h: usize, ctx: &RenderCtx<'_>) {
        if let Some(a) = self.anchor
            && self.short_from(a, h, ctx)
        {
            self.follow();
        }
    }

    pub(crate) fn follow(&mut self) {
        self.anchor = None;
        self.unseen = false;
    }

    pub(crate) fn scroll_home(&mut self, h: usize, ctx: &RenderCtx<'_>) {
        self.anchor = Some((0, 0));
        self.settle(h, ctx);
    }

    /// Scrolls so cell `i` starts at the top (or follows when near the end).
    pub(crate) fn reveal(&mut self, i: usize, h: usize, ctx: &RenderCtx<'_>) {
        self.anchor = Some((i, 0));
        self.settle(h, ctx);
    }

    /// Scrolls so line `line` of cell `i` is in view, a third of the way
    /// down (or follows when near the end).
    pub(crate) fn reveal_line(&mut self, i: usize, line: usize, h: usize, ctx: &RenderCtx<'_>) {
        let row = line + usize::from(i > 0);
        self.anchor = Some((i, row));
        self.scroll_up(h / 3, h, ctx);
    }

    /// The top visible position: (cell, row in it counting the gap line).
    pub(crate) fn top_pos(&mut self, h: usize, ctx: &RenderCtx<'_>) -> (usize, usize) {
        self.top(h, ctx)
    }

    /// Moves the selection to the previous (`back`) or next collapsible cell.
    pub(crate) fn select_step(&mut self, back: bool) -> Option<usize> {
        let n = self.cells.len();
        let mut i = match (self.selected, back) {
            (Some(s), _) => s,
            (None, true) => n,
            (None, false) => return None,
        };
        loop {
            if back {
                if i == 0 {
                    return self.selected;
                }
                i -= 1;
            } else {
                i += 1;
                if i >= n {
                    self.selected = None;
                    return None;
                }
            }
            if self.cells[i].collapsible() {
                self.selected = Some(i);
                return Some(i);
            }
        }
    }

    /// The last collapsible cell.
    pub(crate) fn last_collapsible(&self) -> Option<usize> {
        self.cells.iter().rposition(Cell::collapsible)
    }

    /// Draws the visible cells into `area`; the left column marks the selection.
    pub(crate) fn render(
        &mut self,
        area: Rect,
        buf: &mut Buffer,
        ctx: &RenderCtx<'_>,
        focus: Style,
    ) {
        if area.width < 3 || area.height == 0 {
            return;
        }
        let inner = RenderCtx {
            width: content_width(area.width),
            ..*ctx
        };
        let h = usize::from(area.height);
        if let Some(a) = self.anchor
            && (a.0 >= self.cells.len() || self.short_from(a, h, &inner))
        {
            self.follow();
        }
        let (mut ci, mut skip) = self.top(h, &inner);
        let mut y = 0usize;
        while y < h && ci < self.cells.len() {
            let gap = ci > 0;
            let selected = self.selected == Some(ci);
            let lines = self.cells[ci].lines(&inner);
            let total = lines.len();
            let gap = gap && total > 0;
            let rows = total + usize::from(gap);
            for row in skip..rows {
                if y >= h {
                    break;
                }
                let yy = area.y + y as u16;
                if !(gap && row == 0) {
                    let line: &Line<'static> = &lines[row - usize::from(gap)];
                    buf.set_line(area.x + 1, yy, line, content_width(area.width));
                    if selected {
                        buf.set_span(area.x, yy, &Span::styled("▌", focus), 1);
                    }
                    if let Some(m) = self.mark
                        && m.cell == ci
                        && m.line + usize::from(gap) == row
                    {
                        let cw = content_width(area.width);
                        let x = m.col.min(cw);
                        let w = m.width.min(cw - x);
                        buf.set_style(
                            Rect::new(area.x + 1 + x, yy, w, 1),
                            focus.add_modifier(Modifier::REVERSED),
                        );
                    }
                }
                y += 1;
            }
            skip = 0;
            ci += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ui::tui::theme::Theme;

    fn ctx(theme: &Theme) -> RenderCtx<'_> {
        RenderCtx {
            theme,
            width: 20,
            spinner: 0,
            show_thinking: true,
            thinking_expanded: false,
            generation: 0,
        }
    }

    fn visible(t: &mut Transcript, c: &RenderCtx<'_>, h: u16) -> Vec<String> {
        let area = Rect::new(0, 0, 22, h);
        let mut buf = Buffer::empty(area);
        t.render(area, &mut buf, c, Style::default());
        (0..h)
            .map(|y| {
                (1..21)
                    .map(|x| buf[(x, y)].symbol().to_string())
                    .collect::<String>()
                    .trim_end()
                    .to_string()
            })
            .collect()
    }

    #[test]
    fn follows_bottom_and_stays_put_when_scrolled() {
        let theme = Theme::load("dark", None, false).unwrap();
        let c = ctx(&theme);
        let mut t = Transcript::default();
        for i in 0..10 {
            t.push(Cell::new(CellKind::Notice(format!("n{i}"))));
        }
        assert_eq!(visible(&mut t, &c, 3), vec!["· n8", "", "· n9"]);
        t.scroll_up(4, 3, &c);
        assert_eq!(visible(&mut t, &c, 3), vec!["· n6", "", "· n7"]);
        t.push(Cell::new(CellKind::Notice("new".into())));
        assert!(t.unseen);
        assert_eq!(visible(&mut t, &c, 3), vec!["· n6", "", "· n7"]);
        t.scroll_down(100, 3, &c);
        assert!(t.following());
        assert_eq!(visible(&mut t, &c, 3), vec!["· n9", "", "· new"]);
        t.scroll_home(3, &c);
        assert_eq!(visible(&mut t, &c, 3), vec!["· n0", "", "· n1"]);
    }
}
