//! The ACP methods navi answers, over the open sessions.
//!
//! The server owns every session `navi acp` has open (by the id the client
//! names it with): the one map keyed by session id in the process.

use super::apps::Core;
use super::options::{config_options, modes};
use super::session::{Cx, Open, replay};
use crate::app::{App, AppError, OpenOptions, SessionChoice, SessionHandle};
use crate::protocol::Op;

use agent_client_protocol::Error;
use agent_client_protocol::schema::ProtocolVersion;
use agent_client_protocol::v1::schema::{
    AgentCapabilities, CloseSessionResponse, Implementation, InitializeResponse,
    ListSessionsRequest, ListSessionsResponse, LoadSessionResponse, McpCapabilities, McpServer,
    NewSessionResponse, PromptCapabilities, PromptRequest, ResumeSessionResponse,
    SessionCapabilities, SessionCloseCapabilities, SessionConfigOption, SessionInfo,
    SessionListCapabilities, SessionModeState, SessionResumeCapabilities,
    SetSessionConfigOptionRequest, SetSessionConfigOptionResponse, SetSessionModeRequest,
    SetSessionModeResponse,
};
use std::collections::HashMap;
use std::path::Path;
use std::sync::{Arc, Mutex};

pub(crate) struct Server {
    core: Core,
    sessions: Mutex<HashMap<String, Arc<Open>>>,
    /// The file system and terminals the client offered in `initialize`.
    offers: Mutex<super::client_fs::Offers>,
}

fn invalid(msg: impl Into<String>) -> Error {
    error(-32602, msg)
}

fn internal(msg: impl Into<String>) -> Error {
    error(-32603, msg)
}

/// An error with its text in `data` too: some clients show only `data`
/// (Toad's "Failed to initialize agent —" had nothing after the dash).
pub(crate) fn error(code: i32, msg: impl Into<String>) -> Error {
    let msg = msg.into();
    Error::new(code, msg.clone()).data(serde_json::Value::String(msg))
}

/// A session that could not be opened: what the client got wrong (its
/// directory, its MCP servers, a profile) is invalid params; the rest is
/// internal.
fn open_error(e: AppError) -> Error {
    match e {
        AppError::WorkDir(m) | AppError::McpServers(m) => invalid(m),
        AppError::NoProfile(p) => invalid(p.to_string()),
        e => match e.busy() {
            Some((s, pid)) => invalid(format!(
                "session {s} is open in another navi{}; close it there first",
                pid.map(|p| format!(" (pid {p})")).unwrap_or_default()
            )),
            None => internal(e.to_string()),
        },
    }
}

impl Server {
    pub(crate) fn new(core: Core) -> Server {
        Server {
            core,
            sessions: Mutex::new(HashMap::new()),
            offers: Mutex::new(Default::default()),
        }
    }

    fn sessions(&self) -> std::sync::MutexGuard<'_, HashMap<String, Arc<Open>>> {
        self.sessions.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The open session `id`, or the error a client gets for another id.
    pub(crate) fn open(&self, id: &str) -> Result<Arc<Open>, Error> {
        self.sessions().get(id).cloned().ok_or_else(|| {
            invalid(format!(
                "unknown session '{id}': create it with session/new or open it with session/load"
            ))
        })
    }

    /// What the client offers its sessions' tools (`fs`, `terminal`).
    pub(crate) fn remember_client(
        &self,
        caps: &agent_client_protocol::v1::schema::ClientCapabilities,
    ) {
        let offers = super::client_fs::Offers::of(caps);
        tracing::info!("navi acp: the client offers {offers:?}");
        *self.offers.lock().unwrap_or_else(|p| p.into_inner()) = offers;
    }

    pub(crate) fn initialize(&self) -> InitializeResponse {
        let caps = AgentCapabilities::new()
            .load_session(true)
            .prompt_capabilities(PromptCapabilities::new().image(true).embedded_context(true))
            .mcp_capabilities(McpCapabilities::new().http(true))
            .session_capabilities(
                SessionCapabilities::new()
                    .list(SessionListCapabilities::new())
                    .resume(SessionResumeCapabilities::new())
                    .close(SessionCloseCapabilities::new()),
            );
        InitializeResponse::new(ProtocolVersion::V1)
            .agent_capabilities(caps)
            .agent_info(Implementation::new("navi", env!("CARGO_PKG_VERSION")).title("Navi"))
    }

