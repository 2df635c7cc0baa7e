//! Conversation integrity, generatively (issue 31): seeded random sequences
//! of what a user does — send (with an attachment), a failing server, a tool
//! turn, stop mid-answer, an approval answered yes / no / for the session or
//! stopped, a steer while the approval waits, /compact, /pin and /unpin,
//! /rewind with and without files, a profile switch, closing and reopening
//! the session — driven through the session handle against the fake LLM
//! server, with the request checker (`support::checker`) run over every
//! request the server received.
//!
//! `NAVI_GEN_SEEDS=N` runs N seeds (default 120), `NAVI_GEN_SEED=S` runs one.
//! A failing seed is printed; add it to `REGRESSIONS` so it runs every time.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::support::checker;
use crate::support::{FakeLlm, Fault, Reply};
use navi::app::{App, AppOptions, OpenOptions, SessionChoice, SessionHandle};
use navi::config::{BackendKind, Config, Overrides, Paths, SmallModel};
use navi::protocol::{
    AgentEvent, CompactMode, Decision, InputAttachment, Op, SessionEvent, TurnEnd,
};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::sync::mpsc::Receiver;

/// Seeds that once failed; they run first, every time.
const REGRESSIONS: &[u64] = &[];

/// A small deterministic generator (xorshift64*), so a seed replays exactly.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Rng {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
}

fn profile(dir: &std::path::Path, id: &str, prompt: &str, tools: Value) {
    let d = dir.join(format!("cfg/profiles/{id}"));
    std::fs::create_dir_all(&d).unwrap();
    let p = json!({
        "id": id, "name": id, "description": "test profile",
        "model": ["test-model"], "enabled_tools": tools, "llm_backend": "openai",
        "planning_enabled": false, "planning_phase1_enabled": false,
        "planning_phase3_enabled": false, "iteration_budget_enabled": false,
        "goal_anchoring_enabled": false, "anti_stall_enabled": false,
        "think_enabled": false
    });
    std::fs::write(d.join("config.json"), p.to_string()).unwrap();
    std::fs::write(d.join("system_prompt.txt"), prompt).unwrap();
}

pub(crate) fn app(dir: &std::path::Path, fake: &FakeLlm) -> App {
    let tools = json!(["todo", "http_request"]);
    profile(dir, "plain", "Answer briefly.", tools.clone());
    profile(dir, "other", "Answer in one word.", tools);
    let mut c = Config::default();
    c.llm.backend = BackendKind::Openai;
    c.llm.openai_base_url = fake.openai_url();
    // Tool calls are scripted as native calls: the constrained path for
    // templates without tools (tests/small_models.rs) stays out of it.
    c.llm.small_model = SmallModel::Off;
    let paths = Paths {
        config_file: None,
        config_dir: dir.join("cfg"),
        data_dir: dir.join("data"),
        db_path: dir.join("data/navi.db"),
        log_dir: dir.join("data/logs"),
    };
    let opts = AppOptions {
        interactive: true,
        ..AppOptions::default()
    };
    App::build(c, paths, Overrides::default(), opts).unwrap()
}

/// What the test knows the session should hold.
#[derive(Default)]
struct Model {
    /// The user's messages in the transcript, not rewound, in order (steers too).
    turns: Vec<String>,
    /// Of those, the ones still in the model's context (not summarised).
    visible: Vec<String>,
    /// The first message, when pinned.
    pinned: Option<String>,
    /// The last request of the session's main line, for rule 3; `None`
    /// right after a compaction, rewind, profile switch.
    baseline: Option<Value>,
    profile: &'static str,
    n: usize,
    /// `http_request` was allowed for the session: no more questions.
    allowed: bool,
}

struct Driver {
    fake: FakeLlm,
    app: App,
    h: Option<SessionHandle>,
    rx: Option<Receiver<SessionEvent>>,
    id: String,
    m: Model,
    seen: usize,
    log: Vec<String>,
    /// Only text turns (the strict-template server refuses tool roles).
    strict: bool,
}

async fn next_event(rx: &mut Receiver<SessionEvent>) -> SessionEvent {
    tokio::time::timeout(Duration::from_secs(20), rx.recv())
        .await
        .expect("an event in time")
        .expect("the stream stays open")
}

