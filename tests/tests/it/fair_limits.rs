//! Fair shares (issue 18), items 4 and 5: request bodies have a read deadline and
//! a per-tenant cap on reads at once, an endpoint's live secrets are capped, and
//! old plugin versions are pruned. Slow clients are raw TCP sockets, so the test
//! controls every byte and pause.

use std::sync::Arc;
use std::time::Duration;

use hookgate_server::RunOptions;
use hookgate_server::lab::ManualClock;
use hookgate_server::{Clock, SystemClock};
use hookgate_tests::{TestGateway, plugin_wasm, test_config};
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Far longer than any answer below should take; only a hung test reaches it.
const BOUND: Duration = Duration::from_secs(20);

async fn gateway(read_timeout_ms: u64, reads_per_tenant: usize) -> TestGateway {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let mut config = test_config(dir.path());
    config.limits.body_read_timeout = read_timeout_ms;
    config.limits.body_reads_per_tenant = reads_per_tenant;
    TestGateway::start_with(config, dir, RunOptions::default()).await
}

/// Opens an ingest whose head promises 256 KiB, and sends one byte of the body.
async fn stalled_upload(gw: &TestGateway, tenant: &str, key: &str) -> TcpStream {
    let mut stream = TcpStream::connect(gw.addr).await.unwrap();
    let head = format!(
        "POST /v1/tenants/{tenant}/events HTTP/1.1\r\nhost: hookgate\r\n\
         authorization: Bearer {key}\r\ncontent-type: application/json\r\n\
         content-length: 262144\r\n\r\n{{"
    );
    stream.write_all(head.as_bytes()).await.unwrap();
    stream
}

async fn ingest(gw: &TestGateway, tenant: &str, key: &str) -> (u16, String) {
    let path = format!("/v1/tenants/{tenant}/events");
    let body = br#"{"event_type":"x","payload":{}}"#.to_vec();
    let headers = [("content-type", "application/json")];
    gw.call_raw("POST", &path, key, body, &headers).await
}

