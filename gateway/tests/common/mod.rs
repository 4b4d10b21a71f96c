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

/// A minimal receiver for binary tests: answers 200 after `delay_ms`, records the
/// `webhook-id` of every request.
pub struct SlowReceiver {
    pub url: String,
    pub delay_ms: std::sync::Arc<std::sync::atomic::AtomicU64>,
    pub seen: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl SlowReceiver {
    pub async fn start(delay_ms: u64) -> Self {
        use std::sync::Arc;
        use std::sync::atomic::{AtomicU64, Ordering};
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let delay = Arc::new(AtomicU64::new(delay_ms));
        let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
        let (d, s) = (Arc::clone(&delay), Arc::clone(&seen));
        let task = tokio::spawn(async move {
            loop {
                let Ok((stream, _)) = listener.accept().await else {
                    continue;
                };
                let (d, s) = (Arc::clone(&d), Arc::clone(&s));
                tokio::spawn(async move {
                    let svc = hyper::service::service_fn(
                        move |req: hyper::Request<hyper::body::Incoming>| {
                            let (d, s) = (Arc::clone(&d), Arc::clone(&s));
                            async move {
                                let id = req
                                    .headers()
                                    .get("webhook-id")
                                    .and_then(|v| v.to_str().ok())
                                    .unwrap_or("")
                                    .to_owned();
                                tokio::time::sleep(Duration::from_millis(d.load(Ordering::SeqCst)))
                                    .await;
                                s.lock().unwrap().push(id);
                                Ok::<_, std::convert::Infallible>(hyper::Response::new(
                                    http_body_util::Full::new(bytes::Bytes::from_static(b"ok")),
                                ))
                            }
                        },
                    );
                    let io = hyper_util::rt::TokioIo::new(stream);
                    let _ = hyper::server::conn::http1::Builder::new()
                        .serve_connection(io, svc)
                        .await;
                });
            }
        });
        Self {
            url,
            delay_ms: delay,
            seen,
            task,
        }
    }

    /// The distinct webhook-ids answered so far.
    pub fn distinct(&self) -> std::collections::HashSet<String> {
        self.seen.lock().unwrap().iter().cloned().collect()
    }
}

impl Drop for SlowReceiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Creates tenant `acme` with an endpoint at `url` and sends `n` events; returns the
/// tenant key and the acknowledged event ids.
pub async fn tenant_endpoint_events(
    http: &reqwest::Client,
    base: &str,
    url: &str,
    n: usize,
) -> (String, Vec<String>) {
    let (s, t) = call(
        http,
        "POST",
        &format!("{base}/v1/tenants"),
        ADMIN,
        Some(serde_json::json!({"id": "acme"})),
    )
    .await;
    assert_eq!(s, 201, "{t}");
    let key = t["api_key"].as_str().unwrap().to_owned();
    let body = serde_json::json!({"url": url, "max_in_flight": 4, "policy": {"jitter": "none", "base_ms": 200, "max_delay_ms": 1000}});
    let (s, e) = call(
        http,
        "POST",
        &format!("{base}/v1/tenants/acme/endpoints"),
        &key,
        Some(body),
    )
    .await;
    assert_eq!(s, 201, "{e}");
    let mut ids = Vec::new();
    for i in 0..n {
        let body = serde_json::json!({"event_type": "drill", "payload": {"i": i}});
        let (s, ev) = call(
            http,
            "POST",
            &format!("{base}/v1/tenants/acme/events"),
            &key,
            Some(body),
        )
        .await;
        assert_eq!(s, 202, "{ev}");
        ids.push(ev["id"].as_str().unwrap().to_owned());
    }
    (key, ids)
}

/// Waits (bounded) until every event's delivery has succeeded; returns the ones that have not.
pub async fn wait_all_succeeded(
    http: &reqwest::Client,
    base: &str,
    key: &str,
    ids: &[String],
    limit: Duration,
) -> Vec<String> {
    let deadline = tokio::time::Instant::now() + limit;
    loop {
        let mut missing = Vec::new();
        for id in ids {
            let (_, ev) = call(
                http,
                "GET",
                &format!("{base}/v1/tenants/acme/events/{id}"),
                key,
                None,
            )
            .await;
            if ev["deliveries"][0]["state"] != "succeeded" {
                missing.push(id.clone());
            }
        }
        if missing.is_empty() || tokio::time::Instant::now() >= deadline {
            return missing;
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}
