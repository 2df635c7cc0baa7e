//! Full-screen TUI (being built).
use crate::app::SessionChoice;
use crate::cli::{Failure, GlobalArgs};

pub async fn run(
    _g: &GlobalArgs,
    _choice: SessionChoice,
    _profile: Option<String>,
) -> Result<u8, Failure> {
    Err(Failure::usage(
        "the full-screen UI is not built yet; use `navi run MESSAGE`",
    ))
}
