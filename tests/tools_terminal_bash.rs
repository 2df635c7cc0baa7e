//! Issue 37's allow-list classes, with `sh` being bash as well as dash:
//! brace expansion, computed words and arithmetic subscripts in the option
//! places of builtins (`printf -v`, `test -v`), `exec -a`/`exec -l`,
//! history expansion, `$'…'` as a command name. Each refused text is shown
//! to really run an off-list program under bash (so the case is not
//! imaginary); ordinary uses of the same builtins pass and run nothing off
//! the list in either shell; through `navi run` with `sh` linked to bash the
//! tool refuses them before anything starts.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::mcp_support::env::{Env, tool_results};
use crate::support::{FakeLlm, Reply};
use crate::tools_terminal_allowlist::allowlist_fuzz::{ALLOWED, run_one, shims, which};
use navi::tools::shell_check::{AllowList, check};
use serde_json::json;

/// (text that runs `evil` under bash, a fragment of the refusal)
const BASH_RUNS_EVIL: &[(&str, &str)] = &[
    ("x='b[$(evil)]'; printf {-v,'a[x]'} 1", "brace expansion"),
    (
        "x='b[$(evil)]'; X=-v; printf $X 'a[x]' 1",
        "option may stand",
    ),
    (
        "x='b[$(evil)]'; X=-v; printf \"$X\" 'a[x]' 1",
        "option may stand",
    ),
    ("x='b[$(evil)]'; printf *  1", "option may stand"),
    ("x='b[$(evil)]'; X=-v; test \"$X\" 'a[x]'", "-v NAME"),
    ("x='b[$(evil)]'; X=-v; [ \"$X\" 'a[x]' ]", "-v NAME"),
    ("x='b[$(evil)]'; X='-v a[x]'; test $X", "quote it"),
    ("x='b[$(evil)]'; test {-v,'a[x]'}", "brace expansion"),
    ("set -o history -H\n: evil\n!:1", "history expansion"),
    ("set -Ho history\n: evil\n!:1", "history expansion"),
];

/// Refused for the same reasons, whether or not this bash runs them.
const ALSO_REFUSED: &[(&str, &str)] = &[
    ("exec -a -sh sh -c ls", "options of exec"),
    ("exec -l sh -c ls", "options of exec"),
    ("exec -- ls", "options of exec"),
    ("exec -c ls", "options of exec"),
    ("exec $X ls", "must be literal"),
    ("wait $X 'a[x]'", "option may stand"),
    ("read $X 'a[x]'", "option may stand"),
    ("read -p $p x", "quote it"),
    ("X=-k; set $X; ls v=1", "computed word before --"),
    ("set -o histexpand", "history expansion"),
    ("sh -H -c ls", "history expansion"),
    ("sh -o history -c ls", "not allowed"),
    ("shopt -s extglob", "never allowed"),
    ("$'ls' -l", "comes from an expansion"),
    ("env $'ls'", "must be literal"),
];

/// Ordinary uses that pass and run only listed programs in both shells.
const ORDINARY: &[&str] = &[
    "x=%s; printf -- \"$x\" a",
    "printf '%s\\n' \"$HOME\" x",
    "ls & wait $!",
    "a=1; b=1; [ \"$a\" = \"$b\" ] && ls",
    "[ $# -eq 0 ] && ls",
    "x=; test -n \"$x\" || ls",
    "test -z \"$x\" -a -n x && ls",
    "exec ls",
    "read -r -p 'q? ' line < /dev/null || ls",
    "set -e -- a b; ls",
];

fn list() -> AllowList {
    AllowList::new(&ALLOWED.iter().map(|s| s.to_string()).collect::<Vec<_>>())
}

