//! Slash commands: one parser and one dispatcher shared by the TUI and plain
//! mode. Front ends turn an [`Outcome`] into what they show.
//!
//! Invariant: a command that changes the session is an [`Op`] on its handle
//! (the handle checks whether a turn runs and words every refusal); opening,
//! listing and deleting other sessions go through [`App`]; what is left here
//! is text → op, and op → lines.
use crate::app::{App, SessionChoice, SessionHandle};
use crate::protocol::SessionMeta;
use crate::protocol::{AgentEvent, Op, OpError};
pub(crate) use export::{export_body, export_header, export_markdown};
use std::path::PathBuf;

#[derive(Clone, Debug, PartialEq)]
pub enum SlashCommand {
    SessionNew,
    SessionList,
    /// `None`: open the picker.
    SessionResume(Option<String>),
    SessionDelete(Option<String>),
    SessionPin(bool),
    SessionRename(String),
    ProfileList,
    ProfileSwitch(String),
    /// `None`: show the current model.
    Model(Option<String>),
    /// `/model NAME --default`: set it and save it as `[llm].default_model`.
    ModelDefault(Option<String>),
    Compact(crate::protocol::CompactMode),
    /// `/pin [n|last]` (true) and `/unpin n|last` (false).
    Pin(Option<String>, bool),
    Stop,
    Theme(Option<String>),
    Tools,
    Context,
    /// MCP servers: state, tools, stderr tail.
    Mcp,
    Copy(Option<usize>),
    Export(Option<PathBuf>),
    Thinking(Option<bool>),
    /// `/memory` and its arguments.
    Memory(Vec<String>),
    /// `/approvals [revoke TOOL|all]`: tools allowed for this session.
    Approvals(Vec<String>),
    /// `/attach PATH…`: handled by each front end (it owns the queue).
    Attach(Vec<String>),
    /// `/diff [N]`: what the session (or turn N) changed in the files.
    Diff(Option<String>),
    /// `/undo [--force]`: restore the files of the last turn.
    Undo(Vec<String>),
    /// `/rewind [N] [--files] [--force]`.
    Rewind(Vec<String>),
    /// `/show [N]`: the N-th tool result from the last, in full.
    Show(Option<String>),
    /// `/init`: a prompt (each front end sends it, see `custom_prompt`).
    Init,
    Help,
    Quit,
}

/// (usage, what it does) for /help and completion.
pub(crate) const COMMANDS: &[(&str, &str)] = &[
    ("/session new", "start a new session"),
    ("/session list", "list sessions"),
    (
        "/session resume [id|n]",
        "open a session (picker without an argument)",
    ),
    (
        "/session delete [id|n]",
        "delete a session (the current one without an argument)",
    ),
    ("/session pin", "pin the current session"),
    ("/session unpin", "unpin the current session"),
    ("/session rename <title>", "rename the current session"),
    ("/profile list", "list profiles"),
    ("/profile switch <id>", "switch this session's profile"),
    (
        "/model [name] [--default]",
        "show or set the model (\"default\" clears; --default also saves it in the config)",
    ),
    ("/compact", "summarise older context to free space"),
    (
        "/compact --preview",
        "show the summary first; /compact apply applies it",
    ),
    (
        "/pin [n|last]",
        "list messages, or keep one verbatim through compaction",
    ),
    ("/unpin n|last", "stop keeping a message verbatim"),
    ("/stop", "stop the running turn"),
    ("/theme [name]", "show or set the colour theme"),
    ("/tools", "list the tools of this profile"),
    ("/context", "show context use"),
    ("/mcp", "MCP servers: state, tools, stderr tail"),
    (
        "/copy [n]",
        "copy the last answer (or its n-th code block) to the clipboard",
    ),
    ("/export [file]", "save the transcript as Markdown"),
    ("/thinking on|off", "show or hide thinking"),
    (
        "/memory [list|search …]",
        "what navi remembers, and the inbox (accept/reject)",
    ),
    (
        "/attach <path…>",
        "attach files or images to your next message (or write @path)",
    ),
    (
        "/approvals [revoke <tool>|all]",
        "tools allowed for this session; revoke asks again",
    ),
    (
        "/diff [n]",
        "what navi changed in the files (this session, or turn n)",
    ),
    (
        "/undo",
        "restore the files the last turn changed (repeat: turn by turn)",
    ),
    (
        "/rewind [n] [--files]",
        "go back to before your message n (--files: the files too)",
    ),
    ("/show [n]", "print a tool result in full (1 = the last)"),
    (
        "/init",
        "ask the model to write (or improve) the project's AGENTS.md",
    ),
    ("/help", "this list"),
    ("/quit", "leave navi"),
];

