//! The brokers of the destination tests: the shared RabbitMQ, NATS JetStream
//! and Redis of this project's machines, and a NATS server a test starts for
//! itself when it needs a fault the shared one cannot give (credentials it
//! refuses, a small `max_payload`). Every test names its own queue, stream or
//! key and removes it after; nothing touches the shared servers' settings.
//! The consumer is `scripts/broker_consume.py`: pika, nats-py and redis-py,
//! with the official `standardwebhooks` verifier.

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
    if action == "consume" {
        serde_json::from_str(stdout.trim()).expect("the consumer prints JSON")
    } else {
        Value::Null
    }
}

/// Makes `name` on the broker of `kind` at `url`.
pub fn setup(kind: &str, url: &str, name: &str) {
    script("setup", &json!({"kind": kind, "url": url, "name": name}));
}

/// Removes `name` again.
pub fn teardown(kind: &str, url: &str, name: &str) {
    script("teardown", &json!({"kind": kind, "url": url, "name": name}));
}

/// Reads `count` messages of `name`, each verified with `secret`.
pub fn consume(kind: &str, url: &str, name: &str, secret: &str, count: usize) -> Vec<Value> {
    let cfg = json!({"kind": kind, "url": url, "name": name, "secret": secret,
                     "count": count, "timeout_s": 30});
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

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
