//! Sandboxed commands in the editor's terminal: under default settings
//! `navi acp` asks the editor (the TypeScript SDK client playing one,
//! tests/acp/client.mjs, running commands for real) to run
//! `navi __sandbox-exec --policy FILE -- sh -c CMD`, so the output is live in
//! the editor and the sandbox is the local one. And the runner itself: a
//! bad policy file runs nothing (exit 2), exit codes and signals come back.
#![allow(clippy::unwrap_used, clippy::expect_used)]
use crate::acp_support::{Home, client_or_skip, processes_with};
use crate::support::{FakeLlm, Reply};
use serde_json::{Value, json};
use std::io::BufRead;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::process::{Command, Stdio};

const NAVI: &str = env!("CARGO_BIN_EXE_navi");

fn caps() -> Value {
    json!({"fs": {"readTextFile": false, "writeTextFile": false}, "terminal": true})
}

/// Default settings (workspace-write, no `client_terminals` key): the command
/// runs in the editor's terminal under the sandbox — a write inside the
/// workspace works, one outside fails with the kernel's error in the
/// terminal's output, the call embeds the terminal, the model gets the
/// sandbox note, and no policy file is left behind.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn acp_default_runs_sandboxed_commands_in_the_editors_terminal() {
    let Some(client) =
        client_or_skip("acp_default_runs_sandboxed_commands_in_the_editors_terminal")
    else {
        return;
    };
    let fake = FakeLlm::start().await;
    let home = Home::new(&fake);
    let outside = home.path("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let command = format!(
        "echo in > inside.txt && cat inside.txt; echo out > {}/new.txt",
        outside.display()
    );
    fake.push(Reply::tool_call("terminal", json!({"command": command})));
    fake.push(Reply::text("ran"));
    let d = home
        .drive(
            &client,
            json!([
                {"op": "initialize", "caps": caps()},
                {"op": "new", "as": "a"},
                {"op": "prompt", "session": "a", "text": "go"},
                {"op": "end"}
            ]),
            "allow_once",
        )
        .await;
    let dump = d.dump();
    let created: Vec<&Value> = d
        .log()
        .iter()
        .filter(|e| e["t"] == "terminal" && e["op"] == "create")
        .collect();
    assert_eq!(created.len(), 1, "{dump}");
    let p = &created[0]["params"];
    let program = p["command"].as_str().unwrap();
    assert_eq!(
        Path::new(program).canonicalize().unwrap(),
        Path::new(NAVI).canonicalize().unwrap(),
        "{dump}"
    );
    let args: Vec<&str> = p["args"]
        .as_array()
        .unwrap()
        .iter()
        .map(|a| a.as_str().unwrap())
        .collect();
    assert_eq!(args[0], "__sandbox-exec", "{args:?}");
    assert_eq!(args[1], "--policy", "{args:?}");
    assert_eq!(&args[3..], ["--", "sh", "-c", command.as_str()], "{args:?}");
    // The policy file was private to navi and is gone.
    assert!(
        args[2].starts_with(home.path("data").to_str().unwrap()),
        "{args:?}"
    );
    assert!(!Path::new(args[2]).exists(), "{}", args[2]);
    let run_dir = home.path("data/run");
    let left: Vec<_> = std::fs::read_dir(&run_dir).unwrap().collect();
    assert!(left.is_empty(), "{left:?}");

    // The sandbox held: inside yes, outside no.
    assert_eq!(
        std::fs::read_to_string(home.work().join("inside.txt")).unwrap(),
        "in\n"
    );
    assert!(!outside.join("new.txt").exists());
    let text = fake
        .chat_requests()
        .iter()
        .map(|r| r.to_string())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(
        text.contains("Permission denied") || text.contains("Read-only file system"),
        "{text}"
    );
    assert!(text.contains("the editor's terminal"), "{text}");
    assert!(text.contains("[sandbox]"), "{text}");
    // The call shows the editor's terminal.
    let id = d.id("a");
    let tid = created[0]["id"].as_str().unwrap();
    assert!(
        d.updates(&id)
            .iter()
            .any(|u| u["content"][0]["type"] == "terminal" && u["content"][0]["terminalId"] == tid),
        "{dump}"
    );
}

