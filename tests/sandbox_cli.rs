//! The sandbox through the real `navi` binary: bad settings are exit 2
//! naming the key, a kernel without Landlock (simulated with
//! `NAVI_SANDBOX_FAKE_ABI=0`) gives one warning and tools still run, or
//! none run with `--sandbox required`; stdio MCP servers get their own
//! policy and a scrubbed environment.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::mcp_support;
use crate::support;

use mcp_support::env::{Env, test_server_entry, tool_results};
use serde_json::json;
use support::{FakeLlm, Reply};

/// `navi <args>` run in `cwd` with extra environment.
async fn navi_in(
    env: &Env,
    fake: Option<&FakeLlm>,
    cwd: &std::path::Path,
    vars: &[(&str, &str)],
    args: &[&str],
) -> (i32, String, String) {
    let mut c = env.cmd(fake);
    c.current_dir(cwd).args(args);
    for (k, v) in vars {
        c.env(k, v);
    }
    let out = c.output().await.unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn work(env: &Env) -> std::path::PathBuf {
    let w = env.path("work");
    std::fs::create_dir_all(&w).unwrap();
    w
}

#[tokio::test]
async fn bad_sandbox_settings_are_usage_errors_naming_the_key() {
    let env = Env::new("", &["terminal"]);
    let w = work(&env);
    let (code, _, err) = navi_in(
        &env,
        None,
        &w,
        &[],
        &["--sandbox", "bogus", "sessions", "list"],
    )
    .await;
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("--sandbox") && err.contains("bogus") && err.contains("workspace-write"),
        "{err}"
    );
    for (toml, key) in [
        ("[sandbox]\nmode = \"wide-open\"\n", "sandbox.mode"),
        (
            "[sandbox]\nwritable_roots = [\"/no/such/dir/navi\"]\n",
            "sandbox.writable_roots",
        ),
        (
            "[sandbox]\nwritable_roots = [\"relative/dir\"]\n",
            "sandbox.writable_roots",
        ),
        (
            "[sandbox]\nwritable_roots = [\"/\"]\n",
            "sandbox.writable_roots",
        ),
        (
            "[mcp_servers.m]\ncommand = \"x\"\nwritable = [\"/no/such/dir/navi\"]\n",
            "mcp_servers.m.writable",
        ),
    ] {
        std::fs::write(env.path("cfg/config.toml"), toml).unwrap();
        let (code, _, err) = navi_in(&env, None, &w, &[], &["sessions", "list"]).await;
        assert_eq!(code, 2, "{toml}: {err}");
        assert!(err.contains(key), "{toml}: {err}");
    }
    // A workspace that is / (navi started there) is refused before any tool.
    std::fs::write(env.path("cfg/config.toml"), "").unwrap();
    let (code, _, err) = navi_in(&env, None, std::path::Path::new("/"), &[], &["run", "hi"]).await;
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("sandbox.workspace") && err.contains("full-access"),
        "{err}"
    );
    let (code, out, _) = navi_in(
        &env,
        None,
        std::path::Path::new("/"),
        &[],
        &["config", "check"],
    )
    .await;
    assert_eq!(code, 2);
    assert!(out.contains("sandbox: error:"), "{out}");
}

#[tokio::test]
async fn without_landlock_one_warning_and_tools_still_run() {
    let env = Env::new("", &["terminal"]);
    let w = work(&env);
    let fake_abi = [("NAVI_SANDBOX_FAKE_ABI", "0")];
    let (code, out, _) = navi_in(&env, None, &w, &fake_abi, &["config", "check"]).await;
    assert_eq!(code, 0, "{out}");
    assert!(
        out.contains("sandbox: warning: this kernel has no Landlock"),
        "{out}"
    );
    let (_, out, _) = navi_in(&env, None, &w, &[], &["config", "check"]).await;
    assert!(out.contains("sandbox: ok: workspace-write"), "{out}");

    let outside = env.path("outside.txt");
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": format!("echo hi > {}", outside.display())}),
    ));
    fake.push(Reply::text("done"));
    let args = ["run", "--profile", "tester", "--approve-all", "go"];
    let (code, _, err) = navi_in(&env, Some(&fake), &w, &fake_abi, &args).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(err.matches("no Landlock").count(), 1, "one warning: {err}");
    assert!(
        outside.exists(),
        "the tool ran (unsandboxed): {:?}",
        tool_results(&fake, 1)
    );

    // Required: the tool refuses, nothing is written.
    std::fs::remove_file(&outside).unwrap();
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": format!("echo hi > {}", outside.display())}),
    ));
    fake.push(Reply::text("done"));
    let args = [
        "--sandbox",
        "required",
        "run",
        "--profile",
        "tester",
        "--approve-all",
        "go",
    ];
    let (code, _, err) = navi_in(&env, Some(&fake), &w, &fake_abi, &args).await;
    assert_eq!(code, 0, "{err}");
    assert!(err.contains("sandbox is required"), "{err}");
    let r = tool_results(&fake, 1);
    assert!(r[0].contains("the sandbox is required"), "{r:?}");
    assert!(!outside.exists());
}

