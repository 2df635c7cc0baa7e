use super::*;
use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::PathBuf;

fn setup() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let d = tempfile::tempdir().unwrap();
    let ws = d.path().join("ws");
    let outside = d.path().join("outside");
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret"), "keep me").unwrap();
    (d, ws, outside)
}

#[test]
fn blob_ids_match_git() {
    // `printf 'hello\n' | git hash-object --stdin`
    assert_eq!(
        blob_id(b"hello\n"),
        "ce013625030ba8dba906f756967f9e9ca394464a"
    );
    assert_eq!(blob_id(b""), "e69de29bb2d1d6434b8b29ae775ad8c2e48c5391");
}

#[test]
fn writes_reads_and_removes_beneath_the_root() {
    let (_d, ws, _) = setup();
    let b = Beneath::open(&ws).unwrap();
    b.write(b"new/deep/f.txt", b"hello\n", false).unwrap();
    assert_eq!(
        std::fs::read(ws.join("new/deep/f.txt")).unwrap(),
        b"hello\n"
    );
    let Now::Blob { mode, id, .. } = b.now(b"new/deep/f.txt").unwrap() else {
        panic!("a file")
    };
    assert_eq!(
        (mode, id.as_str()),
        ("100644", "ce013625030ba8dba906f756967f9e9ca394464a")
    );
    b.write(b"new/deep/f.txt", b"x", true).unwrap();
    let mode = std::fs::metadata(ws.join("new/deep/f.txt"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o111, 0o111, "{mode:o}");
    assert!(matches!(
        b.now(b"new/deep/f.txt").unwrap(),
        Now::Blob { mode: "100755", .. }
    ));
    assert_eq!(b.now(b"new/none").unwrap(), Now::Missing);
    assert_eq!(b.now(b"absent/x").unwrap(), Now::Missing);
    assert_eq!(b.now(b"new").unwrap(), Now::Dir);
    b.remove(b"new/deep/f.txt").unwrap();
    b.remove(b"new/deep/f.txt").unwrap();
    b.remove_empty_dir(b"new/deep");
    assert!(!ws.join("new/deep").exists());
    for bad in [
        &b"../x"[..],
        b"a/../b",
        b"/etc/passwd",
        b"a//b",
        b"./a",
        b"",
    ] {
        assert!(matches!(b.now(bad), Err(Blocked::Bad(_))), "{bad:?}");
    }
}

#[test]
fn a_parent_swapped_for_a_link_is_refused_and_named() {
    let (_d, ws, outside) = setup();
    std::fs::remove_dir(ws.join("sub")).unwrap();
    symlink(&outside, ws.join("sub")).unwrap();
    let b = Beneath::open(&ws).unwrap();
    for r in [
        b.write(b"sub/secret", b"pwned", false).err(),
        b.remove(b"sub/secret").err(),
        b.now(b"sub/secret").err(),
        b.write(b"sub/more/x", b"pwned", false).err(),
    ] {
        match r {
            Some(Blocked::Link(p)) => assert_eq!(p, b"sub"),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(std::fs::read(outside.join("secret")).unwrap(), b"keep me");
    assert!(!outside.join("more").exists());
    // A file where a directory is expected.
    std::fs::write(ws.join("file"), "x").unwrap();
    assert!(matches!(b.write(b"file/x", b"y", false), Err(Blocked::NotDir(p)) if p == b"file"));
}

#[test]
fn the_last_component_is_never_followed() {
    let (_d, ws, outside) = setup();
    symlink(outside.join("secret"), ws.join("link")).unwrap();
    let b = Beneath::open(&ws).unwrap();
    let Now::Blob { mode, id, .. } = b.now(b"link").unwrap() else {
        panic!("a link")
    };
    assert_eq!(mode, "120000");
    assert_eq!(
        id,
        blob_id(outside.join("secret").as_os_str().as_encoded_bytes())
    );
    b.write(b"link", b"replaced", false).unwrap();
    assert_eq!(std::fs::read(outside.join("secret")).unwrap(), b"keep me");
    assert_eq!(std::fs::read(ws.join("link")).unwrap(), b"replaced");
    b.write_link(b"sub/l2", b"../target").unwrap();
    assert_eq!(
        std::fs::read_link(ws.join("sub/l2")).unwrap(),
        Path::new("../target")
    );
    std::fs::create_dir(ws.join("adir")).unwrap();
    assert!(
        b.write(b"adir", b"x", false).is_err(),
        "a directory is not replaced"
    );
    assert!(ws.join("adir").is_dir());
}

#[test]
fn a_fifo_does_not_block() {
    let (_d, ws, _) = setup();
    rustix::fs::mknodat(
        rustix::fs::CWD,
        ws.join("fifo"),
        FileType::Fifo,
        Mode::from_raw_mode(0o600),
        0,
    )
    .unwrap();
    let b = Beneath::open(&ws).unwrap();
    assert_eq!(b.now(b"fifo").unwrap(), Now::Other);
    assert!(
        b.write(b"fifo", b"x", false).is_ok(),
        "replaced, not opened"
    );
    assert_eq!(std::fs::read(ws.join("fifo")).unwrap(), b"x");
}

#[test]
fn guarded_open_follows_only_links_outside_the_guarded_roots() {
    let (d, ws, outside) = setup();
    std::fs::write(ws.join("sub/notes.txt"), "notes").unwrap();
    symlink(outside.join("secret"), ws.join("planted")).unwrap();
    symlink(&outside, ws.join("sub/dirlink")).unwrap();
    // The user's own link, outside the workspace, into it.
    symlink(&ws, d.path().join("mine")).unwrap();
    let g = [ws.clone()];
    let read = |p: &Path| {
        let mut s = String::new();
        guarded::open(p, &g).map(|mut f| {
            f.read_to_string(&mut s).unwrap();
            s
        })
    };
    assert_eq!(read(&ws.join("sub/notes.txt")).unwrap(), "notes");
    assert_eq!(read(&d.path().join("mine/sub/notes.txt")).unwrap(), "notes");
    assert_eq!(read(&ws.join("sub/../sub/notes.txt")).unwrap(), "notes");
    assert_eq!(read(&outside.join("secret")).unwrap(), "keep me");
    match read(&ws.join("planted")) {
        Err(guarded::Refused::Link(p)) => assert_eq!(p, ws.canonicalize().unwrap().join("planted")),
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        read(&d.path().join("mine/sub/dirlink/secret")),
        Err(guarded::Refused::Link(_))
    ));
    assert!(matches!(
        read(&ws.join("sub")),
        Err(guarded::Refused::Directory)
    ));
    // Nothing guarded: the same links are followed.
    assert!(guarded::open(&ws.join("planted"), &[]).is_ok());
}
