//! Checkpoints cannot be turned against the user (issue 37 item 1), through
//! the real binary: a sandboxed command plants filters, diff drivers,
//! textconv, fsmonitor, hooks and a pager in every git configuration it can
//! reach — workspace = HOME and workspace elsewhere — and nothing planted
//! ever runs while navi records, diffs and undoes turns; `/undo` and
//! `/rewind --files` refuse, naming the path, when a directory was swapped
//! for a link before or during the restore, and nothing outside changes.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::checkpoints::{git, home_with_tools};
use crate::plain_support::{Home, piped};
use crate::support::{FakeLlm, Reply};
use serde_json::json;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

fn run(home: &Home, ws: &Path, args: &[&str]) -> std::process::Output {
    let mut c = home.run_command(args);
    c.arg("--approve-all").current_dir(ws);
    c.stdin(Stdio::null()).output().unwrap()
}

fn plain(home: &Home, ws: &Path, input: &str, path: Option<&str>) -> String {
    let mut c = home.command("dumb", &[]);
    c.arg("-c").current_dir(ws);
    if let Some(p) = path {
        c.env("PATH", p);
    }
    let (_, out, err) = piped(c, input);
    format!("{out}{err}")
}

/// The shell a planting tool runs: a marking program, then filters,
/// drivers, textconv, fsmonitor, hooks, a pager and attributes in every
/// git configuration file under `home` and in `ws`.
fn plant_script(home: &Path, ws: &Path, mark: &Path) -> String {
    let evil = ws.join("evil.sh");
    let e = evil.display();
    let config = format!(
        "[filter \\\"evil\\\"]\\n\\tclean = {e} clean\\n\\tsmudge = {e} smudge\\n\\tprocess = {e} process\\n\\trequired = true\\n[diff \\\"evil\\\"]\\n\\ttextconv = {e} textconv\\n\\tcommand = {e} extdiff\\n[merge \\\"evil\\\"]\\n\\tdriver = {e} merge\\n[core]\\n\\tfsmonitor = {e} fsmonitor\\n\\thooksPath = {h}/hooks\\n\\tpager = {e} pager\\n\\tsshCommand = {e} ssh\\n[include]\\n\\tpath = {h}/more.inc\\n",
        h = ws.display()
    );
    let attrs = "* filter=evil diff=evil merge=evil\\n[attr]m filter=evil\\n*.txt m\\n";
    let mut s = format!(
        "printf '#!/bin/sh\\necho \"$0 $*\" >> {mark}\\ncat\\n' > {e}; chmod +x {e}; mkdir -p {w}/hooks {home}/.config/git {w}/sub; ",
        mark = mark.display(),
        w = ws.display(),
        home = home.display()
    );
    for h in [
        "pre-commit",
        "post-index-change",
        "reference-transaction",
        "post-checkout",
        "pre-auto-gc",
    ] {
        s.push_str(&format!(
            "printf '#!/bin/sh\\n{e} hook-{h}\\n' > {w}/hooks/{h}; chmod +x {w}/hooks/{h}; ",
            w = ws.display()
        ));
    }
    for f in [home.join(".gitconfig"), home.join(".config/git/config")] {
        s.push_str(&format!(
            "printf \"{config}\" > {} 2>/dev/null; ",
            f.display()
        ));
    }
    let included = config.split("[include]").next().unwrap_or_default();
    s.push_str(&format!(
        "printf \"{included}\" > {}; ",
        ws.join("more.inc").display()
    ));
    for f in [
        home.join(".config/git/attributes"),
        ws.join(".gitattributes"),
        ws.join("sub/.gitattributes"),
        ws.join(".git/info/attributes"),
    ] {
        s.push_str(&format!("printf '{attrs}' > {} 2>/dev/null; ", f.display()));
    }
    // A nested repository with its own configuration, created in the turn.
    s.push_str(&format!(
        "mkdir -p {w}/nested && cd {w}/nested && git init -q && echo n > n.txt && git add n.txt && git -c user.name=x -c user.email=x@x commit -qm n; printf \"{config}\" >> .git/config; printf '{attrs}' > .gitattributes; printf '{attrs}' > .git/info/attributes; cd {w}; echo planted",
        w = ws.display()
    ));
    s
}

