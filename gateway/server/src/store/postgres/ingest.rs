//! Ingest: each event, its deliveries and their queue rows in one transaction,
//! committed with `synchronous_commit = on` before the 202.
//!
//! Ingests without an `Idempotency-Key` that arrive together are batched: a
//! worker takes every job waiting (up to [`MAX_BATCH`]) and writes them with one
//! multi-row statement per table (`UNNEST`), so one WAL flush acknowledges the
//! lot, the database's group commit. A keyed ingest runs alone: its key's row
//! serialises repeats, and a repeat must not abort the others' batch.

use crate::ids::{EndpointId, TenantId};
use std::collections::HashSet;
use std::sync::Arc;

use deadpool_postgres::Pool;
use tokio::sync::{Mutex, mpsc, oneshot};

use tokio_postgres::Statement;
use tokio_postgres::types::ToSql;

use super::columns::{DeliveryColumns, EventColumns};
use super::statements::{INSERT_DELIVERIES, INSERT_EVENTS, INSERT_QUEUE, LOCK_ENDPOINTS};
use super::{PgStore, error::pool_error, ms, pg_error};
use crate::store::events::PreparedEvent;
use crate::store::{IDEMPOTENCY_TTL_MS, IngestOutcome, NewEvent, StoreError};

/// Most events one batch writes.
const MAX_BATCH: usize = 256;

/// One event waiting to be written, and who waits for the answer.
struct Job {
    event: PreparedEvent,
    /// Whether it was written, and the event given back for the answer.
    reply: oneshot::Sender<(Result<bool, StoreError>, PreparedEvent)>,
}

/// The queue of unkeyed ingests and the workers that write it.
pub(super) struct Batcher {
    jobs: mpsc::Sender<Job>,
}

impl Batcher {
    /// Starts `pool_size / 4` workers (1 to 4): enough to keep batches flowing
    /// while one commits, few enough to leave the pool to everything else.
    pub(super) fn start(
        pool: Pool,
        pool_size: usize,
        counters: super::stats::BatchCounters,
    ) -> (Self, Vec<tokio::task::JoinHandle<()>>) {
        let (jobs, rx) = mpsc::channel::<Job>(MAX_BATCH * 8);
        let rx = Arc::new(Mutex::new(rx));
        let workers = (pool_size / 4).clamp(1, 4);
        let tasks = (0..workers)
            .map(|_| {
                let (rx, pool, counters) = (Arc::clone(&rx), pool.clone(), counters.clone());
                tokio::spawn(async move {
                    loop {
                        let batch = {
                            let mut rx = rx.lock().await;
                            let Some(first) = rx.recv().await else { return };
                            let mut batch = vec![first];
                            while batch.len() < MAX_BATCH {
                                match rx.try_recv() {
                                    Ok(job) => batch.push(job),
                                    Err(_) => break,
                                }
                            }
                            batch
                        };
                        counters.ingest_batches.inc();
                        counters.ingested_events.inc_by(batch.len() as u64);
                        write_batch(&pool, batch).await;
                    }
                })
            })
            .collect();
        (Self { jobs }, tasks)
    }
}

/// Writes a batch in one transaction and answers each job.
async fn write_batch(pool: &Pool, batch: Vec<Job>) {
    let events: Vec<&PreparedEvent> = batch.iter().map(|j| &j.event).collect();
    let result = async {
        let mut client = pool.get().await.map_err(pool_error)?;
        let tx = client.transaction().await.map_err(pg_error)?;
        let written = insert_events(&tx, &events).await?;
        tx.commit().await.map_err(pg_error)?;
        Ok::<_, StoreError>(written)
    }
    .await;
    match result {
        Ok(written) => {
            for (job, written) in batch.into_iter().zip(written) {
                let _ = job.reply.send((Ok(written), job.event));
            }
        }
        Err(e) => {
            for job in batch {
                let _ = job.reply.send((Err(e.relayed()), job.event));
            }
        }
    }
}

