//! `navi acp`: navi as an Agent Client Protocol agent on stdin/stdout, for
//! editors (Zed, Neovim, JetBrains…). See docs/acp.md.
//!
//! Built on the official `agent-client-protocol` crate (stable protocol v1).
//! Stdout carries only the protocol; logs go to the log file.
//!
//! - [`apps`]: the one navi core, serving sessions in any working
//!   directory (each with the client's MCP servers of its own), built when
//!   a session first needs it.
//! - [`server`]: the ACP methods over the open sessions.
//! - [`session`]: one open session: its handle, the prompt waiting for its
//!   turn, and the task that forwards its events.
//! - [`map`], [`prompt`]: pure conversions between navi's and ACP's types.
//!
//! The SDK runs request handlers one at a time on its dispatch loop, so no
//! handler waits for the client: a prompt is answered from the session's
//! event task when its turn ends, and permission requests are awaited on
//! their own tasks.

mod apps;
mod client_fs;
mod commands;
mod map;
mod news;
mod options;
mod prompt;
mod server;
mod session;
mod stdin;
mod terminal;
mod time;

use crate::app::launch::{Failure, GlobalArgs};
use agent_client_protocol::v1::Responder;
use agent_client_protocol::v1::schema::{
    CancelNotification, CloseSessionRequest, CloseSessionResponse, InitializeRequest,
    InitializeResponse, ListSessionsRequest, ListSessionsResponse, LoadSessionRequest,
    LoadSessionResponse, NewSessionRequest, NewSessionResponse, PromptRequest, PromptResponse,
    ResumeSessionRequest, ResumeSessionResponse, SetSessionConfigOptionRequest,
    SetSessionConfigOptionResponse, SetSessionModeRequest, SetSessionModeResponse,
};
use agent_client_protocol::{Agent, on_receive_notification, on_receive_request};
use server::Server;
use session::Cx;
use std::sync::Arc;

/// Serves ACP on stdin/stdout until the client closes stdin (or a stop
/// signal); then every session is stopped, saved and unlocked. Exit 0 on a
/// clean end, 128 + the signal's number after a signal.
pub(crate) async fn run(g: &GlobalArgs) -> Result<u8, Failure> {
    let (core, _log) = apps::Core::load(g)?;
    tracing::info!("navi acp: serving the Agent Client Protocol on stdin/stdout");
    let server = Arc::new(Server::new(core));
    let s = server.clone();
    // SIGINT, SIGTERM and SIGHUP end navi like the end of input does (every
    // session stopped, saved and unlocked), with 130 / 143 / 129.
    let mut signals = crate::ui::signals::StopSignals::install();
    let serve = Agent
        .v1()
        .name("navi")
        .on_receive_request(
            {
                let s = s.clone();
                async move |req: InitializeRequest, r: Responder<InitializeResponse>, _: Cx| {
                    s.remember_client(&req.client_capabilities);
                    r.respond(s.initialize())
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let s = s.clone();
                async move |req: NewSessionRequest, r: Responder<NewSessionResponse>, cx: Cx| {
                    // Off the dispatch loop: the server's model list is
                    // asked for first (bounded).
                    let s = s.clone();
                    tokio::spawn(async move {
                        match s.new_session(&req.cwd, &req.mcp_servers, &cx).await {
                            Ok((resp, open)) => {
                                if r.respond(resp).is_ok() {
                                    s.opened(&open, &cx, false);
                                }
                            }
                            Err(e) => {
                                let _ = r.respond_with_error(e);
                            }
                        }
                    });
                    Ok(())
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let s = s.clone();
                async move |req: LoadSessionRequest, r: Responder<LoadSessionResponse>, cx: Cx| {
                    // On the dispatch loop: a prompt that follows at once
                    // finds the session open.
                    let id = &req.session_id.0;
                    match s.load_session(id, &req.cwd, &req.mcp_servers, &cx, true) {
                        Ok((state, open)) => {
                            r.respond(server::load_response(state))?;
                            s.opened(&open, &cx, true);
                            Ok(())
                        }
                        Err(e) => r.respond_with_error(e),
                    }
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let s = s.clone();
                async move |req: ResumeSessionRequest,
                            r: Responder<ResumeSessionResponse>,
                            cx: Cx| {
                    let id = &req.session_id.0;
                    match s.load_session(id, &req.cwd, &req.mcp_servers, &cx, false) {
                        Ok((state, open)) => {
                            r.respond(server::resume_response(state))?;
                            s.opened(&open, &cx, false);
                            Ok(())
                        }
                        Err(e) => r.respond_with_error(e),
                    }
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let s = s.clone();
                async move |req: ListSessionsRequest, r: Responder<ListSessionsResponse>, _: Cx| {
                    match s.list(&req) {
                        Ok(resp) => r.respond(resp),
                        Err(e) => r.respond_with_error(e),
                    }
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let s = s.clone();
                async move |req: PromptRequest, r: Responder<PromptResponse>, cx: Cx| {
                    s.prompt(req, r, cx)
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let s = s.clone();
                async move |req: SetSessionModeRequest,
                            r: Responder<SetSessionModeResponse>,
                            _: Cx| {
                    match s.set_mode(&req) {
                        Ok(resp) => r.respond(resp),
                        Err(e) => r.respond_with_error(e),
                    }
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let s = s.clone();
                async move |req: SetSessionConfigOptionRequest,
                            r: Responder<SetSessionConfigOptionResponse>,
                            _: Cx| {
                    match s.set_option(&req) {
                        Ok(resp) => r.respond(resp),
                        Err(e) => r.respond_with_error(e),
                    }
                }
            },
            on_receive_request!(),
        )
        .on_receive_request(
            {
                let s = s.clone();
                async move |req: CloseSessionRequest, r: Responder<CloseSessionResponse>, _: Cx| {
                    // Closing waits for a running turn to save: off the
                    // dispatch loop, so other messages keep flowing.
                    let s = s.clone();
                    tokio::spawn(async move {
                        let _ = match s.close(&req.session_id.0).await {
                            Ok(resp) => r.respond(resp),
                            Err(e) => r.respond_with_error(e),
                        };
                    });
                    Ok(())
                }
            },
            on_receive_request!(),
        )
        .on_receive_notification(
            {
                let s = s.clone();
                async move |n: CancelNotification, _: Cx| {
                    s.cancel(&n.session_id.0);
                    Ok(())
                }
            },
            on_receive_notification!(),
        )
        .connect_to(stdin::transport());
    let (result, stopped) = tokio::select! {
        r = serve => (r, None),
        s = signals.recv() => (Ok(()), Some(s)),
    };
    tracing::info!("navi acp: input closed or stopped ({stopped:?}); ending the sessions");
    server.shutdown().await;
    if let Some(s) = stopped {
        return Ok(s.exit_code());
    }
    match result {
        Ok(()) => Ok(0),
        Err(e) => {
            tracing::error!("navi acp: the connection failed: {e}");
            Err(Failure::runtime(format!(
                "navi acp: the connection failed: {e}"
            )))
        }
    }
}
