//! One ACP session: a navi [`SessionHandle`], the prompt waiting for its
//! turn to end, and the task that turns the session's events into
//! `session/update` notifications and permission requests.

use super::map::{self, Mapper};
use crate::app::App;
use crate::app::SessionHandle;
use crate::protocol::{AgentEvent, Decision};
use crate::protocol::{Op, OpError, SessionEvent, TurnEnd};
use agent_client_protocol::v1::schema::{
    ContentBlock, ContentChunk, CurrentModeUpdate, PermissionOption, PermissionOptionKind,
    PromptResponse, RequestPermissionOutcome, RequestPermissionRequest, SessionNotification,
    SessionUpdate, StopReason,
};
use agent_client_protocol::{Client, Error, RequestCancellationHandle};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use tokio::sync::mpsc;

/// The connection to the client.
pub(crate) type Cx = agent_client_protocol::v1::ConnectionTo<Client>;
/// The answer to a `session/prompt`, sent when the turn ends.
type PromptResponder = agent_client_protocol::v1::Responder<PromptResponse>;

/// The permission option ids navi offers.
const ALLOW_ONCE: &str = "allow_once";
const ALLOW_SESSION: &str = "allow_session";
const REJECT: &str = "reject";

pub(crate) struct Open {
    pub(crate) id: String,
    pub(crate) app: Arc<App>,
    /// Taken out when the session closes.
    handle: Mutex<Option<Arc<SessionHandle>>>,
    /// The prompt whose turn runs.
    prompt: Mutex<Option<PromptResponder>>,
    /// Permission requests the client has not answered yet.
    asks: Mutex<Vec<(String, RequestCancellationHandle)>>,
    /// The profile in use (the ACP mode).
    pub(crate) profile: Mutex<String>,
    /// A prompt is taken and its turn not started yet.
    starting: AtomicBool,
    /// The models the session's server serves (`None`: not known).
    server_models: Mutex<Option<Vec<String>>>,
    /// The title the client was last told (`session_info_update`).
    shown_title: Mutex<Option<String>>,
    /// The client terminals calls ran in (see [`super::terminal`]).
    pub(crate) shown: super::terminal::Shown,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Open {
    /// Wraps `handle` and starts forwarding its events to the client.
    pub(crate) fn start(
        app: Arc<App>,
        mut handle: SessionHandle,
        profile: String,
        cx: Cx,
    ) -> Arc<Open> {
        let events = handle.take_events();
        let open = Arc::new(Open {
            id: handle.id(),
            app,
            handle: Mutex::new(Some(Arc::new(handle))),
            prompt: Mutex::new(None),
            asks: Mutex::new(Vec::new()),
            profile: Mutex::new(profile),
            starting: AtomicBool::new(false),
            server_models: Mutex::new(None),
            shown_title: Mutex::new(None),
            shown: Default::default(),
        });
        if let Some(rx) = events {
            tokio::spawn(pump(open.clone(), rx, cx));
        }
        open
    }

    pub(crate) fn submit(&self, op: Op) -> Result<crate::app::Reply, OpError> {
        match lock(&self.handle).as_ref() {
            Some(h) => h.submit(op),
            None => Err(OpError::Invalid(format!("session {} is closed", self.id))),
        }
    }

    /// The session's tools read, write and run commands through the
    /// client (what it offers of it).
    pub(crate) fn use_client(&self, client: super::client_fs::AcpClient) {
        if let Some(h) = lock(&self.handle).as_ref() {
            h.set_client(Some(Arc::new(client)));
        }
    }

    /// Starts the MCP servers the session's turns use (the configured ones
    /// and the client's for this session) and waits for them.
    pub(crate) async fn start_mcp(&self) {
        let handle = lock(&self.handle).clone();
        if let Some(h) = handle {
            h.start_mcp().await;
        }
    }

    /// The stored history as events (for `session/load`).
    pub(crate) fn history(&self) -> Result<Vec<AgentEvent>, String> {
        match lock(&self.handle).as_ref() {
            Some(h) => h.history(),
            None => Err(format!("session {} is closed", self.id)),
        }
    }

    /// A prompt that names one of the user's own commands (`/review x`):
    /// the prompt the command makes; any other text as it is.
    pub(crate) fn expand_command(&self, text: String) -> String {
        let Some(h) = lock(&self.handle).clone() else {
            return text;
        };
        crate::ui::commands::custom_prompt(&h, &text).unwrap_or(text)
    }

    /// `/init` and the user's own commands, for `available_commands_update`.
    pub(crate) fn custom_commands(&self) -> Vec<(String, String, String)> {
        let Some(h) = lock(&self.handle).clone() else {
            return Vec::new();
        };
        let own = crate::ui::commands::custom_items(&h)
            .into_iter()
            .filter_map(|(usage, d)| {
                let mut w = usage.splitn(2, ' ');
                let name = w.next()?.trim_start_matches('/').to_string();
                Some((name, d, w.next().unwrap_or("").to_string()))
            });
        // navi's own prompt commands (`/init`) first.
        crate::ui::commands::prompt_builtins()
            .into_iter()
            .chain(own)
            .collect()
    }

    /// The model chosen for this session, if one was.
    pub(crate) fn model(&self) -> Option<String> {
        lock(&self.handle).as_ref().and_then(|h| h.model())
    }

    /// The profile in use (the ACP mode).
    pub(crate) fn profile_id(&self) -> String {
        lock(&self.profile).clone()
    }

    pub(crate) fn set_profile_id(&self, profile: &str) {
        *lock(&self.profile) = profile.to_string();
    }

    /// The models the session's server serves, once known.
    pub(crate) fn server_models(&self) -> Option<Vec<String>> {
        lock(&self.server_models).clone()
    }

    pub(crate) fn set_server_models(&self, names: Vec<String>) {
        *lock(&self.server_models) = Some(names);
    }

    /// The open handle (`None` once closed), for the session's commands.
    pub(crate) fn handle(&self) -> Option<Arc<SessionHandle>> {
        lock(&self.handle).clone()
    }

    /// The session's title and last activity when the title is not the
    /// one the client was last told (`None` otherwise, or while it has
    /// none).
    pub(crate) fn title_news(&self) -> Option<(String, i64)> {
        let meta = self.handle()?.info()?;
        if meta.title.is_empty() {
            return None;
        }
        let mut shown = lock(&self.shown_title);
        if shown.as_deref() == Some(meta.title.as_str()) {
            return None;
        }
        *shown = Some(meta.title.clone());
        Some((meta.title, meta.last_active))
    }

    /// Takes the prompt: `responder` is answered when its turn ends. A
    /// second prompt while one is taken is refused. The turn starts with
    /// [`start_turn`](Self::start_turn), once the MCP servers are up.
    pub(crate) fn reserve(&self, responder: PromptResponder) -> Result<bool, Error> {
        let mut slot = lock(&self.prompt);
        if slot.is_some() {
            responder.respond_with_error(busy(&self.id))?;
            return Ok(false);
        }
        // Kept before the turn starts: its end may come at once.
        *slot = Some(responder);
        self.starting.store(true, Ordering::SeqCst);
        Ok(true)
    }

    /// Starts the reserved prompt's turn, unless it was cancelled meanwhile.
    pub(crate) fn start_turn(&self, op: Op) {
        let mut slot = lock(&self.prompt);
        if slot.is_none() {
            return;
        }
        self.starting.store(false, Ordering::SeqCst);
        if let Err(e) = self.submit(op)
            && let Some(r) = slot.take()
        {
            let err = match e {
                OpError::Busy => busy(&self.id),
                other => super::server::error(-32602, other.to_string()),
            };
            let _ = r.respond_with_error(err);
        }
    }

    /// Answers the reserved prompt at once (`end_turn`) after showing
    /// `said` as the agent's message (a command's answer).
    pub(crate) fn answer_now(&self, cx: &Cx, said: &str) {
        let mut slot = lock(&self.prompt);
        self.starting.store(false, Ordering::SeqCst);
        let Some(r) = slot.take() else {
            return;
        };
        if !said.is_empty() {
            notify(
                cx,
                &self.id,
                SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(
                    super::news::for_editor(said),
                ))),
            );
        }
        let _ = r.respond(PromptResponse::new(StopReason::EndTurn));
    }

    /// `session/cancel`: navi's cooperative stop, and the open permission
    /// requests withdrawn.
    pub(crate) fn cancel(&self) {
        {
            // A prompt whose turn has not started yet ends here.
            let mut slot = lock(&self.prompt);
            if self.starting.swap(false, Ordering::SeqCst)
                && let Some(r) = slot.take()
            {
                let _ = r.respond(PromptResponse::new(StopReason::Cancelled));
            }
        }
        let _ = self.submit(Op::Stop);
        for (_, ask) in lock(&self.asks).drain(..) {
            let _ = ask.cancel();
        }
    }

    /// Stops what runs, waits for it to be saved, and releases the session
    /// (its lock, its per-session state). The client's pending prompt is
    /// answered `cancelled` by the event task when the stream ends.
    pub(crate) async fn close(&self) {
        for (_, ask) in lock(&self.asks).drain(..) {
            let _ = ask.cancel();
        }
        let handle = lock(&self.handle).take();
        if let Some(h) = handle {
            h.close().await;
        }
    }

    /// Answers the waiting prompt for how its turn ended.
    fn finish(&self, end: &TurnEnd, cx: &Cx) {
        let Some(r) = lock(&self.prompt).take() else {
            return;
        };
        let reason = match end {
            TurnEnd::Done { completed: true } => StopReason::EndTurn,
            TurnEnd::Done { completed: false } => StopReason::MaxTurnRequests,
            TurnEnd::Stopped => StopReason::Cancelled,
            TurnEnd::Refused { message } => {
                // Nothing was stored: say why, so the user can change the input.
                let text = format!("Not sent: {}", super::news::for_editor(message));
                notify(
                    cx,
                    &self.id,
                    SessionUpdate::AgentMessageChunk(ContentChunk::new(ContentBlock::from(text))),
                );
                StopReason::Refusal
            }
            TurnEnd::Failed { message, .. } => {
                let _ = r.respond_with_error(super::server::error(
                    -32603,
                    super::news::for_editor(message),
                ));
                return;
            }
        };
        let _ = r.respond(PromptResponse::new(reason));
    }

    /// Asks the client about a risky call and hands the answer to the turn.
    fn ask(
        self: &Arc<Open>,
        cx: &Cx,
        id: String,
        tool: String,
        summary: String,
        args: serde_json::Value,
        info: Option<&crate::protocol::CallInfo>,
    ) {
        let call = map::permission_call(&id, &tool, &summary, &args, info);
        let options = vec![
            PermissionOption::new(ALLOW_ONCE, "Allow once", PermissionOptionKind::AllowOnce),
            PermissionOption::new(
                ALLOW_SESSION,
                format!("Allow {tool} for this session"),
                PermissionOptionKind::AllowAlways,
            ),
            PermissionOption::new(REJECT, "Reject", PermissionOptionKind::RejectOnce),
        ];
        let sent = cx.send_request(RequestPermissionRequest::new(
            self.id.clone(),
            call,
            options,
        ));
        lock(&self.asks).push((id.clone(), sent.cancellation_handle()));
        let open = self.clone();
        let cx = cx.clone();
        tokio::spawn(async move {
            let decision = match sent.block_task().await {
                Ok(resp) => match resp.outcome {
                    RequestPermissionOutcome::Selected(s) => match &*s.option_id.0 {
                        ALLOW_ONCE => Decision::Once,
                        ALLOW_SESSION => Decision::Session,
                        _ => Decision::Deny,
                    },
                    _ => Decision::Deny,
                },
                Err(e) => {
                    tracing::info!("permission request for {id} ended without an answer: {e}");
                    Decision::Deny
                }
            };
            lock(&open.asks).retain(|(a, _)| *a != id);
            if decision != Decision::Deny {
                notify(
                    &cx,
                    &open.id,
                    SessionUpdate::ToolCallUpdate(map::running(&id)),
                );
            }
            // A stop may have withdrawn the question already: then nothing waits.
            let _ = open.submit(Op::Approval { id, decision });
        });
    }
}

