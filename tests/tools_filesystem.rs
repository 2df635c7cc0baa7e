//! `filesystem` against real temp dirs: every action, caps, binary files,
//! atomic writes, and a table-driven traversal/symlink suite.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use crate::tools_support;

use navi::tools::Tool;
use navi::tools::builtin::filesystem::FilesystemTool;
use serde_json::json;
use std::os::unix::fs::{PermissionsExt, symlink};
use tools_support::*;

/// A harness whose only allowed root is `<tmp>/work`.
fn confined() -> Harness {
    Harness::new(|c, root| {
        c.security.fs_allowed_paths = vec![root.join("work").display().to_string()];
        c.tools.output_limit_bytes = 2000;
    })
}

async fn fs(h: &Harness, args: serde_json::Value) -> navi::tools::ToolResult {
    call(&FilesystemTool, args, &h.ctx()).await
}

#[tokio::test]
async fn write_read_append_stat_list_delete() {
    let h = confined();
    let r = fs(
        &h,
        json!({"action": "write", "path": "notes/a.txt", "content": "one\ntwo\n"}),
    )
    .await;
    assert!(ok_text(&r).contains("wrote 8 B"), "{}", r.output);
    assert_eq!(
        std::fs::read_to_string(h.work.join("notes/a.txt")).unwrap(),
        "one\ntwo\n"
    );

    let r = fs(
        &h,
        json!({"action": "append", "path": "notes/a.txt", "content": "three\n"}),
    )
    .await;
    assert!(ok_text(&r).contains("now 14 B"), "{}", r.output);
    let r = fs(&h, json!({"action": "read", "path": "notes/a.txt"})).await;
    assert_eq!(ok_text(&r), "one\ntwo\nthree\n");

    let r = fs(&h, json!({"action": "stat", "path": "notes/a.txt"})).await;
    let out = ok_text(&r);
    assert!(out.contains("type: file"), "{out}");
    assert!(out.contains("size: 14 bytes"), "{out}");
    assert!(out.contains("content: text"), "{out}");

    let r = fs(&h, json!({"action": "mkdir", "path": "notes/sub/deeper"})).await;
    assert!(ok_text(&r).contains("created directory"));
    assert!(h.work.join("notes/sub/deeper").is_dir());

    let r = fs(&h, json!({"action": "list", "path": "notes"})).await;
    let out = ok_text(&r);
    assert!(out.contains("a.txt  (14 B)"), "{out}");
    assert!(out.contains("sub/"), "{out}");
    assert!(!out.contains("deeper"), "not recursive: {out}");
    let r = fs(
        &h,
        json!({"action": "list", "path": "notes", "recursive": true}),
    )
    .await;
    assert!(ok_text(&r).contains("sub/deeper/"), "{}", r.output);

    let r = fs(&h, json!({"action": "delete", "path": "notes/sub"})).await;
    assert!(err_text(&r).contains("recursive=true"), "{:?}", r.error);
    assert!(h.work.join("notes/sub/deeper").is_dir());
    let r = fs(
        &h,
        json!({"action": "delete", "path": "notes/sub", "recursive": true}),
    )
    .await;
    assert!(ok_text(&r).contains("deleted directory"));
    assert!(!h.work.join("notes/sub").exists());
    let r = fs(&h, json!({"action": "delete", "path": "notes/a.txt"})).await;
    assert!(ok_text(&r).contains("deleted file"));
    assert!(!h.work.join("notes/a.txt").exists());
}

