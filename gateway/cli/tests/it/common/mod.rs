//! What the binary's test modules share: the real `hookgate` as a child process (the
//! lab's launcher), JSON calls through the API client, receivers, running CLI
//! commands, and a plugin author's cargo and shell.

#![allow(
    unreachable_pub,
    reason = "helpers of the test modules, public to them all"
)]

use std::path::Path;
use std::time::Duration;

use hookgate::client::{ApiClient, ApiRequest};
use hookgate::lab::child_gateway::{GatewayProcess, GatewaySpec};

mod cli;
mod markdown;
mod plugin_author;
mod raw;

pub use cli::{CliClient, CliRun, cli_words, run_cli, wait_until};
pub use markdown::sh_blocks;
pub use plugin_author::{bash_in, cargo_in, hookgate_in, target_dir_beside_workspace};
pub use raw::RawReceiver;

pub const ADMIN: &str = "hgk_test-admin-token-0123456789";

/// A `hookgate serve` child process (the lab's launcher, with every log line kept)
/// and the address it listens on.
pub struct Gateway {
    pub base: String,
    process: GatewayProcess,
}

impl Gateway {
    /// Starts `hookgate serve` on a free loopback port over `data_dir`.
    pub fn spawn(data_dir: &Path, extra_env: &[(&str, &str)]) -> Self {
        let mut spec = GatewaySpec::new(env!("CARGO_BIN_EXE_hookgate").into(), data_dir.into());
        spec.admin = ADMIN.to_owned();
        spec.kept_lines = usize::MAX;
        for (k, v) in extra_env {
            spec.set(k, v);
        }
        let process = spec.spawn_blocking().expect("hookgate starts");
        Self {
            base: format!("http://{}", process.addr),
            process,
        }
    }

    /// Every line the gateway wrote to stderr (its log) so far.
    pub fn logs(&self) -> Vec<String> {
        self.process.logs()
    }

    /// SIGSTOP, until [`Self::thaw`] (a frozen node).
    pub fn freeze(&self) {
        self.process.freeze();
    }

    /// SIGCONT.
    pub fn thaw(&self) {
        self.process.thaw();
    }

    /// SIGKILL: no shutdown work at all.
    pub fn kill(self) {
        self.process.kill();
    }

    /// SIGTERM, then wait (bounded) for the exit status.
    pub fn terminate(self) -> std::process::ExitStatus {
        let status = self.process.terminate_blocking();
        status.expect("hookgate exits after SIGTERM")
    }
}

/// A JSON API call to `url` (a gateway's base and a path) through the command
/// line's API client.
pub async fn call(
    method: &str,
    url: &str,
    token: &str,
    body: Option<serde_json::Value>,
) -> (u16, serde_json::Value) {
    let after_scheme = url.strip_prefix("http://").expect("an http URL");
    let split = after_scheme.find('/').unwrap_or(after_scheme.len());
    let (authority, path) = after_scheme.split_at(split);
    let api = ApiClient::new(&format!("http://{authority}"), Some(token.to_owned())).unwrap();
    let mut request = ApiRequest::path(method.parse().unwrap(), path);
    if let Some(b) = body {
        request = request.json(&b);
    }
    let answer = api.exchange(request).await.unwrap();
    (answer.status, answer.json())
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
pub async fn tenant_endpoint_events(base: &str, url: &str, n: usize) -> (String, Vec<String>) {
    let endpoint = serde_json::json!({"url": url, "max_in_flight": 4, "policy": {"jitter": "none", "base_ms": 200, "max_delay_ms": 1000}});
    tenant_with_endpoint_events(base, endpoint, n).await
}

/// Creates tenant `acme` with the endpoint `endpoint` describes and sends `n`
/// events; returns the tenant key and the acknowledged event ids.
pub async fn tenant_with_endpoint_events(
    base: &str,
    endpoint: serde_json::Value,
    n: usize,
) -> (String, Vec<String>) {
    let (s, t) = call(
        "POST",
        &format!("{base}/v1/tenants"),
        ADMIN,
        Some(serde_json::json!({"id": "acme"})),
    )
    .await;
    assert_eq!(s, 201, "{t}");
    let key = t["api_key"].as_str().unwrap().to_owned();
    let (s, e) = call(
        "POST",
        &format!("{base}/v1/tenants/acme/endpoints"),
        &key,
        Some(endpoint),
    )
    .await;
    assert_eq!(s, 201, "{e}");
    let mut ids = Vec::new();
    for i in 0..n {
        let body = serde_json::json!({"event_type": "drill", "payload": {"i": i}});
        let (s, ev) = call(
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
