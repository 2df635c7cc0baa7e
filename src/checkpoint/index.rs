//! What navi needs to know about a git index file, read directly (versions
//! 2 to 4, SHA-1): how many entries it has, which are nested repositories
//! (gitlinks), and whether it can serve as the starting point of a shadow
//! index (no entry git would skip checking: assume-unchanged or
//! skip-worktree; no split or sparse index).

#[derive(Debug, Default, PartialEq)]
pub(crate) struct Scan {
    pub(crate) entries: usize,
    /// Paths of gitlink entries (mode 160000).
    pub(crate) gitlinks: Vec<Vec<u8>>,
    /// Unfit as a seed: entries git would not check, or a split/sparse index.
    pub(crate) special: bool,
}

const HASH: usize = 20;
const FIXED: usize = 40 + HASH + 2;

fn be32(b: &[u8], at: usize) -> Option<u32> {
    b.get(at..at + 4)
        .map(|x| u32::from_be_bytes([x[0], x[1], x[2], x[3]]))
}

fn be16(b: &[u8], at: usize) -> Option<u16> {
    b.get(at..at + 2).map(|x| u16::from_be_bytes([x[0], x[1]]))
}

/// The entry count from the header alone (`None`: not an index).
pub(crate) fn count(path: &std::path::Path) -> Option<usize> {
    use std::io::Read;
    let mut head = [0u8; 12];
    std::fs::File::open(path).ok()?.read_exact(&mut head).ok()?;
    (&head[..4] == b"DIRC").then(|| be32(&head, 8).unwrap_or(0) as usize)
}

/// Reads the whole index.
pub(crate) fn scan(data: &[u8]) -> Result<Scan, String> {
    walk(data, &[]).map(|(s, _)| s)
}

/// How many entries lie under the directory `prefix`.
pub(crate) fn scan_under(data: &[u8], prefix: &[u8]) -> Result<usize, String> {
    walk(data, prefix).map(|(_, n)| n)
}

fn walk(data: &[u8], prefix: &[u8]) -> Result<(Scan, usize), String> {
    let mut under = 0;
    let bad = || "not a git index file (or a damaged one)".to_string();
    if data.get(..4) != Some(b"DIRC") {
        return Err(bad());
    }
    let version = be32(data, 4).ok_or_else(bad)?;
    if !(2..=4).contains(&version) {
        return Err(format!("index version {version} is not known to navi"));
    }
    let n = be32(data, 8).ok_or_else(bad)? as usize;
    let mut out = Scan {
        entries: n,
        ..Scan::default()
    };
    let mut at = 12;
    let mut prev: Vec<u8> = Vec::new();
    for _ in 0..n {
        let mode = be32(data, at + 24).ok_or_else(bad)?;
        let flags = be16(data, at + 40 + HASH).ok_or_else(bad)?;
        let mut head = FIXED;
        if flags & 0x4000 != 0 {
            let ext = be16(data, at + FIXED).ok_or_else(bad)?;
            head += 2;
            // skip-worktree
            if ext & 0x4000 != 0 {
                out.special = true;
            }
        }
        // assume-valid
        if flags & 0x8000 != 0 {
            out.special = true;
        }
        let name_at = at + head;
        let name: Vec<u8>;
        if version == 4 {
            let (strip, used) = varint(data.get(name_at..).ok_or_else(bad)?).ok_or_else(bad)?;
            let rest = data.get(name_at + used..).ok_or_else(bad)?;
            let end = rest.iter().position(|b| *b == 0).ok_or_else(bad)?;
            let keep = prev.len().checked_sub(strip).ok_or_else(bad)?;
            let mut full = prev[..keep].to_vec();
            full.extend_from_slice(&rest[..end]);
            name = full;
            at = name_at + used + end + 1;
        } else {
            let rest = data.get(name_at..).ok_or_else(bad)?;
            let end = rest.iter().position(|b| *b == 0).ok_or_else(bad)?;
            name = rest[..end].to_vec();
            // Entries are padded with 1 to 8 NULs to a multiple of 8.
            at += (head + end + 8) & !7;
        }
        if mode & 0o170000 == 0o160000 {
            out.gitlinks.push(name.clone());
        }
        if !prefix.is_empty() && name.starts_with(prefix) && name.get(prefix.len()) == Some(&b'/') {
            under += 1;
        }
        prev = name;
    }
    // Extensions, up to the trailing checksum.
    while at + 8 + HASH <= data.len() {
        let sig = &data[at..at + 4];
        if sig == b"link" || sig == b"sdir" {
            out.special = true;
        }
        let size = be32(data, at + 4).ok_or_else(bad)? as usize;
        at += 8 + size;
    }
    Ok((out, under))
}

/// Git's offset varint (index v4 prefix compression).
fn varint(b: &[u8]) -> Option<(usize, usize)> {
    let mut i = 0;
    let mut c = *b.get(i)?;
    i += 1;
    let mut val = usize::from(c & 0x7f);
    while c & 0x80 != 0 {
        val = val.checked_add(1)?;
        c = *b.get(i)?;
        i += 1;
        val = val.checked_shl(7)? | usize::from(c & 0x7f);
    }
    Some((val, i))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::process::Command;

    fn git(dir: &std::path::Path, args: &[&str]) {
        let o = Command::new("git")
            .args(args)
            .current_dir(dir)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@t")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@t")
            .output()
            .unwrap();
        assert!(o.status.success(), "git {args:?}: {o:?}");
    }

    #[test]
    fn reads_every_version_and_finds_gitlinks_and_flags() {
        for version in ["2", "3", "4"] {
            let d = tempfile::tempdir().unwrap();
            let top = d.path();
            std::fs::create_dir_all(top.join("dir/deeper")).unwrap();
            for f in [
                "a.txt",
                "dir/b.txt",
                "dir/deeper/c.txt",
                "dir/deeper/cc.txt",
            ] {
                std::fs::write(top.join(f), f).unwrap();
            }
            std::fs::create_dir_all(top.join("nested")).unwrap();
            git(&top.join("nested"), &["init", "-q"]);
            git(
                &top.join("nested"),
                &["commit", "-q", "--allow-empty", "-m", "x"],
            );
            git(top, &["init", "-q"]);
            git(top, &["config", "index.version", version]);
            git(top, &["add", "."]);
            let read = || scan(&std::fs::read(top.join(".git/index")).unwrap()).unwrap();
            let s = read();
            assert_eq!(s.entries, 5, "v{version}");
            assert_eq!(s.gitlinks, vec![b"nested".to_vec()], "v{version}");
            assert!(!s.special);
            assert_eq!(count(&top.join(".git/index")), Some(5));
            let data = std::fs::read(top.join(".git/index")).unwrap();
            assert_eq!(scan_under(&data, b"dir").unwrap(), 3, "v{version}");
            assert_eq!(scan_under(&data, b"dir/deeper").unwrap(), 2, "v{version}");
            git(top, &["update-index", "--assume-unchanged", "a.txt"]);
            assert!(read().special, "v{version}");
            git(top, &["update-index", "--no-assume-unchanged", "a.txt"]);
            git(top, &["update-index", "--skip-worktree", "dir/b.txt"]);
            assert!(read().special, "v{version}");
        }
        assert!(scan(b"nonsense").is_err());
        assert!(scan(b"DIRC\0\0\0\x02\0\0\0\x05").is_err(), "truncated");
    }
}
