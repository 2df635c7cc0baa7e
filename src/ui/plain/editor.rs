//! The reedline line editor, on a thread of its own.
//!
//! Invariants:
//! - reedline (raw mode) is active only while a request is being served; the
//!   async side sends a request only when no turn is printing, so the
//!   terminal is in cooked mode whenever agent output is written and SIGINT
//!   reaches tokio.
//! - Only the main prompt writes the history file; approval answers and
//!   picker choices go through a second editor with no history.
//! - Dropping the request channel ends the thread; the history is synced
//!   when its editor drops.
use crate::ui::commands;
use reedline::{
    ColumnarMenu, Completer, CompletionResult, EditCommand, Emacs, FileBackedHistory, HistoryItem,
    KeyCode, KeyModifiers, MenuBuilder, Prompt, PromptEditMode, PromptHistorySearch,
    PromptHistorySearchStatus, Reedline, ReedlineEvent, ReedlineMenu, Signal,
    SimpleMatchHighlighter, Span, Suggestion, ValidationResult, Validator,
    default_emacs_keybindings,
};
use std::borrow::Cow;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use tokio::sync::oneshot;

const MENU: &str = "completion_menu";
const HISTORY_SIZE: usize = 5000;

/// What a read returned.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Reply {
    Line(String),
    /// Ctrl-C.
    Interrupted,
    /// Ctrl-D on an empty line.
    Eof,
    /// SIGTERM / SIGHUP arrived: navi exits with this code.
    Signal(u8),
}

/// Which editor serves a request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Which {
    /// The main prompt: history, completion, multi-line.
    Main,
    /// A one-off question (approval, picker).
    Question,
}

struct Request {
    which: Which,
    prompt: NaviPrompt,
    /// Text put into the buffer before reading (typed during a turn).
    preset: String,
    /// Don't read: `preset` is a line already finished with Enter; record
    /// it in the history and answer it.
    submit: bool,
    reply: oneshot::Sender<Reply>,
}

pub(crate) struct EditorConfig {
    pub(crate) history: PathBuf,
    pub(crate) color: bool,
    pub(crate) profiles: Vec<String>,
    pub(crate) themes: Vec<String>,
    /// Session ids and model names for `/session resume` and `/model`.
    pub(crate) source: Option<Arc<dyn CompletionSource>>,
    /// The user's own commands (`/name args`, description).
    pub(crate) custom: Vec<(String, String)>,
}

/// Arguments that change while navi runs, looked up when Tab is pressed.
pub(crate) trait CompletionSource: Send + Sync {
    /// `(id prefix, title)` of the saved sessions, most recent first.
    fn sessions(&self) -> Vec<(String, String)>;
    /// The server's models; may be empty until a first lookup finished
    /// (asking starts it, off the editor thread).
    fn models(&self) -> Vec<String>;
}

pub(crate) struct Editor {
    tx: Option<mpsc::Sender<Request>>,
    thread: Option<std::thread::JoinHandle<()>>,
    brk: Arc<AtomicBool>,
    /// A read did not end when interrupted (see [`Editor::abandon`]).
    stuck: bool,
    /// Set when the history file could not be opened.
    pub(crate) history_warning: Option<String>,
}

/// `navi[profile]> ` with the session on the right.
#[derive(Clone)]
pub(crate) struct NaviPrompt {
    pub(crate) left: String,
    pub(crate) right: String,
    pub(crate) indicator: String,
}

impl Prompt for NaviPrompt {
    fn render_prompt_left(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.left)
    }
    fn render_prompt_right(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.right)
    }
    fn render_prompt_indicator(&self, _mode: PromptEditMode) -> Cow<'_, str> {
        Cow::Borrowed(&self.indicator)
    }
    fn render_prompt_multiline_indicator(&self) -> Cow<'_, str> {
        Cow::Borrowed("… ")
    }
    fn render_prompt_history_search_indicator(&self, h: PromptHistorySearch) -> Cow<'_, str> {
        let prefix = match h.status {
            PromptHistorySearchStatus::Passing => "",
            PromptHistorySearchStatus::Failing => "failing ",
        };
        Cow::Owned(format!("({prefix}search: {}) ", h.term))
    }
}

/// A trailing `\` asks for another line.
struct Continuation;

impl Validator for Continuation {
    fn validate(&self, line: &str) -> ValidationResult {
        if line.ends_with('\\') {
            ValidationResult::Incomplete
        } else {
            ValidationResult::Complete
        }
    }
}

