//! Per-endpoint stats buckets (see `store/endpoint_stats.rs`): one row of
//! `endpoint_stats` per endpoint and bucket.
//!
//! A flush is one statement: every delta as parallel arrays, joined to the
//! endpoint's row (so a delta for a deleted endpoint adds nothing) and upserted
//! by addition, histograms slot by slot, so gateways merge whatever the order
//! of their flushes. The join takes `FOR KEY SHARE` on the endpoint's row: an
//! endpoint's delete waits for a flush holding it, and removes the endpoint's
//! buckets in a statement after its own, which sees what that flush added.

use deadpool_postgres::GenericClient;

use super::{PgStore, ms, pg_error, unms};
use crate::ids::{EndpointId, TenantId};
use crate::store::{
    OwnedStatsBucket, StatsAcross, StatsBucket, StatsCounts, StatsDelta, StoreError,
};

/// Adds the deltas `$1..$6` (tenant, endpoint, bucket start, attempts,
/// delivered, failed) with their histograms `$7` (flattened, `$8` slots each).
/// In key order, so flushes of two gateways lock rows in the same order.
const ADD: &str = "
INSERT INTO endpoint_stats
    (tenant_id, endpoint_id, bucket_start_ms, attempts, delivered, failed, latency)
SELECT d.tenant_id, d.endpoint_id, d.bucket_start_ms, d.attempts, d.delivered, d.failed,
       ($7::bigint[])[((d.n - 1) * $8::int + 1)::int : (d.n * $8::int)::int]
FROM unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::bigint[], $6::bigint[])
     WITH ORDINALITY AS d(tenant_id, endpoint_id, bucket_start_ms, attempts, delivered, failed, n)
JOIN endpoints e ON e.tenant_id = d.tenant_id AND e.id = d.endpoint_id
ORDER BY d.tenant_id, d.endpoint_id, d.bucket_start_ms
FOR KEY SHARE OF e
ON CONFLICT (tenant_id, endpoint_id, bucket_start_ms) DO UPDATE SET
    attempts = endpoint_stats.attempts + EXCLUDED.attempts,
    delivered = endpoint_stats.delivered + EXCLUDED.delivered,
    failed = endpoint_stats.failed + EXCLUDED.failed,
    latency = ARRAY(
        SELECT COALESCE(stored, 0) + COALESCE(added, 0)
        FROM unnest(endpoint_stats.latency, EXCLUDED.latency)
             WITH ORDINALITY AS slot(stored, added, i)
        ORDER BY i)";