impl Driver {
    fn h(&self) -> &SessionHandle {
        self.h.as_ref().unwrap()
    }
    fn rx(&mut self) -> &mut Receiver<SessionEvent> {
        self.rx.as_mut().unwrap()
    }

    /// Events until the turn ends (or until `stop_at` says to act).
    async fn until_end(&mut self) -> (Vec<AgentEvent>, TurnEnd, Vec<String>) {
        let mut seen = Vec::new();
        loop {
            match next_event(self.rx()).await {
                SessionEvent::Agent { event } => seen.push(event),
                SessionEvent::TurnEnded { end, steers } => return (seen, end, steers),
            }
        }
    }

    async fn until(&mut self, want: impl Fn(&AgentEvent) -> bool) -> AgentEvent {
        loop {
            match next_event(self.rx()).await {
                SessionEvent::Agent { event } if want(&event) => return event,
                SessionEvent::Agent { .. } => {}
                SessionEvent::TurnEnded { end, .. } => panic!("the turn ended early: {end:?}"),
            }
        }
    }

    fn word(&mut self) -> String {
        self.m.n += 1;
        format!("msg-{}-{}", self.id.get(..6).unwrap_or("x"), self.m.n)
    }

    fn send_op(text: &str, attach: bool) -> Op {
        let attachments = if attach {
            vec![InputAttachment::Text {
                name: "notes.txt".into(),
                text: format!("attached notes for {text}\n").repeat(40),
            }]
        } else {
            vec![]
        };
        Op::UserMessage {
            text: text.into(),
            attachments,
        }
    }

    /// The requests since the last check: rules 1-3 (and 4 for `answered`).
    fn check(&mut self, main: bool, answered: Option<&str>) {
        let all = self.fake.chat_requests();
        let new = all[self.seen..].to_vec();
        self.seen = all.len();
        for (i, b) in new.iter().enumerate() {
            checker::shape(b)
                .unwrap_or_else(|e| self.fail(&format!("rule 1, request {i}: {e}\n{b:#}")));
            if !main {
                continue;
            }
            let mut want = self.m.visible.clone();
            if let Some(p) = &self.m.pinned
                && !want.contains(p)
            {
                want.insert(0, p.clone());
            }
            // Rule 2 on the action's last request (a steer typed during
            // the action is only in the requests after it).
            if i + 1 == new.len() {
                checker::holds_in_order(b, &want)
                    .unwrap_or_else(|e| self.fail(&format!("rule 2: {e}\n{b:#}")));
            }
            if let Some(prev) = &self.m.baseline {
                checker::extends(prev, b).unwrap_or_else(|e| self.fail(&format!("rule 3: {e}")));
            }
            self.m.baseline = Some(b.clone());
        }
        if let Some(text) = answered {
            let last = new
                .last()
                .unwrap_or_else(|| self.fail("no request for an answer"));
            if !last.to_string().contains(text) {
                self.fail(&format!(
                    "rule 4: the answer to {text:?} came from {last:#}"
                ));
            }
        }
    }

    fn fail(&self, why: &str) -> ! {
        panic!(
            "conversation integrity broken: {why}\nactions: {:#?}",
            self.log
        )
    }

    fn user_said(&mut self, text: &str) {
        self.m.turns.push(text.to_string());
        self.m.visible.push(text.to_string());
    }

    async fn send(&mut self, attach: bool) {
        let text = self.word();
        self.fake.push(Reply::text(format!("answer to {text}")));
        self.h().submit(Self::send_op(&text, attach)).unwrap();
        self.user_said(&text);
        let (_, end, _) = self.until_end().await;
        if end != (TurnEnd::Done { completed: true }) {
            self.fail(&format!("send ended {end:?}"));
        }
        self.check(true, Some(&text));
    }

    async fn send_failing(&mut self) {
        let text = self.word();
        self.fake
            .push(Reply::fault(Fault::Status(400, "scripted failure".into())));
        self.h().submit(Self::send_op(&text, false)).unwrap();
        self.user_said(&text);
        let (_, end, _) = self.until_end().await;
        if !matches!(end, TurnEnd::Failed { .. }) {
            self.fail(&format!("a failing server ended {end:?}"));
        }
        self.check(true, None);
    }

