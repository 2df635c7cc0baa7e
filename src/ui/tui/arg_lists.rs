//! The lists the completion popup draws arguments from: sessions for
//! `/session resume|delete`, the server's models for `/model`
//! (matching: [`crate::ui::commands::args`]).
//!
//! Invariants: the state never reads them itself; it says which list it is
//! missing (`wanted`) and the event loop fills it: sessions from the local
//! database, models from a background request (the popup shows what is
//! there meanwhile, so no frame waits on the network). The session list is
//! read again each time the composer enters a session argument; the model
//! list is kept per profile until the server is asked again.
use super::event_loop::Models;
use crate::ui::commands::args::{self, ArgList};

#[derive(Default)]
pub(crate) struct ArgLists {
    /// `(id prefix, title)` of the saved sessions, most recent first.
    pub(crate) sessions: Option<Vec<(String, String)>>,
    /// The served model names and the profile they were listed for.
    pub(crate) models: Option<(String, Vec<String>)>,
    /// A list the popup needs that is neither there nor being fetched.
    pub(crate) wanted: Option<ArgList>,
    /// The request for the models, while it runs.
    pub(crate) fetch: Option<Models>,
}

impl ArgLists {
    /// Notes what `line` needs, for `profile`'s backend. Returns the
    /// candidates when the line is at a list argument.
    pub(crate) fn candidates(
        &mut self,
        line: &str,
        profile: &str,
    ) -> Option<Vec<(String, String)>> {
        let Some((head, partial, list)) = args::context(line) else {
            // Read the sessions afresh next time.
            self.sessions = None;
            return None;
        };
        if list != ArgList::Sessions {
            self.sessions = None;
        }
        Some(match list {
            ArgList::Sessions => match &self.sessions {
                Some(s) => args::sessions(&head, partial, s),
                None => {
                    self.wanted = Some(ArgList::Sessions);
                    Vec::new()
                }
            },
            ArgList::Models => {
                let known = self
                    .models
                    .as_ref()
                    .filter(|(p, _)| p == profile)
                    .map(|(_, m)| m.as_slice());
                if known.is_none() && self.fetch.is_none() {
                    self.wanted = Some(ArgList::Models);
                }
                args::models(&head, partial, known.unwrap_or(&[]))
            }
        })
    }

    /// The server listed its models (for completion or for `/model`'s
    /// picker). A failure keeps the list empty until `/model` asks again.
    pub(crate) fn models_listed(&mut self, profile: &str, names: Option<Vec<String>>) {
        self.models = Some((profile.to_string(), names.unwrap_or_default()));
    }
}

/// Resolves when the models' request ends (never while there is none).
pub(crate) async fn fetched(
    fetch: &mut Option<Models>,
) -> Result<Vec<crate::protocol::ModelInfo>, String> {
    match fetch {
        Some(f) => f.await,
        None => std::future::pending().await,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn asks_for_what_is_missing_and_forgets_sessions() {
        let mut a = ArgLists::default();
        assert_eq!(a.candidates("/session resume ", "dev"), Some(Vec::new()));
        assert_eq!(a.wanted.take(), Some(ArgList::Sessions));
        a.sessions = Some(vec![("3fa1b2c4".into(), "logs".into())]);
        let c = a.candidates("/session resume ", "dev").unwrap_or_default();
        assert_eq!(c[0].0, "/session resume 3fa1b2c4");
        assert_eq!(a.wanted, None);
        // Leaving the argument drops the sessions (read again next time).
        assert_eq!(a.candidates("/session ", "dev"), None);
        assert!(a.sessions.is_none());

        // Models: "default" at once, the list once the server answered.
        let c = a.candidates("/model ", "dev").unwrap_or_default();
        assert_eq!(
            c,
            vec![(
                "/model default".into(),
                "back to the profile's model list".into()
            )]
        );
        assert_eq!(a.wanted.take(), Some(ArgList::Models));
        a.models_listed("dev", Some(vec!["qwen3:8b".into()]));
        let c = a.candidates("/model q", "dev").unwrap_or_default();
        assert_eq!(c[0].0, "/model qwen3:8b");
        // Another profile may have another backend: asked again.
        a.candidates("/model ", "other");
        assert_eq!(a.wanted, Some(ArgList::Models));
    }
}
