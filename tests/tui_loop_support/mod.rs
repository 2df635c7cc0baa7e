//! The TUI event-loop harness: a fake `Host` recording what the UI asked
//! for, keys through a channel, frames drawn to a `TestBackend`.
#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use crate::tui_support::*;
use crossterm::event::{Event, KeyCode, KeyEvent, KeyModifiers};
use futures_util::StreamExt;
use navi::protocol::AgentEvent;
use navi::protocol::Decision;
use navi::session::{SessionMeta, StoredMessage};
use navi::ui::commands::{Outcome, SlashCommand, UiState};
use navi::ui::tui::cells::CellKind;
use navi::ui::tui::event_loop::{EventLoop, LoopOptions};
use navi::ui::tui::host::{Check, Host, Load, Turn};
use navi::ui::tui::state::TuiState;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

#[derive(Default)]
pub struct Log {
    pub turns: Vec<String>,
    pub senders: Vec<mpsc::Sender<AgentEvent>>,
    pub cancels: Vec<CancellationToken>,
    pub answers: Vec<(String, Decision)>,
    pub commands: Vec<SlashCommand>,
    /// Steers handed to the host and not yet taken in.
    pub steers: Vec<String>,
    /// (run state label, cell summaries) after each frame.
    pub frames: Vec<(String, Vec<String>)>,
}

#[derive(Clone, Default)]
pub struct FakeHost(pub Arc<Mutex<Log>>, pub Option<Vec<StoredMessage>>);

impl Host for FakeHost {
    fn start_turn(&mut self, _session_id: &str, message: &str) -> Turn {
        let (tx, rx) = mpsc::channel(256);
        let cancel = CancellationToken::new();
        let mut l = self.0.lock().unwrap();
        l.turns.push(message.to_string());
        l.senders.push(tx);
        l.cancels.push(cancel.clone());
        Turn { events: rx, cancel }
    }
    fn execute(&mut self, cmd: SlashCommand, _ui: &mut UiState) -> Result<Outcome, String> {
        self.0.lock().unwrap().commands.push(cmd.clone());
        match cmd {
            SlashCommand::SessionList => Ok(Outcome::Show(vec!["LIST-OUTPUT".into()])),
            SlashCommand::Stop => Ok(Outcome::Stop),
            SlashCommand::Quit => Ok(Outcome::Quit),
            _ => Err("not in this fake".into()),
        }
    }
    fn answer(&mut self, id: &str, decision: Decision) {
        self.0
            .lock()
            .unwrap()
            .answers
            .push((id.to_string(), decision));
    }
    fn compact(&mut self, s: &str, mode: navi::agent::compact_run::CompactMode) -> Turn {
        let label = match mode {
            navi::agent::compact_run::CompactMode::Now => "<compact>",
            navi::agent::compact_run::CompactMode::Preview => "<compact --preview>",
            navi::agent::compact_run::CompactMode::Apply => "<compact apply>",
        };
        self.start_turn(s, label)
    }
    fn refresh(&mut self, _session_id: &str) -> Option<SessionMeta> {
        None
    }
    fn steer(&mut self, _session_id: &str, text: &str) {
        self.0.lock().unwrap().steers.push(text.to_string());
    }
    fn take_steers(&mut self, _session_id: &str) -> Vec<String> {
        std::mem::take(&mut self.0.lock().unwrap().steers)
    }
    fn check_backend(&mut self, _profile_id: &str) -> Option<Check> {
        Some(Box::pin(async {
            Err("cannot reach the fake backend".to_string())
        }))
    }
    fn load_history(&mut self, _session_id: &str) -> Option<Load> {
        let h = self.1.clone()?;
        Some(Box::pin(async move {
            tokio::time::sleep(Duration::from_millis(300)).await;
            Ok(navi::session::replay::events(&h, &Default::default()))
        }))
    }
}

