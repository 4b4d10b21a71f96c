//! The delivery half of the benchmarks' PostgreSQL reference: claims and
//! outcomes, with the backend's own statements, through `tokio-postgres` alone.

use crate::store::DueEntry;
use std::sync::Arc;
use std::time::Instant;

use serde_json::value::RawValue;
use tokio::sync::Mutex;
use tokio_postgres::types::ToSql;
use tokio_postgres::{Client, Statement};

use super::outcome_batch::Columns;
use super::outcomes::OutcomeRow;
use super::reference::{connect, ingest_batch, ingest_statements, prepare};
use super::statements::{CLAIM, OUTCOMES};
use super::{from_json, ms, pg_error};
use crate::ids::AttemptId;
use crate::policy::VerdictKind;
use crate::store::{
    AttemptOf, AttemptRecord, AttemptWrite, DeliveryRecord, DeliveryState, Lane, Lease, StoreError,
};

/// The log entry of a first attempt of `d` answered 200, with its id (so
/// the reference writes the attempt indexes the gateway writes).
fn bench_attempt(d: &DeliveryRecord) -> AttemptRecord {
    AttemptRecord {
        id: Some(AttemptId::generate(d.created_at_ms)),
        of: Some(AttemptOf {
            delivery_id: d.id.clone(),
            endpoint_id: d.endpoint_id.clone(),
            event_id: d.event_id.clone(),
            event_type: d.event_type.clone(),
            test: false,
        }),
        sent: None,
        series: d.series,
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
        node_id: None,
        late: false,
        transform: None,
    }
}

/// Deliveries per second settled from a backlog of `n` in the database at
/// `url`: `claimers` connections each claim `claim_size` rows at a time
/// ([`CLAIM`], as the gateway's scheduler turns do on average) and write the
/// claim's successes `per_statement` to a statement ([`OUTCOMES`], as the
/// gateway's outcome batches averaged) on one of `writers` relaxed connections.
///
/// # Errors
/// If the database cannot be reached or written.
pub async fn raw_deliver_rate(
    url: &str,
    n: usize,
    claimers: usize,
    writers: usize,
    claim_size: usize,
    per_statement: usize,
) -> Result<f64, StoreError> {
    prepare(url).await?;
    let payload = RawValue::from_string("{\"pad\":\"x\"}".to_owned())
        .map_err(|e| StoreError::corrupt(e.to_string()))?;
    let mut seeder = connect(url, false).await?;
    let statements = ingest_statements(&seeder).await?;
    for chunk in (0..n).collect::<Vec<_>>().chunks(500) {
        ingest_batch(&mut seeder, &statements, &payload, chunk.len()).await?;
    }
    let mut outcome_clients = Vec::new();
    for _ in 0..writers {
        let client = connect(url, true).await?;
        let statement = client.prepare(OUTCOMES).await.map_err(pg_error)?;
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
                let params: [&(dyn ToSql + Sync); 8] = [
                    &"ep_reference",
                    &0i16,
                    &now,
                    &size,
                    &token,
                    &"reference",
                    &30_000i64,
                    &300_000i64,
                ];
                let rows = client.query(&claim, &params).await.map_err(pg_error)?;
                if rows.is_empty() {
                    return Ok::<_, StoreError>(());
                }
                let mut settled = Vec::with_capacity(rows.len());
                for row in rows {
                    let d: DeliveryRecord = from_json(row.get(2), "delivery")?;
                    settled.push(d);
                }
                for chunk in settled.chunks_mut(per_statement.max(1)) {
                    settle(&writer, chunk, token).await?;
                }
            }
        }));
    }
    for task in tasks {
        task.await
            .map_err(|e| StoreError::unavailable(e.to_string()))??;
    }
    Ok(n as f64 / started.elapsed().as_secs_f64())
}

/// Writes each delivery's first attempt as a success, in one statement, as
/// the backend's outcome batches do.
async fn settle(
    writer: &Mutex<(Client, Statement)>,
    claimed: &mut [DeliveryRecord],
    token: i64,
) -> Result<(), StoreError> {
    let mut columns = Columns::default();
    for d in claimed.iter_mut() {
        let (series, attempts) = (d.series, d.attempts);
        d.attempts += 1;
        d.state = DeliveryState::Succeeded;
        d.next_attempt_at_ms = None;
        let log = bench_attempt(d);
        let lease = Lease(
            DueEntry {
                lane: Lane::First,
                endpoint_id: d.endpoint_id.clone(),
                due_ms: d.created_at_ms,
                delivery_id: d.id.clone(),
            },
            token,
            None,
        );
        columns.push(&OutcomeRow::new(&AttemptWrite {
            delivery: d,
            expected_series: series,
            expected_attempts: attempts,
            attempt: &log,
            lease: &lease,
            next_due_ms: None,
            disable_endpoint: None,
        }));
    }
    let writer = writer.lock().await;
    let written = writer
        .0
        .query(&writer.1, &columns.params())
        .await
        .map_err(pg_error)?;
    if written.len() == claimed.len() {
        Ok(())
    } else {
        Err(StoreError::corrupt(format!(
            "{} of {} outcomes written",
            written.len(),
            claimed.len()
        )))
    }
}
