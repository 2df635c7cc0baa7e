//! Where plain mode's input comes from, and SIGINT.
//!
//! Invariants:
//! - With a real terminal (stdin and stdout TTYs, not `TERM=dumb`) lines come
//!   from reedline; otherwise from a thread that reads stdin line by line
//!   (cooked mode: the terminal's own line editing, no escape sequences).
//! - SIGINT is caught for the whole run (it never kills navi); who reacts to
//!   it depends on the state: a running turn stops, an idle prompt is cleared.
//!   While reedline reads, the terminal is raw and Ctrl-C arrives as a key.
//! - A question (approval, picker) always gets an answer: `Interrupted` when
//!   the user pressed Ctrl-C or the question became moot.
use super::editor::{Editor, NaviPrompt, Reply, Which, join_continuations};
use std::io::{BufRead, Write};
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

/// SIGINT as a stream that remembers presses made while nobody waited.
pub struct Interrupts {
    #[cfg(unix)]
    sig: Option<tokio::signal::unix::Signal>,
}

impl Interrupts {
    /// Installs the handler: from now on Ctrl-C in cooked mode is ours.
    pub fn install() -> Self {
        #[cfg(unix)]
        {
            use tokio::signal::unix::{SignalKind, signal};
            Interrupts {
                sig: signal(SignalKind::interrupt()).ok(),
            }
        }
        #[cfg(not(unix))]
        {
            Interrupts {}
        }
    }

    /// The next SIGINT.
    pub async fn recv(&mut self) {
        #[cfg(unix)]
        {
            match self.sig.as_mut() {
                Some(s) => {
                    if s.recv().await.is_none() {
                        std::future::pending::<()>().await;
                    }
                }
                None => std::future::pending::<()>().await,
            }
        }
        #[cfg(not(unix))]
        {
            if tokio::signal::ctrl_c().await.is_err() {
                std::future::pending::<()>().await;
            }
        }
    }

    /// Forgets presses nobody waited for (so they can't stop the next turn).
    pub fn drain(&mut self) {
        #[cfg(unix)]
        if let Some(s) = self.sig.as_mut() {
            use futures_util::FutureExt;
            while let Some(Some(())) = s.recv().now_or_never() {}
        }
    }
}

/// Lines from stdin, read on a thread of their own.
pub struct LineSource {
    rx: mpsc::UnboundedReceiver<String>,
    /// A person types (stdin is a terminal): print prompts, ask questions.
    tty: bool,
    /// Prompts go to stderr unless only stdout is the terminal.
    prompt_on_stderr: bool,
}

impl LineSource {
    pub fn spawn(tty: bool) -> Self {
        let (tx, rx) = mpsc::unbounded_channel();
        let _ = std::thread::Builder::new()
            .name("navi-stdin".into())
            .spawn(move || {
                let stdin = std::io::stdin();
                let mut lock = stdin.lock();
                let mut buf = Vec::new();
                loop {
                    buf.clear();
                    match lock.read_until(b'\n', &mut buf) {
                        Ok(0) | Err(_) => break,
                        Ok(_) => {
                            while matches!(buf.last(), Some(b'\n' | b'\r')) {
                                buf.pop();
                            }
                            let line = String::from_utf8_lossy(&buf).into_owned();
                            if tx.send(line).is_err() {
                                break;
                            }
                        }
                    }
                }
            });
        use std::io::IsTerminal;
        let prompt_on_stderr = std::io::stderr().is_terminal() || !std::io::stdout().is_terminal();
        LineSource {
            rx,
            tty,
            prompt_on_stderr,
        }
    }

    /// Prompts and questions go to the terminal, never into a redirected
    /// stream (`navi --plain > answers.txt`, `2> log`).
    fn show(&self, text: &str) {
        if self.prompt_on_stderr {
            let mut out = std::io::stderr().lock();
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
        } else {
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(text.as_bytes());
            let _ = out.flush();
        }
    }

    async fn read(&mut self, prompt: &str, sig: &mut Interrupts) -> Reply {
        if self.tty {
            self.show(prompt);
        }
        let mut text = String::new();
        loop {
            tokio::select! {
                line = self.rx.recv() => match line {
                    None if text.is_empty() => return Reply::Eof,
                    None => return Reply::Line(text),
                    Some(l) => {
                        if let Some(head) = l.strip_suffix('\\') {
                            text.push_str(head);
                            text.push('\n');
                            if self.tty {
                                self.show("… ");
                            }
                            continue;
                        }
                        text.push_str(&l);
                        return Reply::Line(text);
                    }
                },
                _ = sig.recv() => {
                    if self.tty {
                        self.show("\n");
                    }
                    return Reply::Interrupted;
                }
            }
        }
    }
}

pub enum Input {
    Editor(Editor),
    Lines(LineSource),
}

impl Input {
    /// Somebody is there to answer questions.
    pub fn interactive(&self) -> bool {
        match self {
            Input::Editor(_) => true,
            Input::Lines(l) => l.tty,
        }
    }

    /// The main prompt. `Line` holds the message with continuations joined.
    pub async fn read_main(&mut self, prompt: &NaviPrompt, sig: &mut Interrupts) -> Reply {
        match self {
            Input::Editor(e) => match e.request(Which::Main, prompt.clone()).await {
                Ok(Reply::Line(s)) => Reply::Line(join_continuations(&s)),
                Ok(other) => other,
                Err(_) => Reply::Eof,
            },
            Input::Lines(l) => {
                let p = format!("{}{}", prompt.left, prompt.indicator);
                l.read(&p, sig).await
            }
        }
    }

    /// Asks one question; `cancel` makes it moot (answered `Interrupted`).
    pub async fn ask(
        &mut self,
        question: &str,
        sig: &mut Interrupts,
        cancel: &CancellationToken,
    ) -> Reply {
        match self {
            Input::Editor(e) => {
                let prompt = NaviPrompt {
                    left: question.to_string(),
                    right: String::new(),
                    indicator: String::new(),
                };
                let mut rx = e.request(Which::Question, prompt);
                tokio::select! {
                    r = &mut rx => r.unwrap_or(Reply::Eof),
                    _ = cancel.cancelled() => {
                        // Let the editor thread finish the read before going on.
                        e.interrupt();
                        let _ = rx.await;
                        Reply::Interrupted
                    }
                }
            }
            Input::Lines(l) => {
                tokio::select! {
                    r = l.read(question, sig) => r,
                    _ = cancel.cancelled() => {
                        if l.tty {
                            l.show("\n");
                        }
                        Reply::Interrupted
                    }
                }
            }
        }
    }
}