#[tokio::test]
async fn read_with_offset_and_limit_and_caps() {
    let h = confined();
    let text: String = (1..=5000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(h.work.join("big.txt"), &text).unwrap();

    let r = fs(
        &h,
        json!({"action": "read", "path": "big.txt", "offset": 10, "limit": 3}),
    )
    .await;
    let out = ok_text(&r);
    assert!(out.starts_with("line 10\nline 11\nline 12\n"), "{out}");
    assert!(out.contains("showing lines 10-12 of 5000"), "{out}");
    assert!(out.contains("continue with offset=13"), "{out}");

    // Byte cap (2000) stops long before the default 2000 lines.
    let r = fs(&h, json!({"action": "read", "path": "big.txt"})).await;
    let out = ok_text(&r);
    assert!(out.len() < 2300, "capped: {} bytes", out.len());
    assert!(out.starts_with("line 1\nline 2\n"));
    assert!(out.contains("of 5000"), "{out}");
    assert!(out.contains("continue with offset="), "{out}");

    let r = fs(
        &h,
        json!({"action": "read", "path": "big.txt", "offset": 6000}),
    )
    .await;
    assert!(ok_text(&r).contains("has only 5000 lines"), "{}", r.output);

    // One enormous line is cut, not loaded whole into the answer.
    std::fs::write(h.work.join("line.txt"), "x".repeat(100_000)).unwrap();
    let r = fs(&h, json!({"action": "read", "path": "line.txt"})).await;
    let out = ok_text(&r);
    assert!(
        out.contains("[... line cut ...]"),
        "{}",
        &out[out.len() - 200..]
    );
    assert!(out.len() < 2300);

    std::fs::write(h.work.join("empty.txt"), "").unwrap();
    let r = fs(&h, json!({"action": "read", "path": "empty.txt"})).await;
    assert!(ok_text(&r).contains("is empty"));
}

#[tokio::test]
async fn binary_files_are_described_not_dumped() {
    let h = confined();
    let mut elf = b"\x7fELF\x02\x01\x01\x00".to_vec();
    elf.extend(std::iter::repeat_n(0u8, 5000));
    std::fs::write(h.work.join("prog"), &elf).unwrap();
    let r = fs(&h, json!({"action": "read", "path": "prog"})).await;
    let out = ok_text(&r);
    assert!(
        out.contains("binary file (ELF executable, 5.0 KB)"),
        "{out}"
    );
    assert!(!out.contains('\0'));

    std::fs::write(h.work.join("pic.png"), tiny_png()).unwrap();
    let r = fs(&h, json!({"action": "read", "path": "pic.png"})).await;
    assert!(ok_text(&r).contains("image/png"), "{}", r.output);
    let r = fs(&h, json!({"action": "stat", "path": "pic.png"})).await;
    assert!(
        ok_text(&r).contains("content: binary (image/png)"),
        "{}",
        r.output
    );

    // Latin-1 is text, decoded with a note, not "binary".
    std::fs::write(h.work.join("latin1.txt"), b"caf\xe9 cr\xe8me\nplain line\n").unwrap();
    let r = fs(&h, json!({"action": "read", "path": "latin1.txt"})).await;
    let out = ok_text(&r);
    assert!(out.starts_with("café crème\nplain line\n"), "{out}");
    assert!(
        out.contains("not valid UTF-8") && out.contains("Latin-1"),
        "{out}"
    );
    assert!(!out.contains("binary"), "{out}");
    let r = fs(&h, json!({"action": "stat", "path": "latin1.txt"})).await;
    assert!(
        ok_text(&r).contains("content: text (not UTF-8"),
        "{}",
        r.output
    );
}

/// Runs `f` but fails (instead of hanging the suite) if it blocks.
async fn bounded(
    f: impl std::future::Future<Output = navi::tools::ToolResult>,
) -> navi::tools::ToolResult {
    tokio::time::timeout(std::time::Duration::from_secs(60), f)
        .await
        .expect("the tool blocked")
}

#[tokio::test]
async fn fifos_sockets_and_devices_are_refused_without_blocking() {
    let h = confined();
    let fifo = h.work.join("pipe");
    let st = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(st.success());
    // Nobody ever writes: a plain open() would block forever.
    let r = bounded(fs(&h, json!({"action": "read", "path": "pipe"}))).await;
    let e = err_text(&r);
    assert!(
        e.contains("named pipe (FIFO)") && e.contains("not a regular file"),
        "{e}"
    );
    let r = bounded(fs(
        &h,
        json!({"action": "append", "path": "pipe", "content": "x"}),
    ))
    .await;
    assert!(err_text(&r).contains("FIFO"), "{:?}", r.error);
    let r = bounded(fs(&h, json!({"action": "stat", "path": "pipe"}))).await;
    assert!(ok_text(&r).contains("named pipe"), "{}", r.output);
    assert!(fifo.exists(), "the FIFO was not replaced");

    let _sock = std::os::unix::net::UnixListener::bind(h.work.join("sock")).unwrap();
    let r = bounded(fs(&h, json!({"action": "read", "path": "sock"}))).await;
    assert!(err_text(&r).contains("a socket"), "{:?}", r.error);

    // /dev/zero never ends; a device is refused even where all paths are allowed.
    let open = Harness::new(|_, _| {});
    let r = bounded(call(
        &FilesystemTool,
        json!({"action": "read", "path": "/dev/zero"}),
        &open.ctx(),
    ))
    .await;
    assert!(err_text(&r).contains("character device"), "{:?}", r.error);
}

#[tokio::test]
async fn hard_links_are_refused_under_a_root_list_unless_allowed() {
    let h = confined();
    let outside = h.root().join("outside-secret.txt");
    std::fs::write(&outside, "TOP SECRET\n").unwrap();
    std::fs::hard_link(&outside, h.work.join("innocent.txt")).unwrap();
    let r = fs(&h, json!({"action": "read", "path": "innocent.txt"})).await;
    let e = err_text(&r);
    assert!(
        e.contains("2 hard links") && e.contains("fs_allow_hard_links"),
        "{e}"
    );
    assert!(!e.contains("TOP SECRET"));
    let r = fs(
        &h,
        json!({"action": "append", "path": "innocent.txt", "content": "x"}),
    )
    .await;
    assert!(err_text(&r).contains("hard links"), "{:?}", r.error);
    assert_eq!(std::fs::read_to_string(&outside).unwrap(), "TOP SECRET\n");
    // A plain file inside is still fine.
    std::fs::write(h.work.join("own.txt"), "mine\n").unwrap();
    let r = fs(&h, json!({"action": "read", "path": "own.txt"})).await;
    assert_eq!(ok_text(&r), "mine\n");

    let allowed = Harness::new(|c, root| {
        c.security.fs_allowed_paths = vec![root.join("work").display().to_string()];
        c.security.fs_allow_hard_links = true;
    });
    let outside = allowed.root().join("o.txt");
    std::fs::write(&outside, "shared\n").unwrap();
    std::fs::hard_link(&outside, allowed.work.join("l.txt")).unwrap();
    let r = call(
        &FilesystemTool,
        json!({"action": "read", "path": "l.txt"}),
        &allowed.ctx(),
    )
    .await;
    assert_eq!(ok_text(&r), "shared\n");
}

#[tokio::test]
async fn a_ten_megabyte_line_is_cut_with_a_note() {
    let h = Harness::new(|c, root| {
        c.security.fs_allowed_paths = vec![root.join("work").display().to_string()];
    });
    let mut data = vec![b'x'; 10 * 1024 * 1024];
    data.extend_from_slice(b"\nsecond line\n");
    std::fs::write(h.work.join("one.txt"), &data).unwrap();
    let r = fs(&h, json!({"action": "read", "path": "one.txt"})).await;
    let out = ok_text(&r);
    let max = navi::config::Config::default().tools.max_line_bytes;
    assert!(out.len() < max + 1000, "{} bytes", out.len());
    let dropped = 10 * 1024 * 1024 - max;
    assert!(
        out.contains(&format!("line 1 cut: {dropped} more bytes not shown")),
        "{}",
        &out[max..]
    );
    assert!(out.contains("\nsecond line\n"), "{}", &out[max..]);
}

#[tokio::test]
async fn writes_are_atomic_and_keep_permissions() {
    let h = confined();
    let target = h.work.join("script.sh");
    std::fs::write(&target, "old").unwrap();
    std::fs::set_permissions(&target, std::fs::Permissions::from_mode(0o750)).unwrap();
    let r = fs(
        &h,
        json!({"action": "write", "path": "script.sh", "content": "new content"}),
    )
    .await;
    ok_text(&r);
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "new content");
    let mode = std::fs::metadata(&target).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode, 0o750);
    let names: Vec<String> = std::fs::read_dir(&h.work)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["script.sh"], "no temp files left behind");

    // A failed write leaves the old file intact and no temp file: the target
    // is a directory.
    std::fs::create_dir(h.work.join("adir")).unwrap();
    let r = fs(
        &h,
        json!({"action": "write", "path": "adir", "content": "x"}),
    )
    .await;
    assert!(err_text(&r).contains("is a directory"), "{:?}", r.error);

    // Write failure mid-way (read-only directory) → old content survives.
    if navi::tools::process::current_uid() != 0 {
        let ro = h.work.join("ro");
        std::fs::create_dir(&ro).unwrap();
        std::fs::write(ro.join("f"), "keep").unwrap();
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o555)).unwrap();
        let r = fs(
            &h,
            json!({"action": "write", "path": "ro/f", "content": "lost"}),
        )
        .await;
        assert!(!r.success);
        assert_eq!(std::fs::read_to_string(ro.join("f")).unwrap(), "keep");
        std::fs::set_permissions(&ro, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
}