/// Slash-command completion through the shared `commands::complete`.
pub(crate) struct SlashCompleter {
    pub(crate) profiles: Vec<String>,
    pub(crate) themes: Vec<String>,
    pub(crate) source: Option<Arc<dyn CompletionSource>>,
    pub(crate) custom: Vec<(String, String)>,
}

impl SlashCompleter {
    pub(crate) fn suggestions(&self, line: &str, pos: usize) -> Vec<Suggestion> {
        let upto = line.get(..pos).unwrap_or(line);
        let start = upto.rfind(char::is_whitespace).map(|i| i + 1).unwrap_or(0);
        let word = &upto[start..];
        // `@path` anywhere, or the paths after `/attach`.
        if let Some(partial) = word.strip_prefix('@') {
            return path_suggestions(partial, start + 1, upto.len());
        }
        if upto.starts_with("/attach ") {
            return path_suggestions(word, start, upto.len());
        }
        if let Some(s) = self.dynamic(upto) {
            return s;
        }
        if !upto.starts_with('/') || upto.contains('\n') {
            return Vec::new();
        }
        let own = self.custom.iter().filter_map(|(usage, d)| {
            let name = usage.split_whitespace().next()?;
            (!upto.contains(char::is_whitespace) && name.starts_with(upto) && name != upto).then(
                || Suggestion {
                    value: name.to_string(),
                    description: Some(d.clone()),
                    span: Span::new(0, upto.len()),
                    ..Suggestion::default()
                },
            )
        });
        let own: Vec<Suggestion> = own.collect();
        commands::complete(upto, &self.profiles, &self.themes)
            .into_iter()
            .map(|value| {
                let description = commands::COMMANDS
                    .iter()
                    .find(|(usage, _)| {
                        usage.split_whitespace().next() == Some(value.trim_end())
                            || usage.starts_with(value.trim_end())
                    })
                    .map(|(_, d)| d.to_string());
                Suggestion {
                    value,
                    description,
                    span: Span::new(0, upto.len()),
                    ..Suggestion::default()
                }
            })
            .chain(own)
            .collect()
    }
}

/// Files and directories whose path starts with `partial` (directories
/// end in `/`), replacing `from..to` of the line.
fn path_suggestions(partial: &str, from: usize, to: usize) -> Vec<Suggestion> {
    let (dir, prefix) = match partial.rfind('/') {
        Some(i) => (&partial[..=i], &partial[i + 1..]),
        None => ("", partial),
    };
    let base = if dir.is_empty() {
        std::path::PathBuf::from(".")
    } else {
        super::attach::expand(dir)
    };
    let Ok(entries) = std::fs::read_dir(&base) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            if !name.starts_with(prefix) || (name.starts_with('.') && !prefix.starts_with('.')) {
                return None;
            }
            let slash = if e.path().is_dir() { "/" } else { "" };
            Some(format!("{dir}{name}{slash}"))
        })
        .collect();
    names.sort();
    names.truncate(100);
    names
        .into_iter()
        .map(|value| Suggestion {
            value,
            span: Span::new(from, to),
            append_whitespace: false,
            ..Suggestion::default()
        })
        .collect()
}

impl SlashCompleter {
    /// `/session resume|delete ID` and `/model NAME` (shared matching:
    /// [`commands::args`]).
    fn dynamic(&self, upto: &str) -> Option<Vec<Suggestion>> {
        let source = self.source.as_ref()?;
        let (head, partial, list) = commands::args::context(upto)?;
        let found = match list {
            commands::args::ArgList::Sessions => {
                commands::args::sessions(&head, partial, &source.sessions())
            }
            commands::args::ArgList::Models => {
                commands::args::models(&head, partial, &source.models())
            }
        };
        Some(
            found
                .into_iter()
                .map(|(value, d)| Suggestion {
                    value,
                    description: (!d.is_empty()).then_some(d),
                    span: Span::new(0, upto.len()),
                    ..Suggestion::default()
                })
                .collect(),
        )
    }
}

impl Completer for SlashCompleter {
    fn complete(&mut self, line: &str, pos: usize) -> CompletionResult {
        CompletionResult::fresh(self.suggestions(line, pos))
    }
}

