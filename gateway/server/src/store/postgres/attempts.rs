//! Attempts by id and in id order. `attempts` has one attempt index, the
//! endpoint's (schema 9: one index fewer for each outcome to maintain); a
//! tenant's attempts are its endpoints' orders merged, as on the embedded
//! store. `late_attempts`, written rarely, keeps a tenant index beside it.

use tokio_postgres::types::ToSql;

use super::{PgStore, from_json, pg_error};
use crate::ids::{AttemptId, EndpointId};
use crate::store::{AttemptRecord, IdOrder, IdWindow, ListedAttempt, StoreError};

/// The endpoints `$1`'s attempts are kept under (deleted ones too, until
/// their attempts go), one index seek each: a loose scan of
/// `attempts_by_endpoint`.
const ENDPOINTS_WITH_ATTEMPTS: &str = "WITH RECURSIVE eps(ep) AS (
         SELECT min(endpoint_id) FROM attempts WHERE tenant_id = $1 AND attempt_id IS NOT NULL
         UNION ALL
         SELECT (SELECT min(endpoint_id) FROM attempts
                 WHERE tenant_id = $1 AND attempt_id IS NOT NULL AND endpoint_id > eps.ep)
         FROM eps WHERE eps.ep IS NOT NULL)
     SELECT ep FROM eps WHERE ep IS NOT NULL";

/// The statement that lists attempts: one ordered, limited read per endpoint
/// (`$6` on) and one of `late_attempts`, merged. `$1` tenant, `$2` the
/// endpoint a late read keeps to (null: all), `$3`/`$4` the ids strictly
/// between, `$5` how many.
fn list_statement(endpoints: usize, order: IdOrder) -> String {
    let direction = match order {
        IdOrder::Descending => "DESC",
        IdOrder::Ascending => "ASC",
    };
    let window = "attempt_id IS NOT NULL
           AND ($3::text IS NULL OR attempt_id > $3) AND ($4::text IS NULL OR attempt_id < $4)";
    let mut branches: Vec<String> = (0..endpoints)
        .map(|i| {
            format!(
                "(SELECT attempt_id, record FROM attempts
                   WHERE tenant_id = $1 AND endpoint_id = ${} AND {window}
                   ORDER BY attempt_id {direction} LIMIT $5)",
                i + 6
            )
        })
        .collect();
    branches.push(format!(
        "(SELECT attempt_id, record FROM late_attempts
           WHERE tenant_id = $1 AND ($2::text IS NULL OR endpoint_id = $2) AND {window}
           ORDER BY attempt_id {direction} LIMIT $5)"
    ));
    // Wrapped, so a single branch takes the outer order too; the planner
    // flattens the union and merges the ordered reads.
    format!(
        "SELECT attempt_id, record FROM ({}) AS merged ORDER BY attempt_id {direction} LIMIT $5",
        branches.join(" UNION ALL ")
    )
}

impl PgStore {
    /// The endpoints `tenant` has attempts kept under.
    async fn endpoints_with_attempts(&self, tenant: &str) -> Result<Vec<String>, StoreError> {
        let rows = self
            .client()
            .await?
            .query(ENDPOINTS_WITH_ATTEMPTS, &[&tenant])
            .await
            .map_err(pg_error)?;
        Ok(rows.iter().map(|r| r.get(0)).collect())
    }

    /// Up to `max` of `tenant`'s attempts (one endpoint's, if given) with ids
    /// strictly inside `window`, in `order`.
    pub(crate) async fn attempts_between(
        &self,
        tenant: &str,
        endpoint: Option<&EndpointId>,
        window: &IdWindow,
        order: IdOrder,
        max: usize,
    ) -> Result<Vec<ListedAttempt>, StoreError> {
        let endpoints = match endpoint {
            Some(ep) => vec![ep.to_string()],
            None => self.endpoints_with_attempts(tenant).await?,
        };
        let late_endpoint = endpoint.map(EndpointId::as_str);
        let max = max as i64;
        let mut params: Vec<&(dyn ToSql + Sync)> =
            vec![&tenant, &late_endpoint, &window.after, &window.before, &max];
        params.extend(endpoints.iter().map(|e| e as &(dyn ToSql + Sync)));
        let rows = self
            .client()
            .await?
            .query(&list_statement(endpoints.len(), order), &params)
            .await
            .map_err(pg_error)?;
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let record: AttemptRecord = from_json(row.get(1), "attempt")?;
            out.extend(ListedAttempt::new(record));
        }
        Ok(out)
    }

    /// One of `tenant`'s attempts by id: looked for under each endpoint the
    /// tenant has attempts under, and among its late attempts.
    pub(crate) async fn attempt_by_id(
        &self,
        tenant: &str,
        id: &AttemptId,
    ) -> Result<Option<ListedAttempt>, StoreError> {
        let endpoints = self.endpoints_with_attempts(tenant).await?;
        let row = self
            .client()
            .await?
            .query_opt(
                "(SELECT record FROM attempts
                  WHERE tenant_id = $1 AND endpoint_id = ANY($3) AND attempt_id = $2)
                 UNION ALL
                 (SELECT record FROM late_attempts WHERE tenant_id = $1 AND attempt_id = $2)
                 LIMIT 1",
                &[&tenant, &id.as_str(), &endpoints],
            )
            .await
            .map_err(pg_error)?;
        let Some(row) = row else { return Ok(None) };
        let record: AttemptRecord = from_json(row.get(0), "attempt")?;
        Ok(ListedAttempt::new(record))
    }
}
