//! Front ends. They render `AgentEvent`s and send user intents; they know no
//! HTTP and no SQL.

pub mod format;
pub mod run;

use crate::app::SessionChoice;
use crate::cli::{Failure, GlobalArgs};

/// `navi` / `navi --plain`.
pub async fn interactive(
    g: &GlobalArgs,
    plain: bool,
    choice: SessionChoice,
    profile: Option<String>,
) -> Result<u8, Failure> {
    let _ = (g, plain, choice, profile);
    Err(Failure::usage(
        "the interactive front ends are not built yet; use `navi run MESSAGE`",
    ))
}
