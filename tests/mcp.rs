//! MCP servers as tool providers, end to end: the real `navi` binary, the
//! fake LLM server scripting `<server>__<tool>` calls, and real MCP servers —
//! the reference filesystem server (npm), the time server (PyPI) and a
//! deliberately misbehaving test server (tests/mcp_support/test_server.py).
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::mcp_support;
use crate::support;

use mcp_support::env::{Env, offered_tools, test_server_entry, tool_results};
use mcp_support::{servers_or_skip, test_server};
use serde_json::{Value, json};
use std::process::Stdio;
use support::{FakeLlm, Reply};
use tokio::process::Command;

#[tokio::test]
async fn time_server_tool_result_is_fed_back_to_the_model() {
    let Some(s) = servers_or_skip("time_server_tool_result_is_fed_back_to_the_model") else {
        return;
    };
    let config = format!(
        "[mcp_servers.time]\ncommand = {:?}\nargs = [\"--local-timezone\", \"UTC\"]\ntrust_read_only = true\n",
        s.time_bin.display().to_string()
    );
    let env = Env::new(&config, &["todo", "time__*"]);
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "time__get_current_time",
        json!({"timezone": "Europe/Paris"}),
    ));
    fake.push(Reply::text("It is late."));
    let (code, events, err) = env.run(&fake, &[]).await;
    assert_eq!(code, 0, "{err}");
    let reqs = fake.chat_requests();
    assert_eq!(reqs.len(), 2);
    // Tools on demand: the first request names the server's tools in
    // `load_tools`; the model called one without loading it, which ran and
    // brought its schema into the next request.
    assert_eq!(offered_tools(&reqs[0]), vec!["load_tools"]);
    let listing = reqs[0]["tools"][0]["function"]["description"]
        .as_str()
        .unwrap();
    assert!(
        listing.contains("time (MCP server): get_current_time, convert_time"),
        "{listing}"
    );
    assert!(listing.contains("todo: "), "{listing}");
    assert_eq!(
        offered_tools(&reqs[1]),
        vec!["load_tools", "time__get_current_time"]
    );
    let schema = reqs[1]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["function"]["name"] == "time__get_current_time")
        .unwrap()["function"]["parameters"]
        .clone();
    assert!(schema["properties"]["timezone"].is_object(), "{schema}");
    let results = tool_results(&fake, 1);
    assert_eq!(results.len(), 1);
    assert!(results[0].contains("Europe/Paris"), "{}", results[0]);
    assert!(results[0].contains("datetime"), "{}", results[0]);
    // Read-only and trusted: no approval was needed.
    assert!(
        !events.iter().any(|e| e["type"] == "approval_request"),
        "{events:?}"
    );
    let call = events.iter().find(|e| e["type"] == "tool_call").unwrap();
    assert_eq!(call["success"], true);
}

#[tokio::test]
async fn filesystem_server_needs_approval_and_profiles_pick_tools_by_name() {
    let Some(s) = servers_or_skip("filesystem_server_needs_approval") else {
        return;
    };
    let outer = tempfile::tempdir().unwrap();
    let root = outer.path().canonicalize().unwrap();
    std::fs::write(root.join("note.txt"), "hello from the filesystem server").unwrap();
    let config = format!(
        "[mcp_servers.fs]\ncommand = \"node\"\nargs = [{:?}, {:?}]\n",
        s.fs_js.display().to_string(),
        root.display().to_string()
    );
    let env = Env::new(&config, &["fs__read_text_file", "fs__list_directory"]);
    let file = root.join("note.txt").display().to_string();
    let fake = FakeLlm::start().await;
    // Not approved: the non-interactive gate refuses, the model is told why.
    fake.push(Reply::tool_call(
        "fs__read_text_file",
        json!({"path": file}),
    ));
    fake.push(Reply::text("denied"));
    let (code, _, err) = env.run(&fake, &[]).await;
    assert_eq!(code, 0, "{err}");
    let r = tool_results(&fake, 1);
    assert!(
        r[0].contains("denied") && r[0].contains("--approve fs__read_text_file"),
        "{}",
        r[0]
    );
    assert_eq!(
        offered_tools(&fake.chat_requests()[0]),
        vec!["fs__read_text_file", "fs__list_directory"],
        "only the tools the profile names"
    );
    // Approved on the command line: the file's text comes back.
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(
        "fs__read_text_file",
        json!({"path": file}),
    ));
    fake.push(Reply::text("read it"));
    let (code, _, err) = env.run(&fake, &["--approve", "fs__read_text_file"]).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        tool_results(&fake, 1),
        vec!["hello from the filesystem server".to_string()]
    );
}

