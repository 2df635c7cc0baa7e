//! The token account of a session: one number for "how full is the
//! context", shared by the status bar, `/context`, `navi sessions show`, the
//! warnings and the compaction trigger.
//!
//! `used` is the size of the next request without the next user message:
//! system prompt, tool schemas, memory, history. After a model call it is
//! the server's own count (prompt + answer) when the server reports usage,
//! else the estimate; messages added since (tool results, a stopped answer)
//! are estimated on top. After a compaction it is the estimate of the new
//! request, scaled by the ratio real/estimated tokens the server showed
//! earlier, so the meter does not jump when the next real count arrives.
//! `window` is the one the request layer plans with (`Agent::context_window`),
//! stored with the session so a front end without a live server shows the
//! same number.
use crate::session::{SessionStore, StoreError};

/// Session state keys.
pub(crate) const WINDOW_KEY: &str = "context_window";
pub(crate) const RATIO_KEY: &str = "token_ratio";

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ContextAccount {
    pub used: u64,
    /// 0: not known yet (no model call, no server figure).
    pub window: u64,
}

impl ContextAccount {
    /// The account as stored for session `id`.
    pub(crate) fn load(store: &SessionStore, id: &str) -> Result<Self, StoreError> {
        let used = store.meta(id)?.map_or(0, |m| m.context_token_count);
        Ok(ContextAccount {
            used,
            window: load_window(store, id)?,
        })
    }

    /// used / window, `None` when the window is unknown.
    pub(crate) fn fraction(&self) -> Option<f64> {
        (self.window > 0).then(|| self.used as f64 / self.window as f64)
    }

    /// "4.1k of 8.2k tokens (50%)" or "4.1k tokens (window unknown)".
    pub fn describe(&self) -> String {
        match self.fraction() {
            Some(f) => format!(
                "{} of {} tokens ({:.0}%)",
                short(self.used),
                short(self.window),
                f * 100.0
            ),
            None => format!("{} tokens (window unknown)", short(self.used)),
        }
    }
}

/// 950 → "950", 10_100 → "10.1k".
pub(crate) fn short(n: u64) -> String {
    if n < 1000 {
        n.to_string()
    } else {
        format!("{:.1}k", n as f64 / 1000.0)
    }
}

pub(crate) fn load_window(store: &SessionStore, id: &str) -> Result<u64, StoreError> {
    Ok(store
        .get_state(id, WINDOW_KEY)?
        .and_then(|v| v.parse().ok())
        .unwrap_or(0))
}

pub(crate) fn save_window(store: &SessionStore, id: &str, window: u64) -> Result<(), StoreError> {
    store.put_state(id, WINDOW_KEY, &window.to_string())
}

/// The learned real/estimated ratio of a session (1.0 when none).
pub(crate) fn load_ratio(store: &SessionStore, id: &str) -> f64 {
    store
        .get_state(id, RATIO_KEY)
        .ok()
        .flatten()
        .and_then(|v| v.parse::<f64>().ok())
        .filter(|r| r.is_finite() && *r >= super::tokens::MIN_RATIO)
        .unwrap_or(1.0)
}

pub(crate) fn save_ratio(store: &SessionStore, id: &str, ratio: f64) -> Result<(), StoreError> {
    store.put_state(id, RATIO_KEY, &format!("{ratio:.4}"))
}

/// The ratio a session learnt for `model`, stored so that later sessions
/// (in any process) start from it: `token_ratio:<model>`.
pub(crate) fn save_model_ratio(
    store: &SessionStore,
    id: &str,
    model: &str,
    ratio: f64,
) -> Result<(), StoreError> {
    store.put_state(id, &format!("{RATIO_KEY}:{model}"), &format!("{ratio:.4}"))
}

