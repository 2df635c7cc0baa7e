//! MCP servers configured exactly as their READMEs show — `npx -y PACKAGE
//! DIR`, `uvx PACKAGE`, `python -m MODULE` — start and work under navi's
//! default settings (default sandbox mode included) in a fresh `$HOME`
//! with nothing installed, and again once warm. The registries are not
//! needed: npm and uv run offline from caches tests/mcp_support/fill_caches.sh
//! filled (the package specs are pinned, as `PACKAGE@VERSION`). A server that
//! opts into the sandbox and is refused says so and names the keys.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::mcp_support::env::{Env, tool_results};
use crate::mcp_support::{Readme, readme_or_skip};
use crate::support::{FakeLlm, Reply};
use serde_json::json;
use std::path::Path;

/// Room for a first `npx -y` that unpacks ~120 packages on a busy machine.
const STARTUP: &str = "startup_timeout_secs = 300\n";

/// `navi ARGS` with the package managers pointed at per-test caches and
/// kept offline; `uv`, `uvx` and the time server's `python` on PATH.
async fn navi(
    env: &Env,
    readme: &Readme,
    fake: Option<&FakeLlm>,
    args: &[&str],
) -> (i32, String, String) {
    // The time server's venv first: its `python` is the one `python -m`
    // means (uv's venv has a `python` too).
    let path = format!(
        "{}:{}:{}",
        readme.py_bin.display(),
        readme.uv_bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = env
        .cmd(fake)
        .env("PATH", path)
        .env("npm_config_cache", env.path("npm-cache"))
        .env("npm_config_offline", "true")
        .env("npm_config_update_notifier", "false")
        .env("UV_CACHE_DIR", env.path("uv-cache"))
        .env("UV_OFFLINE", "1")
        .env("UV_PYTHON_DOWNLOADS", "never")
        .args(args)
        .output()
        .await
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The `state` line `navi mcp check` printed for `name`.
fn state<'a>(out: &'a str, name: &str) -> &'a str {
    out.lines()
        .find(|l| l.starts_with(&format!("{name}: ")))
        .unwrap_or_else(|| panic!("no line for {name} in: {out}"))
}

fn npx_entry(name: &str, pkg: &str, extra_args: &[&Path], extra: &str) -> String {
    let mut args = vec![format!("{:?}", "-y"), format!("{pkg:?}")];
    args.extend(
        extra_args
            .iter()
            .map(|p| format!("{:?}", p.display().to_string())),
    );
    format!(
        "[mcp_servers.{name}]\ncommand = \"npx\"\nargs = [{}]\n{STARTUP}{extra}",
        args.join(", ")
    )
}