#[tokio::test]
async fn a_crash_is_a_tool_error_and_the_next_call_restarts_the_server() {
    let env = Env::new(&test_server_entry("t", "normal", ""), &["t__*"]);
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call("t__crash", json!({})));
    fake.push(Reply::tool_call("t__echo", json!({"text": "back again"})));
    fake.push(Reply::text("done"));
    let (code, events, err) = env.run(&fake, &["--approve-all"]).await;
    assert_eq!(code, 0, "{err}");
    let r = tool_results(&fake, 2);
    assert_eq!(r.len(), 2, "{r:?}");
    assert!(
        r[0].starts_with("Error: MCP server 't' failed during crash"),
        "{}",
        r[0]
    );
    assert!(
        r[0].contains("crashing on purpose"),
        "stderr tail: {}",
        r[0]
    );
    assert_eq!(r[1], "echo: back again");
    let calls: Vec<bool> = events
        .iter()
        .filter(|e| e["type"] == "tool_call")
        .map(|e| e["success"].as_bool().unwrap())
        .collect();
    assert_eq!(calls, vec![false, true]);
}

#[tokio::test]
async fn a_server_failing_at_start_is_one_warning_and_the_rest_works() {
    let config = format!(
        "{}{}",
        test_server_entry("dead", "crash-on-start", ""),
        test_server_entry("t", "normal", "")
    );
    let env = Env::new(&config, &["t__echo", "dead__*"]);
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call("t__echo", json!({"text": "hi"})));
    fake.push(Reply::text("done"));
    let (code, events, err) = env.run(&fake, &["--approve", "t__echo"]).await;
    assert_eq!(code, 0, "{err}");
    let warnings: Vec<&str> = events
        .iter()
        .filter(|e| e["type"] == "warning")
        .filter_map(|e| e["message"].as_str())
        .filter(|m| m.contains("'dead'"))
        .collect();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("'dead' failed to start"),
        "{}",
        warnings[0]
    );
    assert_eq!(offered_tools(&fake.chat_requests()[0]), vec!["t__echo"]);
    assert_eq!(tool_results(&fake, 1), vec!["echo: hi".to_string()]);
}

#[tokio::test]
async fn big_image_and_non_utf8_results_are_mapped_without_breaking_the_run() {
    let env = Env::new(&test_server_entry("t", "normal", ""), &[]);
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call("t__big", json!({})));
    fake.push(Reply::tool_call("t__picture", json!({})));
    fake.push(Reply::tool_call("t__badutf8", json!({})));
    fake.push(Reply::tool_call("t__echo", json!({"text": "still alive"})));
    fake.push(Reply::text("done"));
    let (code, _, err) = env.run(&fake, &["--approve-all"]).await;
    assert_eq!(code, 0, "{err}");
    let reqs = fake.chat_requests();
    assert_eq!(reqs.len(), 5);
    // A profile naming no MCP tool gets them all (named in `load_tools`:
    // tools on demand); the broken schema is offered nowhere.
    let tools = reqs[0]["tools"].to_string();
    assert!(
        tools.contains("echo") && !tools.contains("broken"),
        "{tools}"
    );
    let r = tool_results(&fake, 4);
    assert_eq!(r.len(), 4);
    assert!(
        r[0].starts_with("BBBB") && r[0].contains("output truncated"),
        "{}",
        &r[0][r[0].len() - 200..]
    );
    assert!(
        r[0].len() < 200_000,
        "10 MB result capped, got {}",
        r[0].len()
    );
    assert!(
        r[1].contains("here it is") && r[1].contains("image/png"),
        "{}",
        r[1]
    );
    // The image went to the model as an image (multimodal path).
    let msgs = reqs[2]["messages"].as_array().unwrap();
    assert!(
        msgs.iter()
            .any(|m| m["images"].as_array().is_some_and(|i| !i.is_empty())),
        "image attached: {msgs:?}"
    );
    assert!(
        r[2].starts_with("Error:"),
        "non-UTF-8 answer is an error: {}",
        r[2]
    );
    assert_eq!(r[3], "echo: still alive");
}

