//! navi's session commands in an editor: the ones that make sense there,
//! announced with `available_commands_update` (with the user's own
//! commands) and run when a prompt is `/name …`, through the same session
//! operations the TUI's commands use ([`crate::ui::commands::parse`], then
//! an [`Op`] or a read of the handle).
//!
//! A command answers its prompt at once with what it has to say; `/compact`
//! runs like a turn and its end answers.

use super::options;
use super::session::{Cx, Open, notify};
use crate::protocol::{CompactMode, Op};
use crate::ui::commands::SlashCommand;
use agent_client_protocol::v1::schema::{
    AvailableCommand, AvailableCommandInput, AvailableCommandsUpdate, SessionUpdate,
    UnstructuredCommandInput,
};

/// (name, what it does, what it takes) of the commands an editor offers.
pub(crate) const EDITOR_COMMANDS: &[(&str, &str, &str)] = &[
    ("compact", "summarise older context to free space", ""),
    ("context", "what fills the context window", ""),
    (
        "diff",
        "what navi changed in the files (this session, or turn N)",
        "turn number (optional)",
    ),
    (
        "undo",
        "restore the files the last turn changed (again: turn by turn)",
        "--force to overwrite files edited since",
    ),
    (
        "rewind",
        "list your messages, or go back to before message N",
        "N [--files] [--force]",
    ),
    (
        "model",
        "show the session's model, or set it (\"default\": the profile's list)",
        "model name (optional)",
    ),
    ("tools", "the tools of this session's profile", ""),
    ("mcp", "MCP servers: state, tools, recent errors", ""),
    (
        "approvals",
        "tools allowed for this session; revoke asks again",
        "revoke TOOL|all (optional)",
    ),
    ("rename", "rename this session", "new title"),
    ("help", "navi's commands", ""),
];

/// What running a command did.
pub(crate) enum Ran {
    /// Text to show; the prompt is answered now.
    Said(String),
    /// A run started (a compaction): its end answers the prompt.
    Started,
}

/// The command a prompt names (`/diff 2`), or `None` when it names none
/// of [`EDITOR_COMMANDS`] (the user's own commands and plain text go to
/// the model as before).
pub(crate) fn named(text: &str) -> Option<&'static str> {
    let word = text
        .trim_start()
        .strip_prefix('/')?
        .split_whitespace()
        .next()?;
    EDITOR_COMMANDS
        .iter()
        .find(|(n, _, _)| *n == word)
        .map(|(n, _, _)| *n)
}

/// Runs the command `text` names (see [`named`]) on the session.
pub(crate) fn run(open: &Open, cx: &Cx, text: &str) -> Ran {
    match execute(open, cx, text) {
        Ok(r) => r,
        Err(e) => Ran::Said(e),
    }
}

