//! [`Op`]s on an open session: every change a front end makes to a session
//! comes through [`SessionHandle::submit`], and each refusal is worded here
//! once (a turn that runs, an unknown profile, a message that does not
//! exist…), whichever front end asked.
use super::handle::{Reply, SessionHandle, invalid};
use crate::agent::session::ModelChoice;
use crate::attach::Attachment;
use crate::llm::ImageData;
use crate::protocol::{AgentEvent, InputAttachment, Op, OpError, SessionEvent};
use crate::session::pins;
use std::sync::atomic::Ordering;

impl SessionHandle {
    /// Carries out `op`. A message or a compaction starts on its own task
    /// and reports on the event stream, ending with
    /// [`SessionEvent::TurnEnded`]; the rest act at once and say what they
    /// did in the [`Reply`].
    pub fn submit(&self, op: Op) -> Result<Reply, OpError> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(OpError::Closed);
        }
        match op {
            Op::UserMessage { text, attachments } => {
                self.idle()?;
                let msg = self.prepare(&text, &attachments)?;
                self.send(msg).map(|_| Reply::Done)
            }
            Op::Compact { mode } => self.start_compaction(mode).map(|_| Reply::Done),
            Op::Steer { text } => {
                if !self.is_running() {
                    return Err(OpError::NotRunning);
                }
                self.session.push_steer(&text);
                Ok(Reply::Done)
            }
            Op::Stop => match self.session.stop() {
                true => Ok(Reply::Done),
                false => Err(OpError::NotRunning),
            },
            Op::Approval { id, decision } => match self.session.tools().answer(&id, decision) {
                true => Ok(Reply::Done),
                false => Err(OpError::Invalid(format!(
                    "no approval request '{id}' waits"
                ))),
            },
            Op::Pin { index, pinned } => self.pin(index, pinned),
            Op::SwitchProfile { profile } => self.switch_profile(&profile),
            Op::SwitchModel { model } => self.switch_model(model),
            Op::Rename { title } => self.rename(&title),
            Op::PinSession { pinned } => {
                self.session
                    .edit(|m| m.pinned = pinned, |s, id| s.set_pinned(id, pinned))
                    .map_err(invalid)?;
                Ok(Reply::line(if pinned {
                    "session pinned"
                } else {
                    "session unpinned"
                }))
            }
            Op::Rewind {
                message,
                files,
                force,
            } => self.rewind(message, files, force),
            Op::Undo { force } => {
                self.idle()?;
                self.undo(force).map(Reply::Lines).map_err(OpError::Invalid)
            }
            Op::Attach { path } => self.attach(&path).map(Reply::Attached),
            Op::RevokeApproval { tool } => {
                crate::tools::approval::revoke(self.session.tools(), tool.as_deref())
                    .map(Reply::line)
                    .map_err(OpError::Invalid)
            }
            Op::Delete => self.delete(),
        }
    }

    /// [`OpError::Busy`] while a turn or a compaction runs.
    pub(super) fn idle(&self) -> Result<(), OpError> {
        if self.is_running() {
            Err(OpError::Busy)
        } else {
            Ok(())
        }
    }

    /// Starts a turn with a message made by [`prepare`](Self::prepare) or
    /// [`prepare_with`](Self::prepare_with): for a front end that checks the
    /// input (and starts what the turn needs) before the turn begins.
    pub fn send(&self, msg: super::Prepared) -> Result<(), OpError> {
        if self.closed.load(Ordering::SeqCst) {
            return Err(OpError::Closed);
        }
        self.start_turn(msg.message, msg.typed)
    }

    /// The user message: text, then the attachments in order. Nothing is
    /// sent; a file that cannot be attached is an error naming it.
    pub fn prepare(
        &self,
        text: &str,
        items: &[InputAttachment],
    ) -> Result<super::Prepared, OpError> {
        let mut out = Vec::new();
        for item in items {
            out.push(match item {
                InputAttachment::Path { path } => self.attach(path)?,
                InputAttachment::Text { name, text } => Attachment::Text {
                    name: name.clone(),
                    text: text.clone(),
                },
                InputAttachment::Bytes { name, data_base64 } => {
                    let bytes = decode64(data_base64, name)?;
                    crate::attach::attach_bytes(&self.files, self.session.id(), name, &bytes, None)
                        .map_err(|e| OpError::Invalid(format!("{name}: {e}")))?
                }
                InputAttachment::Image {
                    mime,
                    data_base64,
                    name,
                } => {
                    let name = name.clone().unwrap_or_else(|| "image".into());
                    decode64(data_base64, &name)?;
                    Attachment::Image {
                        name,
                        image: ImageData {
                            mime: mime.clone(),
                            base64: data_base64.clone(),
                        },
                    }
                }
            });
        }
        if text.trim().is_empty() && out.is_empty() {
            return Err(OpError::Invalid("the message is empty".into()));
        }
        Ok(self.prepare_with(text, &out))
    }

    /// A file read by the rules of [`crate::attach`]; a relative path starts
    /// at the session's working directory.
    fn attach(&self, path: &std::path::Path) -> Result<Attachment, OpError> {
        let path = crate::attach::expand(&path.to_string_lossy());
        let here = std::env::current_dir().ok();
        // Named as typed when the session works where the process does (the
        // error then shows the path the user wrote).
        let path = if path.is_relative() && here.as_deref() != Some(self.session.work_dir()) {
            self.session.work_dir().join(path)
        } else {
            path
        };
        crate::attach::attach_path(&self.files, self.session.id(), &path).map_err(invalid)
    }

    fn pin(&self, index: usize, pinned: bool) -> Result<Reply, OpError> {
        let target = if index == 0 {
            pins::Target::LastAnswer
        } else {
            pins::Target::Number(index)
        };
        let id = self.session.id();
        let Some((e, changed)) =
            pins::set_target(&self.store, id, target, pinned).map_err(invalid)?
        else {
            let count = pins::entries(&self.store, id).map_err(invalid)?.len();
            let what = if index == 0 {
                "last".to_string()
            } else {
                index.to_string()
            };
            return Err(OpError::Invalid(format!(
                "no message {what}: this session has {count} pinnable messages (/pin lists them)"
            )));
        };
        let n = e.n;
        Ok(Reply::line(match (pinned, changed) {
            (true, true) => format!(
                "📌 pinned #{n} ({}): kept verbatim through every compaction",
                super::lines::pin_preview(&e)
            ),
            (true, false) => format!("#{n} is already pinned"),
            (false, true) => format!("unpinned #{n}: a later compaction may summarise it"),
            (false, false) => format!("#{n} was not pinned"),
        }))
    }

    fn switch_profile(&self, id: &str) -> Result<Reply, OpError> {
        self.idle()?;
        let p = self.agent.profiles.find(id).map_err(invalid)?;
        self.session
            .edit(
                |m| m.profile_id = p.id.clone(),
                |s, sid| s.set_profile(sid, &p.id),
            )
            .map_err(invalid)?;
        let event = AgentEvent::ProfileSwitched {
            profile_id: p.id.clone(),
            profile_name: p.name.clone(),
        };
        let _ = self.tx.try_send(SessionEvent::Agent { event });
        Ok(Reply::line(format!(
            "profile switched to {} ({})",
            p.name, p.id
        )))
    }

    fn switch_model(&self, model: Option<String>) -> Result<Reply, OpError> {
        let (choice, line) = match model.as_deref().map(str::trim) {
            None | Some("default") => (
                ModelChoice::ProfileList,
                "model: back to the profile's priority list".to_string(),
            ),
            Some("") => return Err(OpError::Invalid("the model name is empty".into())),
            Some(m) => (
                ModelChoice::Named(m.to_string()),
                format!("model set to {m} for this session"),
            ),
        };
        self.session
            .set_model_choice(Some(choice))
            .map_err(invalid)?;
        Ok(Reply::line(line))
    }

    fn rename(&self, title: &str) -> Result<Reply, OpError> {
        let title = title.trim().to_string();
        if title.is_empty() {
            return Err(OpError::Invalid("the title is empty".into()));
        }
        self.session
            .edit(|m| m.title = title.clone(), |s, id| s.rename(id, &title))
            .map_err(invalid)?;
        Ok(Reply::line(format!("renamed to \"{title}\"")))
    }

    /// Deletes the session and ends the handle.
    fn delete(&self) -> Result<Reply, OpError> {
        self.idle()?;
        let id = self.id();
        if self.closed.swap(true, Ordering::SeqCst) {
            return Err(OpError::Closed);
        }
        if let Some(lock) = self.session.release() {
            self.store.delete_held(lock).map_err(invalid)?;
        }
        let (env, sid) = (self.agent.env.clone(), id.clone());
        if let Ok(rt) = tokio::runtime::Handle::try_current() {
            rt.spawn(async move {
                crate::tools::builtin::ssh_exec::close_session(&env, &sid).await;
            });
        }
        Ok(Reply::line(format!("deleted session {id}")))
    }
}

fn decode64(data: &str, name: &str) -> Result<Vec<u8>, OpError> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|e| OpError::Invalid(format!("{name}: not valid base64: {e}")))
}
