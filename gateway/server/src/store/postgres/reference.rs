//! The benchmarks' point of comparison on PostgreSQL: the database running
//! exactly the statements the backend runs ([`super::statements`]), through
//! `tokio-postgres` alone, with the backend's batch sizes, connections and
//! `synchronous_commit`, and none of hookgate's work around them (no HTTP, no
//! API, no scheduler, no delivery). What hookgate reaches against it is what it
//! adds on top of the database.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use serde_json::value::RawValue;
use tokio::sync::Mutex;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Statement};

use super::columns::{DeliveryColumns, EventColumns};
use super::outcomes::OutcomeRow;
use super::statements::{
    CLAIM, INSERT_DELIVERIES, INSERT_EVENTS, INSERT_QUEUE, LOCK_ENDPOINTS, OUTCOME_FINAL,
};
use super::{PgTarget, from_json, migrate, ms, pg_error, to_json};
use crate::policy::VerdictKind;
use crate::store::events::PreparedEvent;
use crate::store::sled::keys::ScheduleKey;
use crate::store::{
    AttemptRecord, AttemptWrite, BreakerRecord, DeliveryRecord, DeliveryState, EndpointRecord,
    Lane, Lease, NewEvent, StoreError,
};

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
    }
}

/// The log entry of a first attempt answered 200.
fn bench_attempt(series: u32) -> AttemptRecord {
    AttemptRecord {
        series,
        attempt: 1,
        started_at_ms: 0,
        duration_ms: 1,
        status: Some(200),
        error_kind: None,
        response_snippet: String::new(),
        verdict: VerdictKind::Delivered.into(),
        delay_ms: None,
        next_attempt_at_ms: None,
        dead_reason: None,
        decided_by: "builtin".into(),
        policy: "builtin:default".into(),
    }
}

/// One connection, its driver on this runtime; `relaxed` commits without
/// waiting for the disk, as the backend's outcome connections do.
async fn connect(url: &str, relaxed: bool) -> Result<Client, StoreError> {
    let target = PgTarget::parse(url).map_err(StoreError::Unavailable)?;
    let commit = if relaxed { "off" } else { "on" };
    let target = target.with_setting("synchronous_commit", commit);
    let tls = target.tls(None).map_err(StoreError::Unavailable)?;
    let (client, connection) = target.config.connect(tls).await.map_err(pg_error)?;
    tokio::spawn(connection);
    Ok(client)
}

/// Migrates the (empty) database at `url` and stores the endpoint.
async fn prepare(url: &str) -> Result<(), StoreError> {
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
async fn ingest_batch(
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
        &[
            &ev.tenants,
            &ev.ids,
            &ev.types,
            &ev.payloads,
            &ev.created,
            &ev.deliveries,
        ],
        &[&dl.ids, &dl.tenants, &dl.endpoints, &dl.records, &dl.events],
        &[&dl.ids, &dl.tenants, &dl.endpoints, &dl.due],
    ];
    for (statement, params) in statements[1..].iter().zip(writes) {
        tx.execute(statement, params).await.map_err(pg_error)?;
    }
    tx.commit().await.map_err(pg_error)
}

async fn ingest_statements(client: &Client) -> Result<[Statement; 4], StoreError> {
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
        .map_err(|_| StoreError::Unavailable("four statements".into()))
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
        .map_err(|e| StoreError::Corrupt(e.to_string()))?
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
            .map_err(|e| StoreError::Unavailable(e.to_string()))??;
    }
    Ok(written.load(Ordering::Relaxed) as f64 / started.elapsed().as_secs_f64())
}

/// Deliveries per second settled from a backlog of `n` in the database at
/// `url`: `claimers` connections each claim `claim_size` rows at a time
/// ([`CLAIM`], as the gateway's scheduler turns do on average) and write each
/// one's success ([`OUTCOME_FINAL`]) on one of `writers` relaxed connections.
///
/// # Errors
/// If the database cannot be reached or written.
pub async fn raw_deliver_rate(
    url: &str,
    n: usize,
    claimers: usize,
    writers: usize,
    claim_size: usize,
) -> Result<f64, StoreError> {
    prepare(url).await?;
    let payload = RawValue::from_string("{\"pad\":\"x\"}".to_owned())
        .map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let mut seeder = connect(url, false).await?;
    let statements = ingest_statements(&seeder).await?;
    for chunk in (0..n).collect::<Vec<_>>().chunks(500) {
        ingest_batch(&mut seeder, &statements, &payload, chunk.len()).await?;
    }
    let mut outcome_clients = Vec::new();
    for _ in 0..writers {
        let client = connect(url, true).await?;
        let statement = client.prepare(OUTCOME_FINAL).await.map_err(pg_error)?;
        outcome_clients.push(Arc::new(Mutex::new((client, statement))));
    }
    let started = Instant::now();
    let mut tasks = Vec::new();
    for i in 0..claimers {
        let (url, writer) = (url.to_owned(), outcome_clients[i % writers].clone());
        let token = i as i64 + 1;
        tasks.push(tokio::spawn(async move {
            let client = connect(&url, false).await?;
            let claim = client.prepare(CLAIM).await.map_err(pg_error)?;
            loop {
                let now = ms(crate::clock::Clock::now_ms(&crate::clock::SystemClock));
                let size = claim_size.max(1) as i64;
                let params: [&(dyn ToSql + Sync); 7] = [
                    &"ep_reference",
                    &0i16,
                    &now,
                    &size,
                    &token,
                    &"reference",
                    &30_000i64,
                ];
                let rows = client.query(&claim, &params).await.map_err(pg_error)?;
                if rows.is_empty() {
                    return Ok::<_, StoreError>(());
                }
                for row in rows {
                    let mut d: DeliveryRecord = from_json(row.get(2), "delivery")?;
                    settle(&writer, &mut d, token).await?;
                }
            }
        }));
    }
    for task in tasks {
        task.await
            .map_err(|e| StoreError::Unavailable(e.to_string()))??;
    }
    Ok(n as f64 / started.elapsed().as_secs_f64())
}

/// Writes `d`'s first attempt as a success, as the backend's outcome write does.
async fn settle(
    writer: &Mutex<(Client, Statement)>,
    d: &mut DeliveryRecord,
    token: i64,
) -> Result<(), StoreError> {
    let (series, attempts) = (d.series, d.attempts);
    d.attempts += 1;
    d.state = DeliveryState::Succeeded;
    d.next_attempt_at_ms = None;
    let log = bench_attempt(d.series);
    let lease = Lease(
        ScheduleKey {
            lane: Lane::First,
            endpoint_id: d.endpoint_id.clone(),
            due_ms: d.created_at_ms,
            delivery_id: d.id.clone(),
        },
        token,
    );
    let row = OutcomeRow::new(&AttemptWrite {
        delivery: d,
        expected_series: series,
        expected_attempts: attempts,
        attempt: &log,
        lease: &lease,
        next_due_ms: None,
        disable_endpoint: None,
    });
    let writer = writer.lock().await;
    let written = writer
        .0
        .query_one(&writer.1, &row.params())
        .await
        .map_err(pg_error)?;
    if written.get::<_, i64>(0) == 1 {
        Ok(())
    } else {
        Err(StoreError::Corrupt(format!(
            "outcome of {} not written",
            d.id
        )))
    }
}
