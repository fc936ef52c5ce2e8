//! Components render themselves to lines for a given width. The renderer composes the
//! lines of the live region and diffs them against the previous frame; components never
//! write to the terminal.

use crate::theme::Theme;

/// What a component renders with.
#[derive(Clone, Copy, Debug)]
pub struct RenderCx<'a> {
    /// Terminal width in cells.
    pub width: usize,
    /// Colours.
    pub theme: &'a Theme,
}

/// Something that renders to lines. Each returned line must be at most `cx.width` cells
/// wide (use [`crate::wrap`]/[`crate::ansi::truncate`]) and contain no newline.
pub trait Component {
    /// The lines for this width.
    fn render(&self, cx: &RenderCx<'_>) -> Vec<String>;
}

/// Where the hardware cursor should be, relative to a component's first line.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CursorPos {
    /// Line index.
    pub row: usize,
    /// Cell column.
    pub col: usize,
}