/// The text of a submitted line: `\`-newline continuations joined.
pub(crate) fn join_continuations(s: &str) -> String {
    s.replace("\\\r\n", "\n").replace("\\\n", "\n")
}

fn main_editor(cfg: &EditorConfig, brk: Arc<AtomicBool>) -> (Reedline, Option<String>) {
    let mut keys = default_emacs_keybindings();
    keys.add_binding(
        KeyModifiers::NONE,
        KeyCode::Tab,
        ReedlineEvent::UntilFound(vec![
            ReedlineEvent::Menu(MENU.into()),
            ReedlineEvent::MenuNext,
        ]),
    );
    keys.add_binding(
        KeyModifiers::ALT,
        KeyCode::Enter,
        ReedlineEvent::Edit(vec![EditCommand::InsertNewline]),
    );
    let menu = ColumnarMenu::default().with_name(MENU);
    let mut ed = Reedline::create()
        .with_edit_mode(Box::new(Emacs::new(keys)))
        .with_completer(Box::new(SlashCompleter {
            profiles: cfg.profiles.clone(),
            themes: cfg.themes.clone(),
            source: cfg.source.clone(),
            custom: cfg.custom.clone(),
        }))
        .with_menu(ReedlineMenu::EngineCompleter(Box::new(menu)))
        .with_quick_completions(true)
        .with_partial_completions(true)
        .with_validator(Box::new(Continuation))
        // Typed text in the terminal's own colour (the default highlighter
        // paints it white, unreadable on light backgrounds).
        .with_highlighter(Box::new(SimpleMatchHighlighter::default()))
        .with_ansi_colors(cfg.color)
        .use_bracketed_paste(true)
        .with_break_signal(brk);
    let mut warning = None;
    match FileBackedHistory::with_file(HISTORY_SIZE, cfg.history.clone()) {
        Ok(h) => ed = ed.with_history(Box::new(h)),
        Err(e) => {
            warning = Some(format!(
                "history is not saved: cannot open {} ({e})",
                cfg.history.display()
            ))
        }
    }
    (ed, warning)
}

impl Editor {
    /// Starts the editor thread. Building reedline and reading the history
    /// file happen there, off the start-up path.
    pub(crate) fn start(cfg: EditorConfig) -> Editor {
        let (tx, rx) = mpsc::channel::<Request>();
        let brk = Arc::new(AtomicBool::new(false));
        let (warn_tx, warn_rx) = mpsc::channel();
        let b = brk.clone();
        let thread = std::thread::Builder::new()
            .name("navi-editor".into())
            .spawn(move || {
                let (mut main, warning) = main_editor(&cfg, b.clone());
                let _ = warn_tx.send(warning);
                let mut question = Reedline::create()
                    .with_highlighter(Box::new(SimpleMatchHighlighter::default()))
                    .with_ansi_colors(cfg.color)
                    .with_break_signal(b);
                while let Ok(req) = rx.recv() {
                    let ed = match req.which {
                        Which::Main => &mut main,
                        Which::Question => &mut question,
                    };
                    if req.submit {
                        let item = HistoryItem::from_command_line(req.preset.clone());
                        if matches!(req.which, Which::Main) && ed.history_mut().save(item).is_ok() {
                            let _ = ed.sync_history();
                        }
                        let _ = req.reply.send(Reply::Line(req.preset));
                        continue;
                    }
                    if !req.preset.is_empty() {
                        ed.run_edit_commands(&[EditCommand::InsertString(req.preset)]);
                    }
                    let reply = match ed.read_line(&req.prompt) {
                        Ok(Signal::Success(s)) => Reply::Line(s),
                        Ok(Signal::CtrlD) => Reply::Eof,
                        Ok(Signal::CtrlC) | Ok(Signal::ExternalBreak(_)) => Reply::Interrupted,
                        Ok(_) => Reply::Interrupted,
                        Err(_) => Reply::Eof,
                    };
                    // Write the history now: a dropped SSH connection
                    // never reaches `shutdown`.
                    if matches!(req.which, Which::Main) && matches!(reply, Reply::Line(_)) {
                        let _ = main.sync_history();
                    }
                    let _ = req.reply.send(reply);
                }
            })
            .ok();
        let history_warning = if thread.is_some() {
            warn_rx.recv().ok().flatten()
        } else {
            Some("cannot start the line editor thread".into())
        };
        Editor {
            tx: thread.is_some().then_some(tx),
            thread,
            brk,
            stuck: false,
            history_warning,
        }
    }