#[tokio::test]
async fn an_escalation_is_asked_even_in_auto_mode() {
    let env = Env::new("[security]\napproval = \"auto\"\n", &["terminal"]);
    let w = work(&env);
    let outside = env.path("esc.txt");
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": format!("echo hi > {}", outside.display()), "sandbox": "off"}),
    ));
    fake.push(Reply::text("done"));
    let args = ["run", "--profile", "tester", "--approve-all", "go"];
    let (code, _, err) = navi_in(&env, Some(&fake), &w, &[], &args).await;
    assert_eq!(code, 0, "{err}");
    let r = tool_results(&fake, 1);
    assert!(
        r[0].contains("denied") && r[0].contains("OUTSIDE THE SANDBOX"),
        "{r:?}"
    );
    assert!(!outside.exists());
}

#[tokio::test]
async fn an_mcp_server_writes_only_to_its_list_and_gets_no_secrets() {
    let env = Env::new("", &["t__*"]);
    let w = work(&env);
    let allowed = env.path("mcp-out");
    std::fs::create_dir_all(&allowed).unwrap();
    let extra = format!(
        "writable = [{:?}]\nenv_passthrough = [\"ALLOWED_TOKEN\"]\n",
        allowed.display().to_string()
    );
    std::fs::write(
        env.path("cfg/config.toml"),
        test_server_entry("t", "normal", &extra),
    )
    .unwrap();
    let fake = FakeLlm::start().await;
    let outside = env.path("outside.txt");
    let inside = allowed.join("ok.txt");
    fake.push(Reply::tool_call(
        "t__write",
        json!({"path": outside.display().to_string(), "text": "x"}),
    ));
    fake.push(Reply::tool_call(
        "t__write",
        json!({"path": inside.display().to_string(), "text": "y"}),
    ));
    fake.push(Reply::tool_call("t__environ", json!({})));
    fake.push(Reply::text("done"));
    let vars = [
        ("OPENAI_API_KEY", "sk-navi-secret"),
        ("GITHUB_TOKEN", "ghp-secret"),
        ("ALLOWED_TOKEN", "fine"),
    ];
    let args = ["run", "--profile", "tester", "--approve-all", "go"];
    let (code, _, err) = navi_in(&env, Some(&fake), &w, &vars, &args).await;
    assert_eq!(code, 0, "{err}");
    let r = tool_results(&fake, 3);
    assert!(
        r[0].contains("write failed")
            && (r[0].contains("Read-only file system") || r[0].contains("Permission denied")),
        "{r:?}"
    );
    assert!(!outside.exists());
    assert_eq!(r[1], "written");
    assert_eq!(std::fs::read_to_string(&inside).unwrap(), "y");
    assert!(
        !r[2].contains("OPENAI_API_KEY") && !r[2].contains("GITHUB_TOKEN"),
        "{}",
        r[2]
    );
    assert!(
        r[2].contains("ALLOWED_TOKEN") && r[2].contains("PATH"),
        "{}",
        r[2]
    );
}

/// As an ordinary user (the CI runs as root, so the test drops to
/// `nobody`): a tool child cannot read navi's API key back from
/// `/proc/<navi>/environ`.
#[tokio::test]
async fn a_child_cannot_read_navis_environment_as_an_ordinary_user() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new("", &["terminal"]);
    let w = work(&env);
    for dir in [
        env.path(""),
        env.path("cfg"),
        env.path("cfg/profiles"),
        env.path("cfg/profiles/tester"),
        w.clone(),
    ] {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
    }
    for f in [
        "cfg/config.toml",
        "cfg/profiles/tester/config.json",
        "cfg/profiles/tester/system_prompt.txt",
    ] {
        std::fs::set_permissions(env.path(f), std::fs::Permissions::from_mode(0o644)).unwrap();
    }
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": "cat /proc/$PPID/environ | tr '\\0' '\\n'; echo; cat /proc/$PPID/cmdline"}),
    ));
    fake.push(Reply::text("done"));
    let mut c = tokio::process::Command::new("setpriv");
    c.args([
        "--reuid=65534",
        "--regid=65534",
        "--clear-groups",
        env!("CARGO_BIN_EXE_navi"),
    ])
    .args([
        "--backend",
        "ollama",
        "run",
        "--profile",
        "tester",
        "--approve-all",
        "go",
    ])
    .current_dir(&w)
    .env_clear()
    .env("PATH", std::env::var("PATH").unwrap_or_default())
    .env("HOME", env.path(""))
    .env("NAVI_DATA_DIR", env.path("data"))
    .env("NAVI_CONFIG_DIR", env.path("cfg"))
    .env("OLLAMA_HOST", fake.ollama_url())
    .env("NAVI_TEST_SECRET_API_KEY", "sk-navi-must-stay-home")
    .stdin(std::process::Stdio::null());
    let out = c.output().await.unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{err}");
    let r = tool_results(&fake, 1);
    assert!(!r[0].contains("sk-navi-must-stay-home"), "{}", r[0]);
    assert!(r[0].contains("Permission denied"), "{}", r[0]);
}