/// Parses a line starting with `/`. Errors are one-line hints; nothing is sent to the model.
pub fn parse(line: &str) -> Result<SlashCommand, String> {
    let line = line.trim();
    let mut words = line.split_whitespace();
    let head = words.next().unwrap_or("");
    let rest: Vec<&str> = words.collect();
    let arg = rest.first().map(|s| s.to_string());
    let tail = rest.join(" ");
    let tail_after_sub = rest.iter().skip(1).copied().collect::<Vec<_>>().join(" ");
    use SlashCommand::*;
    Ok(match head {
        "/session" | "/sessions" | "/s" => match arg.as_deref() {
            None | Some("list") | Some("ls") => SessionList,
            Some("new") => SessionNew,
            Some("resume") | Some("open") => SessionResume(rest.get(1).map(|s| s.to_string())),
            Some("delete") | Some("rm") => SessionDelete(rest.get(1).map(|s| s.to_string())),
            Some("pin") => SessionPin(true),
            Some("unpin") => SessionPin(false),
            Some("rename") if !tail_after_sub.is_empty() => SessionRename(tail_after_sub),
            Some("rename") => return Err("usage: /session rename <title>".into()),
            Some(other) => {
                return Err(format!(
                    "unknown /session subcommand '{other}'; use new, list, resume, delete, pin, unpin or rename"
                ));
            }
        },
        "/new" => SessionNew,
        "/resume" => SessionResume(arg),
        "/profile" | "/profiles" => match arg.as_deref() {
            None | Some("list") => ProfileList,
            Some("switch") => match rest.get(1) {
                Some(id) => ProfileSwitch(id.to_string()),
                None => return Err("usage: /profile switch <id>; see /profile list".into()),
            },
            Some(id) => ProfileSwitch(id.to_string()),
        },
        "/model" if rest.contains(&"--default") => ModelDefault(
            rest.iter()
                .find(|w| **w != "--default")
                .map(|s| s.to_string()),
        ),
        "/model" => Model(arg),
        "/compact" => Compact(pin::compact_mode(arg.as_deref())?),
        "/pin" | "/unpin" => Pin(arg, head == "/pin"),
        "/stop" => Stop,
        "/theme" => Theme(arg),
        "/tools" => Tools,
        "/context" => Context,
        "/mcp" => Mcp,
        "/copy" => match arg {
            None => Copy(None),
            Some(n) => Copy(Some(n.parse().map_err(|_| {
                format!("usage: /copy [n] — n is a code block number, got '{n}'")
            })?)),
        },
        "/export" => Export((!tail.is_empty()).then(|| PathBuf::from(tail))),
        "/thinking" => match arg.as_deref() {
            None => Thinking(None),
            Some("on") => Thinking(Some(true)),
            Some("off") => Thinking(Some(false)),
            Some(o) => return Err(format!("usage: /thinking on|off, got '{o}'")),
        },
        "/memory" => Memory(rest.iter().map(|s| s.to_string()).collect()),
        "/approvals" => Approvals(rest.iter().map(|s| s.to_string()).collect()),
        "/attach" => Attach(rest.iter().map(|s| s.to_string()).collect()),
        "/diff" => Diff(arg),
        "/undo" => Undo(rest.iter().map(|s| s.to_string()).collect()),
        "/rewind" => Rewind(rest.iter().map(|s| s.to_string()).collect()),
        "/show" => Show(arg),
        "/init" => Init,
        "/help" | "/?" => Help,
        "/quit" | "/exit" | "/q" => Quit,
        other => {
            let near: Vec<&str> = COMMANDS
                .iter()
                .map(|(u, _)| u.split_whitespace().next().unwrap_or(""))
                .filter(|c| c.starts_with(&other[..other.len().min(3)]))
                .collect();
            let hint = near
                .first()
                .map(|n| format!(" — did you mean {n}?"))
                .unwrap_or_default();
            return Err(format!("unknown command {other}{hint} (see /help)"));
        }
    })
}

