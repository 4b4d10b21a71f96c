//! Spawning the real `hookgate` binary for crash and signal tests.

#![allow(dead_code, unreachable_pub, reason = "shared by several test binaries")]

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub const ADMIN: &str = "hgk_test-admin-token-0123456789";

/// A `hookgate serve` child process and the address it listens on.
pub struct Gateway {
    pub child: Child,
    pub base: String,
}

impl Gateway {
    /// Starts `hookgate serve` on a free loopback port over `data_dir`.
    pub fn spawn(data_dir: &Path, extra_env: &[(&str, &str)]) -> Self {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_hookgate"));
        cmd.arg("serve")
            .env("HOOKGATE_LISTEN", "127.0.0.1:0")
            .env("HOOKGATE_DATA_DIR", data_dir)
            .env("HOOKGATE_ADMIN_TOKEN", ADMIN)
            .env("HOOKGATE_ALLOW_PRIVATE_SUBNETS", "127.0.0.0/8")
            .env("HOOKGATE_MIN_FREE_DISK", "0")
            .env("HOOKGATE_LOG_FORMAT", "json")
            .env("HOOKGATE_LOG", "info")
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        for (k, v) in extra_env {
            cmd.env(k, v);
        }
        let mut child = cmd.spawn().expect("spawn hookgate");
        let stderr = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut sent = false;
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if !sent
                    && let Ok(v) = serde_json::from_str::<serde_json::Value>(&line)
                    && let Some(addr) = v["addr"].as_str()
                {
                    let _ = tx.send(addr.to_owned());
                    sent = true;
                }
            }
        });
        let addr = rx
            .recv_timeout(Duration::from_secs(60))
            .expect("hookgate did not report its address");
        Self {
            child,
            base: format!("http://{addr}"),
        }
    }

    /// SIGKILL: no shutdown work at all.
    pub fn kill(mut self) {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
    }

    /// SIGTERM, then wait for the exit status.
    pub fn terminate(mut self) -> std::process::ExitStatus {
        let pid = rustix::process::Pid::from_child(&self.child);
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
        self.child.wait().unwrap()
    }
}

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A JSON API call.
pub async fn call(
    http: &reqwest::Client,
    method: &str,
    url: &str,
    token: &str,
    body: Option<serde_json::Value>,
) -> (u16, serde_json::Value) {
    let mut req = http
        .request(method.parse().unwrap(), url)
        .bearer_auth(token);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status().as_u16();
    (status, resp.json().await.unwrap_or(serde_json::Value::Null))
}
