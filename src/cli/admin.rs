//! `navi models`, `navi sessions …`, `navi profiles list`.
use super::{Failure, GlobalArgs, SessionsCommand, build_app, load_config};
use crate::app::AppOptions;
use crate::llm::{ModelInfo, build_backend};
use crate::session::SessionStore;
use crate::ui::format::ago;

fn json_out<T: serde::Serialize>(v: &T) -> Result<u8, Failure> {
    let s = serde_json::to_string_pretty(v).map_err(Failure::runtime)?;
    super::out::line(&s)?;
    Ok(0)
}

pub(crate) async fn models(g: &GlobalArgs, json: bool) -> Result<u8, Failure> {
    let (config, paths, _) = load_config(g)?;
    let backend = build_backend(&config).map_err(Failure::usage)?;
    let lists = backend.list_by_provider().await;
    let mut models = Vec::new();
    let mut failed = Vec::new();
    for (provider, list) in lists {
        match list {
            Ok(l) => models.extend(l),
            Err(e) => failed.push((provider, e)),
        }
    }
    if models.is_empty()
        && let Some((_, e)) = failed.first()
        && failed.len() == 1
    {
        return Err(Failure::runtime(e));
    }
    for (provider, e) in &failed {
        eprintln!("{provider}: {e}");
    }
    // Fill in what the listing did not carry (one request each).
    let missing: Vec<usize> = (0..models.len())
        .filter(|i| models[*i].context_length.is_none())
        .collect();
    let infos = futures_util::future::join_all(
        missing.iter().map(|i| backend.model_info(&models[*i].name)),
    )
    .await;
    for (i, info) in missing.into_iter().zip(infos) {
        if let Ok(info) = info {
            models[i].context_length = info.context_length;
            if models[i].capabilities.is_empty() {
                models[i].capabilities = info.capabilities;
            }
        }
    }
    crate::app::model_cache::write(&paths.data_dir, &models);
    if json {
        return json_out(&models);
    }
    if models.is_empty() {
        eprintln!(
            "{} at {} serves no models",
            backend.kind().as_str(),
            backend.base_url()
        );
        return Ok(if failed.is_empty() { 0 } else { 1 });
    }
    print_models(&models)?;
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

fn open_store(g: &GlobalArgs) -> Result<SessionStore, Failure> {
    let (_, paths, _) = load_config(g)?;
    SessionStore::open(&paths.db_path).map_err(Failure::runtime)
}

fn store_err(e: crate::session::StoreError) -> Failure {
    match e {
        crate::session::StoreError::NotFound(_) | crate::session::StoreError::Ambiguous(_) => {
            Failure::usage(e)
        }
        other => Failure::runtime(other),
    }
}

pub(crate) fn sessions(g: &GlobalArgs, cmd: SessionsCommand) -> Result<u8, Failure> {
    let store = open_store(g)?;
    match cmd {
        SessionsCommand::List { json } => {
            let list = store.list().map_err(store_err)?;
            if json {
                return json_out(&list);
            }
            if list.is_empty() {
                eprintln!("no sessions yet; start one with `navi` or `navi run \"…\"`");
            }
            for (i, s) in list.iter().enumerate() {
                let title = if s.title.is_empty() {
                    "(untitled)"
                } else {
                    &s.title
                };
                let pin = if s.pinned { "*" } else { " " };
                crate::outln!(
                    "{:>3} {pin} {}  {:<14} {:>4} msgs  {:>8}  {title}",
                    i + 1,
                    &s.id[..8.min(s.id.len())],
                    s.profile_id,
                    s.message_count,
                    ago(s.last_active)
                )?;
            }
            Ok(0)
        }
        SessionsCommand::Show { id, json } => {
            let meta = store.resolve(&id).map_err(store_err)?;
            let session = store
                .load(&meta.id)
                .map_err(store_err)?
                .ok_or_else(|| Failure::usage(format!("no session {id}")))?;
            let account =
                crate::agent::account::ContextAccount::load(&store, &meta.id).map_err(store_err)?;
            if json {
                return json_out(&serde_json::json!({
                    "session": session.meta,
                    "context": { "tokens": account.used, "window": account.window },
                    "messages": session.display
                }));
            }
            crate::outln!(
                "# {} ({}, profile {})",
                if meta.title.is_empty() {
                    "(untitled)"
                } else {
                    &meta.title
                },
                meta.id,
                meta.profile_id
            )?;
            crate::outln!("context: {}", account.describe())?;
            let pins = crate::session::pins::load(&store, &meta.id).map_err(store_err)?;
            let history = crate::session::replay::events(&session.display, &pins);
            super::out::text(&super::transcript::listing(&history))?;
            Ok(0)
        }
        SessionsCommand::Delete { id } => {
            let meta = store.resolve(&id).map_err(store_err)?;
            store.delete(&meta.id).map_err(store_err)?;
            eprintln!("deleted session {}", meta.id);
            Ok(0)
        }
        SessionsCommand::Pin { id } => {
            let meta = store.resolve(&id).map_err(store_err)?;
            store.set_pinned(&meta.id, true).map_err(store_err)?;
            eprintln!("pinned session {}", meta.id);
            Ok(0)
        }
        SessionsCommand::Unpin { id } => {
            let meta = store.resolve(&id).map_err(store_err)?;
            store.set_pinned(&meta.id, false).map_err(store_err)?;
            eprintln!("unpinned session {}", meta.id);
            Ok(0)
        }
        SessionsCommand::Export { id, format } => super::extra::export(&store, &id, format),
        SessionsCommand::Diff { id, turn } => {
            let (_, paths, _) = load_config(g)?;
            let meta = store.resolve(&id).map_err(store_err)?;
            use crate::ui::commands::checkpoint::{diff_lines, line_text};
            let records = crate::checkpoint::load(&store, &meta.id);
            match diff_lines(records, &paths.data_dir, &meta.id, turn) {
                Ok(lines) => {
                    for l in &lines {
                        crate::outln!("{}", line_text(l))?;
                    }
                    Ok(0)
                }
                Err(e) if turn.is_none() => {
                    eprintln!("{e}");
                    Ok(0)
                }
                Err(e) => Err(Failure::usage(e)),
            }
        }
        SessionsCommand::Rename { id, title } => {
            let meta = store.resolve(&id).map_err(store_err)?;
            store.rename(&meta.id, &title).map_err(store_err)?;
            eprintln!("renamed session {}", meta.id);
            Ok(0)
        }
    }
}

pub(crate) fn profiles(g: &GlobalArgs, json: bool) -> Result<u8, Failure> {
    let (app, _log) = build_app(g, AppOptions::default())?;
    let list: Vec<_> = app.profiles.all().collect();
    if json {
        return json_out(&serde_json::json!({
            "profiles": list,
            "errors": app.profiles.errors.iter().map(|e| e.to_string()).collect::<Vec<_>>(),
        }));
    }
    for p in list {
        crate::outln!(
            "{:<15} {:<22} {}  [{}]",
            p.id,
            p.name,
            p.short_description,
            p.model.join(" → ")
        )?;
    }
    Ok(0)
}