/// Completions for a partial line (command names, subcommands, profile ids,
/// session numbers, theme names).
pub(crate) fn complete(line: &str, profiles: &[String], themes: &[String]) -> Vec<String> {
    let words: Vec<&str> = line.split_whitespace().collect();
    let trailing = line.ends_with(' ');
    let with = |prefix: &str, options: Vec<String>| -> Vec<String> {
        options
            .into_iter()
            .filter(|o| o.starts_with(prefix) && o != prefix)
            .collect()
    };
    match (words.as_slice(), trailing) {
        ([], _) => COMMANDS
            .iter()
            .map(|(u, _)| u.split_whitespace().next().unwrap_or("").to_string())
            .collect(),
        ([cmd], false) => {
            let mut v: Vec<String> = COMMANDS
                .iter()
                .map(|(u, _)| u.split_whitespace().next().unwrap_or("").to_string())
                .collect();
            v.dedup();
            with(cmd, v)
        }
        (["/profile", "switch"], true) => profiles
            .iter()
            .map(|p| format!("/profile switch {p}"))
            .collect(),
        (["/profile", "switch", p], false) => with(p, profiles.to_vec())
            .into_iter()
            .map(|x| format!("/profile switch {x}"))
            .collect(),
        ([cmd], true) | ([cmd, _], false) if !sub_words(cmd).is_empty() => {
            let p = if trailing { "" } else { words[1] };
            let subs = sub_words(cmd)
                .iter()
                .map(|s| s.trim_end().to_string())
                .collect();
            with(p, subs)
                .into_iter()
                .map(|w| {
                    // A word that needs an argument keeps its space.
                    let space = sub_words(cmd)
                        .iter()
                        .any(|s| s.trim_end() == w && s.ends_with(' '));
                    format!("{cmd} {w}{}", if space { " " } else { "" })
                })
                .collect()
        }
        (["/theme"], true) => themes.iter().map(|t| format!("/theme {t}")).collect(),
        (["/theme", t], false) => with(t, themes.to_vec())
            .into_iter()
            .map(|x| format!("/theme {x}"))
            .collect(),
        _ => Vec::new(),
    }
}

/// The words that may follow a command (a trailing space: it takes an
/// argument after it). Completion offers them after `/cmd ` and for a
/// partial word (`/profile s` → `switch`).
fn sub_words(cmd: &str) -> &'static [&'static str] {
    match cmd {
        "/session" => &["new", "list", "resume", "delete", "pin", "unpin", "rename"],
        "/profile" => &["list", "switch "],
        "/compact" => &["--preview", "apply"],
        "/thinking" => &["on", "off"],
        "/approvals" => &["list", "revoke "],
        "/memory" => &["list", "search ", "accept ", "reject ", "forget "],
        "/pin" | "/unpin" => &["last"],
        _ => &[],
    }
}

/// What a front end is showing right now.
#[derive(Clone, Debug)]
pub struct UiState {
    pub(crate) session: SessionMeta,
    pub(crate) show_thinking: bool,
    pub(crate) theme: String,
    /// The last assistant answer (for /copy).
    pub(crate) last_answer: String,
}

/// What a command asks the front end to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Outcome {
    /// Lines to show as a notice.
    Show(Vec<String>),
    /// The front end's session changed (another one, or this one rewound):
    /// show its history. A front end that reads the session's events takes
    /// them from the (new) handle again.
    Switched {
        session: SessionMeta,
        history: Vec<AgentEvent>,
        note: String,
        /// The session's stored context window (0: not known yet), so the
        /// status line shows it before the next message.
        window: u64,
    },
    /// Open a session picker with these sessions.
    Pick(Vec<SessionMeta>),
    Stop,
    Quit,
    /// Put this text on the clipboard (OSC 52).
    Copy(String),
    Theme(String),
    Thinking(bool),
    /// Compaction started on the current session; its events follow.
    Compacting(crate::protocol::CompactMode),
}

