//! Fair shares, item 2: the blocking pool cannot be exhausted through DNS.
//!
//! One tenant's endpoint host whose nameserver is slow must not hold back
//! another tenant's ingest or deliveries, and a nameserver that never answers
//! makes the attempt a `dns` failure.

use std::io;
use std::net::{IpAddr, Ipv4Addr};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use hookgate_server::RunOptions;
use hookgate_server::{DnsResolver, LookupFuture, Resolver};
use hookgate_tests::receiver::Receiver;
use hookgate_tests::{ApiRequest, TestGateway};
use http::Method;
use serde_json::json;
use tokio::sync::watch;

/// The blocking threads the gateway's runtime may use in the first test.
const BLOCKING_THREADS: usize = 8;

/// Tenant A's endpoint hosts. Lookups of one host are shared, so A needs many
/// hosts to fill the pool: 64 lookups of 5 s keep 8 threads busy for 40 s.
const SLOW_HOSTS: usize = 8 * BLOCKING_THREADS;

/// How long the slow nameserver takes to answer, holding its thread meanwhile.
const SLOW_ANSWER: Duration = Duration::from_secs(5);

/// Resolves like getaddrinfo on tokio's blocking pool: each lookup holds a
/// blocking thread until the (slow) answer comes, whoever stopped waiting.
/// Until `open`, lookups wait without a thread, so the whole flood is accepted
/// before the pool fills.
struct BlockingLookups {
    holding: Arc<AtomicUsize>,
    open: watch::Sender<bool>,
}

impl Resolver for BlockingLookups {
    fn lookup<'a>(&'a self, host: &'a str, _port: u16) -> LookupFuture<'a> {
        let holding = Arc::clone(&self.holding);
        let mut open = self.open.subscribe();
        Box::pin(async move {
            let _ = open.wait_for(|open| *open).await;
            tokio::task::spawn_blocking(move || {
                holding.fetch_add(1, Ordering::SeqCst);
                std::thread::sleep(SLOW_ANSWER);
            })
            .await
            .map_err(io::Error::other)?;
            Err(io::Error::new(
                io::ErrorKind::NotFound,
                format!("{host}: no answer"),
            ))
        })
    }
}

/// Creates tenant A's endpoints, one per slow host, at once (each creation
/// waits out its DNS check); returns how many were created.
async fn slow_endpoints(gw: &TestGateway, key: &str) -> usize {
    let mut created = tokio::task::JoinSet::new();
    for n in 0..SLOW_HOSTS {
        let url = format!("http://slow-dns-{n}.tenant-a.example/hook");
        let api = gw.api.with_token(key).with_timeout(Duration::from_secs(60));
        let request = ApiRequest::path(Method::POST, "/v1/tenants/tenant-a/endpoints")
            .json(&json!({"url": url, "max_in_flight": 128}));
        created.spawn(async move { api.exchange(request).await.map(|a| a.status) });
    }
    let mut ok = 0;
    while let Some(answer) = created.join_next().await {
        if matches!(answer, Ok(Ok(201))) {
            ok += 1;
        }
    }
    ok
}

/// Sends `count` events for tenant A at once; returns how many were accepted.
async fn flood(gw: &TestGateway, key: &str, count: usize) -> usize {
    let mut sent = tokio::task::JoinSet::new();
    for n in 0..count {
        let api = gw.api.with_token(key).with_timeout(Duration::from_secs(60));
        let request = ApiRequest::path(Method::POST, "/v1/tenants/tenant-a/events")
            .json(&json!({"event_type": "flood", "payload": {"n": n}}));
        sent.spawn(async move { api.exchange(request).await.map(|a| a.status) });
    }
    let mut accepted = 0;
    while let Some(answer) = sent.join_next().await {
        if matches!(answer, Ok(Ok(202))) {
            accepted += 1;
        }
    }
    accepted
}

