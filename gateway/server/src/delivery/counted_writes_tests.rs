//! The one ingest path: an alert, told as an operator event, goes through the
//! same ingest as the API's, so it is counted, scheduled and delivered like any
//! event.

use crate::ids::TenantId;
use std::sync::Arc;
use std::time::Duration;

use tokio::io::AsyncWriteExt;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use super::{CountedWrites, DeliveryClient, DeliveryHandle, EngineParts, Protection};
use crate::address_guard::AddressGuard;
use crate::alerts::{Alert, AlertMonitor, sender};
use crate::clock::ManualClock;
use crate::config::{AlertsConfig, Config};
use crate::operator_events::{OPERATOR_TENANT, OperatorEvents, fan_out};
use crate::store::DeliveryState;
use crate::store::testing::TestStore;
use crate::telemetry::Telemetry;

const START_MS: u64 = 1_700_000_000_000;
const WAIT: Duration = Duration::from_secs(10);

/// Answers one request 200 and hands its head and body over.
async fn receive_one(listener: TcpListener) -> String {
    let (mut conn, _) = listener.accept().await.unwrap();
    let got = super::testing::read_request(&mut conn).await;
    conn.write_all(b"HTTP/1.1 200 OK\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
        .await
        .unwrap();
    String::from_utf8_lossy(&got).into_owned()
}

#[tokio::test]
async fn an_alert_ingest_is_counted_and_delivered() {
    let store = TestStore::new().await;
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let cfg = AlertsConfig {
        url: Some(format!("http://{}/alerts", listener.local_addr().unwrap())),
        ..AlertsConfig::default()
    };
    sender::install(&store.store, &cfg, START_MS).await.unwrap();
    let handle = DeliveryHandle::default();
    let telemetry = Arc::new(Telemetry::new(false, AlertMonitor::new(cfg.clone()).0));
    let config = Config::default();
    let holds = Arc::new(super::EndpointHolds::default());
    let admission = super::IngestAdmission::new(
        store.store.clone(),
        ManualClock::new(START_MS),
        Arc::clone(&holds),
        Arc::clone(&telemetry),
        &config.ingest,
    );
    let writes = CountedWrites::new(
        store.store.clone(),
        Arc::clone(&telemetry),
        Arc::new(admission),
    );
    let anywhere = AddressGuard::new(vec!["0.0.0.0/0".parse().unwrap()]);
    let shutdown = CancellationToken::new();
    let engine = super::spawn_engine(
        EngineParts {
            store: store.store.clone(),
            clock: ManualClock::new(START_MS),
            client: DeliveryClient::new(AddressGuard::new(Vec::new()), None, Default::default())
                .unwrap(),
            trusted_client: DeliveryClient::new(anywhere, None, Default::default()).unwrap(),
            handle,
            default_policy: config.policy.default.clone(),
            grace: Duration::from_secs(1),
            protection: Protection {
                node_max_in_flight: 256,
                tenant_max_in_flight: 128,
                breaker: config.breaker.clone(),
                disable_after_ms: config.disable_after,
            },
            telemetry: Arc::clone(&telemetry),
            plugins: Arc::new(
                crate::plugin_runtime::PluginHost::new(config.limits.plugin_upload_bytes).unwrap(),
            ),
            before_attempt: None,
            traces: crate::telemetry::Traces::default(),
            operator_events: OperatorEvents::channel().0,
            holds,
            stats: Arc::new(crate::endpoint_stats::StatsRecorder::new(
                crate::endpoint_stats::StatsWindow::of(&config.stats),
            )),
        },
        shutdown.clone(),
    );
    let (alerts_tx, alerts_rx) = mpsc::unbounded_channel();
    let (events, events_rx) = OperatorEvents::channel();
    let sending = tokio::spawn(sender::run(events, cfg.cooldown, alerts_rx));
    let fanning = tokio::spawn(fan_out::run(
        store.store.clone(),
        writes,
        events_rx,
        CancellationToken::new(),
    ));
    alerts_tx
        .send(Alert {
            rule: "give_up",
            state: "fired",
            tenant_id: Some("acme".into()),
            endpoint_id: None,
            message: "a delivery gave up".into(),
            at_ms: START_MS,
        })
        .unwrap();
    let request = tokio::time::timeout(WAIT, receive_one(listener))
        .await
        .expect("the alert webhook arrives");
    assert!(request.contains("\"rule\":\"give_up\""), "{request}");
    let metrics = telemetry.render_metrics(0);
    assert!(
        metrics.contains("hookgate_events_ingested_total 1"),
        "{metrics}"
    );
    // The delivery is recorded a moment after the receiver answers.
    let deadline = tokio::time::Instant::now() + WAIT;
    loop {
        let page = store
            .store
            .list_deliveries(
                &TenantId::from(OPERATOR_TENANT),
                &Default::default(),
                |_| true,
                10,
                None,
            )
            .await
            .unwrap()
            .data;
        if page.iter().any(|d| d.state == DeliveryState::Succeeded) {
            break;
        }
        assert!(tokio::time::Instant::now() < deadline, "{page:?}");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    sending.abort();
    fanning.abort();
    shutdown.cancel();
    engine.await.unwrap();
}
