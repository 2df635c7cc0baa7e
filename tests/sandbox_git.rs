//! Issue 37 item 3 through the real binary, as root and as an ordinary
//! user: `core.fsmonitor` and hooks planted in a submodule's git dir, in a
//! nested repository, a worktree or through a rewritten `.git` file are
//! refused; a repository created during the turn (a `git init`, a bare one
//! named by a new `.git` file, a new one in the place of a moved one) is
//! neutralised after the call; and the user's own `git status` / `git commit` afterwards, outside
//! any sandbox, runs nothing the model planted.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::mcp_support::env::{Env, tool_results};
use crate::sandbox_support::{NOBODY, User, open_up_for};
use crate::support::{FakeLlm, Reply};
use serde_json::json;
use std::path::Path;
use std::process::Command;

const SYSTEM_PATH: &str = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

/// `git ARGS` in `dir` as `user`, with a clean environment.
fn git(user: User, home: &Path, dir: &Path, args: &[&str]) -> std::process::Output {
    let mut c = if user == User::Nobody {
        let mut c = Command::new("setpriv");
        c.args([
            &format!("--reuid={NOBODY}"),
            &format!("--regid={NOBODY}"),
            "--clear-groups",
            "git",
        ]);
        c
    } else {
        Command::new("git")
    };
    c.args([
        "-c",
        "user.name=t",
        "-c",
        "user.email=t@t",
        "-c",
        "protocol.file.allow=always",
    ])
    .args(args)
    .current_dir(dir)
    .env_clear()
    .env("PATH", SYSTEM_PATH)
    .env("HOME", home)
    .env("GIT_CONFIG_NOSYSTEM", "1");
    c.output().unwrap()
}

fn ok(o: std::process::Output) -> String {
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    String::from_utf8_lossy(&o.stdout).into_owned()
}

/// A workspace repository with a submodule, a worktree and a nested repo.
fn workspace(env: &Env) -> std::path::PathBuf {
    let home = env.path("");
    let work = env.path("work");
    let src = env.path("subsrc");
    for d in [&work, &src] {
        std::fs::create_dir_all(d).unwrap();
        ok(git(User::Root, &home, d, &["init", "-q"]));
        std::fs::write(d.join("f"), "f").unwrap();
        ok(git(User::Root, &home, d, &["add", "f"]));
        ok(git(User::Root, &home, d, &["commit", "-qm", "first"]));
    }
    ok(git(
        User::Root,
        &home,
        &work,
        &["submodule", "-q", "add", "../subsrc", "sub"],
    ));
    ok(git(
        User::Root,
        &home,
        &work,
        &["worktree", "add", "-q", "wt"],
    ));
    let inner = work.join("nested/deep/inner");
    std::fs::create_dir_all(&inner).unwrap();
    ok(git(User::Root, &home, &inner, &["init", "-q"]));
    work
}

