//! Attempt outcomes, fenced by the lease: a statement that moves the queue
//! row on (or removes it) only under the lease's token, series and attempts,
//! and writes the delivery and its log entry with it; a late outcome finds no
//! row and is `Stale`. Most are written several to a statement
//! (`outcome_batch.rs`); one that disables its endpoint or counts on the
//! shared breaker takes a transaction of its own.

use deadpool_postgres::GenericClient;
use tokio_postgres::types::ToSql;

use super::statements::{OUTCOME_FINAL, OUTCOME_RETRY};
use super::{PgStore, from_json, ms, pg_error, to_json};
use crate::store::{
    AttemptRecord, AttemptWrite, DeliveryRecord, EndpointRecord, RuntimeRecord, StoreError,
    WriteResult,
};

impl PgStore {
    /// Records an attempt under its lease, with the outcomes written beside it
    /// (`outcome_batch.rs`), on a connection that commits without waiting for
    /// the disk: an outcome lost in a crash only means the attempt is made
    /// again. Disabling the endpoint with it (a 410) takes a transaction.
    pub async fn record_attempt(&self, w: AttemptWrite<'_>) -> Result<WriteResult, StoreError> {
        let d = w.delivery;
        self.inner.claimed.take(&d.id, w.lease.1);
        let row = OutcomeRow::new(&w);
        let Some(reason) = &w.disable_endpoint else {
            return self.inner.outcomes.write(row).await;
        };
        let (sql, params) = (row.sql(), row.params());
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        let row = tx.query_one(sql, &params).await.map_err(pg_error)?;
        if row.get::<_, i64>(0) == 0 {
            return Ok(WriteResult::Stale);
        }
        disable_endpoint(&tx, d, reason).await?;
        tx.commit().await.map_err(pg_error)?;
        self.inner.cache.forget_endpoints(&d.tenant_id);
        Ok(WriteResult::Written)
    }
}

impl PgStore {
    /// See [`crate::store::Store::record_counted_attempt`]: the endpoint's
    /// shared state is locked first, so no node plans a turn between the
    /// outcome giving up its lease and the breaker counting it.
    pub async fn record_counted_attempt<R: Send>(
        &self,
        w: AttemptWrite<'_>,
        change: impl FnOnce(&mut RuntimeRecord) -> R + Send,
    ) -> Result<(WriteResult, Option<R>), StoreError> {
        let d = w.delivery;
        self.inner.claimed.take(&d.id, w.lease.1);
        let row = OutcomeRow::new(&w);
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(pg_error)?;
        let mut runtime = super::runtime::lock_runtime(&tx, &d.endpoint_id).await?;
        let count = tx.query_one(row.sql(), &row.params()).await;
        if written(count.map_err(pg_error)?.get(0)) == WriteResult::Stale {
            // A stale outcome is not counted: the attempt holding the lease is.
            return Ok((WriteResult::Stale, None));
        }
        let before = runtime.clone();
        let answer = change(&mut runtime);
        if runtime != before {
            super::runtime::save(&tx, &d.endpoint_id, &runtime).await?;
        }
        if let Some(reason) = &w.disable_endpoint {
            disable_endpoint(&tx, d, reason).await?;
        }
        tx.commit().await.map_err(pg_error)?;
        if w.disable_endpoint.is_some() {
            self.inner.cache.forget_endpoints(&d.tenant_id);
        }
        Ok((WriteResult::Written, Some(answer)))
    }

    /// See [`crate::store::Store::record_late_attempt`].
    pub async fn record_late_attempt(
        &self,
        tenant: &str,
        delivery_id: &str,
        late: &AttemptRecord,
    ) -> Result<WriteResult, StoreError> {
        let client = self.relaxed_client().await?;
        let node = late.node_id.clone().unwrap_or_default();
        let count = client
            .execute(
                "INSERT INTO late_attempts (delivery_id, series, attempt, node_id, record,
                     attempt_id, tenant_id, endpoint_id)
                 SELECT $1, $2, $3, $4, $5, $7, $6, $8
                 WHERE EXISTS (SELECT 1 FROM deliveries WHERE id = $1 AND tenant_id = $6)
                 ON CONFLICT DO NOTHING",
                &[
                    &delivery_id,
                    &(late.series as i32),
                    &(late.attempt as i32),
                    &node,
                    &to_json(late),
                    &tenant,
                    &late.id.as_ref().map(ToString::to_string),
                    &late.of.as_ref().map(|o| o.endpoint_id.to_string()),
                ],
            )
            .await
            .map_err(pg_error)?;
        Ok(written(i64::try_from(count).unwrap_or(0)))
    }
}

