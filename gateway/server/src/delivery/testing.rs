//! A delivery engine for unit tests: a real store, a real worker context and a
//! clock the test moves by hand.

use crate::ids::{DeliveryId, TenantId};
use std::sync::Arc;

use super::endpoint_policy::EndpointPolicy;
use super::worker::{DeliveryWorker, EngineContext};
use crate::address_guard::AddressGuard;
use crate::clock::ManualClock;
use crate::store::testing::TestStore;
use crate::store::{DeliveryRecord, EndpointRecord, Lane, Lease};

pub(crate) const START_MS: u64 = 1_700_000_000_000;

pub(crate) struct Engine {
    pub(crate) store: TestStore,
    pub(crate) clock: Arc<ManualClock>,
    pub(crate) ctx: Arc<EngineContext>,
}

pub(crate) async fn engine(before_attempt: Option<crate::delivery::BeforeAttempt>) -> Engine {
    engine_on(TestStore::new().await, before_attempt)
}

/// An engine on `store`, whose client may reach this machine's loopback
/// (where the tests' receivers listen).
pub(crate) fn engine_on(
    store: TestStore,
    before_attempt: Option<crate::delivery::BeforeAttempt>,
) -> Engine {
    let clock = ManualClock::new(START_MS);
    let loopback = vec!["127.0.0.0/8".parse().unwrap()];
    let client =
        super::DeliveryClient::new(AddressGuard::new(loopback), None, Default::default()).unwrap();
    let config = crate::config::Config::default();
    let (alerts, _) = crate::alerts::AlertMonitor::new(config.alerts.clone());
    let ctx = Arc::new(EngineContext {
        store: store.store.clone(),
        clock: clock.clone(),
        client: client.clone(),
        trusted_client: client,
        decider: Arc::new(
            crate::plugin_runtime::PluginHost::new(config.limits.plugin_upload_bytes).unwrap(),
        ),
        default_policy: config.policy.default.clone(),
        telemetry: Arc::new(crate::telemetry::Telemetry::new(false, alerts)),
        before_attempt,
        holds: Arc::default(),
        traces: crate::telemetry::Traces::default(),
        operator_events: crate::operator_events::OperatorEvents::channel().0,
        stats: Arc::new(crate::endpoint_stats::StatsRecorder::new(
            crate::endpoint_stats::StatsWindow::of(&config.stats),
        )),
    });
    Engine { store, clock, ctx }
}

impl Engine {
    /// One pending delivery to `ep`; returns it and its due schedule entry.
    pub(crate) async fn pending(&self, ep: &EndpointRecord) -> (DeliveryRecord, Lease) {
        let d = self.store.ingest("t", &[ep], START_MS).await.remove(0);
        let entry = self.entry(&d.id).await.unwrap();
        (d, entry)
    }

    /// The lease on the delivery's current due time, if it has one.
    pub(crate) async fn entry(&self, delivery_id: &str) -> Option<Lease> {
        let store = &self.store.store;
        let d = store
            .delivery(&TenantId::from("t"), &DeliveryId::from(delivery_id))
            .await
            .unwrap()?;
        let due = d.next_attempt_at_ms?;
        for lane in Lane::ALL {
            let found = store.due_entries(lane, &d.endpoint_id, due, 10).await;
            let lease = found
                .unwrap()
                .into_iter()
                .find(|l| l.delivery_id() == d.id && l.due_ms() == due && l.lane() == lane);
            if lease.is_some() {
                return lease;
            }
        }
        None
    }

    pub(crate) fn worker(&self, ep: &EndpointRecord, entry: Lease) -> DeliveryWorker {
        DeliveryWorker {
            ctx: Arc::clone(&self.ctx),
            endpoint: Arc::new(ep.clone()),
            policy: Arc::new(EndpointPolicy::load(ep, &self.ctx.default_policy)),
            entry,
            shared: None,
        }
    }

    pub(crate) fn metrics(&self) -> String {
        self.ctx.telemetry.render_metrics(0)
    }
}

impl Engine {
    pub(crate) fn clock_ms(&self) -> u64 {
        use crate::clock::Clock as _;
        self.clock.now_ms()
    }
}

/// Reads one HTTP/1.1 request from `conn`, its head and its `Content-Length`
/// body, as the tests' own receivers take it.
pub(crate) async fn read_request(conn: &mut tokio::net::TcpStream) -> Vec<u8> {
    use tokio::io::AsyncReadExt;
    let mut got = Vec::new();
    let mut buf = [0u8; 4096];
    loop {
        let n = conn.read(&mut buf).await.unwrap();
        got.extend_from_slice(&buf[..n]);
        let text = String::from_utf8_lossy(&got).to_lowercase();
        if let Some(head_end) = text.find("\r\n\r\n") {
            let length = text[..head_end]
                .lines()
                .find_map(|l| l.strip_prefix("content-length:"))
                .and_then(|v| v.trim().parse::<usize>().ok())
                .unwrap_or(0);
            if got.len() >= head_end + 4 + length || n == 0 {
                return got;
            }
        }
        assert!(n > 0, "connection closed mid-request");
    }
}
