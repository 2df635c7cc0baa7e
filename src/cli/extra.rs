//! Small commands for scripts and set-up: `navi completions`, `navi man`,
//! `navi config path|check`, `navi last`, `navi sessions export`.
//! Everything they print goes through `out` (a closed pipe is a quiet exit 0).
use super::{ConfigCommand, ExportFormat, Failure, GlobalArgs, load_config, out};
use crate::app::App;
use crate::config::{Config, Paths};
use std::path::{Path, PathBuf};

/// `navi completions SHELL`.
pub(crate) fn completions(shell: clap_complete::Shell) -> Result<u8, Failure> {
    out::text(&super::complete::script(shell))?;
    Ok(0)
}

/// `navi man`: the roff man page.
pub(crate) fn man() -> Result<u8, Failure> {
    out::text(&super::man_page::render().map_err(Failure::runtime)?)?;
    Ok(0)
}

pub(crate) async fn config(g: &GlobalArgs, cmd: ConfigCommand) -> Result<u8, Failure> {
    match cmd {
        ConfigCommand::Path { json } => path(g, json),
        ConfigCommand::Check { online } => {
            let code = check(g)?;
            if !online || code != 0 {
                return Ok(code);
            }
            let (config, paths, _) = load_config(g)?;
            let (lines, failed) = super::check_online::check(&config, &paths).await;
            for l in lines {
                crate::outln!("{l}")?;
            }
            Ok(u8::from(failed))
        }
    }
}

fn under(base: &Path, dir: &str) -> PathBuf {
    let d = PathBuf::from(dir);
    if d.is_absolute() { d } else { base.join(d) }
}

/// Every file and directory navi reads or writes, by name.
fn locations(config: &Config, paths: &Paths) -> Vec<(&'static str, PathBuf)> {
    vec![
        (
            "config_file",
            paths
                .config_file
                .clone()
                .unwrap_or_else(|| paths.config_dir.join("config.toml")),
        ),
        ("config_dir", paths.config_dir.clone()),
        ("profiles_dir", paths.config_dir.join("profiles")),
        ("tools_dir", under(&paths.config_dir, &config.tools.dir)),
        ("themes_dir", paths.config_dir.join("themes")),
        ("data_dir", paths.data_dir.clone()),
        ("database", paths.db_path.clone()),
        (
            "session_files_dir",
            under(&paths.data_dir, &config.session_files.dir),
        ),
        ("history_file", paths.data_dir.join("history.txt")),
        ("log_dir", paths.log_dir.clone()),
    ]
}

fn path(g: &GlobalArgs, json: bool) -> Result<u8, Failure> {
    let (config, paths, _) = load_config(g)?;
    let locs = locations(&config, &paths);
    if json {
        let map: serde_json::Map<String, serde_json::Value> = locs
            .iter()
            .map(|(k, p)| (k.to_string(), p.display().to_string().into()))
            .collect();
        let s = serde_json::to_string_pretty(&map).map_err(Failure::runtime)?;
        out::line(&s)?;
        return Ok(0);
    }
    for (k, p) in &locs {
        let note = if paths.config_file.is_none() && *k == "config_file" {
            "  (not present; built-in defaults and environment in use)"
        } else if !p.exists() {
            "  (not created yet)"
        } else {
            ""
        };
        crate::outln!("{k:<18} {}{note}", p.display())?;
    }
    Ok(0)
}

/// What one check found.
pub(crate) struct Finding {
    pub(crate) level: Level,
    pub(crate) text: String,
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Level {
    Ok,
    /// Works, but probably not as meant (does not fail the check).
    Warning,
    Error,
}

impl Finding {
    fn error(text: impl Into<String>) -> Self {
        Finding {
            level: Level::Error,
            text: text.into(),
        }
    }
    fn warning(text: impl Into<String>) -> Self {
        Finding {
            level: Level::Warning,
            text: text.into(),
        }
    }
    fn ok(text: impl Into<String>) -> Self {
        Finding {
            level: Level::Ok,
            text: text.into(),
        }
    }
}

/// What checks look at: the loaded config and the tools that loaded.
pub(crate) struct CheckInput<'a> {
    pub(crate) config: &'a Config,
    pub(crate) paths: &'a Paths,
    pub(crate) tool_names: Vec<String>,
    pub(crate) tool_errors: Vec<String>,
}

type Check = fn(&CheckInput) -> Vec<Finding>;

/// The checks `navi config check` runs, in order. Add one line per area
/// (e.g. MCP servers).
const CHECKS: &[(&str, Check)] = &[
    ("config", check_config),
    ("user tools", check_tools),
    ("profiles", check_profiles),
    ("mcp servers", check_mcp),
    ("sandbox", check_sandbox),
];

