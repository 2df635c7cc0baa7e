//! Code highlighting for the TUI: the shared highlighter
//! (`ui::render::highlight`), warmed after the first frame. Until [`ready`],
//! code is shown plain and the event loop redraws once it is.
pub use crate::ui::render::highlight::{ready, warm_up};
