//! The `model: using … because …` line is printed when the choice changes,
//! not on every run: the last model announced in each project is kept in
//! `<data dir>/announced-models.json` (`{"<project dir>": "<model>"}`).
//! Line-mode front ends (plain mode, `navi run`) start their renderer with
//! it and write it back after a turn that chose another model.
//!
//! A missing or unreadable file just means "announce it": nothing here can
//! fail a run.
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

const FILE: &str = "announced-models.json";

/// The memory of one project.
pub(crate) struct ModelNote {
    file: PathBuf,
    project: String,
    last: String,
}

impl ModelNote {
    /// For the project `work_dir` belongs to.
    pub(crate) fn load(data_dir: &Path, work_dir: &Path) -> ModelNote {
        let file = data_dir.join(FILE);
        let project = crate::project::root(work_dir).display().to_string();
        let last = read(&file).remove(&project).unwrap_or_default();
        ModelNote {
            file,
            project,
            last,
        }
    }

    /// The model announced last (empty: none yet).
    pub(crate) fn last(&self) -> &str {
        &self.last
    }

    /// Remembers `model` as announced, when it is another one.
    pub(crate) fn remember(&mut self, model: &str) {
        if model.is_empty() || model == self.last {
            return;
        }
        self.last = model.to_string();
        let mut all = read(&self.file);
        all.insert(self.project.clone(), model.to_string());
        if let Ok(text) = serde_json::to_string_pretty(&all) {
            // Owner-only, like everything in the data dir.
            let _ = crate::private_fs::write_atomic(&self.file, text.as_bytes());
        }
    }
}

fn read(file: &Path) -> BTreeMap<String, String> {
    std::fs::read(file)
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remembers_per_project() {
        let t = tempfile::tempdir().unwrap();
        let (a, b) = (t.path().join("a"), t.path().join("b"));
        std::fs::create_dir_all(&a).unwrap();
        std::fs::create_dir_all(&b).unwrap();
        let mut n = ModelNote::load(t.path(), &a);
        assert_eq!(n.last(), "");
        n.remember("qwen3:8b");
        assert_eq!(ModelNote::load(t.path(), &a).last(), "qwen3:8b");
        assert_eq!(ModelNote::load(t.path(), &b).last(), "");
        std::fs::write(t.path().join(FILE), "not json").unwrap();
        assert_eq!(ModelNote::load(t.path(), &a).last(), "");
    }
}
