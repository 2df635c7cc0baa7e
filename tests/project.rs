//! Issue 34 items 1-3 through the binary: AGENTS.md instructions in the
//! system prompt (order, cap, `navi context`, a byte-stable prefix across
//! turns), sessions that belong to a project (`navi run -c` in two
//! repositories, `navi sessions list` and `--all`, the stored columns),
//! and the user's own slash commands in plain mode.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::cli_support::{Env, Out};
use crate::plain_support::{Home, Pty, contents};
use crate::support::{FakeLlm, Reply};
use serde_json::Value;
use std::path::Path;

/// A git repository (a `.git` directory is all navi looks for) at `dir`.
fn repo(dir: &Path) {
    std::fs::create_dir_all(dir.join(".git")).unwrap();
}

async fn run_in(env: &Env, fake: &FakeLlm, dir: &Path, args: &[&str]) -> Out {
    let o = env
        .cmd(fake, "ollama")
        .current_dir(dir)
        .args(args)
        .output()
        .await
        .unwrap();
    Out::from(o)
}

fn system(req: &Value) -> String {
    req["messages"][0]["content"].as_str().unwrap().to_string()
}

#[tokio::test]
async fn agents_md_from_the_root_down_in_order_capped_listed_and_cache_stable() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    let root = env.path("work/app");
    let sub = root.join("pkg/sub");
    std::fs::create_dir_all(&sub).unwrap();
    repo(&root);
    std::fs::write(env.path("cfg/AGENTS.md"), "GLOBAL-RULE: be brief\n").unwrap();
    std::fs::write(root.join("AGENTS.md"), "ROOT-RULE: use tabs\n").unwrap();
    // A directory between without one, and one above the repository that
    // must not be read.
    std::fs::write(env.path("work/AGENTS.md"), "OUTSIDE-RULE\n").unwrap();
    std::fs::write(sub.join("AGENTS.md"), "SUB-RULE: tests first\n").unwrap();
    fake.push(Reply::text("first answer"));
    fake.push(Reply::text("second answer"));
    let o = run_in(&env, &fake, &sub, &["run", "-p", "tester", "first"]).await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = run_in(&env, &fake, &sub, &["run", "-p", "tester", "-c", "second"]).await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    let reqs = fake.chat_requests();
    assert_eq!(reqs.len(), 2);
    let sys = system(&reqs[0]);
    let at = |s: &str| sys.find(s).unwrap_or_else(|| panic!("{s} not in {sys}"));
    assert!(at("TESTER-PROMPT") < at("GLOBAL-RULE"));
    assert!(at("GLOBAL-RULE") < at("ROOT-RULE"), "{sys}");
    assert!(at("ROOT-RULE") < at("SUB-RULE"), "{sys}");
    assert!(!sys.contains("OUTSIDE-RULE"), "{sys}");
    // The second turn's request starts with the first one's messages, byte
    // for byte: the server's prompt cache keeps the whole prefix.
    let first = reqs[0]["messages"].as_array().unwrap();
    let second = reqs[1]["messages"].as_array().unwrap();
    assert!(second.len() > first.len());
    assert_eq!(&second[..first.len()], &first[..]);

    // `navi context` lists the files and their cost.
    let o = run_in(&env, &fake, &sub, &["context", "--profile", "tester"]).await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    for f in ["cfg/AGENTS.md", "app/AGENTS.md", "pkg/sub/AGENTS.md"] {
        assert!(o.stdout.contains(f), "{f} in {}", o.stdout);
    }
    let o = run_in(&env, &fake, &sub, &["context", "--json"]).await;
    let v: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(v[0]["instructions"]["files"].as_array().unwrap().len(), 3);

    // A cap: the closest file keeps its bytes, the farthest are cut or left out.
    std::fs::write(
        env.path("cfg/config.toml"),
        "[project]\ninstructions_max_bytes = 30\n",
    )
    .unwrap();
    fake.push(Reply::text("third answer"));
    let o = run_in(&env, &fake, &sub, &["run", "-p", "tester", "third"]).await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    let sys = system(&fake.chat_requests()[2]);
    assert!(sys.contains("SUB-RULE: tests first"), "{sys}");
    assert!(!sys.contains("GLOBAL-RULE"), "{sys}");
    assert!(sys.contains("[cut"), "{sys}");
    let o = run_in(&env, &fake, &sub, &["context", "--profile", "tester"]).await;
    assert!(o.stdout.contains("left out"), "{}", o.stdout);
    assert!(o.stdout.contains("cut to"), "{}", o.stdout);
}

