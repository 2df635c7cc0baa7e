//! Front ends. They render `AgentEvent`s and send user intents; they know no
//! HTTP and no SQL beyond the `App` and `SessionStore` APIs.

pub mod color_depth;
pub mod commands;
pub(crate) mod format;
pub(crate) mod lines;
pub(crate) mod model_note;
pub(crate) mod neutral;
pub(crate) mod notify;
pub(crate) mod plain;
pub(crate) mod render;
pub(crate) mod run;
pub(crate) mod sandbox_words;
pub(crate) mod signals;
pub mod tui;
pub(crate) mod typeahead;
pub(crate) mod wording;

use crate::app::SessionChoice;
use crate::app::launch::{Failure, GlobalArgs};
use std::io::IsTerminal;

/// `navi` / `navi --plain`. Falls back to plain mode when the terminal can't
/// host the full-screen UI (stdout not a TTY, or `TERM=dumb`).
pub(crate) async fn interactive(
    g: &GlobalArgs,
    plain: bool,
    choice: SessionChoice,
    profile: Option<String>,
) -> Result<u8, Failure> {
    let dumb = std::env::var("TERM").map(|t| t == "dumb").unwrap_or(false);
    if plain || dumb || !std::io::stdout().is_terminal() || !std::io::stdin().is_terminal() {
        plain::run(g, choice, profile).await
    } else {
        tui::run(g, choice, profile).await
    }
}
