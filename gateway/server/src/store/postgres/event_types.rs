//! The event-type catalog: one row per name, the record whole as JSON, written
//! only where the row still holds what the caller read.

use super::{PgStore, from_json, pg_error, to_json};
use crate::store::{CatalogWrite, EventTypeRecord, StoreError};

impl PgStore {
    pub(crate) async fn save_event_type(
        &self,
        rec: &EventTypeRecord,
        expected: Option<&EventTypeRecord>,
    ) -> Result<CatalogWrite, StoreError> {
        let client = self.client().await?;
        let record = to_json(rec);
        let written = match expected {
            None => {
                client
                    .execute(
                        "INSERT INTO event_types (name, record) VALUES ($1, $2)
                         ON CONFLICT (name) DO NOTHING",
                        &[&rec.name, &record],
                    )
                    .await
            }
            Some(old) => {
                client
                    .execute(
                        "UPDATE event_types SET record = $2 WHERE name = $1 AND record = $3",
                        &[&rec.name, &record, &to_json(old)],
                    )
                    .await
            }
        }
        .map_err(pg_error)?;
        Ok(if written == 1 {
            CatalogWrite::Written
        } else {
            CatalogWrite::Conflict
        })
    }

    pub(crate) async fn event_type(
        &self,
        name: &str,
    ) -> Result<Option<EventTypeRecord>, StoreError> {
        let row = self
            .client()
            .await?
            .query_opt("SELECT record FROM event_types WHERE name = $1", &[&name])
            .await
            .map_err(pg_error)?;
        row.map(|r| from_json(r.get(0), "event type")).transpose()
    }

    pub(crate) async fn event_types(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<EventTypeRecord>, StoreError> {
        let rows = self
            .client()
            .await?
            .query(
                "SELECT record FROM event_types WHERE $1::text IS NULL OR name > $1
                 ORDER BY name LIMIT $2",
                &[&after, &(limit as i64)],
            )
            .await
            .map_err(pg_error)?;
        rows.iter()
            .map(|r| from_json(r.get(0), "event type"))
            .collect()
    }

    pub(crate) async fn count_event_types(&self) -> Result<usize, StoreError> {
        let row = self
            .client()
            .await?
            .query_one("SELECT count(*) FROM event_types", &[])
            .await
            .map_err(pg_error)?;
        Ok(usize::try_from(row.get::<_, i64>(0)).unwrap_or(usize::MAX))
    }

    pub(crate) async fn delete_event_type(&self, name: &str) -> Result<bool, StoreError> {
        let removed = self
            .client()
            .await?
            .execute("DELETE FROM event_types WHERE name = $1", &[&name])
            .await
            .map_err(pg_error)?;
        Ok(removed == 1)
    }
}
