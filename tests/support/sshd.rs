//! A real OpenSSH server on 127.0.0.1 for `ssh_exec` tests.
//!
//! [`Sshd::start`] makes a temp dir with a fresh host key and client key
//! (ssh-keygen), writes an `sshd_config` (`UsePAM no`, `StrictModes no`,
//! `AuthorizedKeysFile` = the temp file, key auth only) and runs
//! `/usr/sbin/sshd -D -e -f cfg` as the current user on a free port, then
//! waits until the port accepts. Dropping it kills sshd. A missing sshd is a
//! test FAILURE with the install hint, never a skip.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::Read;
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

const SSHD: &str = "/usr/sbin/sshd";

pub struct Sshd {
    pub port: u16,
    pub user: String,
    /// Private key accepted by the server.
    pub client_key: PathBuf,
    /// The host's public key line (`ssh-ed25519 AAAA…`).
    pub host_public_key: String,
    pub dir: tempfile::TempDir,
    child: Child,
}

fn keygen(path: &Path) {
    let out = Command::new("ssh-keygen")
        .args(["-q", "-t", "ed25519", "-N", "", "-C", "navi-test", "-f"])
        .arg(path)
        .output()
        .expect("ssh-keygen not found: install openssh-client (apt-get install -y openssh-client)");
    assert!(
        out.status.success(),
        "ssh-keygen failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

impl Sshd {
    pub fn start() -> Sshd {
        assert!(
            Path::new(SSHD).exists(),
            "{SSHD} not found: the ssh_exec tests need a real OpenSSH server; install it with `apt-get install -y openssh-server openssh-client`"
        );
        let dir = tempfile::tempdir().unwrap();
        let d = dir.path();
        keygen(&d.join("host_key"));
        keygen(&d.join("client_key"));
        std::fs::copy(d.join("client_key.pub"), d.join("authorized_keys")).unwrap();
        let host_public_key = std::fs::read_to_string(d.join("host_key.pub"))
            .unwrap()
            .split_whitespace()
            .take(2)
            .collect::<Vec<_>>()
            .join(" ");
        let user = String::from_utf8(Command::new("id").arg("-un").output().unwrap().stdout)
            .unwrap()
            .trim()
            .to_string();
        // sshd started by root insists on its privilege separation directory.
        let _ = std::fs::create_dir_all("/run/sshd");
        let port = free_port();
        let cfg = d.join("sshd_config");
        std::fs::write(
            &cfg,
            format!(
                "Port {port}\nListenAddress 127.0.0.1\nHostKey {d}/host_key\nPidFile {d}/sshd.pid\n\
                 AuthorizedKeysFile {d}/authorized_keys\nUsePAM no\nStrictModes no\n\
                 PasswordAuthentication no\nKbdInteractiveAuthentication no\nPubkeyAuthentication yes\n\
                 PermitRootLogin yes\nMaxStartups 100\nMaxSessions 100\nLogLevel ERROR\n",
                d = d.display()
            ),
        )
        .unwrap();
        let mut child = Command::new(SSHD)
            .arg("-D")
            .arg("-e")
            .arg("-f")
            .arg(&cfg)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {SSHD}: {e}"));
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            if let Ok(Some(status)) = child.try_wait() {
                let mut err = String::new();
                if let Some(mut s) = child.stderr.take() {
                    let _ = s.read_to_string(&mut err);
                }
                panic!("sshd exited at start ({status}): {err}");
            }
            if TcpStream::connect(("127.0.0.1", port)).is_ok() {
                break;
            }
            assert!(
                Instant::now() < deadline,
                "sshd did not listen on port {port}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Sshd {
            port,
            user,
            client_key: d.join("client_key"),
            host_public_key,
            dir,
            child,
        }
    }

    /// The `known_hosts` line for this server.
    pub fn known_hosts_line(&self) -> String {
        format!("[127.0.0.1]:{} {}\n", self.port, self.host_public_key)
    }
}

impl Drop for Sshd {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