fn check(g: &GlobalArgs) -> Result<u8, Failure> {
    let (config, paths, _) = match load_config(g) {
        Ok(v) => v,
        Err(f) => {
            crate::outln!("config: error: {}", f.message)?;
            return Ok(2);
        }
    };
    let env = crate::tools::ToolEnv::new(std::sync::Arc::new(config.clone()), paths.clone());
    let mut reg = crate::tools::ToolRegistry::new();
    crate::tools::builtin::register_all(&mut reg);
    let tool_errors =
        crate::tools::user::reload_into(&mut reg, &crate::tools::user::tools_dir(&env));
    let reg = std::sync::Arc::new(std::sync::RwLock::new(reg));
    crate::tools::builtin::register_self_extension(&reg);
    let mut names = reg.read().map(|r| r.names()).unwrap_or_default();
    // Registered by the agent once it exists (see agent::delegate).
    names.extend(
        [
            crate::protocol::SPAWN_AGENT_TOOL,
            crate::protocol::SWITCH_PROFILE_TOOL,
        ]
        .map(String::from),
    );
    // Registered with the memory store when memory is on (see app::App::build).
    if config.memory.enabled {
        names.extend(["memory_search", "memory_forget"].map(String::from));
    }
    let input = CheckInput {
        config: &config,
        paths: &paths,
        tool_names: names,
        tool_errors,
    };
    let mut errors = 0;
    for (area, run) in CHECKS {
        for f in run(&input) {
            let word = match f.level {
                Level::Ok => "ok",
                Level::Warning => "warning",
                Level::Error => {
                    errors += 1;
                    "error"
                }
            };
            crate::outln!("{area}: {word}: {}", f.text)?;
        }
    }
    if errors > 0 {
        eprintln!("navi: {errors} problem(s) found");
        return Ok(2);
    }
    Ok(0)
}

fn check_config(i: &CheckInput) -> Vec<Finding> {
    let mut v = vec![Finding::ok(match &i.paths.config_file {
        Some(p) => format!("{} parsed", p.display()),
        None => "no config file; defaults and environment in use".into(),
    })];
    for name in i.config.security.approval_tools.keys() {
        if !i.tool_names.contains(name) {
            v.push(Finding::error(format!(
                "[security].approval_tools names unknown tool '{name}'{}",
                crate::config::suggest_name(name, &i.tool_names)
            )));
        }
    }
    v
}

fn check_sandbox(i: &CheckInput) -> Vec<Finding> {
    let c = &i.config.sandbox;
    let cwd = std::env::current_dir().unwrap_or_else(|_| PathBuf::from("."));
    if let Err(e) = crate::sandbox::check_workspace(c, &cwd) {
        return vec![Finding::error(e.to_string())];
    }
    match crate::sandbox::startup_warning(c) {
        Some(w) => vec![Finding::warning(w)],
        None => vec![Finding::ok(crate::sandbox::describe(c))],
    }
}

fn check_tools(i: &CheckInput) -> Vec<Finding> {
    let mut v: Vec<Finding> = i.tool_errors.iter().map(Finding::error).collect();
    if v.is_empty() {
        v.push(Finding::ok(format!(
            "{} tools available",
            i.tool_names.len()
        )));
    }
    v
}

fn check_profiles(i: &CheckInput) -> Vec<Finding> {
    let reg = crate::profile::ProfileRegistry::load(Some(&i.paths.config_dir.join("profiles")));
    let mut v: Vec<Finding> = reg
        .errors
        .iter()
        .map(|e| Finding::error(e.to_string()))
        .collect();
    for p in reg.all() {
        let mut seen = std::collections::BTreeSet::new();
        for t in p.enabled_tools.iter().chain(&p.subagent_tools) {
            // `<server>__<tool>` names are checked by `check_mcp`.
            if t.contains("__") {
                continue;
            }
            if !i.tool_names.contains(t) && seen.insert(t) {
                // Skipped at run time, so a warning: the profile still works.
                v.push(Finding::warning(format!(
                    "profile {}: tool '{t}' does not exist and is skipped{}",
                    p.id,
                    crate::config::suggest_name(t, &i.tool_names)
                )));
            }
        }
    }
    if !v.iter().any(|f| f.level == Level::Error) {
        v.push(Finding::ok(format!("{} profiles loaded", reg.ids().len())));
    }
    v
}