/// Ingests until `want` is answered, a bounded number of times: the stalled
/// uploads take their slots once the server starts reading them.
async fn ingest_until(gw: &TestGateway, tenant: &str, key: &str, want: u16) -> (u16, String) {
    let mut last = (0, String::new());
    for _ in 0..100 {
        last = ingest(gw, tenant, key).await;
        if last.0 == want {
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    last
}

#[tokio::test]
async fn request_bodies_have_no_read_deadline_a_trickle_gets_408_and_is_closed() {
    let gw = gateway(1_000, 64).await;
    let key = gw.tenant("acme").await;
    let stream = stalled_upload(&gw, "acme", &key).await;
    let (mut read, mut write) = stream.into_split();
    // One byte every 200 ms: never idle for long, never done.
    let trickle = tokio::spawn(async move {
        for _ in 0..100 {
            tokio::time::sleep(Duration::from_millis(200)).await;
            if write.write_all(b" ").await.is_err() {
                break;
            }
        }
    });
    let mut answer = Vec::new();
    let closed = tokio::time::timeout(BOUND, read.read_to_end(&mut answer)).await;
    trickle.abort();
    assert!(closed.is_ok(), "the connection stayed open");
    let answer = String::from_utf8_lossy(&answer);
    assert!(answer.starts_with("HTTP/1.1 408"), "{answer}");
    assert!(answer.to_ascii_lowercase().contains("connection: close"));
    let (_, body) = answer.split_once("\r\n\r\n").unwrap();
    let body: Value = serde_json::from_str(body).unwrap();
    assert_eq!(body["error"]["code"], "request_timeout");
    // A prompt client is unaffected.
    assert_eq!(ingest(&gw, "acme", &key).await.0, 202);
}

#[tokio::test]
async fn request_bodies_have_no_read_deadline_stalled_uploads_cap_only_their_tenant() {
    let gw = gateway(60_000, 2).await;
    let acme = gw.tenant("acme").await;
    let other = gw.tenant("other").await;
    let first = stalled_upload(&gw, "acme", &acme).await;
    let second = stalled_upload(&gw, "acme", &acme).await;
    let (status, body) = ingest_until(&gw, "acme", &acme, 429).await;
    assert_eq!(status, 429, "{body}");
    let body: Value = serde_json::from_str(&body).unwrap();
    assert_eq!(body["error"]["code"], "rate_limited");
    // Another tenant, from the same address, still gets in.
    assert_eq!(ingest(&gw, "other", &other).await.0, 202);
    // Closing the stalled uploads gives acme its slots back.
    drop((first, second));
    assert_eq!(ingest_until(&gw, "acme", &acme, 202).await.0, 202);
}

#[tokio::test]
async fn growth_that_never_shrinks_a_sixth_live_secret_is_409_until_one_expires() {
    let clock = ManualClock::new(SystemClock.now_ms());
    let options = RunOptions {
        clock: Some(clock.clone()),
        ..Default::default()
    };
    let gw = TestGateway::start_with_options(options).await;
    let key = gw.tenant("acme").await;
    let ep = gw
        .endpoint("acme", &key, json!({"url": "http://127.0.0.1:9/hook"}))
        .await;
    let id = ep["id"].as_str().unwrap();
    let rotate = format!("/v1/tenants/acme/endpoints/{id}/rotate-secret");
    // The created secret plus four rotations: five live secrets.
    for _ in 0..4 {
        assert_eq!(gw.call("POST", &rotate, Some(&key), None).await.0, 200);
        clock.advance(Duration::from_secs(60));
    }
    let (status, body) = gw.call("POST", &rotate, Some(&key), None).await;
    assert_eq!(
        (status, &body["error"]["code"]),
        (409, &json!("too_many_secrets"))
    );
    let secret_path = format!("/v1/tenants/acme/endpoints/{id}/secret");
    let (_, secrets) = gw.call("GET", &secret_path, Some(&key), None).await;
    assert_eq!(secrets["secrets"].as_array().unwrap().len(), 5);
    // The first rotated-out secret's 24 h grace ends: one rotation fits again.
    clock.advance(Duration::from_secs(24 * 3600 - 200));
    assert_eq!(gw.call("POST", &rotate, Some(&key), None).await.0, 200);
    let (status, _) = gw.call("POST", &rotate, Some(&key), None).await;
    assert_eq!(status, 409);
}

/// The ladder fixture with a custom section carrying `n`, so each upload has its
/// own bytes, sha256 and cached artifact.
fn ladder_variant(n: u8) -> Vec<u8> {
    const NAME: &[u8] = b"hookgate-test-variant";
    let mut bytes = plugin_wasm("ladder");
    bytes.extend_from_slice(&[0, (NAME.len() + 2) as u8, NAME.len() as u8]);
    bytes.extend_from_slice(NAME);
    bytes.push(n);
    bytes
}

#[tokio::test]
async fn growth_that_never_shrinks_plugin_versions_past_the_cap_are_pruned() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let mut config = test_config(dir.path());
    config.plugins.keep_versions = 2;
    let artifacts = dir.path().join("plugin-artifacts");
    let gw = TestGateway::start_with(config, dir, RunOptions::default()).await;
    let key = gw.tenant("acme").await;
    let mut shas = Vec::new();
    for n in 1..=4 {
        let (status, body) = gw
            .upload_plugin("acme", &key, "codes", ladder_variant(n))
            .await;
        assert_eq!(status, 201, "{body}");
        shas.push(body["sha256"].as_str().unwrap().to_owned());
        if n == 1 {
            // Pinned by an endpoint: kept however old it gets.
            let body = json!({"url": "http://127.0.0.1:9/hook", "plugin": "codes@1"});
            gw.endpoint("acme", &key, body).await;
        }
    }
    // The store keeps the newest two and the pinned one.
    let (_, plugin) = gw
        .call("GET", "/v1/tenants/acme/plugins/codes", Some(&key), None)
        .await;
    let versions: Vec<u64> = plugin["versions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v["version"].as_u64().unwrap())
        .collect();
    assert_eq!(versions, [1, 3, 4]);
    assert_eq!(plugin["active_version"], 4);
    assert!(
        plugin["versions"]
            .as_array()
            .unwrap()
            .iter()
            .all(|v| v["loaded"] == true)
    );
    // Memory: version 2 can no longer be bound; a kept one can.
    let endpoints = "/v1/tenants/acme/endpoints";
    let bind = |spec: &str| json!({"url": "http://127.0.0.1:9/hook", "plugin": spec});
    let (status, body) = gw
        .call("POST", endpoints, Some(&key), Some(bind("codes@2")))
        .await;
    assert_eq!((status, &body["error"]["field"]), (422, &json!("plugin")));
    assert_eq!(
        gw.call("POST", endpoints, Some(&key), Some(bind("codes@3")))
            .await
            .0,
        201
    );
    // The artifact cache: only the dropped version's artifact is gone.
    let cached = |sha: &str| artifacts.join(format!("{sha}.cwasm")).exists();
    assert!(!cached(&shas[1]));
    assert!(cached(&shas[0]) && cached(&shas[2]) && cached(&shas[3]));
}

#[tokio::test]
async fn growth_that_never_shrinks_a_lowered_version_cap_applies_at_start() {
    let dir = Arc::new(tempfile::tempdir().unwrap());
    let config = test_config(dir.path());
    let gw = TestGateway::start_with(config.clone(), dir.clone(), RunOptions::default()).await;
    let key = gw.tenant("acme").await;
    for n in 1..=3 {
        let (status, body) = gw
            .upload_plugin("acme", &key, "codes", ladder_variant(n))
            .await;
        assert_eq!(status, 201, "{body}");
    }
    gw.stop().await;
    let mut lowered = config;
    lowered.plugins.keep_versions = 1;
    let gw = TestGateway::start_with(lowered, dir, RunOptions::default()).await;
    let (_, plugin) = gw
        .call("GET", "/v1/tenants/acme/plugins/codes", Some(&key), None)
        .await;
    let versions: Vec<&Value> = plugin["versions"].as_array().unwrap().iter().collect();
    assert_eq!(versions.len(), 1, "{plugin}");
    assert_eq!(
        (&versions[0]["version"], &plugin["active_version"]),
        (&json!(3), &json!(3))
    );
    assert_eq!(versions[0]["loaded"], true);
}
