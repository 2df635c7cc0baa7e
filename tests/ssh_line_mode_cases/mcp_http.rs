//! MCP over streamable HTTP as over stdio (issue 26, items 7 and 9): tools
//! that need MCP tasks are skipped with a warning, whether the server
//! answers in SSE (`server-everything`) or in plain JSON (our test server);
//! a long call shows its progress and its result arrives.
use crate::mcp_support::env::{Env, tool_results};
use crate::mcp_support::{everything_or_skip, test_server};
use crate::support::{FakeLlm, Reply};
use serde_json::{Value, json};
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::process::{Child, Command};

/// `server-everything` serving streamable HTTP on a free loopback port.
async fn everything_http(js: &std::path::Path) -> (Child, u16) {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let child = Command::new("node")
        .arg(js)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let start = Instant::now();
    while tokio::net::TcpStream::connect(("127.0.0.1", port))
        .await
        .is_err()
    {
        assert!(
            start.elapsed() < Duration::from_secs(30),
            "server-everything never listened on {port}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    (child, port)
}

fn warnings(events: &[Value]) -> Vec<String> {
    events
        .iter()
        .filter(|e| e["type"] == "warning")
        .map(|e| e["message"].as_str().unwrap_or("").to_string())
        .collect()
}

/// `server-everything` over HTTP: its task-only tool is skipped with a
/// warning, and a long operation reports progress (events and lines) and
/// its result reaches the model.
#[tokio::test]
async fn http_server_everything_skips_task_tools_and_shows_progress() {
    let Some(js) = everything_or_skip("http_server_everything_skips_task_tools_and_shows_progress")
    else {
        return;
    };
    let (mut server, port) = everything_http(&js).await;
    let config = format!("[mcp_servers.ev]\nurl = \"http://127.0.0.1:{port}/mcp\"\n");
    let env = Env::new(&config, &["ev__*"]);

    let (code, out, err) = env.navi(None, &["mcp", "tools", "ev", "--json"]).await;
    assert_eq!(code, 0, "{out}{err}");
    let listed: Value = serde_json::from_str(&out).unwrap();
    let skipped = listed[0]["skipped"].to_string();
    assert!(
        skipped.contains("simulate-research-query: needs MCP tasks"),
        "{skipped}"
    );
    let tools = listed[0]["tools"].to_string();
    assert!(tools.contains("trigger-long-running-operation"), "{tools}");
    assert!(!tools.contains("simulate-research-query"), "{tools}");

    let tool = "ev__trigger-long-running-operation";
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(tool, json!({"duration": 2, "steps": 2})));
    fake.push(Reply::text("done"));
    let (code, events, err) = env.run(&fake, &["--approve-all"]).await;
    assert_eq!(code, 0, "{err}");
    // Never offered (in full or in `load_tools`), and the user is told.
    let offered = fake.chat_requests()[0]["tools"].to_string();
    assert!(
        offered.contains("trigger-long-running-operation"),
        "{offered}"
    );
    assert!(!offered.contains("simulate-research-query"), "{offered}");
    assert!(
        warnings(&events).iter().any(|w| w.contains("'ev'")
            && w.contains("simulate-research-query")
            && w.contains("skipped")),
        "{events:?}"
    );
    let progress: Vec<&Value> = events
        .iter()
        .filter(|e| e["type"] == "tool_progress" && e["progress"].is_number())
        .collect();
    assert!(!progress.is_empty(), "no progress over HTTP: {events:?}");
    for p in &progress {
        assert_eq!(p["tool"], tool);
        assert_eq!(p["total"], json!(2.0));
    }
    assert_eq!(progress[0]["progress"], json!(1.0));
    let pos = |t: &str| events.iter().position(|e| e["type"] == t).unwrap();
    assert!(pos("tool_progress") < pos("tool_call"), "{events:?}");
    let results = tool_results(&fake, 1);
    assert!(
        results[0].contains("Long running operation completed. Duration: 2 seconds, Steps: 2."),
        "{results:?}"
    );

    // Without --json: the progress line on stderr, as plain mode shows it.
    let fake = FakeLlm::start().await;
    fake.push(Reply::tool_call(tool, json!({"duration": 2, "steps": 2})));
    fake.push(Reply::text("done"));
    let (code, _, err) = env
        .navi(
            Some(&fake),
            &["run", "--profile", "tester", "--approve-all", "go"],
        )
        .await;
    assert_eq!(code, 0, "{err}");
    assert!(err.contains(&format!("… {tool}: 1/2 (50%)")), "{err}");
    assert!(
        tool_results(&fake, 1)[0].contains("Long running operation completed"),
        "{:?}",
        tool_results(&fake, 1)
    );
    let _ = server.kill().await;
}

/// A server that answers `tools/list` in plain JSON (no SSE): its
/// task-only tool is found and skipped too.
#[tokio::test]
async fn http_json_server_task_only_tool_is_skipped() {
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
    let config = format!("[mcp_servers.web]\nurl = \"http://127.0.0.1:{port}/mcp\"\n");
    let env = Env::new(&config, &["web__*"]);
    let (code, out, err) = env.navi(None, &["mcp", "tools", "web", "--json"]).await;
    assert_eq!(code, 0, "{out}{err}");
    let listed: Value = serde_json::from_str(&out).unwrap();
    assert!(
        listed[0]["skipped"]
            .to_string()
            .contains("research: needs MCP tasks"),
        "{out}"
    );
    assert!(listed[0]["tools"].to_string().contains("whoami"), "{out}");
    assert!(
        !listed[0]["tools"].to_string().contains("research"),
        "{out}"
    );
    let _ = server.kill().await;
}
