//! The brokers of the destination tests: the shared RabbitMQ, NATS JetStream
//! and Redis of this project's machines, a NATS server a test starts for
//! itself when it needs a fault the shared one cannot give (credentials it
//! refuses, a small `max_payload`), and moto for Amazon SQS, SNS and Kinesis
//! (`crate::moto::OwnMoto`, always a test's own). Every test names its own
//! queue, stream or key and removes it after; nothing touches the shared
//! servers' settings. The consumer is `scripts/broker_consume.py`: pika,
//! nats-py, redis-py and boto3, with the official `standardwebhooks` verifier.
//! The kinds are the destination types (`rabbitmq`, `nats`, `redis`, `sqs`,
//! `sns`, `kinesis`); the `_with` helpers add the script's other fields
//! (`fifo`, `max_message_size`, `access_key_id`, `settle_s`, ...).

use std::io::Write;
use std::net::SocketAddr;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The shared servers.
pub const RABBITMQ: &str = "amqp://127.0.0.1:5672/%2f";
pub const NATS: &str = "nats://127.0.0.1:4222";
pub const REDIS: &str = "redis://127.0.0.1:6379/0";

/// A name no other test or run uses.
pub fn unique(prefix: &str) -> String {
    format!(
        "hg-{prefix}-{}",
        ulid::Ulid::new().to_string().to_lowercase()
    )
}

/// Runs `broker_consume.py ACTION` with `cfg`; its JSON answer, or panics
/// with its message.
pub fn script(action: &str, cfg: &Value) -> Value {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts/broker_consume.py");
    let mut child = Command::new("python3")
        .arg(path)
        .arg(action)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 runs the broker consumer");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(cfg.to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "broker_consume.py {action} failed: {}{stdout}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("broker_consume.py {action} printed no JSON ({e}): {stdout}"))
}

/// The script's config for `name` on the broker of `kind` at `url`, with the
/// fields of `extra` (an object) added.
pub fn config(kind: &str, url: &str, name: &str, extra: Value) -> Value {
    with(json!({"kind": kind, "url": url, "name": name}), extra)
}

/// `base` with the fields of `extra` (an object, or null) added or replaced.
fn with(mut base: Value, extra: Value) -> Value {
    match extra {
        Value::Object(fields) => base.as_object_mut().unwrap().extend(fields),
        Value::Null => {}
        other => panic!("extra config must be an object: {other}"),
    }
    base
}

/// Makes `name` on the broker of `kind` at `url`; what the script printed:
/// `{}`, or `{"queue_url"}` (sqs), `{"topic_arn", "queue_url",
/// "subscription_arn"}` (sns), `{"stream_arn"}` (kinesis).
pub fn setup(kind: &str, url: &str, name: &str) -> Value {
    setup_with(kind, url, name, json!({}))
}

/// [`setup`] with more fields: `{"fifo": true}`, `{"max_message_size": 1024}`.
pub fn setup_with(kind: &str, url: &str, name: &str, extra: Value) -> Value {
    script("setup", &config(kind, url, name, extra))
}

/// Removes `name` again.
pub fn teardown(kind: &str, url: &str, name: &str) {
    teardown_with(kind, url, name, json!({}));
}

/// [`teardown`] with the fields `name` was set up with (`fifo`).
pub fn teardown_with(kind: &str, url: &str, name: &str, extra: Value) {
    script("teardown", &config(kind, url, name, extra));
}

/// Reads `count` messages of `name`, each verified with `secret`.
pub fn consume(kind: &str, url: &str, name: &str, secret: &str, count: usize) -> Vec<Value> {
    consume_with(kind, url, name, secret, count, json!({}))
}

/// [`consume`] with more fields: `fifo`, `settle_s` (read on that long after
/// `count`, so a duplicate shows), `timeout_s` (30 when absent).
pub fn consume_with(
    kind: &str,
    url: &str,
    name: &str,
    secret: &str,
    count: usize,
    extra: Value,
) -> Vec<Value> {
    let fields = json!({"secret": secret, "count": count, "timeout_s": 30});
    let cfg = config(kind, url, name, with(fields, extra));
    script("consume", &cfg)["messages"]
        .as_array()
        .unwrap()
        .clone()
}

/// A NATS server with JetStream of a test's own, with `extra` lines in its
/// config (`max_payload: 2048`, an `authorization` block); stopped when dropped.
pub struct OwnNats {
    pub url: String,
    child: Child,
    _dir: tempfile::TempDir,
}

impl OwnNats {
    pub fn start(extra: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let port = free_port();
        let conf = dir.path().join("nats.conf");
        let store = dir.path().join("js");
        std::fs::write(
            &conf,
            format!(
                "listen: 127.0.0.1:{port}\njetstream {{ store_dir: {:?} }}\n{extra}\n",
                store.display().to_string()
            ),
        )
        .unwrap();
        let child = Command::new("nats-server")
            .arg("-c")
            .arg(&conf)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("nats-server is on this machine");
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        while std::net::TcpStream::connect(addr).is_err() {
            assert!(Instant::now() < deadline, "nats-server did not start");
            std::thread::sleep(Duration::from_millis(50));
        }
        Self {
            url: format!("nats://{addr}"),
            child,
            _dir: dir,
        }
    }
}

impl Drop for OwnNats {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A loopback port free at the moment of asking, for a server a test starts.
pub(crate) fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