/// Inserts each event whose endpoints all still exist, holding them against a
/// delete until commit (`FOR KEY SHARE`); returns which were written.
async fn insert_events(
    tx: &deadpool_postgres::Transaction<'_>,
    events: &[&PreparedEvent],
) -> Result<Vec<bool>, StoreError> {
    let (mut tenants, mut ids) = (Vec::new(), Vec::new());
    for e in events {
        for d in &e.deliveries {
            tenants.push(d.tenant_id.as_str());
            ids.push(d.endpoint_id.as_str());
        }
    }
    let present: HashSet<(TenantId, EndpointId)> = tx
        .query(&prepared(tx, LOCK_ENDPOINTS).await?, &[&tenants, &ids])
        .await
        .map_err(pg_error)?
        .into_iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect();
    let written: Vec<bool> = events
        .iter()
        .map(|e| {
            e.deliveries
                .iter()
                .all(|d| present.contains(&(d.tenant_id.clone(), d.endpoint_id.clone())))
        })
        .collect();
    let mut ev = EventColumns::default();
    let mut dl = DeliveryColumns::default();
    for (e, _) in events.iter().zip(&written).filter(|(_, w)| **w) {
        ev.push(e);
        for d in &e.deliveries {
            dl.push(d);
        }
    }
    if ev.ids.is_empty() {
        return Ok(written);
    }
    let events_params = ev.params();
    let writes: [(&str, &[&(dyn ToSql + Sync)]); 3] = [
        (INSERT_EVENTS, &events_params),
        (
            INSERT_DELIVERIES,
            &[&dl.ids, &dl.tenants, &dl.endpoints, &dl.records, &dl.events],
        ),
        (
            INSERT_QUEUE,
            &[&dl.ids, &dl.tenants, &dl.endpoints, &dl.due],
        ),
    ];
    for (sql, params) in writes {
        tx.execute(&prepared(tx, sql).await?, params)
            .await
            .map_err(pg_error)?;
    }
    Ok(written)
}

/// `sql` prepared on this connection (once per connection: cached).
async fn prepared(
    tx: &deadpool_postgres::Transaction<'_>,
    sql: &str,
) -> Result<Statement, StoreError> {
    tx.prepare_cached(sql).await.map_err(pg_error)
}

impl PgStore {
    pub async fn ingest(&self, ev: NewEvent<'_>) -> Result<IngestOutcome, StoreError> {
        let prepared = PreparedEvent::new(&ev);
        if let Some((key, body_hash)) = &ev.idempotency {
            return self.ingest_keyed(prepared, &ev, key, body_hash).await;
        }
        let (reply, answer) = oneshot::channel();
        let job = Job {
            event: prepared,
            reply,
        };
        let gone = || StoreError::unavailable("ingest writer stopped");
        if self.inner.ingest.jobs.send(job).await.is_err() {
            return Err(gone());
        }
        let (written, event) = answer.await.map_err(|_| gone())?;
        Ok(if written? {
            created(event)
        } else {
            IngestOutcome::EndpointsChanged
        })
    }

    /// A keyed ingest: the key's row, claimed first, makes a concurrent repeat
    /// wait for this commit and then answer with its response.
    async fn ingest_keyed(
        &self,
        prepared: PreparedEvent,
        ev: &NewEvent<'_>,
        key: &str,
        body_hash: &str,
    ) -> Result<IngestOutcome, StoreError> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        let claimed = tx
            .query_opt(
                "INSERT INTO idempotency (tenant_id, key, body_sha256, response, created_at_ms)
                 VALUES ($1, $2, $3, $4, $5)
                 ON CONFLICT (tenant_id, key) DO UPDATE SET body_sha256 = EXCLUDED.body_sha256,
                     response = EXCLUDED.response, created_at_ms = EXCLUDED.created_at_ms
                 WHERE idempotency.created_at_ms + $6 <= EXCLUDED.created_at_ms
                 RETURNING 1",
                &[
                    &ev.tenant_id,
                    &key,
                    &body_hash,
                    &serde_json::to_string(&prepared.receipt)
                        .map_err(|e| StoreError::corrupt(format!("idempotency receipt: {e}")))?,
                    &ms(ev.now_ms),
                    &ms(IDEMPOTENCY_TTL_MS),
                ],
            )
            .await
            .map_err(pg_error)?;
        if claimed.is_none() {
            let row = tx
                .query_one(
                    "SELECT body_sha256, response FROM idempotency WHERE tenant_id = $1 AND key = $2",
                    &[&ev.tenant_id, &key],
                )
                .await
                .map_err(pg_error)?;
            let (hash, response): (String, String) = (row.get(0), row.get(1));
            if !crate::store::events::same_body(&hash, body_hash) {
                return Ok(IngestOutcome::KeyReused);
            }
            return Ok(IngestOutcome::Replayed(super::from_json(
                &response,
                "idempotency response",
            )?));
        }
        if !insert_events(&tx, &[&prepared]).await?[0] {
            return Ok(IngestOutcome::EndpointsChanged);
        }
        tx.commit().await.map_err(pg_error)?;
        Ok(created(prepared))
    }
}

fn created(event: PreparedEvent) -> IngestOutcome {
    IngestOutcome::Created {
        receipt: event.receipt,
        deliveries: event.deliveries,
    }
}