/// `git add` with the user's own environment: the planted filter runs (so
/// the plant works, and navi's not running it means something).
fn plant_works(home: &Path, ws: &Path, mark: &Path) {
    let scratch = ws.join("scratch-check");
    std::fs::create_dir_all(&scratch).unwrap();
    std::fs::write(scratch.join("x.txt"), "x\n").unwrap();
    std::fs::write(scratch.join(".gitattributes"), "* filter=evil\n").unwrap();
    let ok = Command::new("git")
        .args(["init", "-q"])
        .current_dir(&scratch)
        .env("HOME", home)
        .output()
        .unwrap()
        .status
        .success();
    assert!(ok);
    let _ = Command::new("git")
        .args(["add", "x.txt"])
        .current_dir(&scratch)
        .env("HOME", home)
        .output()
        .unwrap();
    assert!(mark.exists(), "the planted filter works for a plain git");
    std::fs::remove_dir_all(&scratch).unwrap();
    std::fs::remove_file(mark).unwrap();
}

async fn planted_config_never_runs(ws_is_home: bool) {
    let fake = FakeLlm::start().await;
    let home = home_with_tools(&fake);
    let h = home.dir.path().to_path_buf();
    let ws = if ws_is_home {
        h.clone()
    } else {
        h.join("project")
    };
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::write(ws.join("a.txt"), "one\r\ntwo\n").unwrap();
    std::fs::write(ws.join("sub/b.txt"), "bee\n").unwrap();
    if !ws_is_home {
        git(&ws, &["init", "-q"]);
        git(&ws, &["add", "."]);
        git(&ws, &["commit", "-qm", "base"]);
        // The user's own configuration defines the driver; the tool only
        // assigns it in .gitattributes.
        let evil = ws.join("evil.sh");
        let user = format!(
            "[filter \"evil\"]\n\tclean = {e} userclean\n[diff \"evil\"]\n\ttextconv = {e} usertextconv\n",
            e = evil.display()
        );
        std::fs::write(h.join(".gitconfig"), &user).unwrap();
        let mut cfg = std::fs::read_to_string(ws.join(".git/config")).unwrap();
        cfg.push_str(&user);
        std::fs::write(ws.join(".git/config"), cfg).unwrap();
    }
    let outside = tempfile::tempdir().unwrap();
    let mark = outside.path().join("ran");
    std::fs::set_permissions(outside.path(), std::fs::Permissions::from_mode(0o777)).unwrap();
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": plant_script(&h, &ws, &mark)}),
    ));
    fake.push(Reply::text("planted"));
    let out = run(&home, &ws, &["plant things"]);
    assert!(out.status.success(), "{out:?}");
    assert!(
        std::fs::read_to_string(ws.join(".gitattributes")).is_ok_and(|t| t.contains("filter=evil")),
        "the tool planted .gitattributes"
    );
    if ws_is_home {
        assert!(
            std::fs::read_to_string(h.join(".gitconfig"))
                .unwrap()
                .contains("fsmonitor")
        );
    }
    // Turns that change files matched by the planted attributes, in the
    // nested repository too; then every checkpoint command.
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "write", "path": "a.txt", "content": "one\r\nchanged\n"}),
    ));
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": "echo more >> sub/b.txt; echo m >> nested/n.txt; echo new > sub/c.txt"}),
    ));
    fake.push(Reply::text("edited"));
    let out = run(&home, &ws, &["-c", "edit"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("turn 2 changed"), "{err}");
    assert!(err.contains("changed a.txt (+1 -1)"), "{err}");
    assert!(!mark.exists(), "a planted program ran while recording");
    plant_works(&h, &ws, &mark);
    let all = plain(&home, &ws, "/diff\n/undo\n/rewind 1 --files\n", None);
    assert!(all.contains("── changed a.txt"), "{all}");
    assert!(
        all.contains("-two") && all.contains("+changed"),
        "textconv not used: {all}"
    );
    assert!(all.contains("undid the file changes of turn 2"), "{all}");
    assert_eq!(
        std::fs::read(ws.join("a.txt")).unwrap(),
        b"one\r\ntwo\n",
        "byte for byte"
    );
    let out = Command::new(env!("CARGO_BIN_EXE_navi"))
        .args(["sessions", "diff", "1"])
        .env("NAVI_DATA_DIR", home.data())
        .env("NAVI_CONFIG_DIR", h.join("cfg"))
        .env("HOME", &h)
        .current_dir(&ws)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    assert!(
        !mark.exists(),
        "a planted program ran outside the sandbox: {}",
        std::fs::read_to_string(&mark).unwrap_or_default()
    );
    assert!(
        all.contains("files restored to how they were before that message"),
        "{all}"
    );
    assert!(
        !ws.join("evil.sh").exists(),
        "the planting turn was rewound"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn planted_git_configuration_never_runs_with_the_workspace_at_home() {
    planted_config_never_runs(true).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn planted_git_configuration_never_runs_with_the_workspace_elsewhere() {
    planted_config_never_runs(false).await;
}

/// A turn that changed `sub/f.txt` and added `sub/new.txt`; the outside
/// directory holds the same names with the contents the turn left.
async fn turn_then_outside() -> (FakeLlm, Home, PathBuf, tempfile::TempDir) {
    let fake = FakeLlm::start().await;
    let home = home_with_tools(&fake);
    let ws = home.dir.path().join("ws");
    std::fs::create_dir_all(ws.join("sub")).unwrap();
    std::fs::write(ws.join("sub/f.txt"), "original\n").unwrap();
    std::fs::write(ws.join("a.txt"), "a original\n").unwrap();
    fake.push(Reply::tool_call(
        "filesystem",
        json!({"action": "write", "path": "sub/f.txt", "content": "by the turn\n"}),
    ));
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": "echo made > sub/new.txt; echo a turn > a.txt"}),
    ));
    fake.push(Reply::text("done"));
    let out = run(&home, &ws, &["edit"]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("turn 1 changed 3 files"),
        "{out:?}"
    );
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("f.txt"), "by the turn\n").unwrap();
    std::fs::write(outside.path().join("new.txt"), "made\n").unwrap();
    (fake, home, ws, outside)
}

