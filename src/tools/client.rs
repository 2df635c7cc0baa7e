//! The tools' use of the editor's side ([`ClientSide`], defined with the
//! protocol so front ends can implement it): the edit's old text as the
//! editor has it. The filesystem and terminal tools use it through
//! [`super::client_fs`] and [`super::client_exec`].
use crate::protocol::CallInfo;
pub use crate::protocol::{Client, ClientCommand, ClientExit, ClientSide};
use std::path::Path;

/// The edit's old text as the editor has it (an unsaved buffer wins over
/// the disk). `info` was filled from the disk first: a directory, a binary
/// or an over-large file keeps its note; a client that cannot read the
/// file leaves the disk's text.
pub(crate) async fn old_text_from(info: &mut CallInfo, appended: Option<String>, client: &Client) {
    let Some(e) = info.edit.as_mut() else {
        return;
    };
    if e.note.is_some() || !client.reads() {
        return;
    }
    match client.read_text(Path::new(&e.path)).await {
        Ok(text) if text.len() as u64 <= super::describe::MAX_READ => {
            if let Some(add) = appended {
                e.new_text = format!("{text}{add}");
            }
            e.old_text = Some(text);
        }
        Ok(_) => {}
        Err(err) => tracing::debug!("the client could not read {} for a diff: {err}", e.path),
    }
}
