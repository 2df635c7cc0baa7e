//! The user's own slash commands (files, see `project::commands`) as the
//! front ends meet them: a line that names one becomes its prompt; the
//! list for `/help`, completion and ACP's `available_commands_update`.
use super::parse;
use crate::app::SessionHandle;

/// Whether `head` (`/name`) is one of navi's own commands.
fn is_builtin(head: &str) -> bool {
    !matches!(parse(head), Err(e) if e.starts_with("unknown command"))
}

/// A line that runs one of the user's own commands (a name no built-in
/// command has): the prompt it sends. `None` for every other line.
pub(crate) fn custom_prompt(session: &SessionHandle, line: &str) -> Option<String> {
    let line = line.trim();
    let (head, rest) = line.split_once(char::is_whitespace).unwrap_or((line, ""));
    let name = head.strip_prefix('/')?;
    if is_builtin(head) {
        return None;
    }
    session
        .custom_commands()
        .into_iter()
        .find(|c| c.name == name)
        .map(|c| c.expand(rest))
}

/// The user's own commands as (`/name`, description) for completion and
/// `/help`; built-in names are left out (they win).
pub(crate) fn custom_items(session: &SessionHandle) -> Vec<(String, String)> {
    session
        .custom_commands()
        .into_iter()
        .filter(|c| !is_builtin(&format!("/{}", c.name)))
        .map(|c| {
            let d = if c.description.is_empty() {
                format!(
                    "your command ({})",
                    crate::project::display(&c.path.to_string_lossy())
                )
            } else {
                c.description.clone()
            };
            (c.usage(), d)
        })
        .collect()
}
