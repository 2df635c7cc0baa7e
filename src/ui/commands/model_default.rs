//! `/model NAME --default`: use NAME in this session and save it as
//! `[llm].default_model` in the config file, so new sessions start with it.
//!
//! The file is edited as text, one line, so its comments, order and other
//! keys stay as they are: the `default_model` line of the `[llm]` table is
//! replaced, or added under `[llm]`, or an `[llm]` table is appended. The
//! result is parsed before it is written; a file this cannot edit safely
//! (an inline `llm = {…}`, a dotted `llm.default_model`) is left alone with
//! a message saying which line to write.
use super::Outcome;
use crate::app::{App, SessionHandle};
use crate::protocol::Op;
use std::path::Path;

/// Sets the session's model to `model` (else the one it uses now) and
/// saves it in the config file navi read (else the default config path).
pub(crate) fn execute(
    app: &App,
    session: &SessionHandle,
    model: Option<String>,
) -> Result<Outcome, String> {
    let m = model
        .or_else(|| session.model())
        .filter(|m| m != "default")
        .ok_or("usage: /model NAME --default (no model is chosen in this session yet)")?;
    let reply = session
        .submit(Op::SwitchModel {
            model: Some(m.clone()),
        })
        .map_err(|e| e.to_string())?;
    let mut lines = reply.lines();
    let paths = app.paths();
    let file = paths
        .config_file
        .clone()
        .unwrap_or_else(|| paths.config_dir.join("config.toml"));
    lines.push(save(&file, &m)?);
    Ok(Outcome::Show(lines))
}

/// Writes `model` as the default into the config file at `path` (created
/// when missing). The line for the user says what changed.
pub(crate) fn save(path: &Path, model: &str) -> Result<String, String> {
    let old = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let new = edit(&old, model).map_err(|e| format!("{e} in {}", path.display()))?;
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)
            .map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let tmp = path.with_extension("toml.navi-tmp");
    std::fs::write(&tmp, &new)
        .and_then(|_| std::fs::rename(&tmp, path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    Ok(format!(
        "saved as the default model: [llm].default_model = {} in {}",
        literal(model),
        path.display()
    ))
}

fn literal(model: &str) -> String {
    toml::Value::String(model.to_string()).to_string()
}

/// The config text with `[llm].default_model` set to `model`.
pub(crate) fn edit(text: &str, model: &str) -> Result<String, String> {
    let wanted_line = format!("default_model = {}", literal(model));
    let hint = format!("write `{wanted_line}` under [llm] yourself");
    if let Err(e) = text.parse::<toml::Table>() {
        return Err(format!(
            "the config file does not parse ({}); {hint}",
            e.message()
        ));
    }
    let mut lines: Vec<String> = text.lines().map(String::from).collect();
    let is_header = |l: &str| {
        let t = l.trim();
        t.starts_with('[') && !t.starts_with("[[")
    };
    let llm = lines.iter().position(|l| {
        let t = l.trim();
        t == "[llm]" || t.starts_with("[llm]") && t[5..].trim_start().starts_with('#')
    });
    match llm {
        Some(h) => {
            let end = lines[h + 1..]
                .iter()
                .position(|l| is_header(l) || l.trim().starts_with("[["))
                .map_or(lines.len(), |i| h + 1 + i);
            let found = (h + 1..end).find(|&i| {
                let t = lines[i].trim_start();
                t.strip_prefix("default_model")
                    .is_some_and(|r| r.trim_start().starts_with('='))
            });
            match found {
                Some(i) => {
                    let indent: String =
                        lines[i].chars().take_while(|c| c.is_whitespace()).collect();
                    lines[i] = format!("{indent}{wanted_line}");
                }
                None => lines.insert(h + 1, wanted_line.clone()),
            }
        }
        None => {
            if lines.last().is_some_and(|l| !l.trim().is_empty()) {
                lines.push(String::new());
            }
            lines.push("[llm]".into());
            lines.push(wanted_line.clone());
        }
    }
    let mut out = lines.join("\n");
    out.push('\n');
    let parsed: toml::Table = out.parse().map_err(|_| hint.clone())?;
    let got = parsed
        .get("llm")
        .and_then(|l| l.get("default_model"))
        .and_then(|v| v.as_str());
    if got != Some(model) {
        return Err(hint);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_comments_and_other_keys() {
        let text = "# my config\n[llm]\n# which server\nbackend = \"ollama\"\ndefault_model = \"old\" # was\n\n[ui]\ntheme = \"light\"\n";
        let out = edit(text, "qwen3:8b").unwrap();
        assert_eq!(
            out,
            "# my config\n[llm]\n# which server\nbackend = \"ollama\"\ndefault_model = \"qwen3:8b\"\n\n[ui]\ntheme = \"light\"\n"
        );
        // No [llm] key yet: added under the header.
        let out = edit("[llm]\nbackend = \"openai\"\n[ui]\n", "m").unwrap();
        assert!(
            out.starts_with("[llm]\ndefault_model = \"m\"\nbackend"),
            "{out}"
        );
        // No [llm] table, no file: appended.
        assert_eq!(edit("", "m").unwrap(), "[llm]\ndefault_model = \"m\"\n");
        let out = edit("[ui]\ntheme = \"dark\"", "a\"b").unwrap();
        assert!(
            // A quote in the name: written as a literal string.
            out.ends_with("\n\n[llm]\ndefault_model = 'a\"b'\n"),
            "{out}"
        );
        // What a line edit cannot do safely is refused.
        assert!(edit("llm = { backend = \"ollama\" }\n", "m").is_err());
        assert!(edit("[llm\n", "m").is_err());
    }
}
