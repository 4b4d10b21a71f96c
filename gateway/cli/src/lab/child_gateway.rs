//! A gateway as a child process: `hookgate serve` on a free loopback port, with its
//! JSON log read on a thread (the last lines are kept, for errors and for tests that
//! read the log). The drills start it, and so do the binary's own tests.

use std::collections::VecDeque;
use std::io::{BufRead as _, BufReader};
use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a gateway may take to report its address.
const START_LIMIT: Duration = Duration::from_secs(60);
/// How long a SIGTERMed gateway may take to exit before it is killed.
const STOP_LIMIT: Duration = Duration::from_secs(20);
/// Log lines kept per process by default.
const KEPT_LINES: usize = 40;

/// Why a gateway did not start.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct SpawnError(pub String);

/// How to start the gateway: the executable, the data dir, the admin token and extra
/// `HOOKGATE_*` settings (applied last, so they override the defaults here).
/// Inherited `HOOKGATE_*` variables are dropped, so a run is the same whatever the
/// caller's environment.
#[derive(Debug, Clone)]
pub struct GatewaySpec {
    pub bin: PathBuf,
    pub data_dir: PathBuf,
    pub admin: String,
    pub env: Vec<(String, String)>,
    /// How many of the last log lines to keep.
    pub kept_lines: usize,
}

impl GatewaySpec {
    /// A spec with a fresh admin token, logging at `info`.
    pub fn new(bin: PathBuf, data_dir: PathBuf) -> Self {
        Self {
            bin,
            data_dir,
            admin: hookgate_server::generate_token(),
            env: Vec::new(),
            kept_lines: KEPT_LINES,
        }
    }

    /// Adds (or overrides) one `HOOKGATE_*` setting.
    pub fn set(&mut self, key: &str, value: &str) -> &mut Self {
        self.env.push((key.to_owned(), value.to_owned()));
        self
    }

    /// Starts the gateway and waits (bounded) until it reports its address.
    ///
    /// # Errors
    /// When it cannot be started or reports no address in time.
    pub async fn spawn(&self) -> Result<GatewayProcess, SpawnError> {
        let spec = self.clone();
        tokio::task::spawn_blocking(move || spec.spawn_blocking())
            .await
            .map_err(|e| SpawnError(e.to_string()))?
    }

    /// [`Self::spawn`], blocking this thread while it waits.
    ///
    /// # Errors
    /// As [`Self::spawn`].
    pub fn spawn_blocking(&self) -> Result<GatewayProcess, SpawnError> {
        let mut cmd = Command::new(&self.bin);
        cmd.arg("serve");
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("HOOKGATE_") {
                cmd.env_remove(key);
            }
        }
        cmd.env("HOOKGATE_LISTEN", "127.0.0.1:0")
            .env("HOOKGATE_STORE__DATA_DIR", &self.data_dir)
            .env("HOOKGATE_ADMIN_TOKEN", &self.admin)
            .env("HOOKGATE_ALLOW_PRIVATE_SUBNETS", "127.0.0.0/8")
            .env("HOOKGATE_STORE__MIN_FREE_DISK", "0")
            .env("HOOKGATE_LOG_FORMAT", "json")
            // The address line is info.
            .env("HOOKGATE_LOG", "info")
            .envs(self.env.iter().map(|(k, v)| (k, v)))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        let mut child = cmd
            .spawn()
            .map_err(|e| SpawnError(format!("cannot start {}: {e}", self.bin.display())))?;
        let logs = Arc::new(Mutex::new(VecDeque::new()));
        let (tx, rx) = std::sync::mpsc::channel();
        if let Some(stderr) = child.stderr.take() {
            let (kept, kept_lines) = (Arc::clone(&logs), self.kept_lines);
            std::thread::spawn(move || {
                let mut sent = false;
                for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                    if !sent
                        && let Ok(v) = serde_json::from_str::<serde_json::Value>(&line)
                        && let Some(addr) = v["addr"].as_str().and_then(|a| a.parse().ok())
                    {
                        let _ = tx.send(addr);
                        sent = true;
                    }
                    let mut kept = kept.lock().unwrap_or_else(|p| p.into_inner());
                    if kept.len() >= kept_lines {
                        kept.pop_front();
                    }
                    kept.push_back(line);
                }
            });
        }
        let addr: SocketAddr = match rx.recv_timeout(START_LIMIT) {
            Ok(addr) => addr,
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                let tail = tail(&logs);
                return Err(SpawnError(format!(
                    "did not report its address within {START_LIMIT:?}; its log ends:\n{tail}"
                )));
            }
        };
        Ok(GatewayProcess { child, addr, logs })
    }
}

fn tail(logs: &Mutex<VecDeque<String>>) -> String {
    let kept = logs.lock().unwrap_or_else(|p| p.into_inner());
    kept.iter().cloned().collect::<Vec<_>>().join("\n")
}

/// The resident set size of process `pid` in KiB (`VmRSS` of `/proc/<pid>/status`).
pub fn rss_kib(pid: u32) -> Option<u64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmRSS:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// A running `hookgate serve`; killed when dropped.
pub struct GatewayProcess {
    child: Child,
    pub addr: SocketAddr,
    logs: Arc<Mutex<VecDeque<String>>>,
}

impl GatewayProcess {
    /// SIGKILL: no shutdown work at all. Returns once the process is reaped, so its
    /// data dir lock is free.
    pub fn kill(mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGTERM, then the exit status (bounded: killed after [`STOP_LIMIT`]).
    pub async fn terminate(mut self) -> Option<ExitStatus> {
        let pid = rustix::process::Pid::from_child(&self.child);
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        let deadline = Instant::now() + STOP_LIMIT;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        None
    }

    /// [`Self::terminate`], blocking this thread while it waits.
    pub fn terminate_blocking(mut self) -> Option<ExitStatus> {
        let pid = rustix::process::Pid::from_child(&self.child);
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::TERM);
        let deadline = Instant::now() + STOP_LIMIT;
        while Instant::now() < deadline {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Some(status);
            }
            std::thread::sleep(Duration::from_millis(20));
        }
        None
    }

    /// SIGSTOP: the process stops where it is, its connections left open
    /// (a frozen VM, a stalled host), until [`Self::thaw`].
    pub fn freeze(&self) {
        let pid = rustix::process::Pid::from_child(&self.child);
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::STOP);
    }

    /// SIGCONT: a frozen process carries on.
    pub fn thaw(&self) {
        let pid = rustix::process::Pid::from_child(&self.child);
        let _ = rustix::process::kill_process(pid, rustix::process::Signal::CONT);
    }

    /// Whether the process still runs (it has not exited).
    pub fn running(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// The process id.
    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// The log lines kept so far, oldest first.
    pub fn logs(&self) -> Vec<String> {
        let kept = self.logs.lock().unwrap_or_else(|p| p.into_inner());
        kept.iter().cloned().collect()
    }
}

impl Drop for GatewayProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
