//! The command line: argument parsing, start-up, exit codes.
//!
//! Exit codes: 0 ok, 1 runtime failure, 2 usage or configuration error,
//! 130 interrupted. Start-up is lazy: `--help`/`--version` do no I/O; other
//! commands read the config and open only what they use.

mod admin;
mod check_online;
mod complete;
mod context;
#[cfg(test)]
mod docs_sync;
mod extra;
mod keys;
mod man_page;
mod mcp;
mod memory;
pub(crate) mod out;
mod transcript;

pub(crate) use crate::app::launch::{Failure, GlobalArgs, build_app, load_config};
pub(crate) use crate::ui::run::RunArgs;

use crate::app::SessionChoice;
use clap::{Parser, Subcommand};
use std::process::ExitCode;

#[derive(Parser, Debug)]
#[command(
    name = "navi",
    version,
    about = "Navi: a personal, modular AI agent for the terminal"
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: GlobalArgs,
    /// Line mode (no full-screen UI): for SSH, dumb terminals and screen readers.
    #[arg(long)]
    pub(crate) plain: bool,
    /// Start a new session instead of opening the last one.
    #[arg(long, conflicts_with_all = ["session", "continue_last"])]
    pub(crate) new: bool,
    /// Open this session (id, id prefix, or list number).
    #[arg(short = 's', long, value_name = "ID")]
    pub(crate) session: Option<String>,
    /// Use this profile (for a new session, or switch the opened one).
    #[arg(short = 'p', long, value_name = "ID")]
    pub(crate) profile: Option<String>,
    /// Continue the most recent session (the default on a terminal; with
    /// piped input a new session is started unless this is given).
    #[arg(short = 'c', long = "continue", conflicts_with = "session")]
    pub(crate) continue_last: bool,
    /// File changes inside the workspace and sandboxed commands run without
    /// asking; leaving the sandbox (or the workspace) still asks.
    #[arg(long)]
    pub(crate) full_auto: bool,
    /// Allow every risky tool without asking (a tool set to "deny" in the
    /// config stays denied; leaving the sandbox still asks).
    #[arg(long)]
    pub(crate) approve_all: bool,
    /// Allow this risky tool without asking (repeatable).
    #[arg(long, value_name = "TOOL")]
    pub(crate) approve: Vec<String>,
    #[command(subcommand)]
    pub(crate) command: Option<Command>,
}

#[derive(Subcommand, Debug)]
pub(crate) enum Command {
    /// Send one message and print the answer (non-interactive).
    Run(RunArgs),
    /// List the models of every configured provider that answers.
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
    /// Serve the Agent Client Protocol on stdin/stdout, for editors (Zed, Neovim…; docs/acp.md).
    Acp,
    /// API keys of providers: set (input hidden), list, remove (docs/providers.md).
    Keys {
        #[command(subcommand)]
        command: keys::KeysCommand,
    },
    /// Completion candidates for the shell scripts (profiles, models,
    /// sessions); not for people.
    #[command(name = "__complete", hide = true)]
    Complete {
        /// What to list: profiles, models or sessions.
        what: String,
    },
    /// Runs a command inside navi's sandbox for an editor's terminal
    /// (`navi acp`); navi writes the policy file. Not for people.
    #[command(name = "__sandbox-exec", hide = true)]
    SandboxExec {
        /// The policy file navi wrote (read once, then deleted).
        #[arg(long, value_name = "FILE")]
        policy: std::path::PathBuf,
        /// The program and its arguments, after `--`.
        #[arg(last = true, required = true, value_name = "COMMAND")]
        command: Vec<std::ffi::OsString>,
    },
}

#[derive(Subcommand, Debug)]
pub(crate) enum ConfigCommand {
    /// Print the files and directories in use.
    Path {
        /// Print JSON instead of lines.
        #[arg(long)]
        json: bool,
    },
    /// Validate the config file, profiles and user tools; exit 2 on errors.
    Check {
        /// Also ask each provider in use for its models (exit 1 when one
        /// does not answer).
        #[arg(long)]
        online: bool,
    },
}

/// How `navi sessions export` writes a session.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum ExportFormat {
    Md,
    Json,
}

