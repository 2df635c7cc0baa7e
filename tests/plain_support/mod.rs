//! Running the real `navi --plain` binary in a real pty (or with pipes)
//! against the fake LLM server, with a temp data dir and a test profile.
#![allow(dead_code)]
// Test helpers: a panic here is the failing test's message.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use expectrl::session::OsSession as Session;
use serde_json::json;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

pub const WAIT: Duration = Duration::from_secs(30);

/// A temp dir with `cfg/profiles/tester` (planning off) and `data/`.
pub struct Home {
    pub dir: tempfile::TempDir,
    pub url: String,
}

impl Home {
    pub fn new(ollama_url: &str) -> Home {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("cfg/profiles/tester");
        std::fs::create_dir_all(&p).unwrap();
        let cfg = json!({
            "id": "tester", "name": "Tester", "description": "plain-mode test profile",
            "short_description": "tests", "llm_backend": "ollama", "model": ["test-model"],
            "enabled_tools": ["todo", "terminal"],
            "planning_enabled": true,
            "planning_phase1_enabled": false, "planning_phase3_enabled": false,
            "iteration_budget_enabled": false, "goal_anchoring_enabled": false,
            "anti_stall_enabled": false, "step_validation_enabled": false,
            "think_enabled": false
        });
        std::fs::write(p.join("config.json"), cfg.to_string()).unwrap();
        std::fs::write(p.join("system_prompt.txt"), "You are a test profile.\n").unwrap();
        std::fs::create_dir_all(dir.path().join("data")).unwrap();
        Home {
            dir,
            url: ollama_url.to_string(),
        }
    }

    pub fn data(&self) -> PathBuf {
        self.dir.path().join("data")
    }

    /// `navi --plain --profile tester` with a clean environment.
    pub fn command(&self, term: &str, extra: &[(&str, &str)]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_navi"));
        c.args(["--plain", "--profile", "tester"]);
        self.setup(c, term, extra)
    }

    /// `navi run --profile tester ARGS…` on the same home (for `navi run`
    /// on a pty: its approval questions go to /dev/tty).
    pub fn run_command(&self, args: &[&str]) -> Command {
        let mut c = Command::new(env!("CARGO_BIN_EXE_navi"));
        c.args(["run", "--profile", "tester"]).args(args);
        self.setup(c, "xterm-256color", &[("NO_COLOR", "1")])
    }

    /// The same, through `sh` with stderr sent to `file`.
    pub fn command_stderr_to(&self, term: &str, file: &Path) -> Command {
        let mut c = Command::new("sh");
        c.args([
            "-c",
            "exec \"$0\" --plain --profile tester 2>\"$1\"",
            env!("CARGO_BIN_EXE_navi"),
        ])
        .arg(file);
        self.setup(c, term, &[])
    }

    /// A caller-built command (e.g. through `sh` with redirections) with
    /// the test environment.
    pub fn setup_for_test(&self, c: Command, term: &str) -> Command {
        self.setup(c, term, &[])
    }

    fn setup(&self, mut c: Command, term: &str, extra: &[(&str, &str)]) -> Command {
        c.env_clear()
            .env("PATH", std::env::var("PATH").unwrap_or_default())
            .env("HOME", self.dir.path())
            .env("LANG", "C.UTF-8")
            .env("TERM", term)
            .env("OLLAMA_HOST", &self.url)
            .env("NAVI_DATA_DIR", self.data())
            .env("NAVI_CONFIG_DIR", self.dir.path().join("cfg"))
            .current_dir(self.dir.path());
        for (k, v) in extra {
            c.env(k, v);
        }
        c
    }
}

/// The binary on a pty; everything it wrote is kept in `out`.
pub struct Pty {
    s: Session,
    pub out: Vec<u8>,
    /// Where the next `wait_for` starts looking.
    mark: usize,
    dsr_answered: usize,
}

impl Pty {
    pub fn spawn(cmd: Command) -> Pty {
        let mut s = Session::spawn(cmd).unwrap();
        s.get_process_mut().set_window_size(100, 40).unwrap();
        Pty {
            s,
            out: Vec::new(),
            mark: 0,
            dsr_answered: 0,
        }
    }

