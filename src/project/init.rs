//! `/init`: the message that asks the model to write the project's
//! `AGENTS.md`. It goes through an ordinary turn, so the file is written by
//! the filesystem tool — with its approval question, diff and checkpoint —
//! and `/undo` takes it back.
//!
//! The file belongs at the project's root (the git top level, else the work
//! dir). When one exists the model is asked to improve it, keeping what is
//! still true, not to replace it.
use std::path::Path;

/// The prompt `/init` sends for a session working in `work_dir`; `extra` is
/// what the user typed after `/init` (a wish about the file), if anything.
pub fn prompt(work_dir: &Path, extra: &str) -> String {
    let root = super::root(work_dir);
    let file = root.join("AGENTS.md");
    let path = file.display();
    let mut p = if file.is_file() {
        format!(
            "The project at {root} already has an AGENTS.md ({path}). Read it, then look at the \
             repository (layout, build and test commands, conventions in the code and docs) and \
             improve the file: correct what is out of date, add what a coding agent would need \
             and it lacks, keep what is still true and the author's own wording. Do not rewrite \
             it from scratch. Edit {path} with the filesystem tool, then say in two or three \
             lines what you changed.",
            root = root.display()
        )
    } else {
        format!(
            "Write an AGENTS.md for the project at {root}: the instructions a coding agent \
             should follow when it works here. Look at the repository first (README, build \
             files, the source layout, the test setup, CI configuration, existing docs). Cover, \
             briefly and only from what you found: what the project is, its layout, how to \
             build, test and lint it (exact commands), code style and conventions, and anything \
             that must not be done. Keep it short (well under 200 lines), in Markdown. Create \
             {path} with the filesystem tool, then say in two or three lines what you wrote.",
            root = root.display()
        )
    };
    let extra = extra.trim();
    if !extra.is_empty() {
        p.push_str(&format!("\n\nThe user adds: {extra}"));
    }
    p
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_names_the_root_file_and_asks_to_improve_an_existing_one() {
        let t = tempfile::tempdir().unwrap();
        let repo = t.path().join("repo");
        let sub = repo.join("src");
        std::fs::create_dir_all(&sub).unwrap();
        std::fs::create_dir(repo.join(".git")).unwrap();
        let p = prompt(&sub, "");
        let file = repo.join("AGENTS.md");
        assert!(p.contains(&format!("Create {}", file.display())), "{p}");
        std::fs::write(&file, "# rules\n").unwrap();
        let p = prompt(&sub, "mention the benches");
        assert!(p.contains("already has an AGENTS.md"), "{p}");
        assert!(p.contains("Do not rewrite"), "{p}");
        assert!(p.ends_with("The user adds: mention the benches"), "{p}");
    }
}
