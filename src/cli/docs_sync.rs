//! The command lists in README.md, docs/tui.md and docs/plain.md are kept in
//! step with the program: slash commands come from the command table
//! (`ui::commands::COMMANDS`), subcommands from clap. A command added to the
//! program and not to the docs (or a documented one that is gone) fails here.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::Cli;
use clap::CommandFactory;
use std::collections::BTreeMap;

fn read(rel: &str) -> String {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join(rel);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The part of `text` from the line starting with `start` to the next
/// blank line (`paragraph`) or the next `## ` heading.
fn part<'a>(text: &'a str, start: &str, paragraph: bool) -> &'a str {
    let from = text
        .find(start)
        .unwrap_or_else(|| panic!("no {start:?} in the docs"));
    let rest = &text[from..];
    let end = if paragraph {
        rest.find("\n\n")
    } else {
        rest[start.len()..].find("\n## ").map(|i| i + start.len())
    };
    &rest[..end.unwrap_or(rest.len())]
}

/// Each slash command's name with the literal words of its forms
/// (`/session` → new, list, resume, …; `/compact` → --preview).
fn slash_commands() -> BTreeMap<String, Vec<String>> {
    let mut map: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for (usage, _) in crate::ui::commands::COMMANDS {
        let mut words = usage.split_whitespace();
        let name = words.next().unwrap().to_string();
        let subs = map.entry(name).or_default();
        if let Some(w) = words.next()
            && w.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
        {
            subs.push(w.to_string());
        }
    }
    map
}

/// The `/words` a text names in backticks.
fn named_slash(text: &str) -> Vec<String> {
    text.split('`')
        .skip(1)
        .step_by(2)
        .filter_map(|s| s.strip_prefix('/'))
        .map(|s| {
            let end = s
                .find(|c: char| !c.is_ascii_alphanumeric())
                .unwrap_or(s.len());
            format!("/{}", &s[..end])
        })
        .filter(|s| s.len() > 1)
        .collect()
}

#[test]
fn slash_command_lists_match_the_command_table() {
    let cmds = slash_commands();
    let readme = read("README.md");
    let tui = read("docs/tui.md");
    let plain = read("docs/plain.md");
    let lists = [
        (
            "README.md",
            part(&readme, "In the TUI and plain mode:", true),
        ),
        ("docs/tui.md", part(&tui, "## Slash commands", false)),
        ("docs/plain.md", part(&plain, "## Slash commands", false)),
    ];
    for (file, list) in lists {
        for (name, subs) in &cmds {
            assert!(
                list.contains(&format!("`{name}")),
                "{file} does not list {name}:\n{list}"
            );
            for s in subs {
                assert!(
                    list.contains(s.as_str()),
                    "{file} does not list `{name} {s}`:\n{list}"
                );
            }
        }
    }
    // The other way: the README's list names only commands that exist.
    for named in named_slash(lists[0].1) {
        assert!(
            cmds.contains_key(&named),
            "README.md lists {named}, which is not a command"
        );
    }
}

#[test]
fn the_readme_table_lists_every_subcommand() {
    let readme = read("README.md");
    let rows: Vec<&str> = readme
        .lines()
        .filter(|l| l.starts_with("| `navi"))
        .collect();
    let cli = Cli::command();
    for sub in cli.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = sub.get_name();
        let (spaced, closed) = (format!("`navi {name} "), format!("`navi {name}`"));
        let mine: Vec<&&str> = rows
            .iter()
            .filter(|r| r.contains(&spaced) || r.contains(&closed))
            .collect();
        assert!(
            !mine.is_empty(),
            "README.md's table has no `navi {name}` row"
        );
        for nested in sub.get_subcommands().filter(|s| !s.is_hide_set()) {
            let n = nested.get_name();
            assert!(
                mine.iter().any(|r| {
                    r.split(|c: char| !c.is_ascii_alphanumeric() && c != '-')
                        .any(|w| w == n)
                }),
                "README.md's `navi {name}` rows do not mention `{n}`"
            );
        }
    }
    // No row names a subcommand that does not exist.
    for r in &rows {
        let word = r["| `navi ".len()..]
            .split(|c: char| !c.is_ascii_alphanumeric() && c != '-')
            .next()
            .unwrap_or("");
        if word.is_empty() || word.starts_with('-') {
            continue;
        }
        assert!(
            cli.find_subcommand(word).is_some(),
            "README.md's table names `navi {word}`, which is not a subcommand"
        );
    }
}