/// The ratio the most recently active session learnt for `model`, if any.
pub(crate) fn latest_model_ratio(store: &SessionStore, model: &str) -> Option<f64> {
    use rusqlite::OptionalExtension;
    let key = format!("{RATIO_KEY}:{model}");
    store
        .read(move |c| {
            Ok(c.query_row(
                "SELECT st.value FROM session_state st JOIN sessions s ON s.id = st.session_id
                 WHERE st.key = ?1 ORDER BY s.last_active DESC LIMIT 1",
                [key],
                |r| r.get::<_, String>(0),
            )
            .optional()?)
        })
        .ok()
        .flatten()?
        .parse::<f64>()
        .ok()
        .filter(|r| r.is_finite() && *r >= super::tokens::MIN_RATIO)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_with_and_without_window() {
        let a = ContextAccount {
            used: 10_100,
            window: 8_000,
        };
        assert_eq!(a.describe(), "10.1k of 8.0k tokens (126%)");
        let b = ContextAccount {
            used: 950,
            window: 0,
        };
        assert_eq!(b.fraction(), None);
        assert_eq!(b.describe(), "950 tokens (window unknown)");
    }

    #[test]
    fn window_and_ratio_round_trip() {
        let store = SessionStore::open_in_memory().unwrap();
        let s = store.create("default").unwrap();
        assert_eq!(ContextAccount::load(&store, &s.id).unwrap().window, 0);
        save_window(&store, &s.id, 4096).unwrap();
        store.set_context_tokens(&s.id, 1234).unwrap();
        save_ratio(&store, &s.id, 1.25).unwrap();
        let a = ContextAccount::load(&store, &s.id).unwrap();
        assert_eq!((a.used, a.window), (1234, 4096));
        assert_eq!(load_ratio(&store, &s.id), 1.25);
        // Another session (another process) starts from the model's ratio.
        assert_eq!(latest_model_ratio(&store, "m"), None);
        save_model_ratio(&store, &s.id, "m", 1.3).unwrap();
        assert_eq!(latest_model_ratio(&store, "m"), Some(1.3));
        assert_eq!(latest_model_ratio(&store, "other"), None);
    }
}

/// Where the tokens of a session's next request go (estimated).
#[derive(Clone, Debug, Default, PartialEq, serde::Serialize)]
pub struct Breakdown {
    pub account: u64,
    pub(crate) window: u64,
    pub(crate) system_and_tools: u64,
    pub(crate) summary: u64,
    pub(crate) history: u64,
    /// Tool results of the latest turn.
    pub(crate) last_tool_results: u64,
    pub(crate) messages: usize,
}

impl Breakdown {
    /// The lines `/context` prints.
    pub(crate) fn render(&self, threshold: f64, target: f64) -> Vec<String> {
        let acc = ContextAccount {
            used: self.account,
            window: self.window,
        };
        let mut out = vec![format!("context: {}", acc.describe())];
        let rows = [
            ("system prompt + tools", self.system_and_tools),
            ("summary", self.summary),
            ("history", self.history),
            ("last tool results", self.last_tool_results),
        ];
        for (name, n) in rows {
            out.push(format!("  {name:<22} {:>7}", short(n)));
        }
        out.push(format!(
            "  ({} messages in the context; figures follow the server's own counts where it gives them, else an estimate scaled by them)",
            self.messages
        ));
        if self.window > 0 {
            out.push(format!(
                "  compaction at {:.0}% ({}), down to {:.0}% ({}); the window is the one every request is planned with",
                threshold * 100.0,
                short((self.window as f64 * threshold) as u64),
                target * 100.0,
                short((self.window as f64 * target) as u64)
            ));
        } else {
            out.push("  window unknown until the server tells it (after the first answer); no automatic compaction until then".into());
        }
        out
    }
}

impl super::Agent {
    /// The token account of a session and where its tokens go.
    pub fn context_breakdown(&self, session_id: &str) -> Result<Breakdown, super::AgentError> {
        let session = self
            .store
            .load(session_id)?
            .ok_or_else(|| super::AgentError::NoSession(session_id.to_string()))?;
        Ok(self.breakdown(
            session_id,
            &session.meta.profile_id,
            &session.context,
            session.meta.context_token_count,
        )?)
    }

    /// The breakdown of a context (`counted`: the stored account, 0 when
    /// there is none yet).
    pub(crate) fn breakdown(
        &self,
        session_id: &str,
        profile_id: &str,
        context: &[crate::session::StoredMessage],
        counted: u64,
    ) -> Result<Breakdown, StoreError> {
        use crate::llm::Role;
        use crate::session::MessageKind;
        let ratio = load_ratio(&self.store, session_id);
        let tokens = |m: &crate::session::StoredMessage| {
            super::tokens::scale(super::tokens::estimate(std::slice::from_ref(&m.msg)), ratio)
        };
        let last_user = context
            .iter()
            .rposition(|m| m.msg.role == Role::User && m.kind == MessageKind::Message);
        let mut b = Breakdown {
            window: load_window(&self.store, session_id)?,
            system_and_tools: self.session_base_tokens(session_id, profile_id, ratio),
            messages: context.len(),
            ..Default::default()
        };
        for (i, m) in context.iter().enumerate() {
            if m.kind == MessageKind::Summary {
                b.summary += tokens(m);
            } else if m.msg.role == Role::Tool && last_user.is_some_and(|u| i > u) {
                b.last_tool_results += tokens(m);
            } else {
                b.history += tokens(m);
            }
        }
        let estimated = b.system_and_tools + b.summary + b.history + b.last_tool_results;
        b.account = match counted {
            0 => estimated,
            n => n,
        };
        Ok(b)
    }
}