/// Code blocks (fenced) of a Markdown text.
pub(crate) fn code_blocks(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur: Option<String> = None;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            match cur.take() {
                Some(block) => out.push(block),
                None => cur = Some(String::new()),
            }
        } else if let Some(b) = cur.as_mut() {
            b.push_str(line);
            b.push('\n');
        }
    }
    out
}

fn err(e: impl ToString) -> String {
    e.to_string()
}

/// An op on the open session: its reply as lines, its refusal as the error.
fn op(session: &SessionHandle, op: Op) -> Result<Outcome, String> {
    session
        .submit(op)
        .map(|r| Outcome::Show(r.lines()))
        .map_err(err)
}

/// Runs a command on the open session `session` (which a session command
/// replaces). Errors are one-line messages to show inline.
pub(crate) fn execute(
    cmd: SlashCommand,
    app: &App,
    session: &mut SessionHandle,
    st: &mut UiState,
) -> Result<Outcome, String> {
    let out = run(cmd, app, session, st);
    // What a command changed (title, pin, profile) shows at once.
    if let Some(meta) = session.info() {
        st.session = meta;
    }
    out
}

fn run(
    cmd: SlashCommand,
    app: &App,
    session: &mut SessionHandle,
    st: &mut UiState,
) -> Result<Outcome, String> {
    use SlashCommand::*;
    let idle = |s: &SessionHandle| {
        if s.is_running() {
            Err(OpError::Busy.to_string())
        } else {
            Ok(())
        }
    };
    match cmd {
        SessionNew => {
            idle(session)?;
            // Pending until its first message: no row is written now.
            let profile = Some(st.session.profile_id.clone());
            let out = switch(
                app,
                session,
                SessionChoice::New,
                profile,
                "new session".into(),
            )?;
            app.spawn_memory_extraction(&session.id());
            Ok(out)
        }
        SessionList => {
            let list = app.sessions().map_err(err)?;
            let mut lines: Vec<String> = list
                .iter()
                .enumerate()
                .map(|(i, s)| crate::ui::format::session_line(i, s, &st.session.id))
                .collect();
            if session.is_pending() {
                lines.insert(0, crate::ui::format::pending_session_line(&st.session));
            }
            Ok(Outcome::Show(lines))
        }
        SessionResume(None) => Ok(Outcome::Pick(app.sessions().map_err(err)?)),
        SessionResume(Some(key)) => {
            idle(session)?;
            let meta = app.find_session(&key).map_err(err)?;
            let note = format!(
                "resumed {}",
                if meta.title.is_empty() {
                    &meta.id
                } else {
                    &meta.title
                }
            );
            if meta.id == session.id() {
                return reloaded(session, note);
            }
            switch(app, session, SessionChoice::Id(meta.id), None, note)
        }
        SessionDelete(key) => {
            let current = match &key {
                None => true,
                Some(k) => {
                    session.is_pending() && *k == session.id()
                        || app.find_session(k).map_err(err)?.id == session.id()
                }
            };
            if !current {
                let meta = app
                    .delete_session(key.as_deref().unwrap_or_default())
                    .map_err(err)?;
                return Ok(Outcome::Show(vec![format!("deleted session {}", meta.id)]));
            }
            let (id, profile) = (session.id(), st.session.profile_id.clone());
            session.submit(Op::Delete).map_err(err)?;
            let note = format!("deleted {id}; started a new session");
            switch(app, session, SessionChoice::New, Some(profile), note)
        }
        SessionPin(pinned) => op(session, Op::PinSession { pinned }),
        SessionRename(title) => op(session, Op::Rename { title }),
        ProfileList => Ok(Outcome::Show(
            app.profile_lines(Some(&st.session.profile_id)),
        )),
        ProfileSwitch(profile) => op(session, Op::SwitchProfile { profile }),
        Model(None) => Ok(Outcome::Show(vec![session.model_line()])),
        Model(Some(m)) => op(session, Op::SwitchModel { model: Some(m) }),
        ModelDefault(m) => model_default::execute(app, session, m),
        Compact(mode) => {
            session.submit(Op::Compact { mode }).map_err(err)?;
            Ok(Outcome::Compacting(mode))
        }
        Pin(None, true) => session.pin_list().map(Outcome::Show),
        Pin(arg, pinned) => op(
            session,
            Op::Pin {
                index: pin::index(arg.as_deref())?,
                pinned,
            },
        ),
        Stop => Ok(Outcome::Stop),
        Theme(None) => Ok(Outcome::Show(vec![format!("theme: {}", st.theme)])),
        Theme(Some(t)) => Ok(Outcome::Theme(t)),
        Tools => Ok(Outcome::Show(session.tool_lines())),
        Mcp => Ok(Outcome::Show(session.mcp_lines())),
        Context => session.context_lines().map(Outcome::Show),
        Copy(n) => {
            if st.last_answer.is_empty() {
                return Err("nothing to copy yet".into());
            }
            match n {
                None => Ok(Outcome::Copy(st.last_answer.clone())),
                Some(i) => {
                    let blocks = code_blocks(&st.last_answer);
                    blocks
                        .get(i.saturating_sub(1))
                        .cloned()
                        .map(Outcome::Copy)
                        .ok_or_else(|| {
                            format!("the last answer has {} code block(s)", blocks.len())
                        })
                }
            }
        }
        Export(path) => {
            let history = session.history()?;
            let path = path.unwrap_or_else(|| {
                PathBuf::from(format!(
                    "navi-{}.md",
                    &st.session.id[..8.min(st.session.id.len())]
                ))
            });
            std::fs::write(&path, export_markdown(&st.session, &history))
                .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
            Ok(Outcome::Show(vec![format!(
                "transcript saved to {}",
                path.display()
            )]))
        }
        Thinking(None) => Ok(Outcome::Thinking(!st.show_thinking)),
        Thinking(Some(b)) => Ok(Outcome::Thinking(b)),
        Memory(args) => memory::execute(app, &args).map(Outcome::Show),
        Approvals(args) => match approvals::parse(&args)? {
            None => Ok(Outcome::Show(session.approval_lines())),
            Some(tool) => op(session, Op::RevokeApproval { tool }),
        },
        Attach(_) => Err("/attach is handled by the front end".into()),
        Init => Err("/init is sent by the front end".into()),
        Show(arg) => show::lines(session, arg.as_deref()).map(Outcome::Show),
        Diff(arg) => {
            let turn = arg.map(|a| checkpoint::number(&a, "turn")).transpose()?;
            session.diff(turn).map(Outcome::Show)
        }
        Undo(args) => op(
            session,
            Op::Undo {
                force: checkpoint::parse_undo(&args)?,
            },
        ),
        Rewind(args) => match checkpoint::parse_rewind(&args)? {
            checkpoint::Rewind::List => session.rewind_list().map(Outcome::Show),
            checkpoint::Rewind::To { n, files, force } => {
                let reply = session
                    .submit(Op::Rewind {
                        message: n,
                        files,
                        force,
                    })
                    .map_err(err)?;
                reloaded(session, reply.lines().join("\n"))
            }
        },
        Help => {
            let mut lines: Vec<String> = COMMANDS
                .iter()
                .map(|(u, d)| format!("{u:<26} {d}"))
                .collect();
            let own = custom_items(session);
            if !own.is_empty() {
                lines.push("your commands (<config>/commands, <project>/.navi/commands):".into());
                lines.extend(own.iter().map(|(u, d)| format!("{u:<26} {d}")));
            }
            Ok(Outcome::Show(lines))
        }
        Quit => Ok(Outcome::Quit),
    }
}

/// The OSC 52 sequence that puts `text` on the clipboard (wrapped for tmux).
pub(crate) fn osc52(text: &str) -> String {
    use base64::Engine;
    let b64 = base64::engine::general_purpose::STANDARD.encode(text);
    let seq = format!("\x1b]52;c;{b64}\x07");
    if std::env::var_os("TMUX").is_some() {
        format!("\x1bPtmux;{}\x1b\\", seq.replace('\x1b', "\x1b\x1b"))
    } else {
        seq
    }
}

pub(crate) mod approvals;
pub(crate) mod args;
pub(crate) mod checkpoint;
mod custom;
pub(crate) use custom::{CommandWatch, custom_items, custom_prompt, prompt_builtins};
mod export;
mod memory;
mod model_default;
mod pin;
mod show;
mod switch;
use switch::reloaded;
pub(crate) use switch::switch;
#[cfg(test)]
mod tests;