    /// `session/new`: a new navi session, stored at once (listable and
    /// loadable before its first prompt), with the server's models in its
    /// model option. The client is told its commands after this answer
    /// ([`Server::opened`]).
    pub(crate) async fn new_session(
        &self,
        cwd: &Path,
        mcp: &[McpServer],
        cx: &Cx,
    ) -> Result<(NewSessionResponse, Arc<Open>), Error> {
        let app = self.core.app().map_err(internal)?;
        let opts = OpenOptions {
            keep_empty: true,
            ..self.core.options(cwd, mcp).map_err(invalid)?
        };
        let handle = app
            .open_handle(&SessionChoice::New, opts)
            .map_err(open_error)?;
        let open = self.register(app, handle, cx);
        super::options::learn_models(&open, cx).await;
        let resp = NewSessionResponse::new(open.id.clone())
            .modes(modes(&open))
            .config_options(config_options(&open));
        Ok((resp, open))
    }

    /// What the client hears after the answer that names a session: its
    /// commands; for a reopened one, its plan, context use and title.
    pub(crate) fn opened(&self, open: &Open, cx: &Cx, reopened: bool) {
        super::commands::announce(open, cx);
        if reopened {
            super::news::reopened(open, cx);
        }
    }

    /// `session/load` (`replay`: the history is sent first) and
    /// `session/resume` (no replay).
    pub(crate) fn load_session(
        &self,
        id: &str,
        cwd: &Path,
        mcp: &[McpServer],
        cx: &Cx,
        replay_history: bool,
    ) -> Result<(LoadState, Arc<Open>), Error> {
        // Not matched on directly: the guard would live through the match
        // and `open_stored` takes the same lock.
        let known = self.sessions().get(id).cloned();
        let open = match known {
            Some(open) => open,
            None => {
                let app = self.core.app().map_err(internal)?;
                let opts = self.core.options(cwd, mcp).map_err(invalid)?;
                self.open_stored(app, id, opts, cx)?
            }
        };
        if replay_history {
            let events = open.history().map_err(internal)?;
            replay(cx, &open.id, &events);
        }
        if open.server_models().is_none() {
            // Not waited for: requests that name this session may follow
            // at once; the list is announced when it comes.
            super::options::learn_later(&open, cx);
        }
        Ok(((modes(&open), config_options(&open)), open))
    }

    fn open_stored(
        &self,
        app: Arc<App>,
        id: &str,
        opts: OpenOptions,
        cx: &Cx,
    ) -> Result<Arc<Open>, Error> {
        let known = app
            .all_sessions()
            .map_err(|e| internal(e.to_string()))?
            .iter()
            .any(|s| s.id == id);
        if !known {
            return Err(invalid(format!("unknown session '{id}'")));
        }
        let handle = app
            .open_handle(&SessionChoice::Id(id.to_string()), opts)
            .map_err(open_error)?;
        Ok(self.register(app, handle, cx))
    }

    fn register(&self, app: Arc<App>, handle: SessionHandle, cx: &Cx) -> Arc<Open> {
        let profile = handle
            .info()
            .map(|m| m.profile_id)
            .unwrap_or_else(|| app.default_profile());
        let open = Open::start(app, handle, profile, cx.clone());
        let offers = *self.offers.lock().unwrap_or_else(|p| p.into_inner());
        if offers.any() {
            open.use_client(super::client_fs::AcpClient {
                cx: cx.clone(),
                session: open.id.clone(),
                offers,
                shown: open.shown.clone(),
            });
        }
        self.sessions().insert(open.id.clone(), open.clone());
        open
    }

