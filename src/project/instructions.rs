//! Project instructions: `AGENTS.md` files, read into the system prompt.
//!
//! Order (closest last, so the most specific words come last): the user's
//! global `<config>/AGENTS.md`, then one per directory from the project root
//! down to the working directory. The total is capped
//! ([`ProjectConfig::instructions_max_bytes`](super::ProjectConfig)); the
//! files closest to the working directory keep their bytes first, a file cut
//! short says so, and a file left out entirely is listed as such.
//!
//! Invariant (prompt cache): the text depends only on the files' bytes and
//! paths, so it is byte-identical from call to call until a file changes.
use std::path::{Path, PathBuf};

/// The file name read in every directory.
pub const FILE_NAME: &str = "AGENTS.md";
/// How the block starts in the system prompt.
pub(crate) const HEADING: &str = "## Project instructions (AGENTS.md)";

/// One instruction file as read.
#[derive(Clone, Debug, PartialEq, serde::Serialize)]
pub struct InstructionFile {
    pub path: PathBuf,
    /// Its size on disk.
    pub bytes: usize,
    /// The bytes that went into the prompt (fewer when cut by the cap).
    pub used: usize,
    /// Cut short (or left out, `used == 0`) by the cap.
    pub cut: bool,
}

/// What was read, and the prompt text made of it.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Instructions {
    pub files: Vec<InstructionFile>,
    /// The block for the system prompt; empty when nothing was read.
    pub text: String,
}

impl Instructions {
    /// Reads the instructions for a session working in `work_dir`.
    pub fn load(config_dir: &Path, work_dir: &Path, max_bytes: usize) -> Instructions {
        let mut paths = vec![config_dir.join(FILE_NAME)];
        paths.extend(super::chain(work_dir).iter().map(|d| d.join(FILE_NAME)));
        let mut found: Vec<(PathBuf, String)> = Vec::new();
        for p in paths {
            // Only regular files (a directory named AGENTS.md is not one).
            let Ok(meta) = std::fs::metadata(&p) else {
                continue;
            };
            if !meta.is_file() || found.iter().any(|(q, _)| *q == p) {
                continue;
            }
            let Ok(bytes) = std::fs::read(&p) else {
                continue;
            };
            let text = String::from_utf8_lossy(&bytes).into_owned();
            if text.trim().is_empty() {
                continue;
            }
            found.push((p, text));
        }
        // The budget goes to the closest files first.
        let mut left = max_bytes;
        let mut kept: Vec<(InstructionFile, String)> = Vec::new();
        for (path, text) in found.into_iter().rev() {
            let body = text.trim_end();
            let cut = floor_char(body, left);
            left -= cut.len();
            kept.push((
                InstructionFile {
                    path,
                    bytes: text.len(),
                    used: cut.len(),
                    cut: cut.len() < body.len(),
                },
                cut.to_string(),
            ));
        }
        kept.reverse();
        let mut out = String::new();
        for (f, body) in &kept {
            if body.is_empty() {
                continue;
            }
            if out.is_empty() {
                out.push_str(HEADING);
                out.push_str(
                    "\n\nThe user's instructions for this project; where they differ, the later (closer to the working directory) ones win.",
                );
            }
            out.push_str(&format!("\n\n### {}\n\n{body}", f.path.display()));
            if f.cut {
                out.push_str("\n\n[cut: the instructions are longer than navi's limit]");
            }
        }
        Instructions {
            files: kept.into_iter().map(|(f, _)| f).collect(),
            text: out,
        }
    }

    /// One line naming the files read, for the start of a session; `None`
    /// when there are none.
    pub fn summary(&self) -> Option<String> {
        if self.files.is_empty() {
            return None;
        }
        let names: Vec<String> = self.files.iter().map(describe).collect();
        Some(format!("instructions: {}", names.join(", ")))
    }

    /// Lines for `/context` and `navi context`: each file with its
    /// estimated token cost.
    pub fn lines(&self) -> Vec<String> {
        let mut out = vec![format!("  instructions     {:>6}", self.tokens())];
        if self.files.is_empty() {
            out.push(format!("    (no {FILE_NAME} found)"));
        }
        out.extend(
            self.files
                .iter()
                .map(|f| format!("    {} {:>6}", describe(f), f.used / 4)),
        );
        out
    }

    /// Estimated tokens of the whole block.
    pub fn tokens(&self) -> u64 {
        (self.text.len() / 4) as u64
    }
}

/// A file as lists show it: its path, and how the cap cut it.
fn describe(f: &InstructionFile) -> String {
    let p = super::display(&f.path.to_string_lossy());
    match (f.cut, f.used) {
        (true, 0) => format!("{p} (left out: over the limit)"),
        (true, n) => format!("{p} (cut to {n} of {} bytes)", f.bytes),
        _ => p,
    }
}

/// The longest prefix of `s` of at most `max` bytes ending on a char boundary.
fn floor_char(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while end > 0 && !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn global_then_root_down_to_the_dir_capped_from_the_far_end() {
        let t = tempfile::tempdir().unwrap();
        let cfg = t.path().join("cfg");
        let repo = t.path().join("repo");
        let sub = repo.join("sub");
        std::fs::create_dir_all(&cfg).unwrap();
        std::fs::create_dir_all(sub.join(".git").parent().unwrap()).unwrap();
        std::fs::create_dir(repo.join(".git")).unwrap();
        std::fs::write(cfg.join(FILE_NAME), "GLOBAL rule\n").unwrap();
        std::fs::write(repo.join(FILE_NAME), "ROOT rule\n").unwrap();
        std::fs::write(sub.join(FILE_NAME), "SUB rule\n").unwrap();
        let all = Instructions::load(&cfg, &sub, 10_000);
        let g = all.text.find("GLOBAL").unwrap();
        let r = all.text.find("ROOT").unwrap();
        let s = all.text.find("SUB").unwrap();
        assert!(g < r && r < s, "{}", all.text);
        assert_eq!(all.files.len(), 3);
        assert_eq!(all, Instructions::load(&cfg, &sub, 10_000));
        // A cap of 12 bytes: SUB (8) whole, ROOT cut to 4, GLOBAL left out.
        let capped = Instructions::load(&cfg, &sub, 12);
        assert!(capped.text.contains("SUB rule"));
        assert!(capped.text.contains("ROOT\n\n[cut"), "{}", capped.text);
        assert!(!capped.text.contains("GLOBAL"));
        let listed = capped.lines().join("\n");
        assert!(listed.contains("left out"), "{listed}");
        assert!(listed.contains("cut to 4 of 10 bytes"), "{listed}");
        // None at all: no block.
        let none = Instructions::load(&t.path().join("x"), t.path(), 100);
        assert!(none.text.is_empty() && none.summary().is_none());
    }
}
