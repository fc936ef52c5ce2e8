//! rab-tui: the terminal UI toolkit.
//!
//! It owns the terminal abstraction, the main-screen renderer (finished lines go into
//! the terminal's own scrollback; the live region at the bottom is diffed against the
//! previous frame and rewritten from the first changed line, inside synchronized
//! output), components that render to lines, the editor, markdown and code rendering,
//! the diff view, select lists, keys and keybindings, and themes. It must not know about
//! agents, messages or models.

#![deny(missing_docs)]

pub mod ansi;
pub mod autocomplete;
pub mod background;
pub mod component;
pub mod diff;
pub mod editor;
mod editor_view;
pub mod fuzzy;
pub mod highlight;
pub mod input;
pub mod keys;
pub mod markdown;
mod markdown_table;
pub mod marks;
pub mod screen;
pub mod select;
pub mod terminal;
pub mod theme;
pub mod wrap;

pub use component::{Component, CursorPos, RenderCx};
pub use theme::{Color, ColorDepth, Role, Theme};
