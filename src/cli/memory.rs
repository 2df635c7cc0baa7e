//! `navi memory list|search|review|forget|export|extract`: the memory inbox
//! and the accepted facts from the command line.
use super::{Failure, GlobalArgs, build_app};
use crate::app::{App, AppOptions};
use crate::memory::render::{fact_line, fact_lines};
use crate::memory::{Fact, FactStatus, MemoryStore};
use clap::Subcommand;
use std::io::{BufRead, IsTerminal, Write};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;

#[derive(Subcommand, Debug)]
pub(crate) enum MemoryCommand {
    /// List facts: accepted and proposed (the inbox).
    List {
        /// Only the proposed facts waiting for review.
        #[arg(long)]
        proposed: bool,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Search facts by keywords (accepted and proposed).
    Search {
        /// Words to look for in category, key and value.
        query: Vec<String>,
        /// Print JSON instead of a table.
        #[arg(long)]
        json: bool,
    },
    /// Review proposed facts: interactive on a terminal, or with flags.
    Review {
        /// Accept this proposed fact (repeatable).
        #[arg(long, value_name = "ID")]
        accept: Vec<i64>,
        /// Reject this proposed fact (repeatable).
        #[arg(long, value_name = "ID")]
        reject: Vec<i64>,
        /// Accept a fact with a corrected value: ID=VALUE (repeatable).
        #[arg(long, value_name = "ID=VALUE")]
        edit: Vec<String>,
        /// Accept every proposed fact.
        #[arg(long)]
        accept_all: bool,
    },
    /// Forget a fact by id (#12 or 12) or every fact with a key.
    Forget {
        /// A fact id (#12 or 12), or a key: every fact with that key.
        what: String,
        /// With a key: only in this category.
        #[arg(long)]
        category: Option<String>,
    },
    /// Print every fact and the summary as JSON.
    Export,
    /// Extract facts from idle sessions now (in the foreground).
    Extract {
        /// Quiet, one at a time, in the background after `navi run` (exit 0
        /// whatever happens; outcomes go to the log file).
        #[arg(long, hide = true)]
        auto: bool,
        /// With --auto: leave this session out (the one `navi run` just used).
        #[arg(long, hide = true, value_name = "SESSION")]
        except: Option<String>,
    },
}

fn open(g: &GlobalArgs) -> Result<(App, Arc<MemoryStore>, crate::logging::LogGuard), Failure> {
    let (app, log) = build_app(g, AppOptions::default())?;
    let memory = app.memory().ok_or_else(|| {
        Failure::usage(
            "memory is turned off ([memory].enabled = false or NAVI_MEMORY=false); turn it on to use `navi memory`",
        )
    })?;
    Ok((app, memory, log))
}

fn rt(e: impl ToString) -> Failure {
    Failure::runtime(e)
}

fn print_json<T: serde::Serialize>(v: &T) -> Result<u8, Failure> {
    println!("{}", serde_json::to_string_pretty(v).map_err(rt)?);
    Ok(0)
}

fn parse_id(s: &str) -> Option<i64> {
    s.trim().trim_start_matches('#').parse().ok()
}

fn proposed(memory: &MemoryStore, id: i64) -> Result<Fact, Failure> {
    match memory.get(id).map_err(rt)? {
        Some(f) if f.status == FactStatus::Proposed => Ok(f),
        Some(_) => Err(Failure::usage(format!(
            "fact #{id} is already accepted; `navi memory forget {id}` removes it"
        ))),
        None => Err(Failure::usage(format!(
            "no fact #{id}; see `navi memory list --proposed`"
        ))),
    }
}

pub(crate) async fn run(g: &GlobalArgs, cmd: MemoryCommand) -> Result<u8, Failure> {
    let (app, memory, _log) = open(g)?;
    match cmd {
        MemoryCommand::List { proposed, json } => {
            let status = proposed.then_some(FactStatus::Proposed);
            let facts = memory.facts(status).map_err(rt)?;
            if json {
                return print_json(&facts);
            }
            for l in fact_lines(&facts, "no facts remembered yet") {
                println!("{l}");
            }
            Ok(0)
        }
        MemoryCommand::Search { query, json } => {
            let facts = memory.search(&query.join(" "), 50, None).map_err(rt)?;
            if json {
                return print_json(&facts);
            }
            for l in fact_lines(&facts, "nothing matches") {
                println!("{l}");
            }
            Ok(0)
        }
        MemoryCommand::Review {
            accept,
            reject,
            edit,
            accept_all,
        } => {
            let scripted =
                !accept.is_empty() || !reject.is_empty() || !edit.is_empty() || accept_all;
            if scripted {
                return review_flags(&memory, accept, reject, edit, accept_all);
            }
            review_interactive(&memory)
        }
        MemoryCommand::Forget { what, category } => {
            let gone = match parse_id(&what) {
                Some(id) if category.is_none() => {
                    memory.remove_id(id).map_err(rt)?.into_iter().collect()
                }
                _ => memory.forget(&what, category.as_deref()).map_err(rt)?,
            };
            if gone.is_empty() {
                return Err(Failure::usage(format!(
                    "no fact matches '{what}'; see `navi memory list`"
                )));
            }
            for f in &gone {
                println!("forgot {}", fact_line(f));
            }
            Ok(0)
        }
        MemoryCommand::Export => print_json(&serde_json::json!({
            "facts": memory.facts(None).map_err(rt)?,
            "summary": memory.summary().map_err(rt)?.unwrap_or_default(),
        })),
        MemoryCommand::Extract { auto: true, except } => {
            let Some(_lock) = crate::app::auto_memory::take_lock(app.data_dir()) else {
                return Ok(0);
            };
            // The caller's next command goes first.
            tokio::time::sleep(std::time::Duration::from_secs(1)).await;
            let except: Vec<&str> = except.as_deref().into_iter().collect();
            match app.extract_memory(&except, &CancellationToken::new()).await {
                Ok(Some(r)) => tracing::info!(
                    "memory: auto extraction: {} session(s), {} new, {} changed, {} failed",
                    r.sessions.len(),
                    r.added,
                    r.updated,
                    r.failed.len()
                ),
                Ok(None) => {}
                Err(e) => tracing::warn!("memory: auto extraction failed: {e}"),
            }
            Ok(0)
        }
        MemoryCommand::Extract { auto: false, .. } => {
            let report = app
                .extract_memory(&[], &CancellationToken::new())
                .await
                .map_err(rt)?
                .unwrap_or_default();
            println!(
                "extracted {} session(s): {} new fact(s), {} changed, {} line(s) skipped as malformed, {} session(s) busy in another navi",
                report.sessions.len(),
                report.added,
                report.updated,
                report.malformed,
                report.skipped_claimed
            );
            for (id, why) in &report.failed {
                eprintln!("navi: session {id} was not extracted: {why}");
            }
            Ok(if report.failed.is_empty() { 0 } else { 1 })
        }
    }
}

fn review_flags(
    memory: &MemoryStore,
    accept: Vec<i64>,
    reject: Vec<i64>,
    edit: Vec<String>,
    accept_all: bool,
) -> Result<u8, Failure> {
    let mut edits = Vec::new();
    for e in &edit {
        let (id, value) = e
            .split_once('=')
            .and_then(|(i, v)| Some((parse_id(i)?, v.trim().to_string())))
            .filter(|(_, v)| !v.is_empty())
            .ok_or_else(|| Failure::usage(format!("--edit wants ID=VALUE, got '{e}'")))?;
        edits.push((id, value));
    }
    // Check everything first: a typo in one id changes nothing.
    for id in accept
        .iter()
        .chain(&reject)
        .chain(edits.iter().map(|(i, _)| i))
    {
        proposed(memory, *id)?;
    }
    let mut ids = accept;
    if accept_all {
        ids.extend(
            memory
                .facts(Some(FactStatus::Proposed))
                .map_err(rt)?
                .iter()
                .map(|f| f.id),
        );
    }
    for id in ids.into_iter().filter(|i| !reject.contains(i)) {
        if let Some(f) = memory.accept(id, None).map_err(rt)? {
            println!("accepted {}", fact_line(&f));
        }
    }
    for (id, v) in edits {
        if let Some(f) = memory.accept(id, Some(&v)).map_err(rt)? {
            println!("accepted {}", fact_line(&f));
        }
    }
    for id in reject {
        if let Some(f) = memory.remove_id(id).map_err(rt)? {
            println!("rejected {}", fact_line(&f));
        }
    }
    Ok(0)
}

fn review_interactive(memory: &MemoryStore) -> Result<u8, Failure> {
    let inbox = memory.facts(Some(FactStatus::Proposed)).map_err(rt)?;
    if inbox.is_empty() {
        println!("the memory inbox is empty");
        return Ok(0);
    }
    if !std::io::stdin().is_terminal() {
        for l in fact_lines(&inbox, "") {
            println!("{l}");
        }
        eprintln!(
            "not a terminal: review with --accept ID, --reject ID, --edit ID=VALUE or --accept-all"
        );
        return Ok(2);
    }
    let stdin = std::io::stdin();
    let mut lines = stdin.lock().lines();
    let mut ask = |q: &str| -> Option<String> {
        print!("{q}");
        let _ = std::io::stdout().flush();
        lines.next().and_then(Result::ok)
    };
    for f in inbox {
        println!("{}", fact_line(&f));
        loop {
            let Some(a) = ask("  [a]ccept  [e]dit  [r]eject  [s]kip  [q]uit > ") else {
                return Ok(0);
            };
            match a.trim() {
                "a" | "accept" => {
                    memory.accept(f.id, None).map_err(rt)?;
                    println!("  accepted");
                }
                "e" | "edit" => {
                    let Some(v) = ask(&format!("  new value for {} (was {}): ", f.key, f.value))
                    else {
                        return Ok(0);
                    };
                    if v.trim().is_empty() {
                        println!("  empty value: nothing changed");
                        continue;
                    }
                    memory.accept(f.id, Some(v.trim())).map_err(rt)?;
                    println!("  accepted with the new value");
                }
                "r" | "reject" => {
                    memory.remove_id(f.id).map_err(rt)?;
                    println!("  rejected");
                }
                "s" | "skip" | "" => {}
                "q" | "quit" => return Ok(0),
                other => {
                    println!("  '{other}'? answer a, e, r, s or q");
                    continue;
                }
            }
            break;
        }
    }
    Ok(0)
}
