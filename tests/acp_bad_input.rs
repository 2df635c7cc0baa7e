//! `navi acp` and bad input: malformed JSON-RPC, unknown methods, prompts for
//! unknown or busy sessions, frames of many megabytes, a client that goes
//! away mid-turn. Always an error response or a clean end; never a panic.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::acp_support::{Home, client_or_skip, processes_with};
use crate::support::{FakeLlm, Reply};
use serde_json::{Value, json};
use std::collections::HashMap;
use std::io::{BufRead, BufReader, Write};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

/// `navi acp` with raw pipes: lines in, JSON messages out.
pub(crate) struct Raw {
    child: Child,
    out: mpsc::Receiver<Value>,
    stderr: std::sync::Arc<std::sync::Mutex<String>>,
}

impl Raw {
    pub(crate) fn start(home: &Home) -> Raw {
        let mut c = home.navi(&["acp"]);
        c.stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = c.spawn().unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, out) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                let v = serde_json::from_str(&line)
                    .unwrap_or_else(|e| panic!("stdout is not JSON-RPC ({e}): {line}"));
                if tx.send(v).is_err() {
                    break;
                }
            }
        });
        let stderr = std::sync::Arc::new(std::sync::Mutex::new(String::new()));
        let (err, mut pipe) = (stderr.clone(), child.stderr.take().unwrap());
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = std::io::Read::read_to_string(&mut pipe, &mut s);
            *err.lock().unwrap() = s;
        });
        Raw { child, out, stderr }
    }

    pub(crate) fn send(&mut self, bytes: &[u8]) {
        let stdin = self.child.stdin.as_mut().unwrap();
        stdin.write_all(bytes).unwrap();
        stdin.flush().unwrap();
    }

    /// Responses by id (`null` for uncorrelated errors) until `ids` are all
    /// answered.
    pub(crate) fn responses(&self, ids: &[Value]) -> HashMap<String, Vec<Value>> {
        let mut got: HashMap<String, Vec<Value>> = HashMap::new();
        let deadline = Instant::now() + Duration::from_secs(30);
        while !ids.iter().all(|i| got.contains_key(&i.to_string())) {
            let left = deadline.saturating_duration_since(Instant::now());
            let v = self
                .out
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no answer to all of {ids:?}; got {got:?}"));
            if v.get("method").is_some() {
                continue; // a notification or a request of the agent
            }
            got.entry(v["id"].to_string()).or_default().push(v);
        }
        got
    }

    /// Closes stdin and waits for the exit code (panics after 30 s).
    pub(crate) fn finish(mut self) -> (i32, String) {
        drop(self.child.stdin.take());
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(st) = self.child.try_wait().unwrap() {
                std::thread::sleep(Duration::from_millis(100));
                let err = self.stderr.lock().unwrap().clone();
                return (st.code().unwrap_or(-1), err);
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("navi acp did not exit after stdin closed");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

pub(crate) fn req(id: u64, method: &str, params: Value) -> Vec<u8> {
    let mut v = serde_json::to_vec(
        &json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}),
    )
    .unwrap();
    v.push(b'\n');
    v
}