    /// Sends a read request; the receiver gets the answer. An editor that
    /// is gone drops the sender (read it as end of input).
    pub(crate) fn request(&self, which: Which, prompt: NaviPrompt) -> oneshot::Receiver<Reply> {
        self.request_with(which, prompt, String::new(), false)
    }

    /// [`Editor::request`] with text already in the buffer; with `submit`
    /// the text is a finished line: it goes into the history and is
    /// answered without reading.
    pub(crate) fn request_with(
        &self,
        which: Which,
        prompt: NaviPrompt,
        preset: String,
        submit: bool,
    ) -> oneshot::Receiver<Reply> {
        let (reply, rx) = oneshot::channel();
        if let Some(tx) = &self.tx {
            let _ = tx.send(Request {
                which,
                prompt,
                preset,
                submit,
                reply,
            });
        }
        rx
    }

    /// Makes the current read return `Interrupted` (the question is moot).
    /// reedline clears the flag when it acts on it; call this only while a
    /// request is in flight, and await its answer.
    pub(crate) fn interrupt(&self) {
        self.brk.store(true, Ordering::SeqCst);
    }

    /// Ends the current read and waits (briefly) for its answer. A read
    /// that does not end (reedline spinning on a terminal that hung up) is
    /// abandoned: the editor is then marked stuck and never waited for again.
    pub(crate) async fn abandon(&mut self, rx: oneshot::Receiver<Reply>) {
        self.interrupt();
        if tokio::time::timeout(std::time::Duration::from_secs(1), rx)
            .await
            .is_err()
        {
            tracing::warn!("the line editor did not answer an interrupt; leaving it");
            self.stuck = true;
            // It left the terminal raw, with bracketed paste on: give it
            // back in a usable state (harmless when it is gone).
            let _ = crossterm::terminal::disable_raw_mode();
            use std::io::Write;
            let mut err = std::io::stderr();
            let _ = err.write_all(b"\x1b[?2004l\r\n");
            let _ = err.flush();
        }
    }

    /// Ends the thread and waits for it (the history file is synced); a
    /// stuck editor is left to end with the process.
    pub(crate) fn shutdown(&mut self) {
        self.tx = None;
        if self.stuck {
            self.thread = None;
            return;
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for Editor {
    fn drop(&mut self) {
        self.shutdown();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed;
    impl CompletionSource for Fixed {
        fn sessions(&self) -> Vec<(String, String)> {
            vec![
                ("3fa1b2c4".into(), "logs".into()),
                ("77aa0011".into(), String::new()),
            ]
        }
        fn models(&self) -> Vec<String> {
            vec!["qwen3:8b".into(), "llama3".into()]
        }
    }

    #[test]
    fn completes_commands_and_arguments() {
        let c = SlashCompleter {
            profiles: vec!["developer".into(), "discuss".into()],
            themes: vec!["dark".into(), "light".into()],
            source: Some(Arc::new(Fixed)),
            custom: Vec::new(),
        };
        let values = |line: &str| -> Vec<String> {
            c.suggestions(line, line.len())
                .into_iter()
                .map(|s| s.value)
                .collect()
        };
        assert_eq!(values("/ses"), vec!["/session"]);
        assert!(values("/session re").contains(&"/session resume".to_string()));
        assert_eq!(
            values("/profile switch d"),
            vec!["/profile switch developer", "/profile switch discuss"]
        );
        assert_eq!(values("/theme l"), vec!["/theme light"]);
        assert_eq!(
            values("/session resume 3f"),
            vec!["/session resume 3fa1b2c4"]
        );
        assert_eq!(values("/session resume ").len(), 2);
        assert_eq!(values("/model q"), vec!["/model qwen3:8b"]);
        assert!(values("/model ").contains(&"/model default".to_string()));
        assert!(values("hello").is_empty());
        let s = c.suggestions("/he", 3);
        assert_eq!(s[0].span, Span::new(0, 3));
        assert_eq!(s[0].description.as_deref(), Some("this list"));
    }

    #[test]
    fn continuation_lines() {
        assert!(matches!(
            Continuation.validate("a \\"),
            ValidationResult::Incomplete
        ));
        assert!(matches!(
            Continuation.validate("a"),
            ValidationResult::Complete
        ));
        assert_eq!(join_continuations("one \\\ntwo"), "one \ntwo");
    }
}
