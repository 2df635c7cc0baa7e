//! Line mode (being built).
use crate::app::SessionChoice;
use crate::cli::{Failure, GlobalArgs};

pub async fn run(
    _g: &GlobalArgs,
    _choice: SessionChoice,
    _profile: Option<String>,
) -> Result<u8, Failure> {
    Err(Failure::usage(
        "plain mode is not built yet; use `navi run MESSAGE`",
    ))
}
