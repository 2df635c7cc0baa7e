use super::*;
use std::process::Command;

fn git(dir: &Path, args: &[&str]) -> String {
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
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A program that leaves a mark when run.
fn marker(dir: &Path) -> (PathBuf, PathBuf) {
    let mark = dir.join("ran");
    let prog = dir.join("evil.sh");
    std::fs::write(
        &prog,
        format!("#!/bin/sh\necho \"$0 $*\" >> {}\ncat\n", mark.display()),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&prog, std::fs::Permissions::from_mode(0o755)).unwrap();
    (prog, mark)
}

/// Every git configuration a tool could write, naming `prog`.
fn plant(ws: &Path, prog: &Path) {
    let p = prog.display();
    let config = format!(
        "[filter \"evil\"]\n\tclean = {p} clean\n\tsmudge = {p} smudge\n\tprocess = {p} process\n\trequired = true\n[diff \"evil\"]\n\ttextconv = {p} textconv\n\tcommand = {p} extdiff\n[core]\n\tfsmonitor = {p} fsmonitor\n\thooksPath = {}\n\tattributesFile = {}\n\tpager = {p} pager\n",
        ws.join("hooks").display(),
        ws.join("attrs").display()
    );
    std::fs::create_dir_all(ws.join(".config/git")).unwrap();
    std::fs::create_dir_all(ws.join("hooks")).unwrap();
    for f in [".gitconfig", ".config/git/config"] {
        std::fs::write(ws.join(f), &config).unwrap();
    }
    for f in [
        ".gitattributes",
        "attrs",
        ".config/git/attributes",
        "sub/.gitattributes",
    ] {
        std::fs::create_dir_all(ws.join(f).parent().unwrap()).unwrap();
        std::fs::write(
            ws.join(f),
            "* filter=evil diff=evil merge=evil\n[attr]m filter=evil\n",
        )
        .unwrap();
    }
    for h in [
        "pre-commit",
        "post-index-change",
        "reference-transaction",
        "post-checkout",
    ] {
        std::fs::write(
            ws.join("hooks").join(h),
            format!("#!/bin/sh\n{p} hook-{h}\n"),
        )
        .unwrap();
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(
            ws.join("hooks").join(h),
            std::fs::Permissions::from_mode(0o755),
        )
        .unwrap();
    }
    // A nested repository with its own configuration.
    let nested = ws.join("nested");
    std::fs::create_dir_all(&nested).unwrap();
    git(&nested, &["init", "-q"]);
    std::fs::write(nested.join("f.txt"), "x\n").unwrap();
    git(&nested, &["add", "f.txt"]);
    git(&nested, &["commit", "-qm", "x"]);
    std::fs::write(nested.join(".git/config"), &config).unwrap();
    std::fs::write(nested.join(".gitattributes"), "* filter=evil\n").unwrap();
    std::fs::write(nested.join(".git/info/attributes"), "* filter=evil\n").unwrap_or(());
}

#[test]
fn planted_configuration_never_runs_a_program() {
    for in_repo in [false, true] {
        let d = tempfile::tempdir().unwrap();
        let (prog, mark) = marker(d.path());
        let ws = d.path().join("home");
        std::fs::create_dir_all(ws.join("sub")).unwrap();
        std::fs::write(ws.join("a.txt"), "one\r\ntwo\n").unwrap();
        std::fs::write(ws.join("sub/b.txt"), "b\n").unwrap();
        if in_repo {
            git(&ws, &["init", "-q"]);
            git(&ws, &["add", "a.txt"]);
            git(&ws, &["commit", "-qm", "base"]);
            // The user's own repository configuration, too.
            let mut cfg = std::fs::read_to_string(ws.join(".git/config")).unwrap();
            cfg.push_str(&format!(
                "[filter \"evil\"]\n\tclean = {} userrepo\n[core]\n\tfsmonitor = {} userrepo\n",
                prog.display(),
                prog.display()
            ));
            std::fs::write(ws.join(".git/config"), cfg).unwrap();
            std::fs::write(ws.join(".git/info/attributes"), "* filter=evil\n").unwrap();
        }
        plant(&ws, &prog);
        let data = d.path().join("data");
        let sh = Shadow::open(&data, &ws, "s1").unwrap();
        assert_eq!(sh.in_repository(), in_repo);
        sh.seed();
        let (t1, note) = sh.snapshot().unwrap();
        assert_eq!(note, None);
        std::fs::write(ws.join("a.txt"), "one\r\nchanged\n").unwrap();
        std::fs::write(ws.join("nested/f.txt"), "y\n").unwrap();
        let (t2, _) = sh.snapshot().unwrap();
        let (t3, _) = sh.snapshot().unwrap();
        assert_eq!(t2, t3);
        let ch = sh.changes(&t1, &t2).unwrap();
        assert_eq!(ch.len(), 1, "{ch:?}");
        assert_eq!(
            (ch[0].path.as_slice(), ch[0].added, ch[0].removed),
            (&b"a.txt"[..], 1, 1)
        );
        sh.keep("s1", "1/before", &t1).unwrap();
        sh.localize(&[(&t1, &t2)]).unwrap();
        let raw = sh.raw(&t1, &t2, false).unwrap();
        // Stored byte for byte (no CRLF conversion, no filter).
        assert_eq!(
            sh.blob(raw[0].new_side().unwrap().0).unwrap(),
            b"one\r\nchanged\n"
        );
        assert!(
            !mark.exists(),
            "a planted program ran: {}",
            std::fs::read_to_string(&mark).unwrap()
        );
    }
}

#[test]
fn a_git_on_path_inside_the_workspace_is_not_run() {
    let d = tempfile::tempdir().unwrap();
    let ws = d.path().join("ws");
    std::fs::create_dir_all(ws.join("bin")).unwrap();
    std::fs::write(ws.join("bin/git"), "#!/bin/sh\ntouch \"$HOME/../pwned\"\n").unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(ws.join("bin/git"), std::fs::Permissions::from_mode(0o755)).unwrap();
    let real = git::find_program(&[]).unwrap();
    let real_dir = real.parent().unwrap().to_path_buf();
    let path = std::env::join_paths([ws.join("bin"), real_dir.clone()]).unwrap();
    assert_eq!(git::find_in(&path, &[]).unwrap(), ws.join("bin/git"));
    assert_eq!(
        git::find_in(&path, std::slice::from_ref(&ws)).unwrap(),
        real_dir.join("git")
    );
    // Relative PATH entries are never used.
    let rel = std::env::join_paths(["bin".into(), real_dir.clone()]).unwrap();
    assert_eq!(git::find_in(&rel, &[]).unwrap(), real_dir.join("git"));
    let only = std::env::join_paths([ws.join("bin")]).unwrap();
    let e = git::find_in(&only, std::slice::from_ref(&ws)).unwrap_err();
    assert!(
        e.contains("tools can write") && e.contains("bin/git"),
        "{e}"
    );
    assert!(
        git::find_in(std::ffi::OsStr::new(""), &[])
            .unwrap_err()
            .contains("not installed")
    );
}

#[test]
fn a_session_starts_from_the_users_index_and_only_new_files_are_hashed() {
    let d = tempfile::tempdir().unwrap();
    let top = d.path().join("repo");
    std::fs::create_dir_all(top.join("pkg/src")).unwrap();
    for i in 0..20 {
        std::fs::write(top.join(format!("pkg/src/f{i}.txt")), format!("{i}\n")).unwrap();
    }
    std::fs::write(top.join("root.txt"), "r\n").unwrap();
    std::fs::write(top.join(".gitignore"), "*.log\n").unwrap();
    git(&top, &["init", "-q"]);
    git(&top, &["add", "."]);
    git(&top, &["commit", "-qm", "base"]);
    let user_index = std::fs::read(top.join(".git/index")).unwrap();
    let refs = git(&top, &["for-each-ref"]);
    std::fs::write(top.join("pkg/new.txt"), "new\n").unwrap();
    std::fs::write(
        top.join("pkg/noise.log"),
        "ignored by the repository's .gitignore\n",
    )
    .unwrap();
    let data = d.path().join("data");
    // The workspace is a subdirectory: only it is recorded.
    let sh = Shadow::open(&data, &top.join("pkg"), "s").unwrap();
    assert_eq!(sh.seed(), Seed::User);
    assert_eq!(sh.tracked(), 20);
    assert_eq!(sh.untracked(100).unwrap(), 1);
    let (t, _) = sh.snapshot().unwrap();
    let names = sh
        .git
        .run(&["ls-tree", "-r", "--name-only", &t], None)
        .unwrap();
    let names = String::from_utf8(names).unwrap();
    let names: Vec<&str> = names.lines().collect();
    assert_eq!(names.len(), 21, "{names:?}");
    assert!(names.contains(&"new.txt") && names.contains(&"src/f3.txt"));
    // A second session starts from the first's index.
    let sh2 = Shadow::open(&data, &top.join("pkg"), "s2").unwrap();
    assert_eq!(sh2.seed(), Seed::Sibling);
    assert_eq!(sh2.untracked(100).unwrap(), 0);
    assert_eq!(sh2.snapshot().unwrap().0, t);
    // The user's repository is as it was.
    assert_eq!(std::fs::read(top.join(".git/index")).unwrap(), user_index);
    assert_eq!(git(&top, &["for-each-ref"]), refs);
    assert!(git(&top, &["status", "--porcelain"]).contains("?? pkg/new.txt"));
    // Objects needed by a record are copied: the record survives the
    // user's objects going away.
    std::fs::write(top.join("pkg/src/f1.txt"), "changed\n").unwrap();
    let (t2, _) = sh.snapshot().unwrap();
    sh.localize(&[(&t, &t2)]).unwrap();
    std::fs::remove_dir_all(top.join(".git/objects")).unwrap();
    std::fs::create_dir_all(top.join(".git/objects")).unwrap();
    let ch = sh.changes(&t, &t2).unwrap();
    assert_eq!(ch.len(), 1);
    let raw = sh.raw(&t, &t2, false).unwrap();
    assert_eq!(sh.blob(raw[0].old_side().unwrap().0).unwrap(), b"1\n");
}

#[test]
fn too_many_files_are_counted_without_hashing() {
    let d = tempfile::tempdir().unwrap();
    let ws = d.path().join("ws");
    std::fs::create_dir_all(&ws).unwrap();
    for i in 0..50 {
        std::fs::write(ws.join(format!("f{i}")), "x").unwrap();
    }
    let sh = Shadow::open(&d.path().join("data"), &ws, "s").unwrap();
    assert_eq!(sh.seed(), Seed::Fresh);
    assert_eq!(sh.untracked(10).unwrap(), 10);
    assert_eq!(sh.untracked(1000).unwrap(), 50);
    assert!(!sh.has_index(), "counting hashes nothing");
}
