#![allow(clippy::unwrap_used, clippy::expect_used)]
use super::*;

fn policy(dir: &Path) -> FilesPolicy {
    FilesPolicy {
        root: dir.join("files"),
        max_size: 1000,
        inline_max: 100,
        ttl: Duration::from_secs(3600),
        guarded: Vec::new(),
    }
}

#[test]
fn small_text_is_inlined_in_a_fence_longer_than_its_backticks() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("notes.md");
    std::fs::write(&f, "say ```hi```\n").unwrap();
    let a = attach_path(&policy(d.path()), "s1", &f).unwrap();
    let msg = compose("look", std::slice::from_ref(&a));
    assert_eq!(msg.text(), "look\n\nnotes.md:\n````\nsay ```hi```\n````");
    assert!(
        !d.path().join("files").exists(),
        "inline text is not copied"
    );
}

#[test]
fn images_by_magic_bytes_not_extension() {
    let d = tempfile::tempdir().unwrap();
    let f = d.path().join("picture.txt");
    std::fs::write(&f, b"\x89PNG\r\n\x1a\nrest").unwrap();
    let a = attach_path(&policy(d.path()), "s1", &f).unwrap();
    let msg = compose("what is it", &[a]);
    assert_eq!(msg.image_count(), 1);
    assert_eq!(msg.images().next().unwrap().mime, "image/png");
    assert_eq!(msg.text(), "what is it");
}

#[test]
fn binary_and_large_text_are_stored_with_suffixes_and_a_note() {
    let d = tempfile::tempdir().unwrap();
    let p = policy(d.path());
    let bin = d.path().join("data.bin.gz");
    std::fs::write(&bin, [0u8, 1, 2, 3]).unwrap();
    let a1 = attach_path(&p, "s1", &bin).unwrap();
    let a2 = attach_path(&p, "s1", &bin).unwrap();
    let big = d.path().join("log.txt");
    std::fs::write(&big, "line\n".repeat(50)).unwrap();
    let a3 = attach_path(&p, "s1", &big).unwrap();
    let dir = p.session_dir("s1");
    assert!(dir.join("data.bin.gz").is_file());
    assert!(dir.join("data.bin-1.gz").is_file(), "clash suffixed");
    assert_eq!(std::fs::read(dir.join("log.txt")).unwrap().len(), 250);
    let msg = compose("check", &[a1, a2, a3]);
    assert!(
        msg.text()
            .contains("[Uploaded files on disk:\n- data.bin.gz → ")
    );
    assert!(msg.text().contains("data.bin-1.gz"));
    assert!(
        msg.text().contains("log.txt (first lines"),
        "{}",
        msg.text()
    );
}

#[test]
fn executables_too_large_and_directories_are_refused() {
    let d = tempfile::tempdir().unwrap();
    let p = policy(d.path());
    let elf = d.path().join("tool");
    std::fs::write(&elf, b"\x7fELF\x02\x01\x01\0\0\0").unwrap();
    assert!(matches!(
        attach_path(&p, "s1", &elf),
        Err(AttachError::Executable { .. })
    ));
    let big = d.path().join("big.bin");
    std::fs::write(&big, vec![0u8; 2000]).unwrap();
    let e = attach_path(&p, "s1", &big).unwrap_err();
    assert!(e.to_string().contains("max_size_mb"), "{e}");
    assert!(matches!(
        attach_path(&p, "s1", d.path()),
        Err(AttachError::Directory { .. })
    ));
    assert!(matches!(
        attach_path(&p, "s1", &d.path().join("missing")),
        Err(AttachError::Read { .. })
    ));
    assert!(!p.session_dir("s1").exists());
}

#[test]
fn cleanup_removes_only_stale_session_dirs() {
    let d = tempfile::tempdir().unwrap();
    let mut p = policy(d.path());
    store(&p, "old", "a.txt", b"x").unwrap();
    p.ttl = Duration::from_secs(0);
    std::thread::sleep(Duration::from_millis(20));
    assert_eq!(cleanup_stale(&p), 1);
    assert!(!p.session_dir("old").exists());
    p.ttl = Duration::from_secs(3600);
    store(&p, "new", "a.txt", b"x").unwrap();
    assert_eq!(cleanup_stale(&p), 0);
    // Storing cleans up on the way: a stale dir goes, the fresh one stays.
    store(&p, "stale", "b.txt", b"x").unwrap();
    std::thread::sleep(Duration::from_millis(20));
    p.ttl = Duration::from_millis(10);
    store(&p, "new", "c.txt", b"x").unwrap();
    assert!(!p.session_dir("stale").exists());
    assert!(p.session_dir("new").join("c.txt").is_file());
}