#[tokio::test]
async fn each_repository_continues_its_own_session() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    let (a, b) = (env.path("a"), env.path("b"));
    repo(&a);
    repo(&b);
    std::fs::create_dir_all(a.join("deep")).unwrap();
    for t in ["a one", "b one", "a two", "b two"] {
        fake.push(Reply::text(format!("answer to {t}")));
    }
    let go = |dir: std::path::PathBuf, args: Vec<&'static str>| {
        let (env, fake) = (&env, &fake);
        async move { run_in(env, fake, &dir, &args).await }
    };
    assert_eq!(
        go(a.clone(), vec!["run", "-p", "tester", "A-ONE"])
            .await
            .code,
        0
    );
    assert_eq!(
        go(b.clone(), vec!["run", "-p", "tester", "B-ONE"])
            .await
            .code,
        0
    );
    // From a subdirectory of a: still a's project.
    let o = go(a.join("deep"), vec!["run", "-p", "tester", "-c", "A-TWO"]).await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    let o = go(b.clone(), vec!["run", "-p", "tester", "-c", "B-TWO"]).await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    let reqs = fake.chat_requests();
    let a2 = contents(&reqs[2]).join("\n");
    assert!(a2.contains("A-ONE") && !a2.contains("B-ONE"), "{a2}");
    let b2 = contents(&reqs[3]).join("\n");
    assert!(b2.contains("B-ONE") && !b2.contains("A-ONE"), "{b2}");

    // The rows: one session per project, with its directory.
    let db = rusqlite::Connection::open(env.path("data/navi.db")).unwrap();
    let mut st = db
        .prepare("SELECT project, cwd, title FROM sessions ORDER BY created_at")
        .unwrap();
    let rows: Vec<(String, String, String)> = st
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert!(
        rows[0].0.ends_with("/a") && rows[0].1.ends_with("/a"),
        "{rows:?}"
    );
    assert!(rows[1].0.ends_with("/b"), "{rows:?}");

    // Lists: this project's by default, every one with --all.
    let o = go(a.clone(), vec!["sessions", "list"]).await;
    assert!(
        o.stdout.contains("A-ONE") && !o.stdout.contains("B-ONE"),
        "{}",
        o.stdout
    );
    assert!(
        o.stdout.contains("ago") || o.stdout.contains("now"),
        "{}",
        o.stdout
    );
    let o = go(a.clone(), vec!["sessions", "list", "--all"]).await;
    assert!(
        o.stdout.contains("A-ONE") && o.stdout.contains("B-ONE"),
        "{}",
        o.stdout
    );
    assert!(o.stdout.contains("(~/b)"), "{}", o.stdout);
    let o = go(b.clone(), vec!["sessions", "list", "--json"]).await;
    let list: Value = serde_json::from_str(&o.stdout).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 1);
    assert!(list[0]["project"].as_str().unwrap().ends_with("/b"));
    assert!(list[0]["cwd"].as_str().unwrap().ends_with("/b"));
    // A number counts in this project's list.
    let o = go(b.clone(), vec!["sessions", "show", "1"]).await;
    assert!(
        o.stdout.contains("B-ONE") && !o.stdout.contains("A-ONE"),
        "{}",
        o.stdout
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_custom_command_with_arguments_in_plain_mode() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("reviewed it"));
    fake.push(Reply::text("said hello"));
    let home = Home::new(&fake.ollama_url());
    crate::project_modes::with_filesystem(&home);
    let proj = home.dir.path();
    repo(proj);
    std::fs::create_dir_all(proj.join(".navi/commands")).unwrap();
    std::fs::write(
        proj.join(".navi/commands/review.md"),
        "---\ndescription: review a file for bugs\nargument-hint: FILE FOCUS\n---\nReview $1 looking for $2. All: $ARGUMENTS\n",
    )
    .unwrap();
    std::fs::create_dir_all(proj.join("cfg/commands")).unwrap();
    std::fs::write(proj.join("cfg/commands/hello.md"), "Say hello to the team.").unwrap();
    let mut pty = Pty::spawn(home.command("dumb", &[("NO_COLOR", "1")]));
    pty.wait_prompt();
    pty.send("/help\r");
    // Sorted by name: the global /hello, then the project's /review.
    pty.wait_for("/hello");
    pty.wait_for("/review FILE FOCUS");
    pty.wait_for("review a file for bugs");
    pty.send("/review src/x.py \"off by one\"\r");
    pty.wait_for("reviewed it");
    pty.wait_prompt();
    pty.send("/hello extra words\r");
    pty.wait_for("said hello");
    pty.wait_prompt();
    pty.send("/quit\r");
    assert_eq!(pty.exit_code(), 0, "{}", pty.text());
    let reqs = fake.chat_requests();
    let first = contents(&reqs[0]).join("\n");
    assert!(
        first.contains("Review src/x.py looking for off by one. All: src/x.py \"off by one\""),
        "{first}"
    );
    let second = contents(&reqs[1]).join("\n");
    assert!(
        second.contains("Say hello to the team.\n\nextra words"),
        "{second}"
    );
}

#[tokio::test]
async fn a_session_from_before_projects_is_continued_and_claimed() {
    let env = Env::new();
    let fake = FakeLlm::start().await;
    let repo_dir = env.path("r");
    repo(&repo_dir);
    std::fs::create_dir_all(env.path("data")).unwrap();
    // A session with an answer, then its row as an older navi left it: no
    // cwd, no project.
    fake.push(Reply::text("first answer"));
    let o = run_in(&env, &fake, &repo_dir, &["run", "-p", "tester", "hello"]).await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    let old: String = {
        let db = rusqlite::Connection::open(env.path("data/navi.db")).unwrap();
        db.execute("UPDATE sessions SET cwd = NULL, project = NULL", [])
            .unwrap();
        db.query_row("SELECT id FROM sessions", [], |r| r.get(0))
            .unwrap()
    };
    fake.push(Reply::text("continued"));
    let o = run_in(
        &env,
        &fake,
        &repo_dir,
        &["run", "-p", "tester", "-c", "go on"],
    )
    .await;
    assert_eq!(o.code, 0, "{}", o.stderr);
    let db = rusqlite::Connection::open(env.path("data/navi.db")).unwrap();
    let (n, project): (i64, String) = db
        .query_row(
            "SELECT (SELECT COUNT(*) FROM sessions), project FROM sessions WHERE id = ?1",
            [&old],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!(n, 1, "no second session");
    assert!(project.ends_with("/r"), "{project}");
}