/// An outcome's statement and its parameters, owned: the backend writes them,
/// and the benchmark's reference writes its outcomes with the same.
pub(super) struct OutcomeRow {
    pub(super) id: String,
    pub(super) token: i64,
    pub(super) series: i32,
    pub(super) attempts: i32,
    pub(super) tenant: String,
    pub(super) endpoint: String,
    pub(super) state: &'static str,
    pub(super) record: String,
    pub(super) log_series: i32,
    pub(super) log_attempt: i32,
    pub(super) log: String,
    /// The log entry's id (none in attempts made without one).
    pub(super) attempt_id: Option<String>,
    /// When a retry is due, and the attempts made so far.
    pub(super) retry: Option<(i64, i32)>,
}

impl OutcomeRow {
    pub(super) fn new(w: &AttemptWrite<'_>) -> Self {
        let (d, a) = (w.delivery, w.attempt);
        Self {
            id: d.id.to_string(),
            token: w.lease.1,
            series: w.expected_series as i32,
            attempts: w.expected_attempts as i32,
            tenant: d.tenant_id.to_string(),
            endpoint: d.endpoint_id.to_string(),
            state: d.state.as_str(),
            record: to_json(d),
            log_series: a.series as i32,
            log_attempt: a.attempt as i32,
            log: to_json(a),
            attempt_id: a.id.as_ref().map(ToString::to_string),
            retry: w.next_due_ms.map(|due| (ms(due), d.attempts as i32)),
        }
    }

    /// The delivery it is the outcome of.
    pub(super) fn delivery_id(&self) -> &str {
        &self.id
    }

    /// [`OUTCOME_RETRY`] or [`OUTCOME_FINAL`].
    pub(super) fn sql(&self) -> &'static str {
        if self.retry.is_some() {
            OUTCOME_RETRY
        } else {
            OUTCOME_FINAL
        }
    }

    /// The parameters, in [`OutcomeRow::sql`]'s order.
    pub(super) fn params(&self) -> Vec<&(dyn ToSql + Sync)> {
        let mut params: Vec<&(dyn ToSql + Sync)> = vec![
            &self.id,
            &self.token,
            &self.series,
            &self.attempts,
            &self.tenant,
            &self.endpoint,
            &self.state,
            &self.record,
            &self.log_series,
            &self.log_attempt,
            &self.log,
            &self.attempt_id,
        ];
        if let Some((due, attempts)) = &self.retry {
            params.push(due);
            params.push(attempts);
        }
        params
    }
}

/// Whether an outcome statement's count says it was written.
fn written(count: i64) -> WriteResult {
    if count == 0 {
        WriteResult::Stale
    } else {
        WriteResult::Written
    }
}

/// Disables an endpoint after a 410, inside an outcome's transaction.
async fn disable_endpoint(
    tx: &impl GenericClient,
    d: &DeliveryRecord,
    reason: &str,
) -> Result<(), StoreError> {
    let row = tx
        .query_opt(
            "SELECT record FROM endpoints WHERE tenant_id = $1 AND id = $2 FOR UPDATE",
            &[&d.tenant_id, &d.endpoint_id],
        )
        .await
        .map_err(pg_error)?;
    let Some(row) = row else { return Ok(()) };
    let Ok(mut ep) = from_json::<EndpointRecord>(row.get(0), "endpoint") else {
        return Ok(());
    };
    if ep.disabled {
        return Ok(()); // the first disabling's reason and time stand
    }
    ep.disabled = true;
    ep.disabled_reason = Some(reason.to_owned());
    ep.disabled_at_ms = Some(d.updated_at_ms);
    super::endpoints::write_endpoint(tx, &ep).await
}