    pub(crate) fn list(&self, req: &ListSessionsRequest) -> Result<ListSessionsResponse, Error> {
        if req.cursor.is_some() {
            return Err(invalid(
                "this agent lists every session at once; there is no next page",
            ));
        }
        let app = self.core.app().map_err(internal)?;
        let cwd = self.core.home_cwd().to_path_buf();
        // Every project's sessions, each with the directory it was started
        // in (`sessions.cwd`; the agent's own for older ones); only those
        // of the directory asked for when the client names one (sessions
        // stored before directories were kept belong to every directory).
        let sessions = app
            .all_sessions()
            .map_err(|e| internal(e.to_string()))?
            .into_iter()
            .filter(|m| match (&req.cwd, &m.cwd) {
                (Some(want), Some(dir)) => std::path::Path::new(dir) == want.as_path(),
                _ => true,
            })
            .map(|m| {
                let dir = m.cwd.map(std::path::PathBuf::from).unwrap_or(cwd.clone());
                SessionInfo::new(m.id, dir)
                    .title(m.title)
                    .updated_at(super::time::rfc3339(m.last_active))
            })
            .collect();
        Ok(ListSessionsResponse::new(sessions))
    }

    pub(crate) fn prompt(
        &self,
        req: PromptRequest,
        responder: PromptResponder,
        cx: Cx,
    ) -> Result<(), Error> {
        let open = match self.open(&req.session_id.0) {
            Ok(o) => o,
            Err(e) => return responder.respond_with_error(e),
        };
        let (text, attachments) = match super::prompt::to_message(&req.prompt) {
            Ok(m) => m,
            Err(e) => return responder.respond_with_error(invalid(e)),
        };
        if !open.reserve(responder)? {
            return Ok(());
        }
        if super::commands::named(&text).is_some() {
            // navi's own command: answered with what it says (a compaction
            // answers when it ends), off the dispatch loop.
            tokio::spawn(async move {
                if let super::commands::Ran::Said(said) = super::commands::run(&open, &cx, &text) {
                    open.answer_now(&cx, &said);
                }
            });
            return Ok(());
        }
        let text = open.expand_command(text);
        // The MCP servers (navi's and the client's) start with the first
        // prompt; the turn waits for them (each bounded by its start-up
        // timeout), off the dispatch loop.
        tokio::spawn(async move {
            open.start_mcp().await;
            open.start_turn(Op::UserMessage { text, attachments });
        });
        Ok(())
    }

    pub(crate) fn cancel(&self, id: &str) {
        match self.open(id) {
            Ok(open) => open.cancel(),
            Err(_) => tracing::info!("session/cancel for unknown session {id}"),
        }
    }

    pub(crate) fn set_mode(
        &self,
        req: &SetSessionModeRequest,
    ) -> Result<SetSessionModeResponse, Error> {
        let open = self.open(&req.session_id.0)?;
        super::options::switch_profile(&open, &req.mode_id.0)?;
        Ok(SetSessionModeResponse::new())
    }

    pub(crate) fn set_option(
        &self,
        req: &SetSessionConfigOptionRequest,
    ) -> Result<SetSessionConfigOptionResponse, Error> {
        let open = self.open(&req.session_id.0)?;
        let options = super::options::set_option(&open, req)?;
        Ok(SetSessionConfigOptionResponse::new(options))
    }

    /// `session/close`: the turn stopped and saved, the session unlocked.
    pub(crate) async fn close(&self, id: &str) -> Result<CloseSessionResponse, Error> {
        let open = self.open(id)?;
        self.sessions().remove(id);
        open.close().await;
        Ok(CloseSessionResponse::new())
    }

    /// At the end of input: every session stopped, saved and unlocked, and
    /// every MCP server this process started stopped.
    pub(crate) async fn shutdown(&self) {
        let all: Vec<Arc<Open>> = self.sessions().drain().map(|(_, o)| o).collect();
        for open in all {
            open.close().await;
        }
        if let Some(app) = self.core.built() {
            app.stop_mcp();
        }
    }
}

type PromptResponder =
    agent_client_protocol::v1::Responder<agent_client_protocol::v1::schema::PromptResponse>;

/// What `session/load` and `session/resume` answer: the modes and options.
pub(crate) type LoadState = (Option<SessionModeState>, Vec<SessionConfigOption>);

/// Keeps the ACP types of `session/load` and `session/resume` apart.
pub(crate) fn load_response((modes, options): LoadState) -> LoadSessionResponse {
    LoadSessionResponse::new()
        .modes(modes)
        .config_options(options)
}

pub(crate) fn resume_response((modes, options): LoadState) -> ResumeSessionResponse {
    ResumeSessionResponse::new()
        .modes(modes)
        .config_options(options)
}
