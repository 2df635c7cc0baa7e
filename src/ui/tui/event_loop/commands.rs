//! The event loop's slash commands: parsed and run by the shared
//! `ui::commands` on the open session; `/model`'s list asked of the server
//! first; a session command that opens another session takes its events.
use super::{EventLoop, Models};
use crate::protocol::ModelInfo;
use crate::ui::commands;
use crate::ui::tui::model_picker::{self, ModelPicker};

impl EventLoop<'_> {
    pub(super) fn command(&mut self, line: &str) {
        // What the command shows lands at the bottom: bring the view there
        // (a search or a scroll may have left it higher up).
        self.state.transcript.follow();
        // The user's own command: its prompt goes out as a message.
        if let Some(prompt) = commands::custom_prompt(&self.session, line) {
            if self.run {
                self.state.queue.push_back(prompt);
            } else {
                self.state.begin_turn(&prompt);
                self.perform(super::Action::Send(prompt));
            }
            return;
        }
        let cmd = match commands::parse(line) {
            Ok(c) => c,
            Err(e) => return self.state.hint(e),
        };
        if let commands::SlashCommand::Attach(args) = &cmd {
            return self.attach_cmd(args);
        }
        if let commands::SlashCommand::SessionDelete(key) = &cmd {
            let what = match key {
                Some(k) => format!("session {k}"),
                None => format!(
                    "this session ({})",
                    if self.state.status.title.is_empty() {
                        "untitled"
                    } else {
                        &self.state.status.title
                    }
                ),
            };
            let q =
                format!("delete {what} and all its messages? y deletes, any other key keeps it");
            self.state.info(vec![q.clone()]);
            self.state.flash = Some(q.clone());
            self.state.confirm = Some((q, cmd));
            return;
        }
        if let commands::SlashCommand::Model(arg) = &cmd
            && arg.as_deref() != Some("default")
            && self.models.is_none()
        {
            let profile = self.state.status.profile.clone();
            if let Some(f) = self.app.list_models(&profile) {
                self.models = Some(Box::pin(f) as Models);
                self.model_wanted = arg.clone();
                self.state.flash = Some("asking the server for its models…".into());
                return;
            }
        }
        let default = matches!(&cmd, commands::SlashCommand::Model(Some(d)) if d == "default");
        let help = cmd == commands::SlashCommand::Help;
        let ok = self.run_command(cmd);
        if help {
            self.state.info(
                super::super::keys::KEY_HELP
                    .iter()
                    .map(|l| l.to_string())
                    .collect(),
            );
        }
        if default && ok {
            // The profile's list decides again at the next message.
            self.state.status.model.clear();
            self.state.status.model_note = "model: profile's list".into();
        }
    }

    /// The server listed its models for `/model`.
    pub(super) fn models_listed(&mut self, r: Result<Vec<ModelInfo>, String>) {
        self.state.flash = None;
        let wanted = self.model_wanted.take();
        let list = match r {
            Ok(l) => {
                self.keep_model_names(&l);
                l
            }
            Err(e) => {
                return self
                    .state
                    .hint(format!("cannot list the server's models: {e}"));
            }
        };
        match wanted {
            None => {
                let current = self.state.status.model.clone();
                self.state.model_picker = Some(ModelPicker::new(list, &current));
            }
            Some(name) => match model_picker::find(&list, &name) {
                Some(m) => self.switch_model(m.clone()),
                None => self.state.hint(model_picker::unknown(&name, &list)),
            },
        }
    }

    /// Switches through the shared `/model <name>`; the status line follows.
    pub(super) fn switch_model(&mut self, m: ModelInfo) {
        if !self.run_command(commands::SlashCommand::Model(Some(m.name.clone()))) {
            return;
        }
        self.state.status.model = m.name.clone();
        self.state.status.model_note.clear();
        if let Some(n) = m.context_length {
            self.state.status.ctx_max = n;
        }
    }

    /// Runs a command on the open session; false when it was refused (the
    /// reason is shown).
    pub(super) fn run_command(&mut self, cmd: commands::SlashCommand) -> bool {
        let Some(mut ui) = self.state.ui_state() else {
            self.state.hint("no session is open");
            return false;
        };
        match commands::execute(cmd, self.app, &mut self.session, &mut ui) {
            Ok(out) => {
                let switched = matches!(out, commands::Outcome::Switched { .. });
                self.state.absorb_ui_state(&ui);
                if switched && let Some(rx) = self.session.take_events() {
                    // Another session: its stream, and its model if it has one.
                    self.events = Some(rx);
                    if let Some(m) = self.session.model() {
                        self.state.status.model = m;
                    }
                }
                for a in self.state.apply_outcome(out) {
                    self.perform(a);
                }
                if switched {
                    self.state.side.todos = self.session.todos();
                }
                true
            }
            Err(e) => {
                self.state.hint(e);
                false
            }
        }
    }

    /// Ctrl-G: the draft in the external editor; a failure keeps it.
    pub(super) fn edit_draft(&mut self) {
        let Some(edit) = self.editor.as_mut() else {
            self.state.hint("no external editor here");
            return;
        };
        let draft = self.state.composer.expanded();
        match edit(&draft) {
            Ok(text) => {
                self.state.composer.clear();
                self.state.composer.set_text(&text);
                self.state.refresh_popup();
            }
            Err(e) => self.state.hint(e),
        }
        self.state.repaint = true;
    }
}