#[test]
fn the_blocking_pool_cannot_be_exhausted_through_dns() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .max_blocking_threads(BLOCKING_THREADS)
        .enable_all()
        .build()
        .unwrap();
    let resolver = Arc::new(BlockingLookups {
        holding: Arc::new(AtomicUsize::new(0)),
        open: watch::Sender::new(false),
    });
    let outcome = std::panic::catch_unwind(AssertUnwindSafe(|| {
        runtime.block_on(a_slow_nameserver_stalls_no_other_tenant(resolver))
    }));
    // The slow lookups still sleeping are abandoned, as a stopping process would,
    // also when the test fails (dropping the runtime would wait for them all).
    runtime.shutdown_timeout(Duration::from_secs(1));
    if let Err(failure) = outcome {
        std::panic::resume_unwind(failure);
    }
}

/// Tenant A's slow nameserver fills the blocking pool; tenant B must not notice.
async fn a_slow_nameserver_stalls_no_other_tenant(resolver: Arc<BlockingLookups>) {
    let options = RunOptions {
        resolver: Some(Arc::clone(&resolver) as Arc<dyn Resolver>),
        ..RunOptions::default()
    };
    let gw = TestGateway::start_with_options(options).await;

    // Tenant B delivers to a loopback literal: no DNS at all.
    let rx = Receiver::start(Vec::new()).await;
    let key_b = gw.tenant("tenant-b").await;
    gw.endpoint("tenant-b", &key_b, json!({"url": rx.url()}))
        .await;
    let key_a = gw.tenant("tenant-a").await;
    assert_eq!(slow_endpoints(&gw, &key_a).await, SLOW_HOSTS);

    assert_eq!(flood(&gw, &key_a, 10).await, 10);
    // The nameserver starts answering, slowly: A's lookups fill the pool.
    // (Each event goes to every endpoint of A: 10 × 64 deliveries.)
    resolver.open.send_replace(true);
    for _ in 0..300 {
        if resolver.holding.load(Ordering::SeqCst) >= BLOCKING_THREADS {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        resolver.holding.load(Ordering::SeqCst) >= BLOCKING_THREADS,
        "tenant A's lookups never filled the blocking pool"
    );

    // Tenant B's ingest still answers, and its delivery still arrives.
    // (Generous bounds: the pool stays busy for minutes on a stalled gateway.)
    let ingest = tokio::time::timeout(
        Duration::from_secs(30),
        gw.call(
            "POST",
            "/v1/tenants/tenant-b/events",
            Some(&key_b),
            Some(json!({"event_type": "ok", "payload": {}})),
        ),
    )
    .await;
    let (status, body) = ingest.expect("tenant B's ingest stalled behind tenant A's DNS");
    assert_eq!(status, 202, "{body}");
    let arrived = rx.wait_for(1, Duration::from_secs(30)).await;
    assert_eq!(
        arrived.len(),
        1,
        "tenant B's delivery stalled behind tenant A's DNS"
    );
    drop(gw);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_nameserver_that_never_answers_makes_the_attempt_a_dns_failure() {
    // The stub reads queries and never answers them.
    let stub = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let stub_addr = stub.local_addr().unwrap();
    let queries = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&queries);
    let listening = tokio::spawn(async move {
        let mut query = [0u8; 512];
        while stub.recv_from(&mut query).await.is_ok() {
            counted.fetch_add(1, Ordering::SeqCst);
        }
    });
    assert_eq!(stub_addr.ip(), IpAddr::V4(Ipv4Addr::LOCALHOST));

    let resolver = DnsResolver::with_nameservers(&[stub_addr]).unwrap();
    let options = RunOptions {
        resolver: Some(Arc::new(resolver)),
        ..RunOptions::default()
    };
    let gw = TestGateway::start_with_options(options).await;
    let (key, _, delivery) = gw
        .one_delivery("http://never-answers.example.com/hook", json!({}))
        .await;
    let d = gw
        .wait_delivery("acme", &key, &delivery, Duration::from_secs(60), |d| {
            !d["attempt_log"].as_array().is_none_or(Vec::is_empty)
        })
        .await;
    let first = &d["attempt_log"][0];
    assert_eq!(first["error_kind"], "dns", "{d}");
    assert!(
        queries.load(Ordering::SeqCst) >= 1,
        "the lookup never reached the stub: {d}"
    );
    gw.stop().await;
    listening.abort();
}
