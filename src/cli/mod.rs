//! The command line: argument parsing, start-up, exit codes.
//!
//! Exit codes: 0 ok, 1 runtime failure, 2 usage or configuration error,
//! 130 interrupted. Start-up is lazy: `--help`/`--version` do no I/O; other
//! commands read the config and open only what they use.

mod admin;
mod context;
mod extra;
mod mcp;
mod memory;
pub mod out;

pub use admin::ago;
pub use extra::suggest as suggest_name;

use crate::app::{App, AppOptions, SessionChoice};
use crate::config::{self, BackendKind, LoadOptions};
use clap::{Args, Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "navi",
    version,
    about = "Navi: a personal, modular AI agent for the terminal"
)]
pub struct Cli {
    #[command(flatten)]
    pub global: GlobalArgs,
    /// Line mode (no full-screen UI): for SSH, dumb terminals and screen readers.
    #[arg(long)]
    pub plain: bool,
    /// Start a new session instead of opening the last one.
    #[arg(long, conflicts_with_all = ["session", "continue_last"])]
    pub new: bool,
    /// Open this session (id, id prefix, or list number).
    #[arg(short = 's', long, value_name = "ID")]
    pub session: Option<String>,
    /// Use this profile (for a new session, or switch the opened one).
    #[arg(short = 'p', long, value_name = "ID")]
    pub profile: Option<String>,
    /// Continue the most recent session (the default on a terminal; with
    /// piped input a new session is started unless this is given).
    #[arg(short = 'c', long = "continue", conflicts_with = "session")]
    pub continue_last: bool,
    #[command(subcommand)]
    pub command: Option<Command>,
}

