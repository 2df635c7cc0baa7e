//! `navi models`, `navi sessions …`, `navi profiles list`.
use super::{Failure, GlobalArgs, SessionsCommand, build_app, load_config};
use crate::app::{App, AppOptions, OpenOptions, SessionChoice};
use crate::protocol::{ModelInfo, Op};
use crate::ui::format::ago;

fn json_out<T: serde::Serialize>(v: &T) -> Result<u8, Failure> {
    let s = serde_json::to_string_pretty(v).map_err(Failure::runtime)?;
    super::out::line(&s)?;
    Ok(0)
}

pub(crate) async fn models(g: &GlobalArgs, json: bool) -> Result<u8, Failure> {
    let (config, paths, _) = load_config(g)?;
    let served = crate::app::server_models(&config, &paths.data_dir).await?;
    for (provider, e) in &served.failed {
        eprintln!("{provider}: {e}");
    }
    if json {
        return json_out(&served.models);
    }
    if served.models.is_empty() {
        eprintln!("{} at {} serves no models", served.kind, served.url);
        return Ok(if served.failed.is_empty() { 0 } else { 1 });
    }
    print_models(&served.models)?;
    Ok(0)
}

fn print_models(models: &[ModelInfo]) -> Result<(), Failure> {
    let w = models
        .iter()
        .map(|m| m.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    crate::outln!("{:<w$}  {:>8}  CAPABILITIES", "NAME", "CONTEXT")?;
    for m in models {
        let ctx = m
            .context_length
            .map(|c| c.to_string())
            .unwrap_or_else(|| "-".into());
        let caps = if m.capabilities.is_empty() {
            "-".to_string()
        } else {
            m.capabilities.join(",")
        };
        crate::outln!("{:<w$}  {ctx:>8}  {caps}", m.name)?;
    }
    Ok(())
}

/// Every `navi sessions` command goes through the app's doors: listing,
/// reading and deleting stored sessions on [`App`], changing one (pin,
/// rename) as an op on its handle, opened as its one writer and closed
/// again.
fn open_app(g: &GlobalArgs) -> Result<(App, crate::logging::LogGuard), Failure> {
    build_app(g, AppOptions::default())
}

/// Opens session `key`, carries out `op` on it and closes it.
async fn change(app: &App, key: &str, op: Op) -> Result<String, Failure> {
    let meta = app.find_session(key)?;
    let h = app.open_handle(&SessionChoice::Id(meta.id.clone()), OpenOptions::default())?;
    let done = h.submit(op);
    h.close().await;
    done.map_err(Failure::runtime)?;
    Ok(meta.id)
}

pub(crate) async fn sessions(g: &GlobalArgs, cmd: SessionsCommand) -> Result<u8, Failure> {
    let (app, _log) = open_app(g)?;
    match cmd {
        SessionsCommand::List { json, all } => {
            let list = if all {
                app.all_sessions()?
            } else {
                app.sessions()?
            };
            if json {
                return json_out(&list);
            }
            if list.is_empty() && all {
                eprintln!("no sessions yet; start one with `navi` or `navi run \"…\"`");
            } else if list.is_empty() {
                eprintln!(
                    "no sessions in project {} yet; `navi sessions list --all` lists every project's",
                    crate::project::display(&app.project())
                );
            }
            for (i, s) in list.iter().enumerate() {
                // Numbers count in this project's list only (what `navi -s N`
                // and `navi sessions show N` resolve).
                let n = if all {
                    "  -".to_string()
                } else {
                    format!("{:>3}", i + 1)
                };
                let title = if s.title.is_empty() {
                    "(untitled)"
                } else {
                    &s.title
                };
                let pin = if s.pinned { "*" } else { " " };
                crate::outln!(
                    "{n} {pin} {}  {:<14} {:>4} msgs  {:>8}  {title}  ({})",
                    &s.id[..8.min(s.id.len())],
                    s.profile_id,
                    s.message_count,
                    ago(s.last_active),
                    crate::ui::format::session_project(s)
                )?;
            }
            Ok(0)
        }
        SessionsCommand::Show { id, json } => {
            let t = app.transcript(&id)?;
            super::transcript::show(t, json)
        }
        SessionsCommand::Delete { id } => {
            let meta = app.delete_session(&id)?;
            eprintln!("deleted session {}", meta.id);
            Ok(0)
        }
        SessionsCommand::Pin { id } => {
            let id = change(&app, &id, Op::PinSession { pinned: true }).await?;
            eprintln!("pinned session {id}");
            Ok(0)
        }
        SessionsCommand::Unpin { id } => {
            let id = change(&app, &id, Op::PinSession { pinned: false }).await?;
            eprintln!("unpinned session {id}");
            Ok(0)
        }
        SessionsCommand::Export { id, format } => super::extra::export(&app, &id, format),
        SessionsCommand::Diff { id, turn } => match app.session_diff(&id, turn)? {
            Ok(lines) => {
                for l in &lines {
                    crate::outln!("{l}")?;
                }
                Ok(0)
            }
            Err(e) if turn.is_none() => {
                eprintln!("{e}");
                Ok(0)
            }
            Err(e) => Err(Failure::usage(e)),
        },
        SessionsCommand::Rename { id, title } => {
            let id = change(&app, &id, Op::Rename { title }).await?;
            eprintln!("renamed session {id}");
            Ok(0)
        }
    }
}

pub(crate) fn profiles(g: &GlobalArgs, json: bool) -> Result<u8, Failure> {
    let (app, _log) = build_app(g, AppOptions::default())?;
    if json {
        return json_out(&app.profiles_json());
    }
    for line in app.profile_lines(None) {
        crate::outln!("{line}")?;
    }
    Ok(0)
}