fn execute(open: &Open, cx: &Cx, text: &str) -> Result<Ran, String> {
    let text = text.trim();
    let Some(h) = open.handle() else {
        return Err(format!("session {} is closed", open.id));
    };
    let line = match text.strip_prefix("/rename") {
        Some(rest) => format!("/session rename{rest}"),
        None => text.to_string(),
    };
    let op = |op: Op| {
        h.submit(op)
            .map(|r| Ran::Said(r.lines().join("\n")))
            .map_err(|e| e.to_string())
    };
    let cmd = crate::ui::commands::parse(&line)?;
    let ran = match cmd {
        SlashCommand::Compact(CompactMode::Now) => {
            open.start_turn(Op::Compact {
                mode: CompactMode::Now,
            });
            Ran::Started
        }
        SlashCommand::Compact(_) => {
            return Err("in an editor, /compact compacts at once (no preview)".into());
        }
        SlashCommand::Context => Ran::Said(block("text", &h.context_lines()?)),
        SlashCommand::Diff(arg) => {
            let turn = arg
                .map(|a| crate::ui::commands::checkpoint::number(&a, "turn"))
                .transpose()?;
            let lines = h.diff(turn)?;
            Ran::Said(block("diff", &lines))
        }
        SlashCommand::Undo(args) => op(Op::Undo {
            force: crate::ui::commands::checkpoint::parse_undo(&args)?,
        })?,
        SlashCommand::Rewind(args) => match crate::ui::commands::checkpoint::parse_rewind(&args)? {
            crate::ui::commands::checkpoint::Rewind::List => {
                Ran::Said(block("text", &h.rewind_list()?))
            }
            crate::ui::commands::checkpoint::Rewind::To { n, files, force } => op(Op::Rewind {
                message: n,
                files,
                force,
            })?,
        },
        SlashCommand::Model(None) => Ran::Said(h.model_line()),
        SlashCommand::Model(Some(m)) => {
            let offered = options::offered_models(open);
            if m != options::DEFAULT_MODEL && !offered.contains(&m) {
                return Err(format!(
                    "'{m}' is not a model this session offers; choose one of: {}, {}",
                    options::DEFAULT_MODEL,
                    offered.join(", ")
                ));
            }
            let ran = op(Op::SwitchModel { model: Some(m) })?;
            options::announce(open, cx);
            ran
        }
        SlashCommand::Tools => Ran::Said(block("text", &h.tool_lines())),
        SlashCommand::Mcp => Ran::Said(block("text", &h.mcp_lines())),
        SlashCommand::Approvals(args) => match crate::ui::commands::approvals::parse(&args)? {
            None => Ran::Said(block("text", &h.approval_lines())),
            Some(tool) => op(Op::RevokeApproval { tool })?,
        },
        SlashCommand::SessionRename(title) => {
            let ran = op(Op::Rename { title })?;
            super::news::title(open, cx);
            ran
        }
        SlashCommand::Help => Ran::Said(help(open)),
        _ => return Err(format!("{text}: not available in an editor (see /help)")),
    };
    Ok(ran)
}

/// Lines as a fenced block (editors render Markdown; columns stay put).
fn block(lang: &str, lines: &[String]) -> String {
    if lines.is_empty() {
        return "(nothing)".into();
    }
    format!("```{lang}\n{}\n```", lines.join("\n"))
}

fn help(open: &Open) -> String {
    let mut out: Vec<String> = EDITOR_COMMANDS
        .iter()
        .map(|(n, d, _)| format!("- `/{n}`: {d}"))
        .collect();
    let own = own_commands(open);
    if !own.is_empty() {
        out.push(String::new());
        out.push("Your commands (<config>/commands, <project>/.navi/commands):".into());
        out.extend(own.iter().map(|(n, d, _)| format!("- `/{n}`: {d}")));
    }
    out.join("\n")
}

/// The user's own commands a built-in does not shadow.
fn own_commands(open: &Open) -> Vec<(String, String, String)> {
    open.custom_commands()
        .into_iter()
        .filter(|(n, _, _)| !EDITOR_COMMANDS.iter().any(|(b, _, _)| b == n))
        .collect()
}

/// Tells the client every command it can offer: navi's, then the user's
/// own. Sent after the answer that names the session.
pub(crate) fn announce(open: &Open, cx: &Cx) {
    let builtins = EDITOR_COMMANDS
        .iter()
        .map(|(n, d, hint)| (n.to_string(), d.to_string(), hint.to_string()));
    let list: Vec<AvailableCommand> = builtins
        .chain(own_commands(open))
        .map(|(name, d, hint)| {
            let c = AvailableCommand::new(name, d);
            if hint.is_empty() {
                c
            } else {
                c.input(AvailableCommandInput::Unstructured(
                    UnstructuredCommandInput::new(hint),
                ))
            }
        })
        .collect();
    notify(
        cx,
        &open.id,
        SessionUpdate::AvailableCommandsUpdate(AvailableCommandsUpdate::new(list)),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_navis_editor_commands_are_taken() {
        assert_eq!(named("/diff 2"), Some("diff"));
        assert_eq!(named("  /compact"), Some("compact"));
        assert_eq!(named("/rename New title"), Some("rename"));
        assert_eq!(named("/review src"), None);
        assert_eq!(named("/quit"), None);
        assert_eq!(named("diff"), None);
        assert_eq!(named("/"), None);
    }

    #[test]
    fn every_command_parses_as_the_tui_parses_it() {
        for (n, _, _) in EDITOR_COMMANDS {
            let line = if *n == "rename" {
                "/session rename x".to_string()
            } else {
                format!("/{n}")
            };
            assert!(crate::ui::commands::parse(&line).is_ok(), "{line}");
        }
    }
}