pub(crate) fn code(got: &HashMap<String, Vec<Value>>, id: &str) -> i64 {
    got[id][0]["error"]["code"]
        .as_i64()
        .unwrap_or_else(|| panic!("{id}: {got:?}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_malformed_json_and_unknown_methods_get_errors() {
    let fake = FakeLlm::start().await;
    let home = Home::new(&fake);
    let t = tokio::task::spawn_blocking(move || {
        let mut raw = Raw::start(&home);
        raw.send(b"{this is not json\n");
        raw.send(&req(1, "initialize", json!({"protocolVersion": 1})));
        // The SDK refuses other methods until initialize is answered.
        let init = raw.responses(&[json!(1)]);
        raw.send(b"[1, 2]\n");
        raw.send(&req(2, "navi/no_such_method", json!({})));
        raw.send(&req(
            3,
            "session/prompt",
            json!({"sessionId": "nope", "prompt": [{"type": "text", "text": "hi"}]}),
        ));
        raw.send(&req(4, "session/prompt", json!({"sessionId": 5})));
        raw.send(&req(
            5,
            "session/new",
            json!({"cwd": "relative/dir", "mcpServers": []}),
        ));
        raw.send(&req(
            6,
            "session/set_mode",
            json!({"sessionId": "nope", "modeId": "tester"}),
        ));
        raw.send(b"\n   \n");
        raw.send(&req(7, "session/new", json!({"cwd": "/", "mcpServers": [{"name": "old", "url": "http://127.0.0.1:9/sse", "type": "sse", "headers": []}]})));
        let got = raw.responses(&[json!(2), json!(3), json!(4), json!(5), json!(6), json!(7)]);
        assert_eq!(init["1"][0]["result"]["protocolVersion"], 1, "{init:?}");
        assert_eq!(code(&got, "2"), -32601);
        assert_eq!(code(&got, "3"), -32602);
        let msg = got["3"][0]["error"]["message"].as_str().unwrap();
        assert!(msg.contains("unknown session 'nope'"), "{msg}");
        // The text in `data` too, for clients that show only that.
        assert_eq!(got["3"][0]["error"]["data"], msg, "{got:?}");
        assert_eq!(
            got["7"][0]["error"]["data"],
            got["7"][0]["error"]["message"]
        );
        assert_eq!(code(&got, "4"), -32602);
        assert_eq!(code(&got, "5"), -32602);
        assert!(
            got["5"][0]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("absolute")
        );
        assert_eq!(code(&got, "6"), -32602);
        assert!(
            got["7"][0]["error"]["message"]
                .as_str()
                .unwrap()
                .contains("SSE"),
            "{got:?}"
        );
        let (exit, err) = raw.finish();
        assert_eq!(exit, 0, "{err}");
        assert!(!err.contains("panicked"), "{err}");
        let mut uncorrelated: Vec<Value> = init.get("null").cloned().unwrap_or_default();
        uncorrelated.extend(got.get("null").cloned().unwrap_or_default());
        uncorrelated
    });
    // The line that is not JSON got a parse error, the batch an invalid
    // request, both without an id.
    let codes: Vec<i64> = t
        .await
        .unwrap()
        .iter()
        .map(|v| v["error"]["code"].as_i64().unwrap())
        .collect();
    assert!(
        codes.contains(&-32700) && codes.contains(&-32600),
        "{codes:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_frames_of_many_megabytes_are_answered() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("read it all"));
    let home = Home::new(&fake);
    let work = home.work();
    let t = tokio::task::spawn_blocking(move || {
        let mut raw = Raw::start(&home);
        raw.send(&req(2, "initialize", json!({"protocolVersion": 1})));
        let init = raw.responses(&[json!(2)]);
        assert_eq!(init["2"][0]["result"]["protocolVersion"], 1);
        // 24 MB of garbage on one line, then 12 MB of valid JSON for an
        // unknown method: each answered, and the connection goes on.
        let mut junk = vec![b'x'; 24 << 20];
        junk.push(b'\n');
        raw.send(&junk);
        drop(junk);
        raw.send(&req(1, "navi/big", json!({"blob": "y".repeat(12 << 20)})));
        raw.send(&req(
            3,
            "session/new",
            json!({"cwd": work, "mcpServers": []}),
        ));
        let got = raw.responses(&[json!(1), json!(3), json!(null)]);
        assert_eq!(code(&got, "1"), -32601);
        assert_eq!(code(&got, "null"), -32700);
        let sid = got["3"][0]["result"]["sessionId"]
            .as_str()
            .unwrap()
            .to_string();
        raw.send(&req(
            4,
            "session/set_mode",
            json!({"sessionId": sid, "modeId": "tester"}),
        ));
        // A prompt of 6 MB of text.
        let big = format!("BIG-START {} BIG-END", "z ".repeat(3 << 20));
        raw.send(&req(
            5,
            "session/prompt",
            json!({"sessionId": sid, "prompt": [{"type": "text", "text": big}]}),
        ));
        let got = raw.responses(&[json!(4), json!(5)]);
        let five = &got["5"][0];
        assert!(
            five["result"]["stopReason"] == "end_turn" || five["error"]["code"].is_i64(),
            "{five}"
        );
        let (exit, err) = raw.finish();
        assert_eq!(exit, 0, "{err}");
        assert!(!err.contains("panicked"), "{err}");
    });
    t.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_busy_session_and_unknown_session_via_the_sdk() {
    let Some(client) = client_or_skip("acp_busy_session_and_unknown_session_via_the_sdk") else {
        return;
    };
    let fake = FakeLlm::start().await;
    let words: String = (0..300).map(|i| format!("w{i} ")).collect();
    fake.push(Reply::text(words).with_delay(20));
    let home = Home::new(&fake);
    let d = home
        .drive(
            &client,
            json!([
                {"op": "initialize"},
                {"op": "new", "as": "a"},
                {"op": "setMode", "session": "a", "mode": "tester"},
                {"op": "setMode", "session": "a", "mode": "no-such-profile"},
                {"op": "prompt", "session": "a", "text": "first", "wait": false, "as": "p"},
                {"op": "waitUpdate", "session": "a", "kind": "agent_message_chunk"},
                {"op": "prompt", "session": "a", "text": "second"},
                {"op": "prompt", "session": "no-such-session", "text": "hello"},
                {"op": "raw", "method": "navi/unknown", "params": {}},
                {"op": "setMode", "session": "a", "mode": "second"},
                {"op": "setOption", "session": "a", "id": "colour", "value": "red"},
                {"op": "cancel", "session": "a"},
                {"op": "await", "name": "p"},
            ]),
            "allow_once",
        )
        .await;
    let dump = d.dump();
    let prompts = d.results("prompt");
    // In the order answered: the busy one, the unknown one, then the first.
    let busy = prompts
        .iter()
        .find(|p| {
            p["error"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("busy"))
        })
        .unwrap_or_else(|| panic!("{dump}"));
    assert_eq!(busy["error"]["code"], -32602);
    assert!(
        prompts.iter().any(|p| p["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("unknown session 'no-such-session'"))),
        "{dump}"
    );
    assert!(
        prompts
            .iter()
            .any(|p| p["result"]["stopReason"] == "cancelled"),
        "{dump}"
    );
    assert_eq!(d.results("raw")[0]["error"]["code"], -32601, "{dump}");
    let modes = d.results("setMode");
    // A switch while the turn runs is refused too.
    assert!(
        modes[2]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("running"),
        "{dump}"
    );
    assert!(
        modes[1]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no-such-profile"),
        "{dump}"
    );
    assert!(
        d.results("setOption")[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("colour")
    );
    // One user message stored: the busy prompt was not taken.
    let id = d.id("a");
    let users: Vec<String> = home
        .rows(&id)
        .into_iter()
        .filter(|r| r.0 == "user")
        .map(|r| r.1)
        .collect();
    assert_eq!(users, ["first"], "{dump}");
    assert_eq!(fake.chat_requests().len(), 1);
    assert_eq!(d.exit_code(), 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_client_gone_mid_turn_saves_unlocks_and_leaves_no_process() {
    let Some(client) =
        client_or_skip("acp_client_gone_mid_turn_saves_unlocks_and_leaves_no_process")
    else {
        return;
    };
    let fake = FakeLlm::start().await;
    let marker = format!("sleep 31.{}", std::process::id());
    fake.push(Reply::tool_call(
        "terminal",
        json!({"command": format!("{marker}; echo finished")}),
    ));
    let home = Home::new(&fake);
    let d = home
        .drive(
            &client,
            json!([
                {"op": "initialize"},
                {"op": "new", "as": "a"},
                {"op": "setMode", "session": "a", "mode": "tester"},
                {"op": "prompt", "session": "a", "text": "run the long one", "wait": false, "as": "p"},
                {"op": "waitPermission"},
                {"op": "sleep", "ms": 1500},
                {"op": "end"},
            ]),
            "allow_once",
        )
        .await;
    let dump = d.dump();
    assert_eq!(d.exit_code(), 0, "{dump}");
    assert!(
        processes_with(&marker).is_empty(),
        "left behind: {:?}",
        processes_with(&marker)
    );
    let id = d.id("a");
    let rows = home.rows(&id);
    let roles: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(roles[..3], ["user", "assistant", "tool"], "{rows:?}");
    // Unlocked: another navi opens it at once.
    fake.push(Reply::text("resumed fine"));
    let out = home
        .navi(&["run", "--session", &id, "still there?"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("resumed fine"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_session_open_in_another_navi_is_refused_until_released() {
    let fake = FakeLlm::start().await;
    fake.push(Reply::text("first process answers"));
    fake.push(Reply::text("second process answers"));
    let home = Home::new(&fake);
    let work = home.work();
    let t = tokio::task::spawn_blocking(move || {
        let mut a = Raw::start(&home);
        a.send(&req(1, "initialize", json!({"protocolVersion": 1})));
        a.responses(&[json!(1)]);
        a.send(&req(
            2,
            "session/new",
            json!({"cwd": work, "mcpServers": []}),
        ));
        let got = a.responses(&[json!(2)]);
        let sid = got["2"][0]["result"]["sessionId"]
            .as_str()
            .unwrap()
            .to_string();
        a.send(&req(
            3,
            "session/set_mode",
            json!({"sessionId": sid, "modeId": "tester"}),
        ));
        a.send(&req(
            4,
            "session/prompt",
            json!({"sessionId": sid, "prompt": [{"type": "text", "text": "hello"}]}),
        ));
        let got = a.responses(&[json!(3), json!(4)]);
        assert_eq!(got["4"][0]["result"]["stopReason"], "end_turn", "{got:?}");

        // A second navi acp cannot load it while the first has it open.
        let mut b = Raw::start(&home);
        b.send(&req(1, "initialize", json!({"protocolVersion": 1})));
        b.responses(&[json!(1)]);
        let load = json!({"sessionId": sid, "cwd": work, "mcpServers": []});
        b.send(&req(2, "session/load", load.clone()));
        let got = b.responses(&[json!(2)]);
        let msg = got["2"][0]["error"]["message"]
            .as_str()
            .unwrap_or_else(|| panic!("{got:?}"));
        assert!(msg.contains("open in another navi"), "{msg}");
        assert!(
            msg.contains(&a.child.id().to_string()),
            "names the pid: {msg}"
        );

        // session/close in the first releases it; then the second loads it.
        a.send(&req(5, "session/close", json!({"sessionId": sid})));
        let got = a.responses(&[json!(5)]);
        assert!(got["5"][0].get("error").is_none(), "{got:?}");
        b.send(&req(3, "session/load", load));
        b.send(&req(
            4,
            "session/prompt",
            json!({"sessionId": sid, "prompt": [{"type": "text", "text": "again"}]}),
        ));
        let got = b.responses(&[json!(3), json!(4)]);
        assert!(got["3"][0].get("error").is_none(), "{got:?}");
        assert_eq!(got["4"][0]["result"]["stopReason"], "end_turn", "{got:?}");
        // A prompt to the closed session in the first process is refused.
        a.send(&req(
            6,
            "session/prompt",
            json!({"sessionId": sid, "prompt": [{"type": "text", "text": "x"}]}),
        ));
        let got = a.responses(&[json!(6)]);
        assert_eq!(code(&got, "6"), -32602);
        assert_eq!(a.finish().0, 0);
        assert_eq!(b.finish().0, 0);
    });
    t.await.unwrap();
    assert_eq!(fake.chat_requests().len(), 2);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_sigterm_mid_turn_saves_and_unlocks() {
    let fake = FakeLlm::start().await;
    let words: String = (0..400).map(|i| format!("t{i} ")).collect();
    fake.push(Reply::text(words).with_delay(25));
    let home = Home::new(&fake);
    let work = home.work();
    let t = tokio::task::spawn_blocking(move || {
        let mut a = Raw::start(&home);
        a.send(&req(1, "initialize", json!({"protocolVersion": 1})));
        a.responses(&[json!(1)]);
        a.send(&req(
            2,
            "session/new",
            json!({"cwd": work, "mcpServers": []}),
        ));
        let got = a.responses(&[json!(2)]);
        let sid = got["2"][0]["result"]["sessionId"]
            .as_str()
            .unwrap()
            .to_string();
        a.send(&req(
            3,
            "session/set_mode",
            json!({"sessionId": sid, "modeId": "tester"}),
        ));
        a.responses(&[json!(3)]);
        a.send(&req(
            4,
            "session/prompt",
            json!({"sessionId": sid, "prompt": [{"type": "text", "text": "long one"}]}),
        ));
        // Wait for the answer to stream, then SIGTERM.
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let v = a.out.recv_timeout(deadline - Instant::now()).unwrap();
            if v["params"]["update"]["sessionUpdate"] == "agent_message_chunk" {
                break;
            }
        }
        let pid = a.child.id().to_string();
        assert!(
            std::process::Command::new("kill")
                .args(["-TERM", &pid])
                .status()
                .unwrap()
                .success()
        );
        let deadline = Instant::now() + Duration::from_secs(30);
        let code = loop {
            if let Some(st) = a.child.try_wait().unwrap() {
                break st.code();
            }
            assert!(
                Instant::now() < deadline,
                "navi acp did not exit on SIGTERM"
            );
            std::thread::sleep(Duration::from_millis(50));
        };
        assert_eq!(code, Some(143));
        (home, sid)
    });
    let (home, sid) = t.await.unwrap();
    let rows = home.rows(&sid);
    let roles: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(roles[..2], ["user", "assistant"], "{rows:?}");
    assert!(
        rows[1].1.starts_with("t0 ") && !rows[1].1.contains("t399"),
        "{rows:?}"
    );
    fake.push(Reply::text("after the signal"));
    let out = home
        .navi(&["run", "--session", &sid, "still there?"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// Global flags before `acp`: `--no-plan` applies to its sessions (planner
/// off: one model call per prompt); the front-end flags are refused (exit 2).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_takes_no_plan_and_refuses_front_end_flags() {
    let fake = FakeLlm::start().await;
    let home = Home::new(&fake);
    for flags in [&["--plain", "acp"][..], &["--profile", "tester", "acp"][..]] {
        let out = home.navi(flags).stdin(Stdio::null()).output().unwrap();
        assert_eq!(out.status.code(), Some(2), "{flags:?}");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains("does not apply to `navi acp`"), "{err}");
    }
    let out = home
        .navi(&["--no-plan", "acp"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.stdout.is_empty(), "nothing but protocol on stdout");
}
