//! The user's own slash commands (files, see `project::commands`) as the
//! front ends meet them: a line that names one becomes its prompt; the
//! list for `/help`, completion and ACP's `available_commands_update`.
//! `/init` is navi's own command of this kind (a prompt sent as a turn).
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
    if head == "/init" {
        // A built-in that is a prompt: it runs as a turn in every front end.
        return Some(crate::project::init::prompt(&session.work_dir(), rest));
    }
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
    items(session.custom_commands())
}

fn items(list: Vec<crate::project::commands::CustomCommand>) -> Vec<(String, String)> {
    list.into_iter()
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

/// navi's own commands that are prompts, as (name, description, hint) for
/// ACP's `available_commands_update`.
pub(crate) fn prompt_builtins() -> Vec<(String, String, String)> {
    vec![(
        "init".into(),
        "ask the model to write (or improve) the project's AGENTS.md".into(),
        String::new(),
    )]
}

/// Notices command files added or removed after start: the two command
/// directories' modification times, compared when the completion popup is
/// about to open (two `stat` calls; the files are read only on a change).
#[derive(Clone, Debug)]
pub(crate) struct CommandWatch {
    config_dir: std::path::PathBuf,
    work_dir: std::path::PathBuf,
    stamp: Vec<Option<std::time::SystemTime>>,
}

impl CommandWatch {
    pub(crate) fn new(session: &SessionHandle, config_dir: &std::path::Path) -> CommandWatch {
        let mut w = CommandWatch {
            config_dir: config_dir.to_path_buf(),
            work_dir: session.work_dir(),
            stamp: Vec::new(),
        };
        w.stamp = w.now();
        w
    }

    fn now(&self) -> Vec<Option<std::time::SystemTime>> {
        crate::project::commands::dirs(&self.config_dir, &self.work_dir)
            .iter()
            .map(|d| std::fs::metadata(d).and_then(|m| m.modified()).ok())
            .collect()
    }

    /// The commands again when a directory changed since the last look.
    pub(crate) fn changed(&mut self) -> Option<Vec<(String, String)>> {
        let now = self.now();
        if now == self.stamp {
            return None;
        }
        self.stamp = now;
        Some(items(crate::project::commands::load(
            &self.config_dir,
            &self.work_dir,
        )))
    }
}