pub fn summary(st: &TuiState) -> Vec<String> {
    st.transcript
        .cells
        .iter()
        .map(|c| match &c.kind {
            CellKind::User(t) => format!("user:{t}"),
            CellKind::Assistant(d) => format!("assistant:{}", d.text),
            CellKind::Notice(t) => format!("notice:{t}"),
            CellKind::Info(l) => format!("info:{}", l.join("|")),
            CellKind::Error(t) => format!("error:{t}"),
            CellKind::Tool(t) => format!("tool:{}:{:?}", t.tool, t.status),
            other => format!("{other:?}").chars().take(20).collect(),
        })
        .collect()
}

pub struct Harness {
    pub log: Arc<Mutex<Log>>,
    pub keys: mpsc::UnboundedSender<Event>,
}

impl Harness {
    pub fn key(&self, code: KeyCode, m: KeyModifiers) {
        self.keys.send(Event::Key(KeyEvent::new(code, m))).unwrap();
    }
    pub fn typed(&self, s: &str) {
        for c in s.chars() {
            self.key(KeyCode::Char(c), KeyModifiers::NONE);
        }
    }
    pub fn enter(&self) {
        self.key(KeyCode::Enter, KeyModifiers::NONE);
    }
    pub fn ctrl_c(&self) {
        self.key(KeyCode::Char('c'), KeyModifiers::CONTROL);
    }
    pub async fn send(&self, turn: usize, v: serde_json::Value) {
        let tx = self.log.lock().unwrap().senders[turn].clone();
        tx.send(ev(v)).await.unwrap();
    }
    pub fn end_turn(&self, turn: usize) {
        let mut l = self.log.lock().unwrap();
        let (tx, _) = mpsc::channel(1);
        l.senders[turn] = tx;
    }
    /// Waits until the host's log satisfies `f`.
    pub async fn until_log(&self, what: &str, f: impl Fn(&Log) -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        while !f(&self.log.lock().unwrap()) {
            assert!(
                tokio::time::Instant::now() < deadline,
                "timed out waiting for: {what}"
            );
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    /// Waits until a frame satisfies `f`.
    pub async fn until(&self, what: &str, f: impl Fn(&str, &[String]) -> bool) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
        loop {
            {
                let l = self.log.lock().unwrap();
                if let Some((state, cells)) = l.frames.last()
                    && f(state, cells)
                {
                    return;
                }
                if tokio::time::Instant::now() > deadline {
                    panic!(
                        "timed out waiting for: {what}; last frame: {:?}",
                        l.frames.last()
                    );
                }
            }
            tokio::time::sleep(Duration::from_millis(5)).await;
        }
    }
}

/// Runs the loop with `script` driving it; returns the final screen.
pub async fn run<F, Fut>(script: F) -> (String, Arc<Mutex<Log>>)
where
    F: FnOnce(Harness) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    run_with(state(), None, script).await
}

pub async fn run_with<F, Fut>(
    st: TuiState,
    history: Option<Vec<StoredMessage>>,
    script: F,
) -> (String, Arc<Mutex<Log>>)
where
    F: FnOnce(Harness) -> Fut,
    Fut: std::future::Future<Output = ()>,
{
    let host_log = Arc::new(Mutex::new(Log::default()));
    let mut host = FakeHost(host_log.clone(), history);
    let (ktx, krx) = mpsc::unbounded_channel::<Event>();
    let mut input = Box::pin(futures_util::stream::unfold(krx, |mut rx| async move {
        rx.recv().await.map(|e| (Ok(e), rx))
    }))
    .fuse();
    let mut terminal = Terminal::new(TestBackend::new(100, 24)).unwrap();
    let mut lp = EventLoop::new(&mut host, st);
    let opts = LoopOptions {
        max_fps: 120,
        check_backend: true,
    };
    let frames = host_log.clone();
    let h = Harness {
        log: host_log.clone(),
        keys: ktx,
    };
    let looped = lp.run(
        &mut terminal,
        &mut input,
        &opts,
        |_| {},
        |st| {
            frames
                .lock()
                .unwrap()
                .frames
                .push((st.run.label(), summary(st)));
        },
    );
    let (res, ()) = tokio::time::timeout(Duration::from_secs(20), async {
        tokio::join!(looped, script(h))
    })
    .await
    .expect("the loop did not quit");
    res.unwrap();
    (text_of(terminal.backend().buffer()), host_log)
}