async fn plant_and_check(user: User) {
    let env = Env::new("", &["terminal"]);
    let work = workspace(&env);
    let out = env.path("pwned");
    std::fs::create_dir_all(&out).unwrap();
    if user == User::Nobody {
        open_up_for(&env, &[&env.path("")]);
    }
    let o = out.display();
    let hook = |name: &str| format!("printf '#!/bin/sh\\ntouch {o}/%s\\n' {name}");
    let refused = [
        format!("git -C sub config core.fsmonitor 'touch {o}/sub-fsmonitor'"),
        format!("echo '[core]\n\tfsmonitor = touch {o}/inner' >> nested/deep/inner/.git/config"),
        format!(
            "{} > nested/deep/inner/.git/hooks/pre-commit",
            hook("inner-hook")
        ),
        format!("git -C wt config core.fsmonitor 'touch {o}/wt'"),
        "echo 'gitdir: ../evil' > sub/.git".to_string(),
        "mv .git/config .git/config.old".to_string(),
    ];
    let made = format!(
        "git init -q newrepo && git -C newrepo config core.fsmonitor 'touch {o}/new-fsmonitor' && \
         git -C newrepo config alias.st '!touch {o}/new-alias' && \
         {} > newrepo/.git/hooks/pre-commit && chmod +x newrepo/.git/hooks/pre-commit && \
         git init -q --bare store.git && git -C store.git config core.fsmonitor 'touch {o}/bare' && \
         mkdir other && echo 'gitdir: ../store.git' > other/.git && \
         mkdir ptr && echo 'gitdir: ../.git/modules' > ptr/.git && \
         mv nested nested-old && git init -q nested/deep/inner && \
         git -C nested/deep/inner config core.fsmonitor 'touch {o}/moved' && echo made",
        hook("new-hook")
    );
    // The user's own git dirs stay as they are, even when a new `.git`
    // file points into them.
    let theirs = work.join(".git/modules/sub/config");
    let before = std::fs::read(&theirs).unwrap();
    let fake = FakeLlm::start().await;
    for cmd in refused.iter().chain(std::iter::once(&made)) {
        fake.push(Reply::tool_call("terminal", json!({ "command": cmd })));
    }
    fake.push(Reply::text("done"));
    let navi = env!("CARGO_BIN_EXE_navi");
    let mut c = if user == User::Nobody {
        let mut c = tokio::process::Command::new("setpriv");
        c.args([
            &format!("--reuid={NOBODY}"),
            &format!("--regid={NOBODY}"),
            "--clear-groups",
            navi,
        ]);
        c
    } else {
        tokio::process::Command::new(navi)
    };
    let run = c
        .args([
            "--backend",
            "ollama",
            "run",
            "--profile",
            "tester",
            "--approve-all",
            "go",
        ])
        .current_dir(&work)
        .env_clear()
        .env("PATH", SYSTEM_PATH)
        .env("HOME", env.path(""))
        .env("NAVI_DATA_DIR", env.path("data"))
        .env("NAVI_CONFIG_DIR", env.path("cfg"))
        .env("OLLAMA_HOST", fake.ollama_url())
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert_eq!(
        run.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&run.stderr)
    );
    let results = tool_results(&fake, refused.len() + 1);
    for (cmd, r) in refused.iter().zip(&results) {
        assert!(
            r.contains("exit code: ") && !r.contains("exit code: 0"),
            "{user:?}: `{cmd}` was not refused: {r}"
        );
    }
    let last = results.last().unwrap();
    assert!(last.contains("made"), "{last}");
    assert!(last.contains("neutralised"), "{last}");
    assert!(work.join("newrepo/.git/config.navi-unsafe").exists());
    assert_eq!(
        std::fs::read(&theirs).unwrap(),
        before,
        "the submodule's config changed"
    );
    assert!(
        work.join("newrepo/.git/hooks.navi-unsafe/pre-commit")
            .exists()
    );
    assert!(
        work.join("nested/deep/inner/.git").is_dir(),
        "the parent was not moved"
    );
    // The user's own git, outside any sandbox, in every repository.
    let home = env.path("");
    for dir in [
        "",
        "sub",
        "wt",
        "nested/deep/inner",
        "nested-old/deep/inner",
        "newrepo",
        "other",
    ] {
        let d = work.join(dir);
        git(user, &home, &d, &["status"]);
        git(user, &home, &d, &["st"]);
        git(
            user,
            &home,
            &d,
            &["commit", "-q", "--allow-empty", "-m", "x"],
        );
    }
    let planted: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(planted.is_empty(), "{user:?}: ran {planted:?}");
}

#[tokio::test]
async fn planted_git_commands_never_run_outside_as_root() {
    plant_and_check(User::Root).await;
}

#[tokio::test]
async fn planted_git_commands_never_run_outside_as_an_ordinary_user() {
    plant_and_check(User::Nobody).await;
}
