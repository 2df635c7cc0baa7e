//! Real local servers first (issue 11): the base prompt's token budget per
//! shipped profile, the window known before sending, prefix-cache-friendly
//! requests, a retry on a fresh connection, generation guards, OLLAMA_HOST.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use navi::agent::budget::{DEFAULT_PROFILE_BUDGET, PROFILE_BUDGET};
use navi::app::{App, AppOptions};
use navi::config::{Config, Overrides, Paths};

fn paths(dir: &std::path::Path) -> Paths {
    Paths {
        config_file: None,
        config_dir: dir.join("config"),
        data_dir: dir.join("data"),
        db_path: dir.join("data/navi.db"),
        log_dir: dir.join("data/logs"),
    }
}

fn app(dir: &std::path::Path, config: Config) -> App {
    App::build(
        config,
        paths(dir),
        Overrides::default(),
        AppOptions::default(),
    )
    .unwrap()
}

#[test]
fn every_shipped_profile_base_request_is_under_budget() {
    let dir = tempfile::tempdir().unwrap();
    let app = app(dir.path(), Config::default());
    let ids = app.profiles.ids();
    assert!(ids.len() >= 6, "{ids:?}");
    let mut report = Vec::new();
    for id in &ids {
        let cost = app.agent.base_cost(id).unwrap();
        report.push(navi::agent::budget::render(&cost).join("\n"));
        assert!(cost.tools.len() >= 3, "{id} has almost no tools: {cost:?}");
        let limit = if id == "developer" {
            DEFAULT_PROFILE_BUDGET
        } else {
            PROFILE_BUDGET
        };
        assert!(
            cost.total <= limit,
            "{id}: {} > {limit}\n{}",
            cost.total,
            report.join("\n")
        );
    }
    eprintln!("{}", report.join("\n"));
}
