//! Attempts by id and in id order, through the attempt indexes (schema 7):
//! a tenant's, or one endpoint's, from `attempts` and `late_attempts` merged.

use super::{PgStore, from_json, pg_error};
use crate::ids::{AttemptId, EndpointId};
use crate::store::{AttemptRecord, IdOrder, IdWindow, ListedAttempt, StoreError};

impl PgStore {
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
        let direction = match order {
            IdOrder::Descending => "DESC",
            IdOrder::Ascending => "ASC",
        };
        // One condition for both tables, each read through its own index; the
        // planner merges the two ordered reads.
        let within = "tenant_id = $1 AND attempt_id IS NOT NULL
               AND ($2::text IS NULL OR endpoint_id = $2)
               AND ($3::text IS NULL OR attempt_id > $3) AND ($4::text IS NULL OR attempt_id < $4)";
        let sql = format!(
            "(SELECT attempt_id, record FROM attempts WHERE {within}
                ORDER BY attempt_id {direction} LIMIT $5)
             UNION ALL
             (SELECT attempt_id, record FROM late_attempts WHERE {within}
                ORDER BY attempt_id {direction} LIMIT $5)
             ORDER BY attempt_id {direction} LIMIT $5"
        );
        let endpoint = endpoint.map(EndpointId::as_str);
        let rows = self
            .client()
            .await?
            .query(
                &sql,
                &[
                    &tenant,
                    &endpoint,
                    &window.after,
                    &window.before,
                    &(max as i64),
                ],
            )
            .await
            .map_err(pg_error)?;
        let mut out = Vec::with_capacity(rows.len());
        for row in &rows {
            let record: AttemptRecord = from_json(row.get(1), "attempt")?;
            out.extend(ListedAttempt::new(record));
        }
        Ok(out)
    }

    /// One of `tenant`'s attempts by id.
    pub(crate) async fn attempt_by_id(
        &self,
        tenant: &str,
        id: &AttemptId,
    ) -> Result<Option<ListedAttempt>, StoreError> {
        let row = self
            .client()
            .await?
            .query_opt(
                "SELECT record FROM attempts WHERE tenant_id = $1 AND attempt_id = $2
                 UNION ALL
                 SELECT record FROM late_attempts WHERE tenant_id = $1 AND attempt_id = $2
                 LIMIT 1",
                &[&tenant, &id.as_str()],
            )
            .await
            .map_err(pg_error)?;
        let Some(row) = row else { return Ok(None) };
        let record: AttemptRecord = from_json(row.get(0), "attempt")?;
        Ok(ListedAttempt::new(record))
    }
}
