//! Issue 35 item 4 through the real binary: everything navi reads as
//! configuration (the config file, `NAVI_CONFIG`, profiles, user tools) or
//! keeps as state (the session database) stays unchanged whatever a tool
//! does, wherever it lives — with the workspace being `$HOME` (navi's dirs
//! inside it) and with `NAVI_CONFIG` naming a file in the workspace — and
//! through `terminal`, `code_exec`, a user tool and a stdio MCP server, as
//! root and as an ordinary user. Appending, renaming the file or renaming
//! the directory that holds it are all refused.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::sandbox_support::{FRONTS, User, env_with, open_up_for, run_probes};
use serde_json::{Value, json};
use std::path::PathBuf;

fn snapshot(files: &[PathBuf]) -> Vec<(PathBuf, Vec<u8>)> {
    files
        .iter()
        .map(|f| (f.clone(), std::fs::read(f).unwrap_or_default()))
        .collect()
}

fn assert_refused(reports: &[Value], raw: &[String], n: usize, user: User) {
    assert_eq!(reports.len(), FRONTS.len(), "{raw:?}");
    for ((front, r), raw) in FRONTS.iter().zip(reports).zip(raw) {
        assert!(!r.is_null(), "{front:?}: {raw}");
        for i in 0..n {
            for k in ["append_target", "replace_target", "move_parent"] {
                let key = format!("{k}{i}");
                assert_ne!(r[&key], "ok", "{user:?} {front:?}: {key} worked: {r}");
            }
        }
    }
}

async fn workspace_is_home(user: User) {
    let env = env_with("");
    let home = env.path("");
    let fd77 = env.path("fd77.txt");
    std::fs::write(&fd77, "").unwrap();
    // The session database exists before the run (a previous session).
    std::fs::create_dir_all(env.path("data")).unwrap();
    if user == User::Nobody {
        open_up_for(&env, &[&home]);
    }
    let targets = vec![
        env.path("cfg/config.toml"),
        env.path("cfg/profiles/tester/config.json"),
        env.path("cfg/tools/probe.json"),
    ];
    let before = snapshot(&targets);
    let args = json!({"outside": env.path("none"), "inside": "$TMPDIR", "targets": targets});
    let p = run_probes(&env, user, &home, &[], &FRONTS, &args, &fd77).await;
    assert_eq!(p.code, 0, "{}", p.stderr);
    assert_refused(&p.reports, &p.raw, targets.len(), user);
    assert_eq!(snapshot(&targets), before, "a config file changed");
    assert!(env.path("cfg/profiles").is_dir() && env.path("cfg").is_dir());
}

#[tokio::test]
async fn config_in_a_home_workspace_stays_read_only_as_root() {
    workspace_is_home(User::Root).await;
}

#[tokio::test]
async fn config_in_a_home_workspace_stays_read_only_as_an_ordinary_user() {
    workspace_is_home(User::Nobody).await;
}

/// `NAVI_CONFIG` names a file inside the workspace (and the database lives
/// there too, `[storage].db_path`).
#[tokio::test]
async fn a_navi_config_file_inside_the_workspace_stays_read_only() {
    let env = env_with("");
    let work = env.path("work");
    std::fs::create_dir_all(work.join("conf")).unwrap();
    let inside_cfg = work.join("conf/navi.toml");
    let text = std::fs::read_to_string(env.path("cfg/config.toml")).unwrap();
    let db = work.join("state/navi.db");
    std::fs::create_dir_all(work.join("state")).unwrap();
    std::fs::write(
        &inside_cfg,
        format!(
            "[storage]\ndb_path = {:?}\n{text}",
            db.display().to_string()
        ),
    )
    .unwrap();
    let fd77 = env.path("fd77.txt");
    std::fs::write(&fd77, "").unwrap();
    let targets = vec![inside_cfg.clone(), db.clone()];
    let vars = [("NAVI_CONFIG", inside_cfg.display().to_string())];
    let args = json!({"outside": env.path("none"), "inside": "$TMPDIR", "targets": targets});
    let p = run_probes(&env, User::Root, &work, &vars, &FRONTS, &args, &fd77).await;
    assert_eq!(p.code, 0, "{}", p.stderr);
    assert!(db.exists(), "the database is where the config says");
    let cfg_after = std::fs::read_to_string(&inside_cfg).unwrap();
    assert!(!cfg_after.contains("planted"), "{cfg_after}");
    assert_refused(&p.reports, &p.raw, targets.len(), User::Root);
    // The rest of the workspace stays writable.
    let r = &p.reports[0];
    assert_eq!(r["mkfifo_inside"], "ok", "{r}");
}

/// The project's instructions and commands (`AGENTS.md`, `.navi/`) in the
/// workspace: read at the next turn, so no sandboxed process may change them.
#[tokio::test]
async fn project_instructions_and_commands_in_the_workspace_stay_read_only() {
    let env = env_with("");
    let work = env.path("work");
    std::fs::create_dir_all(work.join(".navi/commands")).unwrap();
    let agents = work.join("AGENTS.md");
    let command = work.join(".navi/commands/ship.md");
    std::fs::write(&agents, "Answer in English.\n").unwrap();
    std::fs::write(&command, "Ship it: $ARGUMENTS\n").unwrap();
    let fd77 = env.path("fd77.txt");
    std::fs::write(&fd77, "").unwrap();
    let targets = vec![agents.clone(), command.clone()];
    let before = snapshot(&targets);
    let args = json!({"outside": env.path("none"), "inside": "$TMPDIR", "targets": targets});
    let p = run_probes(&env, User::Root, &work, &[], &FRONTS, &args, &fd77).await;
    assert_eq!(p.code, 0, "{}", p.stderr);
    for (front, r) in FRONTS.iter().zip(&p.reports) {
        for i in 0..targets.len() {
            for k in ["append_target", "replace_target"] {
                let key = format!("{k}{i}");
                assert_ne!(r[&key], "ok", "{front:?}: {key} worked: {r}");
            }
        }
    }
    assert_eq!(snapshot(&targets), before, "a project file changed");
    // The rest of the workspace stays writable.
    assert_eq!(p.reports[0]["mkfifo_inside"], "ok", "{}", p.reports[0]);
}
