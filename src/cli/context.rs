//! `navi context`: what the fixed part of each profile's requests costs —
//! persona, profile prompt, every tool schema — in estimated tokens. No
//! network: it answers "will this fit my model's window?" before asking.
use super::{Failure, GlobalArgs, build_app};
use crate::agent::budget::{self, BaseCost};
use crate::app::AppOptions;
use std::io::Write;

pub fn context(g: &GlobalArgs, profile: Option<String>, json: bool) -> Result<u8, Failure> {
    let (app, _log) = build_app(g, AppOptions::default())?;
    let ids = match profile {
        Some(id) => vec![id],
        None => app.profiles.ids(),
    };
    let mut costs: Vec<BaseCost> = Vec::new();
    for id in &ids {
        costs.push(app.agent.base_cost(id).map_err(Failure::usage)?);
    }
    let text = if json {
        serde_json::to_string_pretty(&costs).map_err(Failure::runtime)?
    } else {
        costs
            .iter()
            .map(|c| budget::render(c).join("\n"))
            .collect::<Vec<_>>()
            .join("\n\n")
    };
    // A closed pipe (`navi context | head`) is not an error worth a panic.
    let mut out = std::io::stdout().lock();
    match writeln!(out, "{text}") {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(Failure::runtime(e)),
        _ => Ok(0),
    }
}
