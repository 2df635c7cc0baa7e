//! The user's own slash commands: Markdown files that become `/name`.
//!
//! `<config>/commands/NAME.md` (everywhere) and `<project>/.navi/commands/NAME.md`
//! (in that project; it wins over a global one of the same name). The file's
//! body is the prompt; `$ARGUMENTS` is replaced by everything typed after
//! the name, `$1`…`$9` by its words (quotes group words), `$$` by a `$`.
//! A body without placeholders gets the arguments appended after a blank
//! line. An optional front matter between `---` lines may set
//! `description:` (shown by `/help` and completion) and `argument-hint:`.
//!
//! Built-in commands always win: a file named like one is listed as shadowed
//! and never runs.
use std::path::{Path, PathBuf};

/// One command file.
#[derive(Clone, Debug, PartialEq)]
pub struct CustomCommand {
    /// Without the slash.
    pub name: String,
    pub description: String,
    /// What the arguments are, for `/help` (`[file]`).
    pub argument_hint: String,
    pub body: String,
    pub path: PathBuf,
}

impl CustomCommand {
    /// The prompt this command sends for `args` (the text after its name).
    pub fn expand(&self, args: &str) -> String {
        let args = args.trim();
        let words = split_args(args);
        let mut out = String::with_capacity(self.body.len() + args.len());
        let mut used = false;
        let mut chars = self.body.chars().peekable();
        while let Some(c) = chars.next() {
            if c != '$' {
                out.push(c);
                continue;
            }
            match chars.peek().copied() {
                Some('$') => {
                    chars.next();
                    out.push('$');
                }
                Some(d @ '1'..='9') => {
                    chars.next();
                    let i = d as usize - '1' as usize;
                    out.push_str(words.get(i).map(String::as_str).unwrap_or(""));
                    used = true;
                }
                Some('A') => {
                    let rest: String = chars.clone().take(9).collect();
                    if rest == "ARGUMENTS" {
                        for _ in 0..9 {
                            chars.next();
                        }
                        out.push_str(args);
                        used = true;
                    } else {
                        out.push('$');
                    }
                }
                _ => out.push('$'),
            }
        }
        let mut out = out.trim().to_string();
        if !used && !args.is_empty() {
            out.push_str("\n\n");
            out.push_str(args);
        }
        out
    }

    /// `/name hint` as `/help` shows it.
    pub fn usage(&self) -> String {
        if self.argument_hint.is_empty() {
            format!("/{}", self.name)
        } else {
            format!("/{} {}", self.name, self.argument_hint)
        }
    }
}

/// Words of `args`, split on whitespace; single or double quotes group.
fn split_args(args: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut quote: Option<char> = None;
    let mut any = false;
    for c in args.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => cur.push(c),
            None if c == '"' || c == '\'' => {
                quote = Some(c);
                any = true;
            }
            None if c.is_whitespace() => {
                if any || !cur.is_empty() {
                    out.push(std::mem::take(&mut cur));
                    any = false;
                }
            }
            None => cur.push(c),
        }
    }
    if any || !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// A valid command name: letters, digits, `-`, `_`, `.`; not starting with
/// `-` or `.`.
fn valid_name(name: &str) -> bool {
    !name.is_empty()
        && !name.starts_with(['-', '.'])
        && name
            .chars()
            .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Front matter (`description`, `argument-hint`) and the body of a file.
fn parse_file(text: &str) -> (String, String, String) {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let (mut desc, mut hint) = (String::new(), String::new());
    let mut lines = text.lines();
    if text.starts_with("---") && lines.next().map(str::trim_end) == Some("---") {
        let mut consumed = 0usize;
        let mut closed = false;
        for l in lines.by_ref() {
            consumed += 1;
            if l.trim_end() == "---" {
                closed = true;
                break;
            }
            if let Some((k, v)) = l.split_once(':') {
                let v = v.trim().trim_matches(['"', '\'']).to_string();
                match k.trim() {
                    "description" => desc = v,
                    "argument-hint" | "argument_hint" => hint = v,
                    _ => {}
                }
            }
        }
        if closed {
            let body: Vec<&str> = lines.collect();
            return (desc, hint, body.join("\n"));
        }
        // No closing line: not front matter after all.
        let _ = consumed;
        return (String::new(), String::new(), text.to_string());
    }
    (desc, hint, text.to_string())
}

/// The commands of `dir` (one directory), by file name order.
fn read_dir(dir: &Path) -> Vec<CustomCommand> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut paths: Vec<PathBuf> = entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "md"))
        .collect();
    paths.sort();
    let mut out = Vec::new();
    for path in paths {
        let Some(name) = path.file_stem().and_then(|s| s.to_str()) else {
            continue;
        };
        if !valid_name(name) || !path.is_file() {
            continue;
        }
        let Ok(bytes) = std::fs::read(&path) else {
            continue;
        };
        let (description, argument_hint, body) = parse_file(&String::from_utf8_lossy(&bytes));
        if body.trim().is_empty() {
            continue;
        }
        out.push(CustomCommand {
            name: name.to_string(),
            description,
            argument_hint,
            body,
            path,
        });
    }
    out
}