fn busy(id: &str) -> Error {
    super::server::error(
        -32602,
        format!("session {id} is busy: a prompt is running (send session/cancel first)"),
    )
}

pub(crate) fn notify(cx: &Cx, session: &str, update: SessionUpdate) {
    if let Err(e) = cx.send_notification(SessionNotification::new(session.to_string(), update)) {
        tracing::debug!("session/update not sent: {e}");
    }
}

/// Forwards the session's events until its stream ends (the handle closed).
async fn pump(open: Arc<Open>, mut rx: mpsc::Receiver<SessionEvent>, cx: Cx) {
    let mut mapper = Mapper::default();
    while let Some(ev) = rx.recv().await {
        match ev {
            SessionEvent::Agent { event } => match event {
                AgentEvent::ApprovalRequest {
                    id,
                    tool,
                    summary,
                    args,
                    call,
                } => {
                    mapper.asking(&id);
                    open.ask(&cx, id, tool, summary, args, call.as_deref());
                }
                AgentEvent::ProfileSwitched { profile_id, .. } => {
                    *lock(&open.profile) = profile_id.clone();
                    notify(
                        &cx,
                        &open.id,
                        SessionUpdate::CurrentModeUpdate(CurrentModeUpdate::new(profile_id)),
                    );
                    super::options::announce(&open, &cx);
                }
                other => {
                    for u in open.shown.keep(mapper.map(&other)) {
                        notify(&cx, &open.id, u);
                    }
                    if let Some(u) = super::news::usage(&other) {
                        notify(&cx, &open.id, u);
                    }
                }
            },
            SessionEvent::TurnEnded { end, .. } => {
                for u in mapper.close_open() {
                    notify(&cx, &open.id, u);
                }
                super::news::title(&open, &cx);
                open.finish(&end, &cx);
            }
        }
    }
    open.finish(&TurnEnd::Stopped, &cx);
}

/// Sends a stored history as `session/update`s, before `session/load`
/// answers.
pub(crate) fn replay(cx: &Cx, session: &str, events: &[AgentEvent]) {
    let mut mapper = Mapper::default();
    for e in events {
        for u in mapper.map(e) {
            notify(cx, session, u);
        }
    }
}