#[tokio::test]
async fn a_hung_call_times_out_and_is_cancelled_on_the_server() {
    let env = Env::new(
        &test_server_entry("t", "normal", "tool_timeout_secs = 1"),
        &["t__slow", "t__echo"],
    );
    let log = env.path("server.log");
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call("t__slow", json!({})));
    fake.push(Reply::tool_call(
        "t__echo",
        json!({"text": "after the hang"}),
    ));
    fake.push(Reply::text("done"));
    let out = env
        .cmd(Some(&fake))
        .env("MCP_TEST_LOG", &log)
        // The server writes its log outside any writable list.
        .args([
            "--sandbox",
            "full-access",
            "run",
            "--json",
            "--profile",
            "tester",
            "--approve-all",
            "go",
        ])
        .output()
        .await
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = tool_results(&fake, 2);
    assert!(r[0].contains("did not answer slow within 1s"), "{}", r[0]);
    assert_eq!(r[1], "echo: after the hang", "restarted after the hang");
    let logged = std::fs::read_to_string(&log).unwrap();
    let cancelled: Vec<Value> = logged
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|m| m["method"] == "notifications/cancelled")
        .collect();
    assert_eq!(cancelled.len(), 1, "{logged}");
    let slow_id = logged
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|m| m["method"] == "tools/call" && m["params"]["name"] == "slow")
        .unwrap()["id"]
        .clone();
    assert_eq!(cancelled[0]["params"]["requestId"], slow_id);
}

