//! Session commands that put another session (or the same one, rewound) in
//! front of the user.
use super::{Outcome, err};
use crate::app::{App, OpenOptions, SessionChoice, SessionHandle};
use crate::protocol::Op;

/// Opens `choice` in place of the open session: the new one's lock is
/// taken before the old one is let go (a busy session is refused, naming
/// its navi's pid); the old one ends as every session ends
/// ([`SessionHandle::close`], in the background). A model chosen with
/// `/model` goes on in a session that has none of its own.
pub(crate) fn switch(
    app: &App,
    session: &mut SessionHandle,
    choice: SessionChoice,
    profile: Option<String>,
    note: String,
) -> Result<Outcome, String> {
    let opts = OpenOptions {
        profile,
        pending: true,
        ..Default::default()
    };
    let fresh = app.open_handle(&choice, opts).map_err(err)?;
    if fresh.model().is_none()
        && let Some(m) = session.model()
    {
        let _ = fresh.submit(Op::SwitchModel { model: Some(m) });
    }
    let old = std::mem::replace(session, fresh);
    if let Ok(rt) = tokio::runtime::Handle::try_current() {
        rt.spawn(async move { old.close().await });
    }
    reloaded(session, note)
}

/// The open session shown again (after a switch or a rewind).
pub(super) fn reloaded(session: &SessionHandle, note: String) -> Result<Outcome, String> {
    let meta = session
        .info()
        .ok_or_else(|| format!("session {} is gone", session.id()))?;
    Ok(Outcome::Switched {
        history: session.history()?,
        window: session.stored_window(),
        session: meta,
        note,
    })
}