#[tokio::test]
async fn bad_arguments_are_clear_errors() {
    let h = confined();
    let cases = [
        (json!({}), "missing required argument 'action'"),
        (
            json!({"action": "read"}),
            "missing required argument 'path'",
        ),
        (
            json!({"action": "frobnicate", "path": "x"}),
            "unknown action 'frobnicate'",
        ),
        (
            json!({"action": "write", "path": "x"}),
            "missing required argument 'content'",
        ),
        (
            json!({"action": "write", "path": "x", "content": 5}),
            "'content' must be a string",
        ),
        (
            json!({"action": "read", "path": "x", "offset": -1}),
            "'offset' must be a non-negative integer",
        ),
        (json!({"action": "read", "path": ""}), "'path' is empty"),
        (
            json!({"action": "read", "path": "missing.txt"}),
            "No such file",
        ),
        (json!({"action": "list", "path": "missing"}), "No such file"),
        (
            json!({"action": "delete", "path": "."}),
            "allowed root itself",
        ),
    ];
    for (args, want) in cases {
        let r = fs(&h, args.clone()).await;
        let e = err_text(&r);
        assert!(e.contains(want), "{args}: got {e:?}, want {want:?}");
    }
}

/// Traversal and symlink escapes: every one must be refused, nothing outside
/// the root read, written or deleted.
#[tokio::test]
async fn traversal_and_symlink_escapes_are_refused() {
    let h = confined();
    let root = h.root();
    let outside = root.join("outside");
    std::fs::create_dir_all(outside.join("dir")).unwrap();
    std::fs::write(outside.join("secret.txt"), "SECRET").unwrap();
    std::fs::write(outside.join("dir/inner.txt"), "INNER").unwrap();
    let w = &h.work;
    symlink(&outside, w.join("link_out")).unwrap();
    symlink(outside.join("secret.txt"), w.join("secret_link")).unwrap();
    symlink("../outside/secret.txt", w.join("rel_link")).unwrap();
    symlink(outside.join("new.txt"), w.join("dangling_out")).unwrap();
    symlink(w.join("chain2"), w.join("chain1")).unwrap();
    symlink(w.join("link_out"), w.join("chain2")).unwrap();
    std::fs::create_dir(w.join("sub")).unwrap();
    symlink("..", w.join("sub/up")).unwrap();
    symlink("/", w.join("slash")).unwrap();
    symlink(w.join("loop_b"), w.join("loop_a")).unwrap();
    symlink(w.join("loop_a"), w.join("loop_b")).unwrap();
    let work_name = w.file_name().unwrap().to_string_lossy().to_string();
    let abs_secret = outside.join("secret.txt").display().to_string();
    let sibling = format!("../{work_name}2/x"); // /tmp/…/work2 shares a prefix

    let paths: Vec<String> = vec![
        "../outside/secret.txt".into(),
        "./../outside/secret.txt".into(),
        "sub/../../outside/secret.txt".into(),
        "sub/up/../outside/secret.txt".into(),
        "sub/up/sub/up/../outside/secret.txt".into(),
        abs_secret.clone(),
        format!("{}/../outside/secret.txt", w.display()),
        "link_out/secret.txt".into(),
        "link_out/dir/inner.txt".into(),
        "link_out/../outside/secret.txt".into(),
        "secret_link".into(),
        "rel_link".into(),
        "chain1/secret.txt".into(),
        "slash/etc/passwd".into(),
        "/etc/passwd".into(),
        "/etc/../etc/passwd".into(),
        "missing/../../outside/secret.txt".into(),
        "missing/deeper/../../../outside/new.txt".into(),
        "link_out/not-yet/created.txt".into(),
        sibling,
        "~/.bashrc".into(),
        "/".into(),
        "..".into(),
    ];
    for p in &paths {
        for action in ["read", "stat", "list"] {
            let r = fs(&h, json!({"action": action, "path": p})).await;
            let e = err_text(&r);
            assert!(
                e.contains("access denied") && e.contains(&w.display().to_string()),
                "{action} {p}: {e}"
            );
        }
        for args in [
            json!({"action": "write", "path": p, "content": "PWNED"}),
            json!({"action": "append", "path": p, "content": "PWNED"}),
            json!({"action": "mkdir", "path": format!("{p}/newdir")}),
        ] {
            let r = fs(&h, args.clone()).await;
            assert!(
                err_text(&r).contains("access denied"),
                "{args}: {:?}",
                r.error
            );
        }
    }
    // Writing through a dangling link that points outside is refused too.
    let r = fs(
        &h,
        json!({"action": "write", "path": "dangling_out", "content": "x"}),
    )
    .await;
    assert!(err_text(&r).contains("access denied"));
    assert!(!outside.join("new.txt").exists());
    // Loops are an error, not a hang.
    let r = fs(&h, json!({"action": "read", "path": "loop_a"})).await;
    assert!(err_text(&r).contains("too many levels"), "{:?}", r.error);
    // Deleting a link inside the root removes the link, never its target.
    let r = fs(&h, json!({"action": "delete", "path": "secret_link"})).await;
    assert!(ok_text(&r).contains("deleted symlink"));
    let r = fs(
        &h,
        json!({"action": "delete", "path": "link_out", "recursive": true}),
    )
    .await;
    assert!(ok_text(&r).contains("deleted symlink"), "{:?}", r.error);
    // Nothing outside changed.
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "SECRET"
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("dir/inner.txt")).unwrap(),
        "INNER"
    );
    assert!(!outside.join("newdir").exists() && !outside.join("new.txt").exists());
    assert!(
        !w.join("missing").exists(),
        "no directories created by refused calls"
    );
}