/// `navi run`: model text and tool results with clipboard, title, erase and
/// hyperlink sequences reach stdout with the escapes made visible, and the
/// (refused) approval of a command hiding behind `\r` and an erase shows
/// the whole command.
#[tokio::test]
async fn line_mode_output_shows_escape_sequences_as_text() {
    let env = Env::new("", &["terminal"]);
    let w = work(&env);
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": "rm -rf ~/important\r\u{1b}[2Kls -la"}),
    ));
    fake.push(Reply::text(
        "copied\u{1b}]52;c;cm0gLXJmIH4=\u{7} title\u{1b}]0;pwned\u{7} \u{1b}]8;;http://x\u{1b}\\link\u{1b}]8;;\u{1b}\\ clear\u{1b}[2J done",
    ));
    let (code, out, err) = navi_in(
        &env,
        Some(&fake),
        &w,
        &[],
        &["run", "--profile", "tester", "go"],
    )
    .await;
    assert_eq!(code, 0, "{err}");
    let all = format!("{out}{err}");
    assert!(
        !all.contains('\u{1b}') && !all.contains('\u{7}'),
        "raw escapes: {all:?}"
    );
    assert!(all.contains("␛]52;c;cm0gLXJmIH4=␇"), "{all}");
    assert!(all.contains("␛[2J"), "{all}");
    assert!(all.contains("rm -rf ~/important\\r␛[2Kls -la"), "{all}");
}

/// A password written into `OPENAI_BASE_URL` is sent as Basic auth, but
/// never printed, and never stored in the session database.
#[tokio::test]
async fn credentials_in_the_base_url_are_never_shown_or_stored() {
    let env = Env::new("", &["terminal"]);
    let w = work(&env);
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("hello"));
    let url = fake
        .openai_url()
        .replacen("http://", "http://navi-user:pw-never-shown@", 1);
    let vars = [("OPENAI_BASE_URL", url.as_str())];
    let args = ["--backend", "openai", "run", "--profile", "tester", "go"];
    let (code, out, err) = navi_in(&env, None, &w, &vars, &args).await;
    assert_eq!(code, 0, "{err}");
    assert!(!out.contains("pw-never-shown") && !err.contains("pw-never-shown"));
    let chat = fake.requests().into_iter().find(|r| r.is_chat()).unwrap();
    // base64("navi-user:pw-never-shown")
    assert_eq!(
        chat.header("authorization"),
        Some("Basic bmF2aS11c2VyOnB3LW5ldmVyLXNob3du")
    );
    // Unreachable: the error names the host, not the password.
    let bad = [(
        "OPENAI_BASE_URL",
        "http://navi-user:pw-never-shown@127.0.0.1:9/v1",
    )];
    let (code, out, err) = navi_in(&env, None, &w, &bad, &args).await;
    assert_ne!(code, 0);
    assert!(err.contains("127.0.0.1:9"), "{err}");
    assert!(
        !out.contains("pw-never-shown") && !err.contains("pw-never-shown"),
        "{err}"
    );
    let (_, out, err) = navi_in(&env, None, &w, &bad, &["--backend", "openai", "models"]).await;
    assert!(
        !out.contains("pw-never-shown") && !err.contains("pw-never-shown"),
        "{err}"
    );
    for entry in std::fs::read_dir(env.path("data")).unwrap().flatten() {
        if entry.path().is_file() {
            let bytes = std::fs::read(entry.path()).unwrap();
            let text = String::from_utf8_lossy(&bytes);
            assert!(
                !text.contains("pw-never-shown"),
                "{} holds it",
                entry.path().display()
            );
        }
    }
}