#[derive(Subcommand, Debug)]
pub(crate) enum McpCommand {
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

#[derive(Subcommand, Debug)]
pub(crate) enum SessionsCommand {
    /// List this project's sessions (pinned first, then most recent).
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
        /// Every project's sessions (and those stored before navi recorded
        /// projects).
        #[arg(long)]
        all: bool,
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
    /// What navi changed in the files during a session (every turn, or one).
    Diff {
        /// Session id, id prefix, or list number.
        id: String,
        /// Only this turn (the number of your message).
        turn: Option<usize>,
    },
}

#[derive(Subcommand, Debug)]
pub(crate) enum ProfilesCommand {
    /// List the loaded profiles (and any that failed to load).
    List {
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
}

pub fn main() -> ExitCode {
    if let Some(code) = crate::tools::watchdog::serve_if_asked() {
        return code;
    }
    crate::tools::watchdog::enable();
    out::quiet_on_broken_pipe();
    crate::sandbox::enforce::keep_environ_private();
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

/// Session and profile flags written before a subcommand (`navi -p dev run
/// …`) apply to it as if written after it; a subcommand that has no use for
/// one is refused rather than silently ignoring it.
fn hoist_front_end_flags(cli: &mut Cli) -> Result<(), Failure> {
    let given = |on: bool, flag: &'static str| on.then_some(flag);
    let front = [
        given(cli.plain, "--plain"),
        given(cli.new, "--new"),
        given(cli.session.is_some(), "--session"),
        given(cli.profile.is_some(), "--profile"),
        given(cli.continue_last, "--continue"),
        given(cli.global.no_plan, "--no-plan"),
        given(cli.full_auto, "--full-auto"),
        given(cli.approve_all, "--approve-all"),
        given(!cli.approve.is_empty(), "--approve"),
    ];
    let refuse = |flag: &str, cmd: &str| {
        Err(Failure::usage(format!(
            "{flag} does not apply to `navi {cmd}`; it is for the interactive front ends and `navi run` (write it after `run`)"
        )))
    };
    match &mut cli.command {
        None => Ok(()),
        Some(Command::Run(args)) => {
            if cli.plain {
                return refuse("--plain", "run");
            }
            if args.profile.is_none() {
                args.profile = cli.profile.take();
            }
            args.full_auto |= cli.full_auto;
            args.approve_all |= cli.approve_all;
            args.approve.append(&mut cli.approve);
            if args.session.is_none() && !args.continue_last {
                args.session = cli.session.take();
                args.continue_last = cli.continue_last;
            }
            if args.no_save && (args.session.is_some() || args.continue_last) {
                return Err(Failure::usage(
                    "--no-save cannot be combined with --session or --continue",
                ));
            }
            Ok(())
        }
        Some(Command::Context { profile, .. }) if profile.is_none() && cli.profile.is_some() => {
            *profile = cli.profile.take();
            match front.iter().flatten().find(|f| **f != "--profile") {
                Some(f) => refuse(f, "context"),
                None => Ok(()),
            }
        }
        Some(Command::Compact { session, .. }) if session.is_none() && cli.session.is_some() => {
            *session = cli.session.take();
            match front.iter().flatten().find(|f| **f != "--session") {
                Some(f) => refuse(f, "compact"),
                None => Ok(()),
            }
        }
        // An editor's sessions plan or not as `--no-plan` says.
        Some(Command::Acp) => match front.iter().flatten().find(|f| **f != "--no-plan") {
            Some(f) => refuse(f, "acp"),
            None => Ok(()),
        },
        Some(other) => match front.iter().flatten().next() {
            Some(f) => refuse(f, command_name(other)),
            None => Ok(()),
        },
    }
}

fn command_name(c: &Command) -> &'static str {
    match c {
        Command::Run(_) => "run",
        Command::Models { .. } => "models",
        Command::Sessions { .. } => "sessions",
        Command::Profiles { .. } => "profiles",
        Command::Memory { .. } => "memory",
        Command::Context { .. } => "context",
        Command::Compact { .. } => "compact",
        Command::Completions { .. } => "completions",
        Command::Man => "man",
        Command::Config { .. } => "config",
        Command::Last { .. } => "last",
        Command::Mcp { .. } => "mcp",
        Command::Acp => "acp",
        Command::Keys { .. } => "keys",
        Command::Complete { .. } => "__complete",
        Command::SandboxExec { .. } => crate::tools::sandbox_exec::SUBCOMMAND,
    }
}

async fn dispatch(mut cli: Cli) -> Result<u8, Failure> {
    crate::app::use_server_cache();
    hoist_front_end_flags(&mut cli)?;
    cli.global.approvals = crate::app::launch::ApprovalFlags {
        full_auto: cli.full_auto,
        approve_all: cli.approve_all,
        approve: std::mem::take(&mut cli.approve),
    };
    let out = match cli.command {
        Some(Command::Run(args)) => crate::ui::run::run(&cli.global, args).await,
        Some(Command::Models { json }) => admin::models(&cli.global, json).await,
        Some(Command::Sessions { command }) => admin::sessions(&cli.global, command).await,
        Some(Command::Profiles {
            command: ProfilesCommand::List { json },
        }) => admin::profiles(&cli.global, json),
        Some(Command::Memory { command }) => memory::run(&cli.global, command).await,
        Some(Command::Context { profile, json }) => {
            context::context(&cli.global, profile, json).await
        }
        Some(Command::Compact { session, preview }) => {
            context::compact(&cli.global, session, preview).await
        }
        Some(Command::Completions { shell }) => extra::completions(shell),
        Some(Command::Man) => extra::man(),
        Some(Command::Config { command }) => extra::config(&cli.global, command).await,
        Some(Command::Last { id }) => extra::last(&cli.global, id.as_deref()),
        Some(Command::Mcp { command }) => mcp::run(&cli.global, command).await,
        Some(Command::Acp) => crate::acp::run(&cli.global).await,
        Some(Command::Keys { command }) => keys::run(&cli.global, command),
        Some(Command::Complete { what }) => complete::values(&cli.global, &what).await,
        Some(Command::SandboxExec { policy, command }) => {
            Ok(crate::tools::sandbox_exec::main(&policy, &command).await)
        }
        None => {
            // Piped input is a script: it starts afresh unless told otherwise.
            let piped = cli.plain && !std::io::IsTerminal::is_terminal(&std::io::stdin());
            let choice = match (&cli.session, cli.new, cli.continue_last) {
                (Some(id), _, _) => SessionChoice::Id(id.clone()),
                (None, true, _) => SessionChoice::New,
                (None, false, true) => SessionChoice::Continue,
                (None, false, false) if piped => SessionChoice::New,
                (None, false, false) => SessionChoice::Latest,
            };
            crate::ui::interactive(&cli.global, cli.plain, choice, cli.profile).await
        }
    };
    // A check of a model server started after an answer ends (or is given
    // up) before the process does.
    crate::app::finish_server_checks().await;
    out
}
