//! Ingest admission on a real store, on both backends: a tenant whose backlog
//! is deep waits, the others do not, and a backlog its endpoint's own limits
//! hold is not weighed.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::{EndpointHolds, IngestAdmission};
use crate::alerts::AlertMonitor;
use crate::clock::ManualClock;
use crate::config::{AlertsConfig, IngestConfig};
use crate::store::testing::TestStore;
use crate::telemetry::Telemetry;

const START_MS: u64 = 1_700_000_000_000;

/// The longest an ingest waits, in these tests.
const WAIT: Duration = Duration::from_millis(1_500);

struct Admitting {
    store: TestStore,
    deep: crate::store::EndpointRecord,
    holds: Arc<EndpointHolds>,
    telemetry: Arc<Telemetry>,
    admission: Arc<IngestAdmission>,
}

/// Tenant `deep` with 5 due first attempts on `ep-deep`, tenant `light` with
/// one on `ep-light`; admission waits above 3.
async fn admitting(store: TestStore) -> Admitting {
    let deep = store.endpoint("deep", "ep-deep").await;
    let light = store.endpoint("light", "ep-light").await;
    for _ in 0..5 {
        store.ingest("deep", &[&deep], START_MS).await;
    }
    store.ingest("light", &[&light], START_MS).await;
    let holds = Arc::new(EndpointHolds::default());
    let telemetry = Arc::new(Telemetry::new(
        false,
        AlertMonitor::new(AlertsConfig::default()).0,
    ));
    let config = IngestConfig {
        backlog_per_tenant: 3,
        admission_wait: WAIT.as_millis() as u64,
    };
    let admission = IngestAdmission::new(
        store.store.clone(),
        ManualClock::new(START_MS + 1),
        Arc::clone(&holds),
        Arc::clone(&telemetry),
        &config,
    );
    Admitting {
        store,
        deep,
        holds,
        telemetry,
        admission: Arc::new(admission),
    }
}

/// How many ingests the metrics say waited.
fn held(telemetry: &Telemetry) -> u64 {
    let text = telemetry.render_metrics(0);
    let line = text
        .lines()
        .find(|l| l.starts_with("hookgate_ingest_held_total "))
        .unwrap_or_else(|| panic!("no ingest_held counter in\n{text}"));
    line.rsplit(' ').next().unwrap().parse().unwrap()
}

async fn a_deep_backlog_slows_only_its_own_tenant(t: Admitting) {
    let admission = Arc::clone(&t.admission);
    let started = Instant::now();
    let deep = tokio::spawn(async move { admission.admit("deep").await });
    // The light tenant is admitted while the deep one waits.
    assert_eq!(t.admission.admit("light").await, Duration::ZERO, "not held");
    assert!(!deep.is_finished(), "the deep tenant still waits");
    let waited = deep.await.unwrap();
    assert!(waited >= WAIT, "waited {waited:?}");
    assert!(started.elapsed() >= WAIT);
    assert_eq!(
        held(&t.telemetry),
        1,
        "one ingest waited: the deep tenant's"
    );

    // Its endpoint's breaker holds the backlog now: not this machine's to work off.
    t.holds.set(&"ep-deep".into(), true);
    tokio::time::sleep(Duration::from_millis(150)).await; // past the measured figure
    let waited = t.admission.admit("deep").await;
    assert_eq!(waited, Duration::ZERO, "a held backlog is not weighed");
    assert_eq!(held(&t.telemetry), 1);

    // And a tenant with no endpoint left has nothing to wait for.
    t.holds.set(&"ep-deep".into(), false);
    t.store
        .store
        .delete_endpoint(&t.deep, START_MS)
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(150)).await;
    assert_eq!(t.admission.admit("deep").await, Duration::ZERO);
    assert_eq!(held(&t.telemetry), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deep_backlog_slows_only_its_own_tenant_on_sled() {
    a_deep_backlog_slows_only_its_own_tenant(admitting(TestStore::sled().await).await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deep_backlog_slows_only_its_own_tenant_on_postgres() {
    a_deep_backlog_slows_only_its_own_tenant(admitting(TestStore::postgres().await).await).await;
}
