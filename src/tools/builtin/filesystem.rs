//! `filesystem`: read, write, append, list, mkdir, delete, stat.
//!
//! Invariants: every path is resolved (symlinks followed, `..` folded,
//! relative to the work dir) BEFORE the `[security].fs_allowed_paths` check,
//! and the operation then uses that resolved path — what was checked is what
//! is touched. A missing file is checked through its nearest existing
//! ancestor. `delete` and `stat` act on a symlink itself (its resolved parent
//! is checked), never silently on its target. Writes are atomic
//! ([`crate::tools::fs_ops::atomic_write`]). The roots themselves cannot be
//! deleted. write/append/mkdir/delete need approval. Only regular files are
//! read (FIFOs, sockets and devices are refused without blocking), files with
//! several hard links are refused under a root list, and every operation has
//! a time limit (`[tools].fs_timeout_secs`).
use crate::protocol::ToolDisplay;
use crate::tools::fetch::human_size;
use crate::tools::fs_guard::OpenPolicy;
use crate::tools::fs_ops::{self, DEFAULT_LIST_ENTRIES, DEFAULT_READ_LINES};
use crate::tools::paths::FsRoots;
use crate::tools::write_display;
use crate::tools::{ToolContext, ToolError, ToolOutput, TypedTool};
use schemars::JsonSchema;
use serde::Deserialize;
use std::path::Path;

pub struct FilesystemTool;

// The `filesystem` operations (a doc comment here would be sent to the model).
#[derive(Clone, Copy, Deserialize, JsonSchema, PartialEq)]
#[serde(rename_all = "snake_case")]
pub(crate) enum FsAction {
    Read,
    Write,
    Append,
    List,
    Mkdir,
    Delete,
    Stat,
}

#[derive(Deserialize, JsonSchema)]
pub(crate) struct FilesystemArgs {
    action: FsAction,
    path: String,
    content: Option<String>,
    offset: Option<u64>,
    limit: Option<u64>,
    recursive: Option<bool>,
    depth: Option<u64>,
}

/// What one call wants, validated.
enum Op {
    Read { offset: usize, limit: usize },
    Write { content: String, append: bool },
    List { depth: usize, limit: usize },
    Mkdir,
    Delete { recursive: bool },
    Stat,
}

fn parse_op(a: FilesystemArgs) -> Result<Op, ToolError> {
    let limit = a.limit.map(|l| l as usize);
    let recursive = a.recursive.unwrap_or(false);
    Ok(match a.action {
        FsAction::Read => Op::Read {
            offset: a.offset.unwrap_or(1) as usize,
            limit: limit.unwrap_or(DEFAULT_READ_LINES),
        },
        FsAction::Write | FsAction::Append => Op::Write {
            content: a
                .content
                .ok_or_else(|| ToolError::missing("content", "a string"))?,
            append: a.action == FsAction::Append,
        },
        FsAction::List => Op::List {
            depth: if recursive {
                a.depth.unwrap_or(3).clamp(1, 20) as usize
            } else {
                1
            },
            limit: limit.unwrap_or(DEFAULT_LIST_ENTRIES).max(1),
        },
        FsAction::Mkdir => Op::Mkdir,
        FsAction::Delete => Op::Delete { recursive },
        FsAction::Stat => Op::Stat,
    })
}

/// What one call may do besides the roots: output caps and open checks.
#[derive(Clone, Copy)]
struct Limits {
    cap: usize,
    max_line: usize,
    open: OpenPolicy,
}