#[tokio::test]
async fn npx_servers_as_their_readme_shows_work_in_a_fresh_home_and_a_warm_one() {
    let Some(readme) = readme_or_skip("npx_servers_as_their_readme_shows_work") else {
        return;
    };
    let outer = tempfile::tempdir().unwrap();
    let files = outer.path().canonicalize().unwrap();
    std::fs::write(files.join("note.txt"), "from the README server").unwrap();
    let config = npx_entry("fs", &readme.fs_pkg, &[&files], "")
        + &npx_entry("everything", &readme.everything_pkg, &[], "");
    let env = Env::new(&config, &["fs__*", "everything__echo"]);
    readme.fresh_npm_cache(&env.path("npm-cache"));
    assert!(!env.path(".npm").exists() && !env.path("npm-cache/_npx").exists());

    // Fresh: npx installs both packages from the cache, then starts them.
    let (code, out, err) = navi(&env, &readme, None, &["mcp", "check"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(state(&out, "fs").contains(": ready"), "{out}");
    assert!(state(&out, "everything").contains(": ready"), "{out}");
    assert!(
        env.path("npm-cache/_npx").is_dir(),
        "npx installed into its cache"
    );

    // Warm: a turn uses both; the filesystem server writes to the directory
    // it serves (outside navi's workspace) as its README promises.
    let fake = FakeLlm::start().await;
    let target = files.join("written.txt");
    fake.push(Reply::tool_call(
        "fs__read_text_file",
        json!({"path": files.join("note.txt").display().to_string()}),
    ));
    fake.push(Reply::tool_call(
        "fs__write_file",
        json!({"path": target.display().to_string(), "content": "by the server"}),
    ));
    fake.push(Reply::tool_call(
        "everything__echo",
        json!({"message": "hello"}),
    ));
    fake.push(Reply::text("done"));
    let args = ["run", "--profile", "tester", "--approve-all", "go"];
    let (code, out, err) = navi(&env, &readme, Some(&fake), &args).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let results = tool_results(&fake, 3);
    assert!(results[0].contains("from the README server"), "{results:?}");
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "by the server",
        "{results:?}"
    );
    assert!(results[2].contains("hello"), "{results:?}");
    let (code, out, err) = navi(&env, &readme, None, &["mcp", "check"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
}

#[tokio::test]
async fn time_server_through_uvx_and_python_m_works_in_a_fresh_home_and_a_warm_one() {
    let Some(readme) = readme_or_skip("time_server_through_uvx_and_python_m") else {
        return;
    };
    let config = format!(
        "[mcp_servers.uvx_time]\ncommand = \"uvx\"\nargs = [{:?}, \"--local-timezone\", \"UTC\"]\n{STARTUP}\
         [mcp_servers.py_time]\ncommand = \"python\"\nargs = [\"-m\", \"mcp_server_time\", \"--local-timezone\", \"UTC\"]\n{STARTUP}",
        readme.time_spec
    );
    let env = Env::new(&config, &["uvx_time__*", "py_time__*"]);
    readme.fresh_uv_cache(&env.path("uv-cache"));
    assert!(!env.path(".cache").exists() && !env.path(".local").exists());
    for round in ["fresh", "warm"] {
        let (code, out, err) = navi(&env, &readme, None, &["mcp", "check"]).await;
        assert_eq!(code, 0, "{round}: {out}\n{err}");
        assert!(
            state(&out, "uvx_time").contains(": ready"),
            "{round}: {out}"
        );
        assert!(state(&out, "py_time").contains(": ready"), "{round}: {out}");
    }
    let fake = FakeLlm::start().await;
    for server in ["uvx_time", "py_time"] {
        fake.push(Reply::tool_call(
            format!("{server}__get_current_time"),
            json!({"timezone": "Asia/Tokyo"}),
        ));
    }
    fake.push(Reply::text("done"));
    let args = ["run", "--profile", "tester", "--approve-all", "go"];
    let (code, out, err) = navi(&env, &readme, Some(&fake), &args).await;
    assert_eq!(code, 0, "{out}\n{err}");
    let results = tool_results(&fake, 2);
    assert_eq!(results.len(), 2, "{results:?}");
    for r in &results {
        assert!(r.contains("Asia/Tokyo") && r.contains("datetime"), "{r}");
    }
}

#[tokio::test]
async fn a_sandboxed_npx_server_that_is_refused_says_so_and_names_the_keys() {
    let Some(readme) = readme_or_skip("a_sandboxed_npx_server_that_is_refused") else {
        return;
    };
    let outer = tempfile::tempdir().unwrap();
    let files = outer.path().canonicalize().unwrap();
    let env = Env::new(
        &npx_entry("fs", &readme.fs_pkg, &[&files], "sandbox = true\n"),
        &["fs__*"],
    );
    readme.fresh_npm_cache(&env.path("npm-cache"));
    let (code, out, err) = navi(&env, &readme, None, &["mcp", "check"]).await;
    assert_eq!(code, 1, "{out}\n{err}");
    let line = state(&out, "fs");
    println!("{line}");
    for want in [
        "sandbox",
        "mcp_servers.fs.writable",
        "mcp_servers.fs.sandbox = false",
    ] {
        assert!(line.contains(want), "{want:?} missing in: {line}");
    }
    // What the sentence says to do works: the cache and the served
    // directory writable, still sandboxed.
    let cache = env.path("npm-cache").display().to_string();
    let entry = npx_entry(
        "fs",
        &readme.fs_pkg,
        &[&files],
        &format!(
            "sandbox = true\nwritable = [{cache:?}, {:?}]\n",
            files.display().to_string()
        ),
    );
    std::fs::write(env.path("cfg/config.toml"), entry).unwrap();
    let (code, out, err) = navi(&env, &readme, None, &["mcp", "check"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(state(&out, "fs").contains(": ready"), "{out}");
}
