//! Navi's key file: API keys by provider name, in `<data dir>/keys.json`,
//! readable and writable only by the user (mode 0600, in a 0700 directory).
//!
//! Invariants:
//! - A write replaces the file whole (a new file, then a rename), so a
//!   crash leaves the old file or the new one, never half of one.
//! - Keys are read into [`Secret`]s; no error message here contains one.
//! - A file that has become readable by others is tightened when read.
use super::providers::Secret;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

#[derive(Debug, thiserror::Error)]
pub enum KeyFileError {
    #[error("cannot read the key file {path}: {source}")]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error(
        "the key file {path} is not a JSON object of provider names and keys ({why}); fix it or remove it and run `navi keys set` again"
    )]
    Parse { path: PathBuf, why: String },
    #[error("cannot write the key file {path}: {source}")]
    Write {
        path: PathBuf,
        source: std::io::Error,
    },
}

pub struct KeyFile {
    path: PathBuf,
}

impl KeyFile {
    /// The key file of the data dir `data_dir`.
    pub fn in_data_dir(data_dir: &Path) -> Self {
        KeyFile {
            path: data_dir.join("keys.json"),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The stored keys; none when there is no file.
    pub fn read(&self) -> Result<BTreeMap<String, Secret>, KeyFileError> {
        let text = match std::fs::read_to_string(&self.path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(BTreeMap::new()),
            Err(source) => {
                return Err(KeyFileError::Read {
                    path: self.path.clone(),
                    source,
                });
            }
        };
        crate::private_fs::tighten_if_exists(&self.path);
        if text.trim().is_empty() {
            return Ok(BTreeMap::new());
        }
        let map: BTreeMap<String, String> =
            serde_json::from_str(&text).map_err(|e| KeyFileError::Parse {
                path: self.path.clone(),
                // The position only: serde's message may quote the text.
                why: format!("line {}, column {}", e.line(), e.column()),
            })?;
        Ok(map
            .into_iter()
            .map(|(k, v)| (k, Secret::new(v)))
            .filter(|(_, v)| !v.is_empty())
            .collect())
    }

    /// Stores `key` for `provider` (replacing one stored before).
    pub fn set(&self, provider: &str, key: &Secret) -> Result<(), KeyFileError> {
        let mut all = self.read()?;
        all.insert(provider.to_string(), key.clone());
        self.write(&all)
    }

    /// Forgets the key of `provider`; false when none was stored.
    pub fn remove(&self, provider: &str) -> Result<bool, KeyFileError> {
        let mut all = self.read()?;
        if all.remove(provider).is_none() {
            return Ok(false);
        }
        self.write(&all)?;
        Ok(true)
    }

    fn write(&self, all: &BTreeMap<String, Secret>) -> Result<(), KeyFileError> {
        let err = |source| KeyFileError::Write {
            path: self.path.clone(),
            source,
        };
        if let Some(dir) = self.path.parent() {
            crate::private_fs::create_dir_all(dir).map_err(err)?;
        }
        let plain: BTreeMap<&str, &str> =
            all.iter().map(|(k, v)| (k.as_str(), v.expose())).collect();
        let text = serde_json::to_string_pretty(&plain).unwrap_or_else(|_| "{}".into());
        let tmp = self
            .path
            .with_extension(format!("json.{}.tmp", std::process::id()));
        let write = || -> std::io::Result<()> {
            use std::os::unix::fs::OpenOptionsExt;
            let mut f = std::fs::OpenOptions::new()
                .write(true)
                .create_new(true)
                .mode(crate::private_fs::FILE_MODE)
                .open(&tmp)?;
            f.write_all(text.as_bytes())?;
            f.write_all(b"\n")?;
            f.sync_all()?;
            std::fs::rename(&tmp, &self.path)
        };
        write().map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            err(e)
        })
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn keys_are_stored_owner_only_and_removed() {
        let d = tempfile::tempdir().unwrap();
        let f = KeyFile::in_data_dir(&d.path().join("data"));
        assert!(f.read().unwrap().is_empty());
        f.set("anthropic", &Secret::new("sk-ant-1 ")).unwrap();
        f.set("groq", &Secret::new("gsk-2")).unwrap();
        let mode = std::fs::metadata(f.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let all = f.read().unwrap();
        assert_eq!(all["anthropic"].expose(), "sk-ant-1");
        assert_eq!(all.len(), 2);
        assert!(f.remove("groq").unwrap());
        assert!(!f.remove("groq").unwrap());
        assert_eq!(f.read().unwrap().len(), 1);
        // A file made readable by others is tightened when read.
        std::fs::set_permissions(f.path(), std::fs::Permissions::from_mode(0o644)).unwrap();
        f.read().unwrap();
        let mode = std::fs::metadata(f.path()).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }

    #[test]
    fn a_broken_file_is_named_without_its_content() {
        let d = tempfile::tempdir().unwrap();
        let f = KeyFile::in_data_dir(d.path());
        std::fs::write(f.path(), "{\"anthropic\": \"sk-secret-value\"").unwrap();
        let e = f.read().unwrap_err().to_string();
        assert!(
            e.contains("keys.json") && e.contains("navi keys set"),
            "{e}"
        );
        assert!(!e.contains("sk-secret"), "{e}");
    }
}