/// A private policy file for the runner: `dir` writable.
fn policy_file(at: &Path, dir: &Path) -> String {
    let spec = json!({"policy": {"writable": [dir], "tmp_dir": dir}});
    std::fs::write(at, spec.to_string()).unwrap();
    std::fs::set_permissions(at, std::fs::Permissions::from_mode(0o600)).unwrap();
    at.to_string_lossy().into_owned()
}

fn runner(policy: &str, script: &str, cwd: &Path) -> Command {
    let mut c = Command::new(NAVI);
    c.args([
        "__sandbox-exec",
        "--policy",
        policy,
        "--",
        "sh",
        "-c",
        script,
    ])
    .current_dir(cwd);
    c
}

/// A missing, malformed, loose (writable by others) file, or no command:
/// exit 2, a message naming the file, and the command never ran.
#[test]
fn sandbox_exec_refuses_a_bad_policy_file() {
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().canonicalize().unwrap();
    let marker = dir.join("ran");
    let touch = format!("touch {}", marker.display());
    let junk = dir.join("junk.json");
    std::fs::write(&junk, "{\"policy\": [1]}").unwrap();
    std::fs::set_permissions(&junk, std::fs::Permissions::from_mode(0o600)).unwrap();
    let loose = dir.join("loose.json");
    policy_file(&loose, &dir);
    std::fs::set_permissions(&loose, std::fs::Permissions::from_mode(0o666)).unwrap();
    for (file, says) in [
        (dir.join("missing.json"), "cannot read"),
        (junk, "not a valid policy"),
        (loose, "writable by no one else"),
    ] {
        let out = runner(file.to_str().unwrap(), &touch, &dir)
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(
            err.contains(says) && err.contains(file.to_str().unwrap()),
            "{err}"
        );
        assert!(!marker.exists(), "{err}");
    }
    let good = policy_file(&dir.join("good.json"), &dir);
    let out = Command::new(NAVI)
        .args(["__sandbox-exec", "--policy", &good])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    // Hidden from the help.
    let help = Command::new(NAVI).arg("--help").output().unwrap();
    assert!(!String::from_utf8_lossy(&help.stdout).contains("sandbox-exec"));
}

/// The child's exit code comes back, 128 + a signal that ended it; the
/// sandbox applies (a write outside the writable dir fails, inside works);
/// the policy file is deleted once read.
#[test]
fn sandbox_exec_forwards_exit_codes_and_applies_the_policy() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    let w = base.join("w");
    std::fs::create_dir_all(&w).unwrap();
    let cases = [
        ("echo hi > w/in.txt; exit 7", 7),
        ("kill -TERM $$", 143),
        ("kill -INT $$", 130),
        ("echo no > out.txt", 2),
    ];
    for (i, (script, code)) in cases.iter().enumerate() {
        let file = base.join(format!("p{i}.json"));
        let policy = policy_file(&file, &w);
        let out = runner(&policy, script, &base).output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(*code), "{script}: {err}");
        assert!(!file.exists(), "{script}");
    }
    assert_eq!(std::fs::read_to_string(w.join("in.txt")).unwrap(), "hi\n");
    assert!(!base.join("out.txt").exists());
}

/// SIGTERM, SIGINT and SIGHUP sent to the runner reach the command (which
/// may handle them), and nothing it started is left running.
#[test]
fn sandbox_exec_forwards_signals_to_the_command() {
    let tmp = tempfile::tempdir().unwrap();
    let base = tmp.path().canonicalize().unwrap();
    for (i, (name, code)) in [("TERM", 143), ("INT", 41), ("HUP", 129)]
        .into_iter()
        .enumerate()
    {
        let policy = policy_file(&base.join(format!("{name}.json")), &base);
        // INT is handled by the command (exit 41); TERM and HUP end it.
        let trap = if name == "INT" {
            "trap 'exit 41' INT;"
        } else {
            ""
        };
        let nap = format!("sleep 30{i}7");
        let script = format!("{trap} echo ready; {nap} & wait; echo never");
        let mut child = runner(&policy, &script, &base)
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        std::io::BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line, "ready\n");
        let sent = Command::new("kill")
            .args(["-s", name, &child.id().to_string()])
            .status()
            .unwrap();
        assert!(sent.success());
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(code), "{name}");
        assert!(
            processes_with(&nap).is_empty(),
            "{name}: {nap} left running"
        );
    }
}