/// The text for the model and, for reads and writes, the display data.
fn run_op(
    op: Op,
    raw: &str,
    roots: &FsRoots,
    base: &Path,
    lim: Limits,
) -> Result<(String, Option<ToolDisplay>), String> {
    let io = |e: std::io::Error| format!("{raw}: {e}");
    let cap = lim.cap;
    match op {
        Op::Read { offset, limit } => {
            let p = roots.resolve_checked(raw, base)?;
            let opts = fs_ops::ReadOpts {
                byte_cap: cap,
                max_line: lim.max_line,
                open: lim.open,
            };
            let (text, span) = fs_ops::read_text(&p, offset, limit, opts).map_err(io)?;
            let shown = span.map(|s| ToolDisplay::FileRead {
                path: p.display().to_string(),
                first_line: s.first as u64,
                last_line: s.last as u64,
                total_lines: s.total.map(|t| t as u64),
            });
            Ok((text, shown))
        }
        Op::Write { content, append } => {
            let p = roots.resolve_checked(raw, base)?;
            let old = write_display::before(&p, lim.open);
            let total =
                fs_ops::atomic_write(&p, content.as_bytes(), append, lim.open).map_err(io)?;
            let text = if append {
                format!(
                    "appended {} to {} (now {})",
                    human_size(content.len() as u64),
                    p.display(),
                    human_size(total)
                )
            } else {
                format!("wrote {} to {}", human_size(total), p.display())
            };
            let shown = write_display::display(&p, old, &content, append, total);
            Ok((text, Some(shown)))
        }
        Op::List { depth, limit } => {
            let p = roots.resolve_checked(raw, base)?;
            let text = fs_ops::list(&p, depth, limit).map_err(io)?;
            Ok((crate::tools::truncate_output(&text, cap), None))
        }
        Op::Mkdir => {
            let p = roots.resolve_checked(raw, base)?;
            if p.is_dir() {
                return Ok((format!("{} already exists", p.display()), None));
            }
            std::fs::create_dir_all(&p).map_err(io)?;
            Ok((format!("created directory {}", p.display()), None))
        }
        Op::Delete { recursive } => {
            let p = roots.resolve_entry_checked(raw, base)?;
            if p == Path::new("/") || roots.is_root(&p) {
                return Err(format!(
                    "refusing to delete {}: it is an allowed root itself",
                    p.display()
                ));
            }
            let meta = std::fs::symlink_metadata(&p).map_err(io)?;
            if meta.is_dir() {
                if recursive {
                    std::fs::remove_dir_all(&p).map_err(io)?;
                } else {
                    std::fs::remove_dir(&p).map_err(|e| {
                        format!("{raw}: {e} (a non-empty directory needs recursive=true)")
                    })?;
                }
                Ok((format!("deleted directory {}", p.display()), None))
            } else {
                std::fs::remove_file(&p).map_err(io)?;
                let what = if meta.file_type().is_symlink() {
                    "symlink"
                } else {
                    "file"
                };
                Ok((format!("deleted {what} {}", p.display()), None))
            }
        }
        Op::Stat => {
            let entry = roots.resolve_entry_checked(raw, base)?;
            let resolved = roots.resolve_checked(raw, base)?;
            Ok((fs_ops::stat(&entry, &resolved).map_err(io)?, None))
        }
    }
}

#[async_trait::async_trait]
impl TypedTool for FilesystemTool {
    type Args = FilesystemArgs;

    fn name(&self) -> &str {
        "filesystem"
    }

    fn description(&self) -> &str {
        "Read, write, append, list, mkdir, delete or stat local files. offset/limit are lines for read."
    }

    fn approval(&self, a: &FilesystemArgs) -> Option<String> {
        let path = &a.path;
        let len = a.content.as_deref().map_or(0, str::len);
        match a.action {
            FsAction::Write => Some(format!(
                "write {len} bytes to {path} (replacing it if it exists)"
            )),
            FsAction::Append => Some(format!("append {len} bytes to {path}")),
            FsAction::Mkdir => Some(format!("create directory {path}")),
            FsAction::Delete if a.recursive == Some(true) => {
                Some(format!("delete {path} and everything in it"))
            }
            FsAction::Delete => Some(format!("delete {path}")),
            FsAction::Read | FsAction::List | FsAction::Stat => None,
        }
    }

    fn describe(&self, a: &FilesystemArgs, base: &Path) -> crate::protocol::CallInfo {
        use crate::protocol::CallKind;
        let path = crate::tools::describe::abs(&a.path, base);
        let (kind, verb) = match a.action {
            FsAction::Read => (CallKind::Read, "read"),
            FsAction::List => (CallKind::Read, "list"),
            FsAction::Stat => (CallKind::Read, "stat"),
            FsAction::Write => (CallKind::Edit, "write"),
            FsAction::Append => (CallKind::Edit, "append"),
            FsAction::Mkdir => (CallKind::Edit, "mkdir"),
            FsAction::Delete => (CallKind::Delete, "delete"),
        };
        let subject = format!("{verb} {}", a.path);
        let mut info = crate::protocol::CallInfo::titled(kind, "filesystem", Some(&subject));
        if matches!(a.action, FsAction::Write | FsAction::Append)
            && let Some(c) = &a.content
        {
            let append = a.action == FsAction::Append;
            info.edit = Some(crate::tools::describe::edit(path.clone(), c, append));
        }
        info.paths = vec![path];
        info
    }