#[test]
fn bash_classes_are_refused_and_each_really_runs_code_under_bash() {
    let tmp = tempfile::tempdir().unwrap();
    shims(tmp.path());
    let bash = which("bash").expect("bash");
    let list = list();
    let mut failures = Vec::new();
    for (i, (text, want)) in BASH_RUNS_EVIL.iter().enumerate() {
        // `printf *` needs files named like options: the model can make those.
        let work = tmp.path().join(format!("w{i}-bash"));
        std::fs::create_dir_all(&work).unwrap();
        std::fs::write(work.join("-v"), "").unwrap();
        std::fs::write(work.join("a[x]"), "").unwrap();
        match run_one(&bash, text, tmp.path(), i) {
            Some(why) if why.contains("off-list") => {}
            other => failures.push(format!("{text:?} did not run evil under bash: {other:?}")),
        }
        match check(text, &list) {
            Ok(found) => failures.push(format!("ALLOWED {text:?} ({found:?})")),
            Err(e) if !e.contains(want) => failures.push(format!("{text:?}: {e:?} lacks {want:?}")),
            Err(_) => {}
        }
    }
    for (text, want) in ALSO_REFUSED {
        match check(text, &list) {
            Ok(found) => failures.push(format!("ALLOWED {text:?} ({found:?})")),
            Err(e) if !e.contains(want) => failures.push(format!("{text:?}: {e:?} lacks {want:?}")),
            Err(_) => {}
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn ordinary_uses_pass_and_run_only_listed_programs_in_bash_and_dash() {
    let tmp = tempfile::tempdir().unwrap();
    shims(tmp.path());
    let list = list();
    let shells: Vec<String> = ["bash", "dash"].into_iter().filter_map(which).collect();
    assert_eq!(shells.len(), 2, "both shells are needed: {shells:?}");
    let mut failures = Vec::new();
    for (i, text) in ORDINARY.iter().enumerate() {
        if let Err(e) = check(text, &list) {
            failures.push(format!("REFUSED {text:?}: {e}"));
        }
        for sh in &shells {
            if let Some(why) = run_one(sh, text, tmp.path(), 100 + i) {
                failures.push(format!("{text:?} under {sh}: {why}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// `exec -l` / `exec -a -NAME` start a login shell under bash, which runs
/// `/etc/profile` and `~/.profile`: the class the allow-list closes by
/// refusing exec options.
#[test]
fn exec_options_start_a_login_shell_under_bash() {
    let tmp = tempfile::tempdir().unwrap();
    let log = shims(tmp.path());
    let dash = which("dash").expect("dash");
    let bash = which("bash").expect("bash");
    std::fs::write(tmp.path().join(".profile"), "evil\n").unwrap();
    for text in [
        format!("exec -l {dash} -c :"),
        format!("exec -a -sh {dash} -c :"),
    ] {
        let _ = std::fs::remove_file(&log);
        std::process::Command::new(&bash)
            .args(["-c", &text])
            .env_clear()
            .env("PATH", tmp.path().join("bin"))
            .env("HOME", tmp.path())
            .current_dir(tmp.path())
            .output()
            .unwrap();
        let logged = std::fs::read_to_string(&log).unwrap_or_default();
        // The login shell's start-up files (/etc/profile, ~/.profile) ran
        // programs that are not on the list.
        assert!(logged.contains("BAD "), "{text}: {logged:?}");
    }
}

/// Through `navi run`, with `sh` on PATH being bash: the tool refuses the
/// classes before anything starts, and ordinary commands run under bash.
#[tokio::test]
async fn the_terminal_tool_refuses_them_when_sh_is_bash() {
    let env = Env::new(
        "[security]\nterminal_allowed_commands = [\"ls\", \"touch\", \"sh\"]\n",
        &["terminal"],
    );
    let work = env.path("work");
    std::fs::create_dir_all(&work).unwrap();
    let bin = env.path("shbin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(which("bash").unwrap(), bin.join("sh")).unwrap();
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let fake = FakeLlm::start().await;
    let refused = [
        "x='b[$(touch MARK1)]'; printf {-v,'a[x]'} 1",
        "x='b[$(touch MARK2)]'; X=-v; test \"$X\" 'a[x]'",
        "exec -a -sh sh -c 'touch MARK3'",
        "set -o history -H\n: touch MARK4\n!:1-2",
    ];
    for cmd in refused {
        fake.push(Reply::tool_call("terminal", json!({ "command": cmd })));
    }
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": "printf -- '%s' \"bash=${BASH_VERSION:+yes}\""}),
    ));
    fake.push(Reply::text("done"));
    let out = env
        .cmd(Some(&fake))
        .current_dir(&work)
        .env("PATH", path)
        .args(["run", "--profile", "tester", "--approve-all", "go"])
        .output()
        .await
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let last = tool_results(&fake, refused.len() + 1);
    for (i, r) in last.iter().take(refused.len()).enumerate() {
        assert!(r.contains("refused:"), "{}: {r}", refused[i]);
    }
    assert!(last[refused.len()].contains("bash=yes"), "{last:?}");
    for m in ["MARK1", "MARK2", "MARK3", "MARK4"] {
        assert!(!work.join(m).exists(), "{m} was made");
    }
}