/// The two command directories, global first.
pub fn dirs(config_dir: &Path, work_dir: &Path) -> [PathBuf; 2] {
    [
        config_dir.join("commands"),
        super::root(work_dir).join(".navi").join("commands"),
    ]
}

/// Every command for a session working in `work_dir`: the global ones,
/// replaced by the project's of the same name; sorted by name.
pub fn load(config_dir: &Path, work_dir: &Path) -> Vec<CustomCommand> {
    let [global, project] = dirs(config_dir, work_dir);
    let mut all = read_dir(&global);
    for c in read_dir(&project) {
        all.retain(|o| o.name != c.name);
        all.push(c);
    }
    all.sort_by(|a, b| a.name.cmp(&b.name));
    all
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cmd(body: &str) -> CustomCommand {
        CustomCommand {
            name: "x".into(),
            description: String::new(),
            argument_hint: String::new(),
            body: body.into(),
            path: PathBuf::new(),
        }
    }

    #[test]
    fn placeholders_take_the_arguments() {
        assert_eq!(
            cmd("Review $1 for $2; all: $ARGUMENTS").expand("a.py \"style and bugs\""),
            "Review a.py for style and bugs; all: a.py \"style and bugs\""
        );
        assert_eq!(
            cmd("Cost $$5, missing [$3]").expand("a"),
            "Cost $5, missing []"
        );
        assert_eq!(cmd("Just this").expand(""), "Just this");
        assert_eq!(cmd("Just this").expand("more"), "Just this\n\nmore");
        assert_eq!(cmd("$ARGUMENT $HOME").expand(""), "$ARGUMENT $HOME");
    }

    #[test]
    fn files_with_front_matter_and_project_over_global() {
        let t = tempfile::tempdir().unwrap();
        let cfg = t.path().join("cfg");
        let proj = t.path().join("proj");
        std::fs::create_dir_all(cfg.join("commands")).unwrap();
        std::fs::create_dir_all(proj.join(".navi/commands")).unwrap();
        std::fs::create_dir(proj.join(".git")).unwrap();
        std::fs::write(
            cfg.join("commands/review.md"),
            "---\ndescription: global review\n---\nG $ARGUMENTS",
        )
        .unwrap();
        std::fs::write(cfg.join("commands/fix.md"), "Fix it").unwrap();
        std::fs::write(cfg.join("commands/bad name.md"), "no").unwrap();
        std::fs::write(cfg.join("commands/empty.md"), "---\ndescription: d\n---\n").unwrap();
        std::fs::write(
            proj.join(".navi/commands/review.md"),
            "---\ndescription: \"project review\"\nargument-hint: [file]\n---\nP $1",
        )
        .unwrap();
        let sub = proj.join("src");
        std::fs::create_dir(&sub).unwrap();
        let all = load(&cfg, &sub);
        let names: Vec<&str> = all.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["fix", "review"]);
        assert_eq!(all[1].description, "project review");
        assert_eq!(all[1].usage(), "/review [file]");
        assert_eq!(all[1].expand("a.rs b"), "P a.rs");
        // An unclosed front matter is body.
        let (d, _, b) = parse_file("---\ndescription: x\nbody");
        assert!(d.is_empty() && b.contains("body"));
    }
}
