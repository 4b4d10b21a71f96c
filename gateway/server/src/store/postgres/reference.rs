//! The benchmarks' point of comparison on PostgreSQL: the database running
//! exactly the statements the backend runs ([`super::statements`]), through
//! `tokio-postgres` alone, with the backend's batch sizes, connections and
//! `synchronous_commit`, and none of hookgate's work around them (no HTTP, no
//! API, no scheduler, no delivery). What hookgate reaches against it is what it
//! adds on top of the database. Ingest is here; delivery in `reference_deliver`.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use serde_json::value::RawValue;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Statement};

use super::columns::{DeliveryColumns, EventColumns};
pub use super::reference_deliver::raw_deliver_rate;
use super::statements::{INSERT_DELIVERIES, INSERT_EVENTS, INSERT_QUEUE, LOCK_ENDPOINTS};
use super::{PgTarget, migrate, ms, pg_error, to_json};
use crate::store::events::PreparedEvent;
use crate::store::{BreakerRecord, EndpointRecord, NewEvent, StoreError};

/// The tenant and endpoint the reference writes for.
const TENANT: &str = "reference";

/// The endpoint every reference event goes to.
fn bench_endpoint(tenant: &str) -> EndpointRecord {
    EndpointRecord {
        id: "ep_reference".into(),
        tenant_id: tenant.into(),
        url: "http://127.0.0.1:9/".into(),
        description: String::new(),
        event_types: vec!["*".into()],
        policy: None,
        plugin: None,
        transform: None,
        timeout_ms: 15_000,
        max_in_flight: 64,
        rate_limit_per_s: None,
        disabled: false,
        disabled_reason: None,
        disabled_at_ms: None,
        secrets: Vec::new(),
        breaker: BreakerRecord::default(),
        trusted: false,
        last_success_ms: None,
        created_at_ms: 0,
        updated_at_ms: 0,
        headers: Vec::new(),
        metadata: std::collections::BTreeMap::new(),
        uid: None,
        channels: Vec::new(),
        filter: None,
        signature: Default::default(),
        destination: None,
    }
}

/// One connection, its driver on this runtime; `relaxed` commits without
/// waiting for the disk, as the backend's outcome connections do.
pub(super) async fn connect(url: &str, relaxed: bool) -> Result<Client, StoreError> {
    let target = PgTarget::parse(url).map_err(StoreError::unavailable)?;
    let commit = if relaxed { "off" } else { "on" };
    let target = target.with_setting("synchronous_commit", commit);
    let tls = target.tls(None).map_err(StoreError::unavailable)?;
    let (client, connection) = target.config.connect(tls).await.map_err(pg_error)?;
    tokio::spawn(connection);
    Ok(client)
}

/// Migrates the (empty) database at `url` and stores the endpoint.
pub(super) async fn prepare(url: &str) -> Result<(), StoreError> {
    let mut client = connect(url, false).await?;
    migrate::migrate(&mut client).await?;
    let ep = bench_endpoint(TENANT);
    client
        .execute(
            "INSERT INTO endpoints (tenant_id, id, timeout_ms, record) VALUES ($1, $2, $3, $4)",
            &[&ep.tenant_id, &ep.id, &ms(ep.timeout_ms), &to_json(&ep)],
        )
        .await
        .map_err(pg_error)?;
    Ok(())
}

/// One ingest transaction of `batch` events with `payload`, as the backend's
/// batcher writes it.
pub(super) async fn ingest_batch(
    client: &mut Client,
    statements: &[Statement; 4],
    payload: &RawValue,
    batch: usize,
) -> Result<(), StoreError> {
    let ep = bench_endpoint(TENANT);
    let now = crate::clock::Clock::now_ms(&crate::clock::SystemClock);
    let events: Vec<PreparedEvent> = (0..batch)
        .map(|_| {
            PreparedEvent::new(&NewEvent {
                labels: Default::default(),
                tenant_id: TENANT,
                event_type: "bench.event",
                payload,
                idempotency: None,
                endpoints: vec![&ep],
                now_ms: now,
            })
        })
        .collect();
    let (mut ev, mut dl) = (EventColumns::default(), DeliveryColumns::default());
    let (mut tenants, mut ids) = (Vec::new(), Vec::new());
    for e in &events {
        ev.push(e);
        for d in &e.deliveries {
            dl.push(d);
            tenants.push(d.tenant_id.as_str());
            ids.push(d.endpoint_id.as_str());
        }
    }
    let tx = client.transaction().await.map_err(pg_error)?;
    tx.query(&statements[0], &[&tenants, &ids])
        .await
        .map_err(pg_error)?;
    let writes: [&[&(dyn ToSql + Sync)]; 3] = [
        &ev.params(),
        &[&dl.ids, &dl.tenants, &dl.endpoints, &dl.records, &dl.events],
        &[&dl.ids, &dl.tenants, &dl.endpoints, &dl.due],
    ];
    for (statement, params) in statements[1..].iter().zip(writes) {
        tx.execute(statement, params).await.map_err(pg_error)?;
    }
    tx.commit().await.map_err(pg_error)
}

pub(super) async fn ingest_statements(client: &Client) -> Result<[Statement; 4], StoreError> {
    let mut out = Vec::new();
    for sql in [
        LOCK_ENDPOINTS,
        INSERT_EVENTS,
        INSERT_DELIVERIES,
        INSERT_QUEUE,
    ] {
        out.push(client.prepare(sql).await.map_err(pg_error)?);
    }
    out.try_into()
        .map_err(|_| StoreError::unavailable("four statements"))
}

/// Events per second ingested into the empty database at `url` for `secs` by
/// `connections` connections, each committing batches of `batch` events whose
/// payloads are `payload_len` bytes.
///
/// # Errors
/// If the database cannot be reached or written.
pub async fn raw_ingest_rate(
    url: &str,
    secs: f64,
    payload_len: usize,
    connections: usize,
    batch: usize,
) -> Result<f64, StoreError> {
    prepare(url).await?;
    let payload = format!(
        "{{\"pad\":\"{}\"}}",
        "x".repeat(payload_len.saturating_sub(10))
    );
    let payload: Arc<RawValue> = RawValue::from_string(payload)
        .map_err(|e| StoreError::corrupt(e.to_string()))?
        .into();
    let written = Arc::new(AtomicU64::new(0));
    let started = Instant::now();
    let mut tasks = Vec::new();
    for _ in 0..connections {
        let (url, payload, written) = (url.to_owned(), payload.clone(), written.clone());
        tasks.push(tokio::spawn(async move {
            let mut client = connect(&url, false).await?;
            let statements = ingest_statements(&client).await?;
            while started.elapsed().as_secs_f64() < secs {
                ingest_batch(&mut client, &statements, &payload, batch).await?;
                written.fetch_add(batch as u64, Ordering::Relaxed);
            }
            Ok::<_, StoreError>(())
        }));
    }
    for task in tasks {
        task.await
            .map_err(|e| StoreError::unavailable(e.to_string()))??;
    }
    Ok(written.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64())
}
