//! The event-type catalog: install-wide records, one per type name, written by
//! the admin and read by everyone. Writes are conditional (created only where
//! absent, replaced only where unchanged since read), so two admins editing one
//! type never lose a change silently. The catalog is bounded
//! (`limits.event_types`), so it may be read whole.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{Change, Store, StoreError};

/// One event type of the catalog.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EventTypeRecord {
    /// The type's name, as events carry it (`order.paid`).
    pub name: String,
    #[serde(default)]
    pub description: String,
    /// A group to show it under (Svix's `groupName`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub group: Option<String>,
    /// JSON Schema documents by version (`"1"`, `"2"`, ...); the highest
    /// validates payloads when `validate` is on.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub schemas: BTreeMap<String, Value>,
    /// A payload `send-example` sends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub example: Option<Value>,
    /// Still delivered; shown as on its way out.
    #[serde(default)]
    pub deprecated: bool,
    /// No longer newly subscribable; events of it are still accepted.
    #[serde(default)]
    pub archived: bool,
    /// Ingest refuses an event of this type whose payload its latest schema
    /// does not accept.
    #[serde(default)]
    pub validate: bool,
    pub created_at_ms: u64,
    pub updated_at_ms: u64,
}

impl EventTypeRecord {
    /// A new type named `name`, with nothing else said of it.
    pub(crate) fn new(name: &str, now_ms: u64) -> Self {
        Self {
            name: name.to_owned(),
            description: String::new(),
            group: None,
            schemas: BTreeMap::new(),
            example: None,
            deprecated: false,
            archived: false,
            validate: false,
            created_at_ms: now_ms,
            updated_at_ms: now_ms,
        }
    }

    /// The schema payloads are checked against: the highest version's
    /// (versions are positive integers, compared as numbers).
    pub(crate) fn latest_schema(&self) -> Option<(&str, &Value)> {
        self.schemas
            .iter()
            .max_by_key(|(v, _)| v.parse::<u64>().unwrap_or(0))
            .map(|(v, s)| (v.as_str(), s))
    }
}

/// What a conditional catalog write did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CatalogWrite {
    Written,
    /// Creating: the name is taken. Replacing: the type changed (or went)
    /// since it was read.
    Conflict,
}

impl Store {
    /// Stores `rec`: created only if its name is free (`expected` none), or
    /// replacing `expected` only while the stored type is still exactly that.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn save_event_type(
        &self,
        rec: &EventTypeRecord,
        expected: Option<&EventTypeRecord>,
    ) -> Result<CatalogWrite, StoreError> {
        let written = on_backend!(self, s => s.save_event_type(rec, expected).await)?;
        if written == CatalogWrite::Written {
            self.feed.publish(Change::EventType {
                name: rec.name.clone(),
            });
        }
        Ok(written)
    }

    /// One type by name.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn event_type(&self, name: &str) -> Result<Option<EventTypeRecord>, StoreError> {
        on_backend!(self, s => sync s.event_type(name))
    }

    /// Up to `limit` types in name order, after `after` if given.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn event_types(
        &self,
        after: Option<&str>,
        limit: usize,
    ) -> Result<Vec<EventTypeRecord>, StoreError> {
        on_backend!(self, s => sync s.event_types(after, limit))
    }

    /// How many types the catalog holds.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn count_event_types(&self) -> Result<usize, StoreError> {
        on_backend!(self, s => sync s.count_event_types())
    }

    /// Removes a type; `false` if there was none.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn delete_event_type(&self, name: &str) -> Result<bool, StoreError> {
        let removed = on_backend!(self, s => s.delete_event_type(name).await)?;
        if removed {
            self.feed.publish(Change::EventType {
                name: name.to_owned(),
            });
        }
        Ok(removed)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn the_latest_schema_is_the_highest_version_as_a_number() {
        let mut rec = EventTypeRecord::new("order.paid", 1);
        assert_eq!(rec.latest_schema(), None);
        rec.schemas.insert("2".into(), json!({"type": "object"}));
        rec.schemas.insert("10".into(), json!({"type": "string"}));
        rec.schemas.insert("9".into(), json!({"type": "number"}));
        assert_eq!(
            rec.latest_schema(),
            Some(("10", &json!({"type": "string"})))
        );
    }
}
