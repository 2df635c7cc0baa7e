use super::*;
use std::path::Path;

fn b(s: &str) -> Vec<u8> {
    s.as_bytes().to_vec()
}

fn write(ws: &Path, p: &str, text: &str) {
    let f = ws.join(p);
    std::fs::create_dir_all(f.parent().unwrap()).unwrap();
    std::fs::write(f, text).unwrap();
}

/// `(status, path)` of each change from `a` to `b`.
fn changed(sh: &Shadow, a: &str, b: &str) -> Vec<(char, String)> {
    sh.changes(a, b)
        .unwrap()
        .into_iter()
        .map(|c| (c.status, String::from_utf8_lossy(&c.path).into_owned()))
        .collect()
}

fn git(dir: &Path, args: &[&str]) {
    let o = std::process::Command::new("git")
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

/// Only the named paths are recorded: what the turn did to them, nothing
/// else of the workspace (not even files changed meanwhile by others).
#[test]
fn a_turn_records_exactly_the_paths_it_names() {
    for in_repo in [false, true] {
        let d = tempfile::tempdir().unwrap();
        let top = d.path().join("top");
        let ws = if in_repo {
            top.join("sub")
        } else {
            top.clone()
        };
        for i in 0..30 {
            write(&ws, &format!("d{}/f{i}.txt", i % 3), &format!("{i}\n"));
        }
        write(&ws, "gone/a.txt", "a\n");
        write(&ws, "gone/b.txt", "b\n");
        write(&ws, ".gitignore", "*.o\n");
        if in_repo {
            git(&top, &["init", "-q"]);
            git(&top, &["add", "."]);
            git(&top, &["commit", "-qm", "base"]);
        }
        let sh = Shadow::open(&d.path().join("data"), &ws, "s1").unwrap();
        let named = [
            b("d0/f0.txt"),
            b("new/n.txt"),
            b("gone"),
            b("x.o"),
            b("never.txt"),
        ];
        let (before, note) = sh.record_paths(&named, &[], true).unwrap();
        assert_eq!(note, None);
        // The tools run: one changed, one made, a directory removed, an
        // ignored file made; someone else changes an unnamed file.
        write(&ws, "d0/f0.txt", "changed\n");
        write(&ws, "new/n.txt", "new\n");
        std::fs::remove_dir_all(ws.join("gone")).unwrap();
        write(&ws, "x.o", "object\n");
        write(&ws, "d1/f1.txt", "someone else\n");
        let (after, _) = sh.record_paths(&named, &[], false).unwrap();
        assert_eq!(
            changed(&sh, &before, &after),
            vec![
                ('M', "d0/f0.txt".into()),
                ('D', "gone/a.txt".into()),
                ('D', "gone/b.txt".into()),
                ('A', "new/n.txt".into()),
            ],
            "in a repository: {in_repo}"
        );
        sh.drop_turn_index();
        assert!(!sh.beside("turn").exists());
    }
}

/// A directory named after a file in it was written keeps that file's
/// earlier content (the later call must not record what the first did).
#[test]
fn a_later_directory_keeps_what_was_recorded_under_it() {
    let d = tempfile::tempdir().unwrap();
    let ws = d.path().join("ws");
    write(&ws, "d/x.txt", "x0\n");
    write(&ws, "d/y.txt", "y0\n");
    let sh = Shadow::open(&d.path().join("data"), &ws, "s").unwrap();
    let (_, _) = sh.record_paths(&[b("d/x.txt")], &[], true).unwrap();
    write(&ws, "d/x.txt", "x1\n");
    let (before, _) = sh.record_paths(&[b("d")], &[b("d/x.txt")], false).unwrap();
    std::fs::remove_dir_all(ws.join("d")).unwrap();
    let all = [b("d/x.txt"), b("d")];
    let (after, _) = sh.record_paths(&all, &[], false).unwrap();
    let raw = sh.raw(&before, &after, false).unwrap();
    let x = raw.iter().find(|r| r.path == b"d/x.txt").unwrap();
    assert_eq!(sh.blob(x.old_side().unwrap().0).unwrap(), b"x0\n");
    assert_eq!(changed(&sh, &before, &after).len(), 2);
}

/// A whole snapshot with the named paths as they were before the turn.
#[test]
fn overlay_puts_the_named_paths_back_into_a_whole_tree() {
    let d = tempfile::tempdir().unwrap();
    let ws = d.path().join("ws");
    write(&ws, "keep.txt", "k\n");
    write(&ws, "a.txt", "a0\n");
    write(&ws, "dir/b.txt", "b0\n");
    let sh = Shadow::open(&d.path().join("data"), &ws, "s").unwrap();
    let named = [b("a.txt"), b("dir"), b("c.txt")];
    let (before, _) = sh.record_paths(&named, &[], true).unwrap();
    // The file tools ran.
    write(&ws, "a.txt", "a1\n");
    std::fs::remove_dir_all(ws.join("dir")).unwrap();
    write(&ws, "c.txt", "c1\n");
    let (current, _) = sh.snapshot().unwrap();
    let whole = sh.overlay(&current, &before, &named).unwrap();
    // Then a command changes keep.txt.
    write(&ws, "keep.txt", "k1\n");
    let (after, _) = sh.snapshot().unwrap();
    assert_eq!(
        changed(&sh, &whole, &after),
        vec![
            ('M', "a.txt".into()),
            ('A', "c.txt".into()),
            ('D', "dir/b.txt".into()),
            ('M', "keep.txt".into()),
        ]
    );
    assert!(!sh.beside("overlay").exists());
}