/// `navi last [ID]`: the last answer, exactly as stored.
pub(crate) fn last(g: &GlobalArgs, id: Option<&str>) -> Result<u8, Failure> {
    let (app, _log) = super::build_app(g, crate::app::AppOptions::default())?;
    let key = match id {
        Some(id) => id.to_string(),
        None => app
            .sessions()?
            .first()
            .map(|m| m.id.clone())
            .ok_or_else(|| Failure::runtime("no sessions yet; start one with `navi run \"…\"`"))?,
    };
    let (id, answer) = app.last_answer(&key)?;
    if answer.is_empty() {
        return Err(Failure::runtime(format!("session {id} has no answer yet")));
    }
    out::line(answer.trim_end())?;
    Ok(0)
}

/// `navi sessions export ID --format md|json`, streamed a page at a time.
pub(crate) fn export(app: &App, id: &str, format: ExportFormat) -> Result<u8, Failure> {
    use super::transcript::{json_array_end, json_field, json_row};
    let mut t = app.transcript(id)?;
    let json = format == ExportFormat::Json;
    // The members in the order navi always wrote them: session, messages.
    if json {
        out::text(&format!(
            "{{\n{}  \"messages\": [",
            json_field("session", &t.meta, true)
        ))?;
    } else {
        out::text(&crate::ui::commands::export_header(&t.meta))?;
    }
    let mut first = true;
    while let Some((rows, events)) = t.next_page()? {
        let chunk = if json {
            let mut s = String::new();
            for m in &rows {
                s.push_str(&json_row(m, first));
                first = false;
            }
            s
        } else {
            crate::ui::commands::export_body(&events)
        };
        out::text(&chunk)?;
    }
    if json {
        out::line(&format!("{}}}", json_array_end(!first, false)))?;
    }
    Ok(0)
}

/// MCP servers, offline: the config itself was validated when it loaded;
/// here a stdio server's program must be found (on PATH or as a path), and
/// profiles may only name MCP tools of configured servers. Starting them is
/// `navi mcp check`.
fn check_mcp(i: &CheckInput) -> Vec<Finding> {
    use crate::config::mcp::McpTransport;
    let servers = &i.config.mcp_servers;
    let mut v = Vec::new();
    for (name, s) in servers {
        if !s.enabled {
            v.push(Finding::ok(format!("{name}: disabled")));
            continue;
        }
        match s.transport_kind() {
            McpTransport::Stdio => {
                if program_found(&s.command) {
                    v.push(Finding::ok(format!("{name}: {} found", s.command)));
                } else {
                    v.push(Finding::error(format!(
                        "{name}: [mcp_servers.{name}].command '{}' is not found on PATH; install it or give its full path",
                        s.command
                    )));
                }
            }
            _ => v.push(Finding::ok(format!("{name}: {}", s.url))),
        }
    }
    let reg = crate::profile::ProfileRegistry::load(Some(&i.paths.config_dir.join("profiles")));
    for p in reg.all() {
        for t in p.enabled_tools.iter().chain(&p.subagent_tools) {
            if let Some((server, _)) = t.split_once("__")
                && !servers.contains_key(server)
            {
                v.push(Finding::warning(format!(
                    "profile {}: tool '{t}' names MCP server '{server}', which is not configured",
                    p.id
                )));
            }
        }
    }
    if !servers.is_empty() {
        v.push(Finding::ok(
            "run `navi mcp check` to start the servers and list their tools".to_string(),
        ));
    }
    v
}

/// Whether `cmd` names a program that exists: a path, or a name on PATH.
fn program_found(cmd: &str) -> bool {
    if cmd.contains('/') {
        return std::path::Path::new(cmd).is_file();
    }
    std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| d.join(cmd).is_file()))
}

#[cfg(test)]
mod tests {
    use crate::cli::Cli;
    use clap::CommandFactory;

    /// Every argument and subcommand in `--help` says what it does.
    #[test]
    fn every_argument_has_a_description() {
        fn walk(cmd: &clap::Command, path: &str, missing: &mut Vec<String>) {
            for a in cmd.get_arguments() {
                let id = a.get_id().as_str();
                if id == "help" || id == "version" {
                    continue;
                }
                if a.get_help().is_none() && a.get_long_help().is_none() {
                    missing.push(format!("{path} {id}"));
                }
            }
            for sub in cmd.get_subcommands() {
                let p = format!("{path} {}", sub.get_name());
                if sub.get_about().is_none() && sub.get_name() != "help" {
                    missing.push(p.clone());
                }
                walk(sub, &p, missing);
            }
        }
        let mut missing = Vec::new();
        walk(&Cli::command(), "navi", &mut missing);
        assert!(missing.is_empty(), "no description: {missing:?}");
    }

    #[test]
    fn near_misses_are_suggested() {
        let known = vec!["terminal".to_string(), "todo".to_string()];
        assert_eq!(
            crate::config::suggest_name("termnal", &known),
            "; did you mean 'terminal'?"
        );
        assert_eq!(crate::config::suggest_name("zzzzzz", &known), "");
    }
}