    async fn tool_turn(&mut self) {
        let text = self.word();
        self.fake.push(Reply::tool_call(
            "todo",
            json!({"action": "add", "items": [text]}),
        ));
        self.fake.push(Reply::text("listed"));
        self.h().submit(Self::send_op(&text, false)).unwrap();
        self.user_said(&text);
        let (_, end, _) = self.until_end().await;
        if end != (TurnEnd::Done { completed: true }) {
            self.fail(&format!("tool turn ended {end:?}"));
        }
        self.check(true, Some(&text));
    }

    async fn stop_mid_answer(&mut self) {
        let text = self.word();
        let long = "word ".repeat(200);
        let mut r = Reply::text(long);
        r.chunk_delay_ms = 20;
        self.fake.push(r);
        self.h().submit(Self::send_op(&text, false)).unwrap();
        self.user_said(&text);
        self.until(|e| matches!(e, AgentEvent::StreamDelta { .. }))
            .await;
        self.h().submit(Op::Stop).unwrap();
        let (_, end, _) = self.until_end().await;
        if end != TurnEnd::Stopped {
            self.fail(&format!("stop ended {end:?}"));
        }
        self.check(true, None);
    }

    /// A tool that asks first; the user answers `decision`, or stops
    /// (`None`); a steer may come while the question waits.
    async fn approval(&mut self, decision: Option<Decision>, steer: bool) {
        let text = self.word();
        let url = format!("{}/nothing", self.fake.base_url);
        self.fake.push(Reply::tool_call(
            "http_request",
            json!({"url": url, "method": "GET"}),
        ));
        if self.m.allowed {
            self.fake.push(Reply::text("after the tool"));
            self.h().submit(Self::send_op(&text, false)).unwrap();
            self.user_said(&text);
            let (_, end, _) = self.until_end().await;
            if end != (TurnEnd::Done { completed: true }) {
                self.fail(&format!("an allowed tool ended {end:?}"));
            }
            return self.check(true, Some(&text));
        }
        self.h().submit(Self::send_op(&text, false)).unwrap();
        self.user_said(&text);
        let ev = self
            .until(|e| matches!(e, AgentEvent::ApprovalRequest { .. }))
            .await;
        let AgentEvent::ApprovalRequest { id, .. } = ev else {
            unreachable!()
        };
        let steer_text = steer.then(|| self.word());
        if let Some(s) = &steer_text {
            self.h().submit(Op::Steer { text: s.clone() }).unwrap();
        }
        match decision {
            Some(decision) => {
                self.m.allowed |= decision == Decision::Session;
                self.fake.push(Reply::text("after the tool"));
                self.h().submit(Op::Approval { id, decision }).unwrap();
            }
            None => {
                self.h().submit(Op::Stop).unwrap();
            }
        }
        let (_, end, steers) = self.until_end().await;
        match (&decision, &end) {
            (Some(_), TurnEnd::Done { .. }) | (None, TurnEnd::Stopped) => {}
            _ => self.fail(&format!("approval {decision:?} ended {end:?}")),
        }
        if let Some(s) = steer_text {
            if steers.contains(&s) {
                // Given back: the user has it in the composer again.
            } else {
                self.user_said(&s);
            }
        }
        self.check(true, None);
    }

    async fn compact(&mut self) {
        self.fake.push(Reply::text("SUMMARY of what was said"));
        self.h()
            .submit(Op::Compact {
                mode: CompactMode::Now,
            })
            .unwrap();
        let before = self.seen;
        let (_, end, _) = self.until_end().await;
        self.check(false, None);
        // The summary is not asked for when there is nothing to compact.
        self.fake.clear_replies();
        if matches!(end, TurnEnd::Done { .. }) && self.seen > before {
            // What was summarised is no longer the user's words; the
            // pinned message must still be there.
            self.m.visible.clear();
            self.m.baseline = None;
        }
    }

    fn pin(&mut self, on: bool) {
        // Only a message still in the context can be kept by a pin (one a
        // compaction already summarised stays summarised).
        let Some(first) = self
            .m
            .turns
            .first()
            .filter(|f| self.m.visible.contains(f))
            .cloned()
        else {
            return;
        };
        let r = self.h().submit(Op::Pin {
            index: 1,
            pinned: on,
        });
        if r.is_ok() {
            self.m.pinned = on.then_some(first);
        }
    }