    async fn run(&self, a: FilesystemArgs, ctx: &ToolContext) -> Result<ToolOutput, ToolError> {
        let raw = a.path.clone();
        let op = parse_op(a)?;
        let mut roots =
            FsRoots::from_config(&ctx.env.config.security.fs_allowed_paths, ctx.work_dir());
        if matches!(op, Op::Read { .. } | Op::List { .. } | Op::Stat) {
            // Oversized outputs and messages of this session are kept in its
            // files dir: the model may always read them back.
            let files = crate::attach::FilesPolicy::from_config(&ctx.env.config, &ctx.env.paths);
            for sid in std::iter::once(&ctx.session_id).chain(ctx.parent_session_id.as_ref()) {
                roots = roots.with_root(&files.session_dir(sid));
            }
        }
        let base = ctx.work_dir().to_path_buf();
        let cfg = &ctx.env.config;
        let lim = Limits {
            cap: cfg.tools.output_limit_bytes.max(256),
            max_line: cfg.tools.max_line_bytes.max(80),
            open: OpenPolicy {
                refuse_hard_links: !roots.is_unrestricted() && !cfg.security.fs_allow_hard_links,
            },
        };
        let secs = cfg.tools.fs_timeout_secs.max(1);
        let shown = raw.clone();
        // The editor's file system (ACP): reads see its unsaved buffers,
        // writes land in it. Listings and the other operations stay local.
        if let Some(client) = ctx.client() {
            let via = through_client(&client, &op, &raw, &roots, &base, lim);
            let timed = tokio::time::timeout(std::time::Duration::from_secs(secs), via);
            let done = tokio::select! {
                r = timed => r,
                _ = ctx.cancel.cancelled() => return Err("operation cancelled by user".into()),
            };
            match done {
                Ok(Some(r)) => return finish(r),
                Ok(None) => {}
                Err(_) => {
                    return Err(format!(
                        "{shown}: the editor did not answer within {secs}s ([tools].fs_timeout_secs)"
                    )
                    .into());
                }
            }
        }
        let job = tokio::task::spawn_blocking(move || run_op(op, &raw, &roots, &base, lim));
        // A hung mount or device must not hang the turn: give up waiting (the
        // blocked thread is left behind; the call reports the timeout).
        let timed = tokio::time::timeout(std::time::Duration::from_secs(secs), job);
        let done = tokio::select! {
            r = timed => r,
            _ = ctx.cancel.cancelled() => return Err("operation cancelled by user".into()),
        };
        match done {
            Ok(Ok(r)) => finish(r),
            Ok(Err(e)) => Err(format!("the file operation failed: {e}").into()),
            Err(_) => Err(format!(
                "{shown}: the file operation did not finish within {secs}s ([tools].fs_timeout_secs); the file system may be hung or the path may be a special file"
            )
            .into()),
        }
    }
}

/// The tool's answer from an operation's text and display data.
fn finish(r: crate::tools::client_fs::Done) -> Result<ToolOutput, ToolError> {
    let (text, shown) = r?;
    let out = ToolOutput::new(text);
    Ok(match shown {
        Some(d) => out.with_display(d),
        None => out,
    })
}

/// A read or write through the editor when it offers one; `None`: the
/// disk handles the operation.
async fn through_client(
    client: &crate::tools::client::Client,
    op: &Op,
    raw: &str,
    roots: &FsRoots,
    base: &Path,
    lim: Limits,
) -> Option<crate::tools::client_fs::Done> {
    use crate::tools::client_fs;
    match op {
        Op::Read { offset, limit } if client.reads() => {
            let opts = fs_ops::ReadOpts {
                byte_cap: lim.cap,
                max_line: lim.max_line,
                open: lim.open,
            };
            client_fs::read(client, raw, roots, base, (*offset, *limit), opts).await
        }
        Op::Write { content, append } if client.writes() => {
            client_fs::write(client, raw, roots, base, (content, *append), lim.open).await
        }
        _ => None,
    }
}
