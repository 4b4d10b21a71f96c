//! What the binary's test modules share: the real `hookgate` as a child process (the
//! lab's launcher), JSON calls through the API client, receivers, and running CLI
//! commands.

#![allow(
    unreachable_pub,
    reason = "helpers of the test modules, public to them all"
)]

use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hookgate::client::{ApiClient, ApiRequest};
use hookgate::lab::child_gateway::{GatewayProcess, GatewaySpec};
use hookgate::lab::raw_receiver::{
    Action, RawRequest, ReadLimits, Responder, Response, RunningReceiver, Then,
};

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
    let (s, t) = call(
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

// ---- The command-line client: running `hookgate` subcommands (cli_client.rs) ----

/// Every CLI run, and every wait of the client tests, ends within this.
pub const CLI_LIMIT: Duration = Duration::from_secs(60);

/// One finished `hookgate` run.
pub struct CliRun {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl CliRun {
    /// Stdout parsed as JSON (`--json` output).
    pub fn json(&self) -> serde_json::Value {
        serde_json::from_str(&self.stdout).unwrap_or_else(|e| panic!("{e}: {}", self.stdout))
    }

    /// The first stdout line starting with `prefix`.
    pub fn line(&self, prefix: &str) -> &str {
        let found = self.stdout.lines().find(|l| l.starts_with(prefix));
        found.unwrap_or_else(|| panic!("no line starts with {prefix:?} in\n{}", self.stdout))
    }
}

/// Splits a command line into words; `'...'` keeps spaces inside one word.
pub fn cli_words(line: &str) -> Vec<String> {
    let (mut out, mut word, mut quoted, mut started) = (Vec::new(), String::new(), false, false);
    for c in line.chars() {
        match c {
            '\'' => (quoted, started) = (!quoted, true),
            c if c.is_whitespace() && !quoted => {
                if started {
                    out.push(std::mem::take(&mut word));
                }
                started = false;
            }
            c => {
                word.push(c);
                started = true;
            }
        }
    }
    if started {
        out.push(word);
    }
    out
}

/// Runs `hookgate args...` with no inherited `HOOKGATE_*` client variables, feeding
/// `stdin`; bounded by [`CLI_LIMIT`].
pub fn run_cli(env: &[(&str, &str)], args: &[String], stdin: &[u8]) -> CliRun {
    use std::io::{Read, Write};
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_hookgate"));
    cmd.args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    for var in ["URL", "TOKEN", "TENANT", "WEBHOOK_SECRET"] {
        cmd.env_remove(format!("HOOKGATE_{var}"));
    }
    let mut child = cmd
        .envs(env.iter().copied())
        .spawn()
        .expect("spawn hookgate");
    let (mut input, stdin) = (child.stdin.take().unwrap(), stdin.to_vec());
    let writer = std::thread::spawn(move || drop(input.write_all(&stdin)));
    let read = |mut r: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut s = String::new();
            let _ = r.read_to_string(&mut s);
            s
        })
    };
    let out = read(Box::new(child.stdout.take().unwrap()));
    let err = read(Box::new(child.stderr.take().unwrap()));
    let deadline = std::time::Instant::now() + CLI_LIMIT;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            panic!("hookgate {args:?} did not finish within {CLI_LIMIT:?}");
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    writer.join().unwrap();
    let (stdout, stderr) = (out.join().unwrap(), err.join().unwrap());
    let code = status.code().unwrap_or(-1);
    CliRun {
        code,
        stdout,
        stderr,
    }
}

/// The CLI pointed at one gateway with one token (`HOOKGATE_URL`, `HOOKGATE_TOKEN`).
pub struct CliClient {
    pub base: String,
    pub token: String,
}

impl CliClient {
    pub fn new(base: &str, token: &str) -> Self {
        let (base, token) = (base.to_owned(), token.to_owned());
        Self { base, token }
    }

    /// Runs a command line (split by [`cli_words`]).
    pub fn run(&self, line: &str) -> CliRun {
        let env = [
            ("HOOKGATE_URL", &*self.base),
            ("HOOKGATE_TOKEN", &*self.token),
        ];
        run_cli(&env, &cli_words(line), b"")
    }

