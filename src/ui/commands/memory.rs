//! `/memory`: the memory inbox and the accepted facts, in both front ends.
use crate::app::App;
use crate::memory::render::{fact_line, fact_lines};
use crate::memory::{FactStatus, MemoryStore};

pub(crate) const USAGE: &str =
    "usage: /memory [list|search <words>|accept <id> [value]|reject <id>|forget <id|key>]";

fn id(s: Option<&String>) -> Result<i64, String> {
    s.and_then(|s| s.trim_start_matches('#').parse().ok())
        .ok_or_else(|| USAGE.to_string())
}

fn e(x: impl ToString) -> String {
    x.to_string()
}

/// Runs `/memory <args>`; returns the lines to show.
pub(crate) fn execute(app: &App, args: &[String]) -> Result<Vec<String>, String> {
    let Some(m) = app.memory() else {
        return Err("memory is turned off ([memory].enabled = false)".into());
    };
    let rest = |from: usize| {
        args.iter()
            .skip(from)
            .cloned()
            .collect::<Vec<_>>()
            .join(" ")
    };
    match args.first().map(String::as_str) {
        None => overview(&m),
        Some("list") | Some("ls") => Ok(fact_lines(
            &m.facts(None).map_err(e)?,
            "no facts remembered yet",
        )),
        Some("search") if args.len() > 1 => Ok(fact_lines(
            &m.search(&rest(1), 30, None).map_err(e)?,
            "nothing matches",
        )),
        Some("accept") => {
            let id = id(args.get(1))?;
            let value = rest(2);
            match m.get(id).map_err(e)? {
                Some(f) if f.status == FactStatus::Proposed => {}
                Some(_) => return Err(format!("fact #{id} is already accepted")),
                None => return Err(format!("no fact #{id}; see /memory")),
            }
            let f = m
                .accept(id, (!value.trim().is_empty()).then_some(value.as_str()))
                .map_err(e)?
                .ok_or_else(|| format!("no fact #{id}"))?;
            Ok(vec![format!("accepted {}", fact_line(&f))])
        }
        Some("reject") | Some("forget") if args.len() > 1 => {
            let verb = if args[0] == "reject" {
                "rejected"
            } else {
                "forgot"
            };
            let gone = match args[1].trim_start_matches('#').parse::<i64>() {
                Ok(id) => m.remove_id(id).map_err(e)?.into_iter().collect(),
                Err(_) => m
                    .forget(&args[1], args.get(2).map(String::as_str))
                    .map_err(e)?,
            };
            if gone.is_empty() {
                return Err(format!("no fact matches '{}'; see /memory list", args[1]));
            }
            Ok(gone
                .iter()
                .map(|f| format!("{verb} {}", fact_line(f)))
                .collect())
        }
        _ => Err(USAGE.into()),
    }
}

fn overview(m: &MemoryStore) -> Result<Vec<String>, String> {
    let mut out = vec!["What I remember:".to_string()];
    match m.summary().map_err(e)? {
        Some(s) => out.extend(s.lines().map(|l| format!("  {l}"))),
        None => out.push("  nothing yet".into()),
    }
    let inbox = m.facts(Some(FactStatus::Proposed)).map_err(e)?;
    if inbox.is_empty() {
        out.push("Inbox: empty".into());
    } else {
        out.push(format!(
            "Inbox ({} proposed; /memory accept <id> [value], /memory reject <id>):",
            inbox.len()
        ));
        out.extend(inbox.iter().map(|f| format!("  {}", fact_line(f))));
    }
    Ok(out)
}