#[tokio::test]
async fn symlinks_inside_the_root_work_and_refusal_lists_roots() {
    let h = Harness::new(|c, root| {
        c.security.fs_allowed_paths = vec![
            root.join("work").display().to_string(),
            root.join("shared").display().to_string(),
        ];
    });
    let shared = h.root().join("shared");
    std::fs::create_dir(&shared).unwrap();
    std::fs::write(shared.join("doc.md"), "# doc\n").unwrap();
    symlink(&shared, h.work.join("to_shared")).unwrap();
    let r = fs(&h, json!({"action": "read", "path": "to_shared/doc.md"})).await;
    assert_eq!(ok_text(&r), "# doc\n");
    let r = fs(
        &h,
        json!({"action": "write", "path": "to_shared/new.md", "content": "hi"}),
    )
    .await;
    ok_text(&r);
    assert_eq!(
        std::fs::read_to_string(shared.join("new.md")).unwrap(),
        "hi"
    );
    // Writing through a link updates the target and keeps the link.
    symlink(shared.join("doc.md"), h.work.join("doc_link")).unwrap();
    let r = fs(
        &h,
        json!({"action": "write", "path": "doc_link", "content": "v2"}),
    )
    .await;
    ok_text(&r);
    assert_eq!(
        std::fs::read_to_string(shared.join("doc.md")).unwrap(),
        "v2"
    );
    assert!(
        std::fs::symlink_metadata(h.work.join("doc_link"))
            .unwrap()
            .file_type()
            .is_symlink()
    );
    let r = fs(&h, json!({"action": "stat", "path": "doc_link"})).await;
    assert!(ok_text(&r).contains("type: symlink ->"), "{}", r.output);

    let r = fs(&h, json!({"action": "read", "path": "/etc/hostname"})).await;
    let e = err_text(&r);
    assert!(e.contains("fs_allowed_paths"), "{e}");
    assert!(
        e.contains(&h.work.display().to_string()) && e.contains(&shared.display().to_string()),
        "{e}"
    );
}