    /// Reads what is there; answers cursor-position queries like a terminal.
    fn pump(&mut self) -> bool {
        let mut buf = [0u8; 8192];
        let mut got = false;
        loop {
            match self.s.try_read(&mut buf) {
                Ok(0) => break,
                Ok(n) => {
                    self.out.extend_from_slice(&buf[..n]);
                    got = true;
                }
                Err(_) => break,
            }
        }
        let queries = count(&self.out, b"\x1b[6n");
        while self.dsr_answered < queries {
            self.s.write_all(b"\x1b[1;1R").unwrap();
            self.dsr_answered += 1;
        }
        got
    }

    /// Waits until `needle` shows up after the mark; moves the mark past it.
    pub fn wait_for(&mut self, needle: &str) {
        let start = Instant::now();
        loop {
            self.pump();
            if let Some(i) = find(&self.out[self.mark..], needle.as_bytes()) {
                self.mark += i + needle.len();
                return;
            }
            if start.elapsed() > WAIT {
                panic!(
                    "timed out waiting for {needle:?}; output after the mark:\n{}",
                    String::from_utf8_lossy(&self.out[self.mark..])
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Waits for the prompt (reedline draws it after the cursor query).
    pub fn wait_prompt(&mut self) {
        self.wait_for("navi[tester]");
    }

    pub fn send(&mut self, s: &str) {
        self.s.write_all(s.as_bytes()).unwrap();
        self.s.flush().unwrap();
    }

    /// Waits for the process to exit; returns its exit code.
    pub fn exit_code(&mut self) -> i32 {
        let start = Instant::now();
        loop {
            self.pump();
            if let Ok(st) = self.s.get_process().status() {
                if let expectrl::process::unix::WaitStatus::Exited(_, code) = st {
                    self.pump();
                    return code;
                }
                if !matches!(st, expectrl::process::unix::WaitStatus::StillAlive) {
                    panic!("navi ended with {st:?}");
                }
            }
            if start.elapsed() > WAIT {
                panic!(
                    "navi did not exit; output:\n{}",
                    String::from_utf8_lossy(&self.out)
                );
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    }

    /// Changes the pty's size (the kernel sends navi SIGWINCH).
    pub fn resize(&mut self, cols: u16, rows: u16) {
        self.s
            .get_process_mut()
            .set_window_size(cols, rows)
            .unwrap();
    }

    /// The pid of navi on the pty.
    pub fn pid(&self) -> i32 {
        self.s.get_process().pid().as_raw()
    }

    /// Turns the pty's echo on, as in a real terminal (the pty library
    /// starts with it off).
    pub fn echo_on(&mut self) {
        self.s.get_process_mut().set_echo(true, None).unwrap();
    }

    /// Kills navi with SIGKILL (like a dropped SSH connection: no clean-up).
    pub fn kill9(&mut self) {
        self.s
            .get_process_mut()
            .kill(expectrl::process::unix::Signal::SIGKILL)
            .unwrap();
    }

    pub fn text(&self) -> String {
        String::from_utf8_lossy(&self.out).into_owned()
    }
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

fn count(hay: &[u8], needle: &[u8]) -> usize {
    hay.windows(needle.len()).filter(|w| *w == needle).count()
}

/// Runs the binary with `input` on a pipe; returns (exit code, stdout, stderr).
pub fn piped(mut cmd: Command, input: &str) -> (i32, String, String) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let mut err = String::new();
    child
        .stderr
        .take()
        .unwrap()
        .read_to_string(&mut err)
        .unwrap();
    let status = child.wait().unwrap();
    (status.code().unwrap_or(-1), out, err)
}

/// The `content` of every message of a chat request body.
pub fn contents(body: &serde_json::Value) -> Vec<String> {
    body["messages"]
        .as_array()
        .map(|m| {
            m.iter()
                .map(|x| x["content"].as_str().unwrap_or("").to_string())
                .collect()
        })
        .unwrap_or_default()
}