#[tokio::test]
async fn ctrl_c_during_a_call_sends_notifications_cancelled() {
    let env = Env::new(&test_server_entry("t", "normal", ""), &["t__slow"]);
    let log = env.path("server.log");
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call("t__slow", json!({})));
    fake.push(Reply::text("never asked"));
    let child = env
        .cmd(Some(&fake))
        .env("MCP_TEST_LOG", &log)
        // The server writes its log outside any writable list.
        .args([
            "--sandbox",
            "full-access",
            "run",
            "--json",
            "--profile",
            "tester",
            "--approve-all",
            "go",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Wait (bounded) until the server has the call, then interrupt navi.
    let mut seen = false;
    for _ in 0..300 {
        if std::fs::read_to_string(&log).is_ok_and(|t| t.contains("\"tools/call\"")) {
            seen = true;
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    assert!(seen, "the server never got the call");
    let pid = child.id().unwrap().to_string();
    let killed = std::process::Command::new("kill")
        .args(["-INT", &pid])
        .status()
        .unwrap();
    assert!(killed.success());
    let out = child.wait_with_output().await.unwrap();
    assert_eq!(
        out.status.code(),
        Some(130),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.contains("\"notifications/cancelled\""),
        "server log: {logged}"
    );
    assert_eq!(
        fake.chat_requests().len(),
        1,
        "no model call after the stop"
    );
}

#[tokio::test]
async fn mcp_commands_list_tools_and_check() {
    let config = format!(
        "{}{}{}",
        test_server_entry("t", "normal", ""),
        test_server_entry("mute", "no-init", "startup_timeout_secs = 1"),
        test_server_entry("off", "normal", "enabled = false"),
    );
    let env = Env::new(&config, &[]);
    let (code, out, _) = env.navi(None, &["mcp", "list", "--json"]).await;
    assert_eq!(code, 0);
    let list: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(list.as_array().unwrap().len(), 3);
    assert_eq!(list[1]["name"], "off");
    assert_eq!(list[1]["enabled"], false);
    let (code, out, err) = env.navi(None, &["mcp", "tools", "t", "--json"]).await;
    assert_eq!(code, 0, "{err}");
    let tools: Value = serde_json::from_str(&out).unwrap();
    let names: Vec<&str> = tools[0]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"t__echo") && !names.contains(&"t__broken"),
        "{names:?}"
    );
    assert!(
        tools[0]["skipped"][0]
            .as_str()
            .unwrap()
            .contains("broken: inputSchema")
    );
    let (code, out, err) = env.navi(None, &["mcp", "check"]).await;
    assert_eq!(code, 1, "{out}{err}");
    assert!(
        out.contains("mute: failed: no answer to initialize"),
        "{out}"
    );
    assert!(out.contains("t: ready, 10 tools"), "{out}");
    assert!(out.contains("off: disabled"), "{out}");
    assert!(err.contains("1 MCP server(s) failed"), "{err}");
    let (code, _, err) = env.navi(None, &["mcp", "tools", "nope"]).await;
    assert_eq!(code, 2);
    assert!(err.contains("no MCP server named 'nope'"), "{err}");
}

#[tokio::test]
async fn bad_mcp_config_is_a_usage_error_naming_the_key() {
    for (config, key, hint) in [
        (
            "[mcp_servers.x]\ntransport = \"websocket\"\ncommand = \"a\"\n",
            "mcp_servers.x.transport",
            "unknown transport",
        ),
        (
            "[mcp_servers.x]\nargs = [\"a\"]\n",
            "mcp_servers.x.command",
            "missing",
        ),
        (
            "[mcp_servers.x]\ntransport = \"http\"\n",
            "mcp_servers.x.url",
            "missing",
        ),
        (
            "[mcp_servers.x]\nurl = \"ftp://h\"\n",
            "mcp_servers.x.url",
            "http://",
        ),
        (
            "[mcp_servers.a__b]\ncommand = \"a\"\n",
            "mcp_servers.a__b",
            "server name",
        ),
        (
            "[mcp_servers.x]\ncommand = \"a\"\ntool_timeout_secs = 0\n",
            "mcp_servers.x.tool_timeout_secs",
            "positive",
        ),
        (
            "[mcp_servers.x]\ncommand = \"a\"\ncomand = \"b\"\n",
            "comand",
            "unknown field",
        ),
    ] {
        let env = Env::new(config, &[]);
        let (code, _, err) = env.navi(None, &["mcp", "list"]).await;
        assert_eq!(code, 2, "{config}: {err}");
        assert!(err.contains(key) && err.contains(hint), "{config}: {err}");
    }
}

#[tokio::test]
async fn slash_mcp_in_plain_mode_shows_state_tools_and_stderr() {
    let config = format!(
        "{}{}",
        test_server_entry("t", "normal", ""),
        test_server_entry("dead", "crash-on-start", ""),
    );
    let env = Env::new(&config, &[]);
    let fake = FakeLlm::start().await;
    let log = env.path("server.log");
    let mut c = env.cmd(Some(&fake));
    c.env("MCP_TEST_LOG", &log)
        .args(["--sandbox", "full-access", "--plain", "--profile", "tester"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = c.spawn().unwrap();
    {
        use tokio::io::AsyncWriteExt;
        let mut stdin = child.stdin.take().unwrap();
        // The prompt does not wait for the servers: wait (bounded) until the
        // test server has been asked for its tools, then look.
        for _ in 0..300 {
            if std::fs::read_to_string(&log).is_ok_and(|t| t.contains("\"tools/list\"")) {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(100)).await;
        }
        tokio::time::sleep(std::time::Duration::from_millis(500)).await;
        stdin.write_all(b"/mcp\n/quit\n").await.unwrap();
    }
    let out = child.wait_with_output().await.unwrap();
    let all = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(all.contains("t: ready, 10 tools"), "{all}");
    assert!(all.contains("t__echo"), "{all}");
    assert!(all.contains("dead: failed"), "{all}");
    assert!(
        all.contains("cannot start, missing API key"),
        "stderr tail: {all}"
    );
}

#[tokio::test]
async fn streamable_http_server_gets_the_configured_headers() {
    let script = test_server().with_file_name("http_server.py");
    let mut server = Command::new("python3")
        .arg(&script)
        .stdout(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut line = String::new();
    {
        use tokio::io::AsyncBufReadExt;
        let out = server.stdout.take().unwrap();
        tokio::io::BufReader::new(out)
            .read_line(&mut line)
            .await
            .unwrap();
    }
    let port: u16 = line.trim().parse().unwrap();
    let config = format!(
        "[mcp_servers.web]\nurl = \"http://127.0.0.1:{port}/mcp\"\nheaders = {{ Authorization = \"Bearer sekrit\" }}\n"
    );
    let env = Env::new(&config, &["web__*"]);
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call("web__whoami", json!({})));
    fake.push(Reply::text("done"));
    let (code, _, err) = env.run(&fake, &["--approve", "web__whoami"]).await;
    assert_eq!(code, 0, "{err}");
    assert_eq!(offered_tools(&fake.chat_requests()[0]), vec!["web__whoami"]);
    assert_eq!(
        tool_results(&fake, 1),
        vec!["authorization: Bearer sekrit".to_string()]
    );
    let _ = server.kill().await;
}