fn outside_intact(outside: &Path) {
    assert_eq!(
        std::fs::read_to_string(outside.join("f.txt")).unwrap(),
        "by the turn\n"
    );
    assert_eq!(
        std::fs::read_to_string(outside.join("new.txt")).unwrap(),
        "made\n"
    );
    assert_eq!(std::fs::read_dir(outside).unwrap().count(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_swapped_for_a_link_before_the_restore_stops_it() {
    let (_fake, home, ws, outside) = turn_then_outside().await;
    std::fs::rename(ws.join("sub"), ws.join("sub.real")).unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.join("sub")).unwrap();
    let all = plain(
        &home,
        &ws,
        "/undo\n/undo --force\n/rewind 1 --files\n/rewind 1 --files --force\n",
        None,
    );
    assert_eq!(
        all.matches("not restored: sub/f.txt: sub is a symbolic link")
            .count(),
        4,
        "{all}"
    );
    assert!(all.contains("sub/new.txt: sub is a symbolic link"), "{all}");
    assert!(all.contains("Nothing was changed"), "{all}");
    outside_intact(outside.path());
    // Nothing at all was restored (not even a.txt, outside the link).
    assert_eq!(
        std::fs::read_to_string(ws.join("a.txt")).unwrap(),
        "a turn\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("sub.real/f.txt")).unwrap(),
        "by the turn\n"
    );
    // The link gone again, the undo goes through.
    std::fs::remove_file(ws.join("sub")).unwrap();
    std::fs::rename(ws.join("sub.real"), ws.join("sub")).unwrap();
    let all = plain(&home, &ws, "/undo\n", None);
    assert!(all.contains("undid the file changes of turn 1"), "{all}");
    assert_eq!(
        std::fs::read_to_string(ws.join("sub/f.txt")).unwrap(),
        "original\n"
    );
    assert!(!ws.join("sub/new.txt").exists());
}

/// During the restore: a `git` first on PATH (outside the workspace, so
/// navi uses it) swaps the directory when navi fetches the first file's
/// content — between the checks and the writes of the later files.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_directory_swapped_for_a_link_during_the_restore_stops_that_file() {
    let (_fake, home, ws, outside) = turn_then_outside().await;
    let a_blob = {
        let o = Command::new("git")
            .args(["hash-object", "--stdin"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::Write;
        o.stdin
            .as_ref()
            .unwrap()
            .write_all(b"a original\n")
            .unwrap();
        let out = o.wait_with_output().unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let real = String::from_utf8(
        Command::new("sh")
            .args(["-c", "command -v git"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap()
    .trim()
    .to_string();
    let wrap = tempfile::tempdir().unwrap();
    let done = wrap.path().join("swapped");
    std::fs::write(
        wrap.path().join("git"),
        format!(
            "#!/bin/sh\nfor a in \"$@\"; do last=\"$a\"; done\ncase \" $* \" in *' cat-file '*) if [ \"$last\" = {a_blob} ] && [ ! -e {done} ]; then mv {ws}/sub {ws}/sub.real && ln -s {out} {ws}/sub && touch {done}; fi;; esac\nexec {real} \"$@\"\n",
            done = done.display(),
            ws = ws.display(),
            out = outside.path().display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(
        wrap.path().join("git"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    let path = format!(
        "{}:{}",
        wrap.path().display(),
        std::env::var("PATH").unwrap()
    );
    let all = plain(&home, &ws, "/undo\n", Some(&path));
    assert!(done.exists(), "the swap happened: {all}");
    assert!(all.contains("restored a.txt"), "{all}");
    assert!(
        all.contains("could not restore: ") && all.contains("sub/f.txt: sub is a symbolic link"),
        "{all}"
    );
    assert!(all.contains("sub/new.txt: sub is a symbolic link"), "{all}");
    outside_intact(outside.path());
    assert_eq!(
        std::fs::read_to_string(ws.join("a.txt")).unwrap(),
        "a original\n"
    );
    assert_eq!(
        std::fs::read_to_string(ws.join("sub.real/f.txt")).unwrap(),
        "by the turn\n"
    );
}

/// The same refusals as an ordinary user (the CI runs as root: the test
/// drops to `nobody`), where outside files are only the user's own.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_swapped_directory_stops_the_restore_as_an_ordinary_user() {
    if !rustix::process::geteuid().is_root() {
        return;
    }
    let (_fake, home, ws, outside) = turn_then_outside().await;
    // Everything the run needs, handed to nobody.
    let chown = Command::new("chown")
        .args(["-R", "65534:65534"])
        .arg(home.dir.path())
        .arg(outside.path())
        .status()
        .unwrap();
    assert!(chown.success());
    std::fs::rename(ws.join("sub"), ws.join("sub.real")).unwrap();
    std::os::unix::fs::symlink(outside.path(), ws.join("sub")).unwrap();
    let mut c = Command::new("setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(env!("CARGO_BIN_EXE_navi"))
        .args(["--plain", "--profile", "tester", "-c"]);
    let c = home.setup_for_test(c, "dumb");
    let mut c = c;
    c.current_dir(&ws);
    let (_, out, err) = piped(c, "/undo --force\n/rewind 1 --files --force\n");
    let all = format!("{out}{err}");
    assert_eq!(
        all.matches("not restored: sub/f.txt: sub is a symbolic link")
            .count(),
        2,
        "{all}"
    );
    outside_intact(outside.path());
}