/// A count as PostgreSQL's `bigint`.
fn count(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// The attempts, delivered, failed and latency columns of `row`, from `at`.
fn counts_of(row: &tokio_postgres::Row, at: usize) -> StatsCounts {
    StatsCounts {
        attempts: unms(row.get(at)),
        delivered: unms(row.get(at + 1)),
        failed: unms(row.get(at + 2)),
        latency: row
            .get::<_, Vec<i64>>(at + 3)
            .into_iter()
            .map(unms)
            .collect(),
    }
}

impl PgStore {
    pub async fn add_endpoint_stats(&self, deltas: &[StatsDelta]) -> Result<usize, StoreError> {
        let width = deltas
            .iter()
            .map(|d| d.counts.latency.len())
            .max()
            .unwrap_or(0);
        let (mut tenants, mut endpoints, mut starts) = (Vec::new(), Vec::new(), Vec::new());
        let (mut attempts, mut delivered, mut failed) = (Vec::new(), Vec::new(), Vec::new());
        let mut latency = Vec::with_capacity(deltas.len() * width);
        for d in deltas {
            tenants.push(d.tenant_id.as_str());
            endpoints.push(d.endpoint_id.as_str());
            starts.push(ms(d.bucket_start_ms));
            attempts.push(count(d.counts.attempts));
            delivered.push(count(d.counts.delivered));
            failed.push(count(d.counts.failed));
            let slots = d.counts.latency.iter().map(|n| count(*n));
            latency.extend(slots.chain(std::iter::repeat(0)).take(width));
        }
        let width = i32::try_from(width).unwrap_or(i32::MAX);
        let added = self
            .client()
            .await?
            .execute(
                ADD,
                &[
                    &tenants, &endpoints, &starts, &attempts, &delivered, &failed, &latency, &width,
                ],
            )
            .await
            .map_err(pg_error)?;
        Ok(usize::try_from(added).unwrap_or(usize::MAX))
    }

    pub async fn endpoint_stats(
        &self,
        tenant: &str,
        endpoint: &str,
        from_ms: u64,
        until_ms: u64,
    ) -> Result<Vec<StatsBucket>, StoreError> {
        let rows = self
            .client()
            .await?
            .query(
                "SELECT bucket_start_ms, attempts, delivered, failed, latency
                 FROM endpoint_stats
                 WHERE tenant_id = $1 AND endpoint_id = $2
                   AND bucket_start_ms >= $3 AND bucket_start_ms < $4
                 ORDER BY bucket_start_ms",
                &[&tenant, &endpoint, &ms(from_ms), &ms(until_ms)],
            )
            .await
            .map_err(pg_error)?;
        Ok(rows
            .iter()
            .map(|r| StatsBucket {
                start_ms: unms(r.get(0)),
                counts: counts_of(r, 1),
            })
            .collect())
    }

    pub async fn stats_across(
        &self,
        tenant: Option<&str>,
        from_ms: u64,
        until_ms: u64,
        cap: usize,
    ) -> Result<StatsAcross, StoreError> {
        let taking = i64::try_from(cap).unwrap_or(i64::MAX).saturating_add(1);
        let rows = self
            .client()
            .await?
            .query(
                "SELECT tenant_id, endpoint_id, bucket_start_ms, attempts, delivered, failed, latency
                 FROM endpoint_stats
                 WHERE ($1::text IS NULL OR tenant_id = $1)
                   AND bucket_start_ms >= $2 AND bucket_start_ms < $3
                 ORDER BY tenant_id, endpoint_id, bucket_start_ms
                 LIMIT $4",
                &[&tenant, &ms(from_ms), &ms(until_ms), &taking],
            )
            .await
            .map_err(pg_error)?;
        let complete = rows.len() <= cap;
        let buckets = rows
            .iter()
            .take(cap)
            .map(|r| OwnedStatsBucket {
                tenant_id: TenantId::from(r.get::<_, &str>(0)),
                endpoint_id: EndpointId::from(r.get::<_, &str>(1)),
                bucket: StatsBucket {
                    start_ms: unms(r.get(2)),
                    counts: counts_of(r, 3),
                },
            })
            .collect();
        Ok(StatsAcross { buckets, complete })
    }

    pub async fn sweep_endpoint_stats(
        &self,
        before_ms: u64,
        limit: usize,
    ) -> Result<usize, StoreError> {
        let n = self
            .client()
            .await?
            .execute(
                "WITH doomed AS (SELECT ctid FROM endpoint_stats
                     WHERE bucket_start_ms < $1 LIMIT $2)
                 DELETE FROM endpoint_stats WHERE ctid IN (SELECT ctid FROM doomed)",
                &[&ms(before_ms), &(limit as i64)],
            )
            .await
            .map_err(pg_error)?;
        Ok(n as usize)
    }

    /// See [`crate::store::Store::count_pending`]: a pending delivery is one
    /// `queue` row, leased or not.
    pub async fn count_pending(&self, endpoint: &str, cap: usize) -> Result<usize, StoreError> {
        let row = self
            .client()
            .await?
            .query_one(
                "SELECT count(*) FROM (SELECT 1 FROM queue WHERE endpoint_id = $1 LIMIT $2) s",
                &[&endpoint, &(cap as i64)],
            )
            .await
            .map_err(pg_error)?;
        Ok(usize::try_from(row.get::<_, i64>(0)).unwrap_or(0))
    }
}

/// Removes every stats bucket of one endpoint: for its delete, in a statement
/// after the one that removed the endpoint's row.
pub(super) async fn remove_endpoint_stats(
    client: &impl GenericClient,
    tenant: &str,
    endpoint: &str,
) -> Result<u64, StoreError> {
    client
        .execute(
            "DELETE FROM endpoint_stats WHERE tenant_id = $1 AND endpoint_id = $2",
            &[&tenant, &endpoint],
        )
        .await
        .map_err(pg_error)
}
