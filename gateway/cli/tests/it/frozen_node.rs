//! Issue 37, item 2: two gateways on one PostgreSQL database, one frozen with
//! SIGSTOP past its leases while a slow receiver holds its requests open. The
//! frozen node's places stay counted (it still holds its presence lock on the
//! database), so the other node never fills the endpoint's places again: the
//! receiver never sees more than `max_in_flight` requests in progress. After
//! SIGCONT the frozen node sends nothing late, and every event is delivered.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hookgate_server::lab::ScratchDatabase;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

use crate::common::{Gateway, tenant_with_endpoint_events, wait_all_succeeded};

const MAX_IN_FLIGHT: usize = 4;
const EVENTS: usize = 8;
/// The endpoint's timeout; with the lease margin, each lease lasts 3 s.
const TIMEOUT_MS: u64 = 2_000;
const LEASE_MARGIN_MS: u64 = 1_000;
/// Longest a receiver holds a request it was not told to answer.
const HOLD_LIMIT: Duration = Duration::from_secs(60);

/// A receiver that counts the requests in progress (read, not yet answered,
/// connection still open) and the most it ever saw; it holds every request
/// until told to answer or until the sender closes the connection.
struct CountingReceiver {
    url: String,
    in_progress: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
    answer: Arc<AtomicBool>,
    answered: Arc<Mutex<HashSet<String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl CountingReceiver {
    async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let url = format!("http://{}/hook", listener.local_addr().unwrap());
        let in_progress = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let answer = Arc::new(AtomicBool::new(false));
        let answered = Arc::new(Mutex::new(HashSet::new()));
        let shared = (
            Arc::clone(&in_progress),
            Arc::clone(&most),
            Arc::clone(&answer),
            Arc::clone(&answered),
        );
        let task = tokio::spawn(async move {
            loop {
                let Ok((conn, _)) = listener.accept().await else {
                    continue;
                };
                let (n, m, a, seen) = shared.clone();
                tokio::spawn(serve_one(conn, n, m, a, seen));
            }
        });
        Self {
            url,
            in_progress,
            most,
            answer,
            answered,
            task,
        }
    }

    fn most(&self) -> usize {
        self.most.load(Ordering::SeqCst)
    }
}

impl Drop for CountingReceiver {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// One connection, one request (answered with `connection: close`).
async fn serve_one(
    mut conn: tokio::net::TcpStream,
    in_progress: Arc<AtomicUsize>,
    most: Arc<AtomicUsize>,
    answer: Arc<AtomicBool>,
    answered: Arc<Mutex<HashSet<String>>>,
) {
    let mut got = Vec::new();
    let mut buf = [0u8; 8192];
    let head = loop {
        let Ok(n) = conn.read(&mut buf).await else {
            return;
        };
        if n == 0 {
            return;
        }
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got).to_lowercase();
        if let Some(end) = text.find("\r\n\r\n") {
            let length = text[..end]
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if got.len() >= end + 4 + length {
                break text[..end].to_owned();
            }
        }
    };
    let id = head
        .lines()
        .find_map(|l| l.strip_prefix("webhook-id:"))
        .map(|v| v.trim().to_owned())
        .unwrap_or_default();
    let now = in_progress.fetch_add(1, Ordering::SeqCst) + 1;
    most.fetch_max(now, Ordering::SeqCst);
    // Held until told to answer, the sender closes, or the limit.
    let deadline = tokio::time::Instant::now() + HOLD_LIMIT;
    let closed = loop {
        if answer.load(Ordering::SeqCst) || tokio::time::Instant::now() >= deadline {
            break false;
        }
        let mut probe = [0u8; 1];
        let read = tokio::time::timeout(Duration::from_millis(20), conn.read(&mut probe));
        if let Ok(Ok(0) | Err(_)) = read.await {
            break true;
        }
    };
    if closed {
        in_progress.fetch_sub(1, Ordering::SeqCst);
        return;
    }
    let reply = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\nconnection: close\r\n\r\nok";
    let sent = conn.write_all(reply).await.is_ok();
    in_progress.fetch_sub(1, Ordering::SeqCst);
    if sent {
        answered.lock().unwrap().insert(id);
    }
}

/// A gateway on the scratch database as `node_id`, with short leases.
fn node(dir: &std::path::Path, url: &str, node_id: &str) -> Gateway {
    let margin = LEASE_MARGIN_MS.to_string();
    Gateway::spawn(
        dir,
        &[
            ("HOOKGATE_STORE__BACKEND", "postgres"),
            ("HOOKGATE_STORE__URL", url),
            ("HOOKGATE_STORE__LEASE_MARGIN", &margin),
            ("HOOKGATE_STORE__PAUSED_NODE_HOLD", "60s"),
            ("HOOKGATE_CLUSTER__NODE_ID", node_id),
        ],
    )
}

/// Tenant `acme`, an endpoint with the cap and timeout above, and the events.
async fn tenant_endpoint_events(base: &str, url: &str) -> (String, Vec<String>) {
    let endpoint = serde_json::json!({
        "url": url,
        "max_in_flight": MAX_IN_FLIGHT,
        "timeout_ms": TIMEOUT_MS,
        "policy": {"jitter": "none", "base_ms": 200, "max_delay_ms": 1000},
    });
    tenant_with_endpoint_events(base, endpoint, EVENTS).await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_node_frozen_past_its_lease_keeps_the_cap_at_the_receiver() {
    let db = ScratchDatabase::create()
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let rx = CountingReceiver::start().await;
    let (dir_a, dir_b) = (tempfile::tempdir().unwrap(), tempfile::tempdir().unwrap());
    let a = node(dir_a.path(), &db.url, "node-a");
    let (key, ids) = tenant_endpoint_events(&a.base, &rx.url).await;

    // Node a fills the endpoint's places; freeze it with the requests open.
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while rx.in_progress.load(Ordering::SeqCst) < MAX_IN_FLIGHT {
        assert!(
            tokio::time::Instant::now() < deadline,
            "node a never filled the places"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    a.freeze();
    let frozen_at = tokio::time::Instant::now();

    // Node b serves the same endpoint while a stays frozen for well past its
    // leases (timeout + margin = 3 s).
    let b = node(dir_b.path(), &db.url, "node-b");
    let lease = Duration::from_millis(TIMEOUT_MS + LEASE_MARGIN_MS);
    tokio::time::sleep_until(frozen_at + lease * 3).await;
    let most_while_frozen = rx.most();
    assert!(
        most_while_frozen <= MAX_IN_FLIGHT,
        "while node a was frozen the receiver saw {most_while_frozen} in progress, over max_in_flight {MAX_IN_FLIGHT}"
    );
    assert_eq!(
        rx.in_progress.load(Ordering::SeqCst),
        MAX_IN_FLIGHT,
        "the frozen node's requests are still open at the receiver"
    );

    // Thawed: node a gives its requests up at once (their deadline is past)
    // and sends nothing late; the receiver now answers, and all is delivered.
    rx.answer.store(true, Ordering::SeqCst);
    a.thaw();
    let missing = wait_all_succeeded(&b.base, &key, &ids, Duration::from_secs(60)).await;
    assert!(missing.is_empty(), "not delivered: {missing:?}");
    assert_eq!(rx.answered.lock().unwrap().len(), EVENTS);
    assert!(
        rx.most() <= MAX_IN_FLIGHT,
        "the receiver saw {} in progress, over max_in_flight {MAX_IN_FLIGHT}",
        rx.most()
    );
    drop((a, b));
}
