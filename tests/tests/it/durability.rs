//! Acknowledged means durable: no 202 before the flush generation that covers
//! the write has completed, and a failed flush answers 503, never 202.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use hookgate_server::RunOptions;
use hookgate_server::Store;
use hookgate_server::lab::{DurabilityBackend, PersistFuture};
use hookgate_tests::{TestGateway, test_config};
use serde_json::json;
use tokio::sync::{Notify, Semaphore};

/// A durability backend that counts completed flush generations and, while
/// gated, holds every flush until the test releases it.
struct GatedBackend {
    gated: AtomicBool,
    fail: AtomicBool,
    started: Notify,
    release: Semaphore,
    completed: AtomicU64,
}

impl Default for GatedBackend {
    fn default() -> Self {
        Self {
            gated: AtomicBool::new(false),
            fail: AtomicBool::new(false),
            started: Notify::new(),
            release: Semaphore::new(0),
            completed: AtomicU64::new(0),
        }
    }
}

impl DurabilityBackend for GatedBackend {
    fn persist(&self) -> PersistFuture<'_> {
        Box::pin(async move {
            if self.gated.load(Ordering::SeqCst) {
                self.started.notify_one();
                self.release.acquire().await.unwrap().forget();
            }
            if self.fail.load(Ordering::SeqCst) {
                return Err(std::io::Error::other("injected flush failure"));
            }
            self.completed.fetch_add(1, Ordering::SeqCst);
            Ok(())
        })
    }
}

async fn gateway(backend: Arc<GatedBackend>) -> TestGateway {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let config = test_config(dir.path());
    let store = Store::open_with(&config.store, Some(backend))
        .await
        .unwrap();
    TestGateway::start_with(
        config,
        dir,
        RunOptions {
            store: Some(store),
            ..Default::default()
        },
    )
    .await
}

#[tokio::test]
async fn no_ack_before_its_flush_generation_completes() {
    let backend = Arc::new(GatedBackend::default());
    let gw = Arc::new(gateway(Arc::clone(&backend)).await);
    let key = gw.tenant("acme").await;
    gw.endpoint("acme", &key, json!({"url": "http://127.0.0.1:9/"}))
        .await;

    backend.gated.store(true, Ordering::SeqCst);
    let before = backend.completed.load(Ordering::SeqCst);
    let ingest = {
        let (gw, key) = (Arc::clone(&gw), key.clone());
        tokio::spawn(async move {
            let body = json!({"event_type": "a", "payload": {"n": 1}});
            gw.call("POST", "/v1/tenants/acme/events", Some(&key), Some(body))
                .await
        })
    };
    // The flush covering the write has started and is held: the ack must not exist yet.
    backend.started.notified().await;
    tokio::task::yield_now().await;
    assert!(!ingest.is_finished(), "202 sent before its flush completed");
    assert_eq!(backend.completed.load(Ordering::SeqCst), before);

    backend.gated.store(false, Ordering::SeqCst);
    backend.release.add_permits(1);
    let (status, body) = ingest.await.unwrap();
    assert_eq!(status, 202, "{body}");
    assert!(
        backend.completed.load(Ordering::SeqCst) > before,
        "acked without a completed flush generation"
    );
}

#[tokio::test]
async fn a_failed_flush_answers_503_to_every_waiter() {
    let backend = Arc::new(GatedBackend::default());
    let gw = Arc::new(gateway(Arc::clone(&backend)).await);
    let key = gw.tenant("acme").await;
    backend.fail.store(true, Ordering::SeqCst);
    let mut tasks = Vec::new();
    for i in 0..8 {
        let (gw, key) = (Arc::clone(&gw), key.clone());
        tasks.push(tokio::spawn(async move {
            let body = json!({"event_type": "a", "payload": {"i": i}});
            gw.call("POST", "/v1/tenants/acme/events", Some(&key), Some(body))
                .await
        }));
    }
    for t in tasks {
        let (s, b) = t.await.unwrap();
        assert_eq!(
            (s, b["error"]["code"].as_str()),
            (503, Some("store_unavailable"))
        );
    }
    backend.fail.store(false, Ordering::SeqCst);
    let (s, _) = gw
        .call(
            "POST",
            "/v1/tenants/acme/events",
            Some(&key),
            Some(json!({"event_type": "a", "payload": {}})),
        )
        .await;
    assert_eq!(s, 202, "the store recovers once flushes succeed");
}