    /// Runs `line`, asserting success.
    pub fn ok(&self, line: &str) -> CliRun {
        let run = self.run(line);
        assert_eq!(run.code, 0, "{line}\n{}\n{}", run.stdout, run.stderr);
        run
    }

    /// Runs `line`, asserting the exit code and an error holding `phrase`: one line,
    /// unless it is clap's usage error.
    pub fn fails(&self, line: &str, code: i32, phrase: &str) -> CliRun {
        let run = self.run(line);
        assert_eq!(run.code, code, "{line}\n{}\n{}", run.stdout, run.stderr);
        assert!(
            run.stderr.contains(phrase),
            "{line}: {:?} lacks {phrase:?}",
            run.stderr
        );
        let clap_usage = run.stderr.contains("For more information, try '--help'");
        assert!(
            clap_usage || run.stderr.trim_end().lines().count() == 1,
            "{}",
            run.stderr
        );
        run
    }

    /// Creates tenant `id`; returns a client acting with its API key.
    pub fn create_tenant(&self, id: &str) -> CliClient {
        let reply = self.ok(&format!("tenants create {id} --json")).json();
        CliClient::new(&self.base, reply["api_key"].as_str().unwrap())
    }

    /// Creates an endpoint of tenant `acme`; returns its id.
    pub fn create_endpoint(&self, url: &str, flags: &str) -> String {
        let line = format!("endpoints create --tenant acme --endpoint-url {url} --json {flags}");
        self.ok(&line).json()["id"].as_str().unwrap().to_owned()
    }
}

/// Polls `probe` until it gives a value, for at most [`CLI_LIMIT`].
pub fn wait_until<T>(what: &str, mut probe: impl FnMut() -> Option<T>) -> T {
    let deadline = std::time::Instant::now() + CLI_LIMIT;
    loop {
        if let Some(v) = probe() {
            return v;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "timed out waiting for {what}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The lab's raw-socket receiver on a thread of its own that keeps every raw request
/// (request line, headers, body) and answers the given statuses in turn, the last
/// one from then on, closing each connection.
pub struct RawReceiver {
    pub url: String,
    pub requests: Arc<Mutex<Vec<Vec<u8>>>>,
    stop: tokio_util::sync::CancellationToken,
}

/// Records requests and answers from a list of statuses.
struct StatusList {
    statuses: Vec<u16>,
    requests: Arc<Mutex<Vec<Vec<u8>>>>,
}

impl Responder for StatusList {
    fn respond(&self, request: &RawRequest) -> Action {
        let mut requests = self.requests.lock().unwrap();
        let status = self.statuses[requests.len().min(self.statuses.len() - 1)];
        requests.push(request.raw.clone());
        let mut answer = Response::text(status, "");
        answer.close = true;
        Action {
            delay: Duration::ZERO,
            then: Then::Answer(answer),
        }
    }
}

const RAW_LIMITS: ReadLimits = ReadLimits {
    max_head: 64 * 1024,
    max_body: 4 * 1024 * 1024,
    idle: Duration::from_secs(10),
    read: Duration::from_secs(10),
};

impl RawReceiver {
    pub fn start(statuses: &[u16]) -> Self {
        let requests = Arc::new(Mutex::new(Vec::new()));
        let responder = Arc::new(StatusList {
            statuses: statuses.to_vec(),
            requests: Arc::clone(&requests),
        });
        let stop = tokio_util::sync::CancellationToken::new();
        let (tx, rx) = std::sync::mpsc::channel();
        let until = stop.clone();
        std::thread::spawn(move || {
            let runtime = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            runtime.block_on(async move {
                let running = RunningReceiver::start(responder, RAW_LIMITS).unwrap();
                tx.send(running.addr).unwrap();
                until.cancelled().await;
            });
        });
        let addr = rx.recv_timeout(CLI_LIMIT).expect("the receiver starts");
        let url = format!("http://{addr}/hook");
        Self {
            url,
            requests,
            stop,
        }
    }

    /// How many requests arrived.
    pub fn count(&self) -> usize {
        self.requests.lock().unwrap().len()
    }

    /// The first request, waiting (bounded) for it.
    pub fn first(&self) -> Vec<u8> {
        wait_until("a request", || {
            self.requests.lock().unwrap().first().cloned()
        })
    }
}

impl Drop for RawReceiver {
    fn drop(&mut self) {
        self.stop.cancel();
    }
}
