//! A ratatui backend that brings every colour it draws down to the
//! terminal's depth (`ui::color_depth`) before the real backend writes it.
//! Whatever a theme, a syntax theme or a cell asks for, a terminal that does
//! not show 24-bit colour never gets a `38;2;r;g;b` sequence.
use crate::ui::color_depth::{ColorDepth, ansi16, ansi256, rgb_of_256};
use ratatui::backend::{Backend, ClearType, WindowSize};
use ratatui::buffer::Cell;
use ratatui::layout::{Position, Size};
use ratatui::style::Color;

/// `inner`, with colours mapped to `depth`.
pub(crate) struct DepthBackend<B> {
    inner: B,
    depth: ColorDepth,
}

impl<B> DepthBackend<B> {
    pub(crate) fn new(inner: B, depth: ColorDepth) -> Self {
        DepthBackend { inner, depth }
    }
}

const NAMED16: [Color; 16] = [
    Color::Black,
    Color::Red,
    Color::Green,
    Color::Yellow,
    Color::Blue,
    Color::Magenta,
    Color::Cyan,
    Color::Gray,
    Color::DarkGray,
    Color::LightRed,
    Color::LightGreen,
    Color::LightYellow,
    Color::LightBlue,
    Color::LightMagenta,
    Color::LightCyan,
    Color::White,
];

/// `c` as the terminal at `depth` can show it.
pub(crate) fn map_color(c: Color, depth: ColorDepth) -> Color {
    match (c, depth) {
        (_, ColorDepth::True) => c,
        (Color::Rgb(r, g, b), ColorDepth::Ansi256) => Color::Indexed(ansi256(r, g, b)),
        (Color::Rgb(r, g, b), ColorDepth::Ansi16) => NAMED16[usize::from(ansi16(r, g, b))],
        (Color::Indexed(i), ColorDepth::Ansi16) => {
            let (r, g, b) = rgb_of_256(i);
            NAMED16[usize::from(ansi16(r, g, b))]
        }
        _ => c,
    }
}

fn map_cell(cell: &Cell, depth: ColorDepth) -> Cell {
    let mut c = cell.clone();
    c.fg = map_color(c.fg, depth);
    c.bg = map_color(c.bg, depth);
    c.underline_color = map_color(c.underline_color, depth);
    c
}

impl<B: Backend> Backend for DepthBackend<B> {
    type Error = B::Error;

    fn draw<'a, I>(&mut self, content: I) -> Result<(), Self::Error>
    where
        I: Iterator<Item = (u16, u16, &'a Cell)>,
    {
        if self.depth == ColorDepth::True {
            return self.inner.draw(content);
        }
        let depth = self.depth;
        let mapped: Vec<(u16, u16, Cell)> = content
            .map(|(x, y, c)| (x, y, map_cell(c, depth)))
            .collect();
        self.inner.draw(mapped.iter().map(|(x, y, c)| (*x, *y, c)))
    }
    fn append_lines(&mut self, n: u16) -> Result<(), Self::Error> {
        self.inner.append_lines(n)
    }
    fn hide_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.hide_cursor()
    }
    fn show_cursor(&mut self) -> Result<(), Self::Error> {
        self.inner.show_cursor()
    }
    fn get_cursor_position(&mut self) -> Result<Position, Self::Error> {
        self.inner.get_cursor_position()
    }
    fn set_cursor_position<P: Into<Position>>(&mut self, position: P) -> Result<(), Self::Error> {
        self.inner.set_cursor_position(position)
    }
    fn clear(&mut self) -> Result<(), Self::Error> {
        self.inner.clear()
    }
    fn clear_region(&mut self, clear_type: ClearType) -> Result<(), Self::Error> {
        self.inner.clear_region(clear_type)
    }
    fn size(&self) -> Result<Size, Self::Error> {
        self.inner.size()
    }
    fn window_size(&mut self) -> Result<WindowSize, Self::Error> {
        self.inner.window_size()
    }
    fn flush(&mut self) -> Result<(), Self::Error> {
        self.inner.flush()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ratatui::backend::TestBackend;
    use ratatui::style::Style;

    #[test]
    fn no_rgb_reaches_a_terminal_without_true_colour() {
        for depth in [ColorDepth::Ansi256, ColorDepth::Ansi16] {
            let mut b = DepthBackend::new(TestBackend::new(4, 1), depth);
            let mut cell = Cell::default();
            cell.set_symbol("x").set_style(
                Style::default()
                    .fg(Color::Rgb(0x7a, 0xa2, 0xf7))
                    .bg(Color::Indexed(196)),
            );
            b.draw([(0u16, 0u16, &cell)].into_iter()).unwrap();
            let got = &b.inner.buffer()[(0, 0)];
            assert!(!matches!(got.fg, Color::Rgb(..)), "{depth:?}: {got:?}");
            if depth == ColorDepth::Ansi16 {
                assert_eq!(got.fg, Color::LightBlue);
                assert_eq!(got.bg, Color::LightRed);
            } else {
                assert!(matches!(got.fg, Color::Indexed(_)));
                assert_eq!(got.bg, Color::Indexed(196));
            }
        }
        let mut b = DepthBackend::new(TestBackend::new(4, 1), ColorDepth::True);
        let mut cell = Cell::default();
        cell.set_style(Style::default().fg(Color::Rgb(1, 2, 3)));
        b.draw([(0u16, 0u16, &cell)].into_iter()).unwrap();
        assert_eq!(b.inner.buffer()[(0, 0)].fg, Color::Rgb(1, 2, 3));
    }
}
