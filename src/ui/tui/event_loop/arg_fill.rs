//! Filling the lists the completion popup draws arguments from
//! ([`super::super::arg_lists`]): sessions at once from the local database,
//! models through a background request whose answer the loop awaits.
use super::{EventLoop, Models};
use crate::ui::commands::args::ArgList;

impl EventLoop<'_> {
    /// Starts or does the read the popup asked for.
    pub(super) fn fill_arg_lists(&mut self) {
        match self.state.args.wanted.take() {
            Some(ArgList::Sessions) => {
                self.state.args.sessions = Some(self.app.session_choices());
                self.state.refresh_popup();
            }
            Some(ArgList::Models) => {
                let profile = self.state.status.profile.clone();
                match self.app.list_models(&profile) {
                    Some(f) => self.state.args.fetch = Some(Box::pin(f) as Models),
                    None => self.state.args.models_listed(&profile, None),
                }
            }
            None => {}
        }
    }

    /// The models' request for completion ended.
    pub(super) fn arg_models_fetched(
        &mut self,
        r: Result<Vec<crate::protocol::ModelInfo>, String>,
    ) {
        self.state.args.fetch = None;
        match r {
            Ok(list) => self.keep_model_names(&list),
            Err(e) => {
                tracing::debug!("completion: cannot list the models: {e}");
                let profile = self.state.status.profile.clone();
                self.state.args.models_listed(&profile, None);
            }
        }
        let at_model = crate::ui::commands::args::context(&self.state.composer.text)
            .is_some_and(|(_, _, l)| l == ArgList::Models);
        if at_model {
            self.state.refresh_popup();
        }
    }

    /// Keeps the served names for completing `/model`.
    pub(super) fn keep_model_names(&mut self, list: &[crate::protocol::ModelInfo]) {
        let profile = self.state.status.profile.clone();
        let names = list.iter().map(|m| m.name.clone()).collect();
        self.state.args.models_listed(&profile, Some(names));
    }
}
