//! What changed between two recorded trees, from `git diff-tree -z` (so any
//! file name survives: newlines, bytes that are not UTF-8).
use super::names::shown;

/// One file a turn added, changed or deleted.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Change {
    /// The path in the workspace, as bytes.
    pub path: Vec<u8>,
    /// `A`, `M` or `D` (a type change counts as `M`).
    pub status: char,
    pub added: u64,
    pub removed: u64,
    pub binary: bool,
}

impl Change {
    /// The path as it is shown (see `names`).
    pub fn shown(&self) -> String {
        shown(&self.path)
    }
}

/// One entry of `diff-tree --raw`: both sides' mode and object id.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Raw {
    pub(crate) path: Vec<u8>,
    pub(crate) old_mode: String,
    pub(crate) new_mode: String,
    pub(crate) old_id: String,
    pub(crate) new_id: String,
    pub(crate) status: char,
}

const NULL_ID: &str = "0000000000000000000000000000000000000000";

impl Raw {
    /// The old side (`None`: the path did not exist).
    pub(crate) fn old_side(&self) -> Option<(&str, &str)> {
        (self.old_id != NULL_ID && self.old_mode != "000000")
            .then_some((self.old_id.as_str(), self.old_mode.as_str()))
    }

    pub(crate) fn new_side(&self) -> Option<(&str, &str)> {
        (self.new_id != NULL_ID && self.new_mode != "000000")
            .then_some((self.new_id.as_str(), self.new_mode.as_str()))
    }
}

/// Parses `diff-tree -z --raw` output.
pub(crate) fn parse_raw(out: &[u8]) -> Vec<Raw> {
    let mut parts = out.split(|b| *b == 0);
    let mut list = Vec::new();
    while let Some(head) = parts.next() {
        let Some(head) = head.strip_prefix(b":") else {
            continue;
        };
        let Some(path) = parts.next() else {
            break;
        };
        let text = String::from_utf8_lossy(head);
        let f: Vec<&str> = text.split(' ').collect();
        let [old_mode, new_mode, old_id, new_id, status] = f[..] else {
            continue;
        };
        list.push(Raw {
            path: path.to_vec(),
            old_mode: old_mode.into(),
            new_mode: new_mode.into(),
            old_id: old_id.into(),
            new_id: new_id.into(),
            status: status.chars().next().unwrap_or('M'),
        });
    }
    list
}

/// Joins `--raw` entries with `--numstat` counts.
pub(crate) fn with_counts(raw: &[Raw], numstat: &[u8]) -> Vec<Change> {
    let mut out: Vec<Change> = raw
        .iter()
        .filter(|r| r.old_mode != "040000" && r.new_mode != "040000")
        .map(|r| Change {
            path: r.path.clone(),
            status: match r.status {
                'A' => 'A',
                'D' => 'D',
                _ => 'M',
            },
            added: 0,
            removed: 0,
            binary: false,
        })
        .collect();
    // `added\tremoved\tpath\0` per file.
    for rec in numstat.split(|b| *b == 0).filter(|p| !p.is_empty()) {
        let mut f = rec.splitn(3, |b| *b == b'\t');
        let (Some(a), Some(r), Some(p)) = (f.next(), f.next(), f.next()) else {
            continue;
        };
        if let Some(c) = out.iter_mut().find(|c| c.path == p) {
            c.binary = a == b"-";
            c.added = std::str::from_utf8(a)
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
            c.removed = std::str::from_utf8(r)
                .ok()
                .and_then(|s| s.parse().ok())
                .unwrap_or(0);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_with_newlines_and_bad_bytes_survive() {
        let raw = b":100644 100644 aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb M\0a\nb.txt\0:000000 100755 0000000000000000000000000000000000000000 cccccccccccccccccccccccccccccccccccccccc A\0x\xff\0";
        let r = parse_raw(raw);
        assert_eq!(r.len(), 2);
        assert_eq!(r[0].path, b"a\nb.txt");
        assert_eq!(r[1].path, b"x\xff");
        assert_eq!(r[1].old_side(), None);
        assert_eq!(
            r[1].new_side(),
            Some(("cccccccccccccccccccccccccccccccccccccccc", "100755"))
        );
        let c = with_counts(&r, b"3\t1\ta\nb.txt\0-\t-\tx\xff\0");
        assert_eq!((c[0].added, c[0].removed, c[0].binary), (3, 1, false));
        assert!(c[1].binary);
        assert_eq!(c[0].shown(), "\"a\\nb.txt\"");
    }
}