#[derive(Args, Debug, Clone, Default)]
pub struct GlobalArgs {
    /// Backend for this invocation (overrides config and profile).
    #[arg(long, global = true, value_enum)]
    pub backend: Option<BackendKind>,
    /// Model for this invocation (overrides config and profile).
    #[arg(short = 'm', long, global = true, value_name = "NAME")]
    pub model: Option<String>,
    /// Config file (instead of $NAVI_CONFIG or the platform config dir).
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Log level for the log file (error, warn, info, debug, trace).
    #[arg(long, global = true, value_name = "LEVEL")]
    pub log_level: Option<String>,
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// Send one message and print the answer (non-interactive).
    Run(RunArgs),
    /// List the models the configured backend serves.
    Models {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Manage saved sessions.
    Sessions {
        #[command(subcommand)]
        command: SessionsCommand,
    },
    /// List profiles.
    Profiles {
        #[command(subcommand)]
        command: ProfilesCommand,
    },
    /// Long-term memory: the facts Navi remembers and the inbox of proposed ones.
    Memory {
        #[command(subcommand)]
        command: memory::MemoryCommand,
    },
    /// Show what each profile's base request costs (persona, prompt, tools) in tokens.
    Context {
        /// Only this profile.
        #[arg(long, value_name = "ID")]
        profile: Option<String>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Summarise older turns of a session's context (the latest session by default).
    Compact {
        /// Session id, id prefix, or list number.
        #[arg(long, short = 's', value_name = "ID")]
        session: Option<String>,
        /// Show the summary first and apply it only when you answer y.
        #[arg(long)]
        preview: bool,
    },
    /// Print a shell completion script (e.g. `source <(navi completions bash)`).
    Completions {
        /// The shell to complete for.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the man page (roff) on stdout (e.g. `navi man > navi.1`).
    Man,
    /// Show where configuration lives, or check it.
    Config {
        #[command(subcommand)]
        command: ConfigCommand,
    },
    /// Print the last answer of the latest (or the given) session.
    Last {
        /// Session id, id prefix, or list number (default: the latest).
        #[arg(value_name = "ID")]
        id: Option<String>,
    },
    /// MCP servers: configuration, state and tools.
    Mcp {
        #[command(subcommand)]
        command: McpCommand,
    },
}

#[derive(Subcommand, Debug)]
pub enum ConfigCommand {
    /// Print the files and directories in use.
    Path {
        /// Print JSON instead of lines.
        #[arg(long)]
        json: bool,
    },
    /// Validate the config file, profiles and user tools; exit 2 on errors.
    Check,
}

/// How `navi sessions export` writes a session.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExportFormat {
    Md,
    Json,
}

#[derive(Subcommand, Debug)]
pub enum McpCommand {
    /// List the configured servers (starts nothing).
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Start the servers and list their tools (as the model sees them).
    Tools {
        /// Only this server.
        server: Option<String>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Start each server and report whether it answers; exit 1 if any fails.
    Check {
        /// Only this server.
        server: Option<String>,
    },
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The message; `-` reads it from standard input. Piped input given
    /// together with a message is sent after it.
    #[arg(value_name = "MESSAGE")]
    pub message: Option<String>,
    /// Profile for a new session (or switch the continued one).
    #[arg(short = 'p', long, value_name = "ID")]
    pub profile: Option<String>,
    /// Continue this session (id, id prefix, or list number).
    #[arg(short = 's', long, value_name = "ID", conflicts_with = "continue_last")]
    pub session: Option<String>,
    /// Continue the most recent session.
    #[arg(short = 'c', long = "continue")]
    pub continue_last: bool,
    /// Attach a file (repeatable): text inline, images as image input,
    /// other files stored as session files.
    #[arg(short = 'f', long = "file", value_name = "PATH")]
    pub files: Vec<PathBuf>,
    /// Extra system text for this run (added to the profile's prompt).
    #[arg(long, value_name = "TEXT")]
    pub system: Option<String>,
    /// Sampling temperature for this run (overrides the profile).
    #[arg(long, value_name = "T", value_parser = parse_temperature)]
    pub temperature: Option<f64>,
    /// Cap on the tokens the model may generate per call.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..))]
    pub max_tokens: Option<u32>,
    /// Skip the planning phases.
    #[arg(long)]
    pub no_plan: bool,
    /// Offer the model no tools.
    #[arg(long)]
    pub no_tools: bool,
    /// Ephemeral run: nothing is written to the session database.
    #[arg(long, conflicts_with_all = ["session", "continue_last"])]
    pub no_save: bool,
    /// Print the event stream as JSON lines on stdout.
    #[arg(long)]
    pub json: bool,
    /// Allow this risky tool without asking (repeatable).
    #[arg(long, value_name = "TOOL")]
    pub approve: Vec<String>,
    /// Allow every risky tool without asking (a tool set to "deny" in the
    /// config stays denied).
    #[arg(long)]
    pub approve_all: bool,
    /// If the session is busy in another navi, wait until it is free
    /// instead of failing.
    #[arg(long)]
    pub wait: bool,
}

#[derive(Subcommand, Debug)]
pub enum SessionsCommand {
    /// List sessions (pinned first, then most recent).
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Show a session's messages.
    Show {
        /// Session id, id prefix, or list number.
        id: String,
        /// Print JSON instead of text.
        #[arg(long)]
        json: bool,
    },
    /// Delete a session.
    Delete {
        /// Session id, id prefix, or list number.
        id: String,
    },
    /// Pin a session to the top of the list.
    Pin {
        /// Session id, id prefix, or list number.
        id: String,
    },
    /// Unpin a session.
    Unpin {
        /// Session id, id prefix, or list number.
        id: String,
    },
    /// Rename a session.
    Rename {
        /// Session id, id prefix, or list number.
        id: String,
        /// The new title.
        title: String,
    },
    /// Export a session's conversation (Markdown or JSON) on stdout.
    Export {
        /// Session id, id prefix, or list number.
        id: String,
        /// Output format.
        #[arg(long, value_enum, default_value = "md")]
        format: ExportFormat,
    },
}

#[derive(Subcommand, Debug)]
pub enum ProfilesCommand {
    /// List the loaded profiles (and any that failed to load).
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

fn parse_temperature(s: &str) -> Result<f64, String> {
    match s.parse::<f64>() {
        Ok(t) if (0.0..=2.0).contains(&t) => Ok(t),
        _ => Err(format!("expected a number from 0 to 2, got '{s}'")),
    }
}

/// An error with its exit code.
pub struct Failure {
    pub code: u8,
    pub message: String,
}

impl Failure {
    pub fn usage(m: impl ToString) -> Self {
        Failure {
            code: 2,
            message: m.to_string(),
        }
    }
    pub fn runtime(m: impl ToString) -> Self {
        Failure {
            code: 1,
            message: m.to_string(),
        }
    }
    /// Ends the command with exit 0 and no message (stdout was closed).
    pub fn quiet() -> Self {
        Failure {
            code: 0,
            message: String::new(),
        }
    }
}

impl From<crate::app::AppError> for Failure {
    fn from(e: crate::app::AppError) -> Self {
        match e {
            crate::app::AppError::Persona { .. } | crate::app::AppError::NoProfile { .. } => {
                Failure::usage(e)
            }
            crate::app::AppError::Store(
                crate::session::StoreError::NotFound(_) | crate::session::StoreError::Ambiguous(_),
            ) => Failure::usage(e),
            other => Failure::runtime(other),
        }
    }
}

/// Loads config (exit 2 on problems) and starts file logging.
pub fn load_config(
    g: &GlobalArgs,
) -> Result<(config::Config, config::Paths, config::Overrides), Failure> {
    let opts = LoadOptions {
        config_file: g.config.clone(),
        backend: g.backend,
        model: g.model.clone(),
        log_level: g.log_level.clone(),
    };
    let getenv = |k: &str| std::env::var(k).ok();
    config::load(&opts, &getenv).map_err(Failure::usage)
}

pub fn build_app(
    g: &GlobalArgs,
    opts: AppOptions,
) -> Result<(App, crate::logging::LogGuard), Failure> {
    let (config, paths, overrides) = load_config(g)?;
    let log = crate::logging::init(&paths.log_dir, &config.logging.level);
    let opts = AppOptions {
        backend_forced: g.backend.is_some(),
        ..opts
    };
    let app = App::build(config, paths, overrides, opts)?;
    for e in &app.profiles.errors {
        eprintln!("warning: skipped {e}");
    }
    for e in &app.tool_errors {
        eprintln!("warning: skipped user tool {e}");
    }
    for w in &app.profile_warnings {
        eprintln!("warning: {w}");
    }
    Ok((app, log))
}

pub fn main() -> ExitCode {
    out::quiet_on_broken_pipe();
    let cli = match Cli::try_parse() {
        Ok(c) => c,
        Err(e) => {
            let code = if e.use_stderr() { 2 } else { 0 };
            let _ = e.print();
            return ExitCode::from(code);
        }
    };
    // One-shot commands run on one thread (less start-up work); the
    // interactive front ends get two workers so drawing never waits on a task.
    let mut builder = if cli.command.is_some() {
        tokio::runtime::Builder::new_current_thread()
    } else {
        let mut b = tokio::runtime::Builder::new_multi_thread();
        b.worker_threads(2);
        b
    };
    let rt = match builder.enable_all().build() {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("navi: cannot start the async runtime: {e}");
            return ExitCode::from(1);
        }
    };
    let result = rt.block_on(dispatch(cli));
    // Don't wait for tasks stuck in blocking reads (e.g. stdin).
    rt.shutdown_timeout(std::time::Duration::from_millis(200));
    match result {
        Ok(code) => ExitCode::from(code),
        Err(f) => {
            if !f.message.is_empty() {
                eprintln!("navi: {}", f.message);
            }
            ExitCode::from(f.code)
        }
    }
}

async fn dispatch(cli: Cli) -> Result<u8, Failure> {
    match cli.command {
        Some(Command::Run(args)) => crate::ui::run::run(&cli.global, args).await,
        Some(Command::Models { json }) => admin::models(&cli.global, json).await,
        Some(Command::Sessions { command }) => admin::sessions(&cli.global, command),
        Some(Command::Profiles {
            command: ProfilesCommand::List { json },
        }) => admin::profiles(&cli.global, json),
        Some(Command::Memory { command }) => memory::run(&cli.global, command).await,
        Some(Command::Context { profile, json }) => context::context(&cli.global, profile, json),
        Some(Command::Compact { session, preview }) => {
            context::compact(&cli.global, session, preview).await
        }
        Some(Command::Completions { shell }) => extra::completions(shell),
        Some(Command::Man) => extra::man(),
        Some(Command::Config { command }) => extra::config(&cli.global, command),
        Some(Command::Last { id }) => extra::last(&cli.global, id.as_deref()),
        Some(Command::Mcp { command }) => mcp::run(&cli.global, command).await,
        None => {
            // Piped input is a script: it starts afresh unless told otherwise.
            let piped = cli.plain && !std::io::IsTerminal::is_terminal(&std::io::stdin());
            let choice = match (&cli.session, cli.new, cli.continue_last) {
                (Some(id), _, _) => SessionChoice::Id(id.clone()),
                (None, true, _) => SessionChoice::New,
                (None, false, true) => SessionChoice::Latest,
                (None, false, false) if piped => SessionChoice::New,
                (None, false, false) => SessionChoice::Latest,
            };
            crate::ui::interactive(&cli.global, cli.plain, choice, cli.profile).await
        }
    }
}
