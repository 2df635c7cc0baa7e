//! Start-up plumbing every entry point shares: the global flags, loading the
//! configuration, building the [`App`], and the error type that carries an
//! exit code. The command line (`cli`) and the front ends (`ui`) both use
//! it, so neither imports the other's internals.
use super::{App, AppOptions};
use crate::config::{self, BackendKind, LoadOptions};
use clap::Args;
use std::path::PathBuf;

#[derive(Args, Debug, Clone, Default)]
pub(crate) struct GlobalArgs {
    /// Backend for this invocation (overrides config and profile).
    #[arg(long, global = true, value_enum)]
    pub(crate) backend: Option<BackendKind>,
    /// Provider for this invocation: where bare model names go (anthropic,
    /// openai, openrouter, groq, local, ollama, … or a [providers.NAME]).
    #[arg(long, global = true, value_name = "NAME")]
    pub(crate) provider: Option<String>,
    /// Model for this invocation (overrides config and profile); `provider/model`
    /// picks the provider too (`-m anthropic/claude-sonnet-4-5`).
    #[arg(short = 'm', long, global = true, value_name = "NAME")]
    pub(crate) model: Option<String>,
    /// Config file (instead of $NAVI_CONFIG or the platform config dir).
    #[arg(long, global = true, value_name = "FILE")]
    pub(crate) config: Option<PathBuf>,
    /// Log level for the log file (error, warn, info, debug, trace).
    #[arg(long, global = true, value_name = "LEVEL")]
    pub(crate) log_level: Option<String>,
    /// No planner calls in this run (the full-screen UI, --plain and `run`;
    /// as `[planning] enabled = false`).
    #[arg(long)]
    pub(crate) no_plan: bool,
    /// Kernel sandbox for tool processes: read-only, workspace-write
    /// (default), full-access, or required (workspace-write, and tools refuse
    /// to run where the kernel cannot enforce it).
    #[arg(long, global = true, value_name = "MODE")]
    pub(crate) sandbox: Option<String>,
    /// The interactive faces' approval flags (`navi --full-auto`, …),
    /// set from the top-level command line; `navi run` has its own.
    #[arg(skip)]
    pub(crate) approvals: ApprovalFlags,
}

/// `--full-auto`, `--approve-all`, `--approve TOOL` of the full-screen UI
/// and plain mode.
#[derive(Clone, Debug, Default)]
pub(crate) struct ApprovalFlags {
    pub(crate) full_auto: bool,
    pub(crate) approve_all: bool,
    pub(crate) approve: Vec<String>,
}

/// An error with its exit code.
pub struct Failure {
    pub(crate) code: u8,
    pub(crate) message: String,
}

impl Failure {
    pub(crate) fn usage(m: impl ToString) -> Self {
        Failure {
            code: 2,
            message: m.to_string(),
        }
    }
    pub(crate) fn runtime(m: impl ToString) -> Self {
        Failure {
            code: 1,
            message: m.to_string(),
        }
    }
    /// Ends the command with exit 0 and no message (stdout was closed).
    pub(crate) fn quiet() -> Self {
        Failure {
            code: 0,
            message: String::new(),
        }
    }
}

impl From<crate::app::AppError> for Failure {
    fn from(e: crate::app::AppError) -> Self {
        match e {
            crate::app::AppError::Persona { .. }
            | crate::app::AppError::NoProfile(_)
            | crate::app::AppError::WorkDir(_)
            | crate::app::AppError::McpServers(_)
            | crate::app::AppError::Backend(_) => Failure::usage(e),
            crate::app::AppError::Store(
                crate::session::StoreError::NotFound(_) | crate::session::StoreError::Ambiguous(_),
            ) => Failure::usage(e),
            other => Failure::runtime(other),
        }
    }
}

/// True for the error a write to a closed pipe gives.
pub(crate) fn is_broken_pipe(e: &std::io::Error) -> bool {
    e.kind() == std::io::ErrorKind::BrokenPipe
}

/// Loads config (exit 2 on problems) and starts file logging.
pub(crate) fn load_config(
    g: &GlobalArgs,
) -> Result<(config::Config, config::Paths, config::Overrides), Failure> {
    let opts = LoadOptions {
        config_file: g.config.clone(),
        backend: g.backend,
        provider: g.provider.clone(),
        model: g.model.clone(),
        log_level: g.log_level.clone(),
    };
    let getenv = |k: &str| std::env::var(k).ok();
    let (mut config, paths, overrides) = config::load(&opts, &getenv).map_err(Failure::usage)?;
    if let Some(mode) = &g.sandbox {
        config.sandbox.mode = mode.clone();
        crate::sandbox::validate(&config.sandbox, "the --sandbox flag").map_err(Failure::usage)?;
    }
    Ok((config, paths, overrides))
}

pub(crate) fn build_app(
    g: &GlobalArgs,
    opts: AppOptions,
) -> Result<(App, crate::logging::LogGuard), Failure> {
    let (config, paths, overrides) = load_config(g)?;
    let cwd = std::env::current_dir().unwrap_or_else(|_| std::path::PathBuf::from("."));
    crate::sandbox::check_workspace(&config.sandbox, &cwd).map_err(Failure::usage)?;
    let log = crate::logging::init(&paths.log_dir, &config.logging.level);
    let mut opts = AppOptions {
        backend_forced: g.backend.is_some() || g.provider.is_some(),
        ..opts
    };
    if opts.session_model.is_none() {
        opts.session_model = g.model.clone();
    }
    opts.full_auto |= g.approvals.full_auto;
    opts.approve_all |= g.approvals.approve_all;
    opts.approve.extend(g.approvals.approve.iter().cloned());
    let approve = opts.approve.clone();
    let app = App::build(config, paths, overrides, opts)?;
    if g.no_plan {
        app.set_default_tweaks(super::TurnTweaks {
            no_plan: true,
            ..Default::default()
        });
    }
    for w in app.startup_warnings() {
        eprintln!("warning: {w}");
    }
    check_approvals(&app, &approve)?;
    Ok((app, log))
}

/// `--approve` names must be tools that exist (a typo is a usage error).
fn check_approvals(app: &App, names: &[String]) -> Result<(), Failure> {
    let mut known = app.tool_names();
    known.sort();
    for n in names {
        // MCP tools (`<server>__<tool>`) are listed only once their server
        // has started: a configured server's name is enough here.
        if let Some((server, _)) = n.split_once("__")
            && app.has_mcp_server(server)
        {
            continue;
        }
        if !known.contains(n) {
            return Err(Failure::usage(format!(
                "--approve {n}: no such tool{}; known tools: {}",
                crate::config::suggest_name(n, &known),
                known.join(", ")
            )));
        }
    }
    Ok(())
}
