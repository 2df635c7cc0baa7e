//! The sandbox policy of one tool child, from the session's directories.
//!
//! The sandbox (`crate::sandbox`) sits below the tools and takes plain
//! paths; this gathers them from the tool environment and the session.
use super::{SessionTools, ToolEnv};
use crate::sandbox::policy::{Escalation, Policy, ToolDirs};

/// The policy for a `terminal`/`code_exec`/user-tool child of `tools`'s
/// session; `None` when it runs unsandboxed (full access, or an approved
/// escalation). Creates the session's temporary directory (and, under
/// `workspace-write`, its files directory) first.
pub(crate) fn for_tool(
    env: &ToolEnv,
    tools: &SessionTools,
    escalation: Escalation,
) -> Result<Option<Policy>, String> {
    let cfg = &env.config.sandbox;
    if !Policy::sandboxes_tools(cfg, escalation) {
        return Ok(None);
    }
    let session = tools.id();
    let tmp = env
        .session_dir(session, "tmp")
        .map_err(|e| format!("cannot create the session's temporary directory: {e}"))?;
    let files = (cfg.mode() == crate::sandbox::SandboxMode::WorkspaceWrite)
        .then(|| {
            crate::attach::FilesPolicy::from_config(&env.config, &env.paths).session_dir(session)
        })
        .filter(|files| crate::private_fs::create_dir_all(files).is_ok());
    let dirs = ToolDirs {
        work_dir: tools.work_dir().to_path_buf(),
        tmp,
        files,
        code: env.session_dir(session, "code").ok(),
        tools_dir: super::user::tools_dir(env),
    };
    Ok(Policy::for_tool(cfg, &env.paths, dirs, escalation))
}