    async fn rewind(&mut self, rng: &mut Rng, files: bool) {
        if self.m.turns.is_empty() {
            return;
        }
        let n = 1 + rng.below(self.m.turns.len() as u64) as usize;
        let r = self.h().submit(Op::Rewind {
            message: n,
            files,
            force: false,
        });
        match r {
            Ok(_) => {
                let gone: Vec<String> = self.m.turns.split_off(n - 1);
                self.m.visible.retain(|v| !gone.contains(v));
                if self.m.pinned.as_ref().is_some_and(|p| gone.contains(p)) {
                    self.m.pinned = None;
                }
                self.m.baseline = None;
            }
            // A message a compaction may have summarised can be refused
            // (the test does not know which turns the compaction kept).
            Err(_) if !self.m.visible.contains(&self.m.turns[n - 1]) => {}
            Err(e) => self.fail(&format!("/rewind {n} refused: {e}")),
        }
    }

    fn switch_profile(&mut self) {
        let to = if self.m.profile == "plain" {
            "other"
        } else {
            "plain"
        };
        self.h()
            .submit(Op::SwitchProfile { profile: to.into() })
            .unwrap();
        self.m.profile = to;
        self.m.baseline = None;
    }

    async fn reopen(&mut self) {
        if self.m.n == 0 {
            // A session that never got a message is not kept when closed.
            return;
        }
        let h = self.h.take().unwrap();
        self.rx = None;
        // "For the session" approvals live with the open session.
        self.m.allowed = false;
        h.close().await;
        let mut h = self
            .app
            .open_handle(&SessionChoice::Id(self.id.clone()), OpenOptions::default())
            .unwrap();
        self.rx = h.take_events();
        self.h = Some(h);
    }
}

async fn run_seed(seed: u64, strict: bool) {
    let dir = tempfile::tempdir().unwrap();
    let fake = FakeLlm::start().await;
    fake.set_strict_template(strict);
    let app = app(dir.path(), &fake);
    let opts = OpenOptions {
        profile: Some("plain".into()),
        ..OpenOptions::default()
    };
    let mut h = app.open_handle(&SessionChoice::New, opts).unwrap();
    let rx = h.take_events();
    let id = h.id();
    let mut d = Driver {
        fake,
        app,
        h: Some(h),
        rx,
        id,
        m: Model {
            profile: "plain",
            ..Model::default()
        },
        seen: 0,
        log: vec![format!("seed {seed} strict {strict}")],
        strict,
    };
    let mut rng = Rng::new(seed);
    let steps = 6 + rng.below(6);
    for _ in 0..steps {
        let pick = rng.below(16);
        let pick = if d.strict && matches!(pick, 5..=9) {
            0
        } else {
            pick
        };
        d.log.push(format!("action {pick}"));
        if std::env::var("NAVI_GEN_SEED").is_ok() {
            eprintln!("seed {seed}: action {pick}");
        }
        match pick {
            0..=1 => d.send(false).await,
            2 => d.send(true).await,
            3 => d.send_failing().await,
            4 => d.stop_mid_answer().await,
            5 => d.tool_turn().await,
            6 => d.approval(Some(Decision::Once), rng.below(2) == 0).await,
            7 => d.approval(Some(Decision::Deny), rng.below(2) == 0).await,
            8 => d.approval(Some(Decision::Session), false).await,
            9 => d.approval(None, rng.below(2) == 0).await,
            10 => d.compact().await,
            11 => d.pin(true),
            12 => d.pin(false),
            13 => {
                let files = rng.below(3) == 0;
                d.rewind(&mut rng, files).await
            }
            14 => d.switch_profile(),
            _ => d.reopen().await,
        }
    }
    // The session's last word: one more message goes out whole.
    d.send(false).await;
}

fn seeds() -> Vec<u64> {
    if let Some(one) = std::env::var("NAVI_GEN_SEED")
        .ok()
        .and_then(|s| s.parse().ok())
    {
        return vec![one];
    }
    let n: u64 = std::env::var("NAVI_GEN_SEEDS")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(120);
    REGRESSIONS.iter().copied().chain(1..=n).collect()
}

async fn run_all(strict: bool) {
    for seed in seeds() {
        let r = tokio::spawn(run_seed(seed, strict)).await;
        if let Err(e) = r {
            panic!("seed {seed} (strict {strict}) failed; rerun with NAVI_GEN_SEED={seed}: {e}");
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_sessions_keep_every_request_whole() {
    run_all(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn random_text_sessions_pass_a_strict_template() {
    run_all(true).await;
}