#[tokio::test]
async fn star_allows_anywhere_and_relative_paths_use_work_dir() {
    let h = Harness::new(|_, _| {});
    let outside = h.root().join("elsewhere.txt");
    std::fs::write(&outside, "ok").unwrap();
    let r = fs(
        &h,
        json!({"action": "read", "path": outside.display().to_string()}),
    )
    .await;
    assert_eq!(ok_text(&r), "ok");
    let r = fs(&h, json!({"action": "read", "path": "../elsewhere.txt"})).await;
    assert_eq!(ok_text(&r), "ok");
    let r = fs(
        &h,
        json!({"action": "write", "path": "rel.txt", "content": "r"}),
    )
    .await;
    ok_text(&r);
    assert!(h.work.join("rel.txt").is_file());
}

#[test]
fn approval_is_asked_for_changes_only() {
    let t = FilesystemTool;
    for action in ["read", "list", "stat"] {
        assert_eq!(
            t.approval_summary(&json!({"action": action, "path": "/x"})),
            None
        );
    }
    let s = t
        .approval_summary(&json!({"action": "write", "path": "/tmp/x", "content": "abc"}))
        .unwrap();
    assert!(s.contains("write 3 bytes to /tmp/x"), "{s}");
    assert!(
        t.approval_summary(&json!({"action": "append", "path": "a", "content": ""}))
            .is_some()
    );
    assert!(
        t.approval_summary(&json!({"action": "mkdir", "path": "a"}))
            .is_some()
    );
    let s = t
        .approval_summary(&json!({"action": "delete", "path": "/srv/d", "recursive": true}))
        .unwrap();
    assert!(s.contains("/srv/d and everything in it"), "{s}");
}
