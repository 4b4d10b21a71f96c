//! An ingest batch as columns: one array per column, for the `UNNEST` inserts
//! the backend and the benchmark's reference both run.

use tokio_postgres::types::ToSql;

use super::{ms, to_json};
use crate::store::events::PreparedEvent;

/// The events table's columns for one `UNNEST` insert.
#[derive(Default)]
pub(super) struct EventColumns {
    pub(super) tenants: Vec<String>,
    pub(super) ids: Vec<String>,
    pub(super) types: Vec<String>,
    pub(super) payloads: Vec<String>,
    pub(super) created: Vec<i64>,
    pub(super) deliveries: Vec<String>,
    pub(super) uids: Vec<Option<String>>,
    /// The labels as JSON; `None` when there are none.
    pub(super) metas: Vec<Option<String>>,
}

impl EventColumns {
    /// The parameters of `statements::INSERT_EVENTS`, in its order.
    pub(super) fn params(&self) -> [&(dyn ToSql + Sync); 8] {
        [
            &self.tenants,
            &self.ids,
            &self.types,
            &self.payloads,
            &self.created,
            &self.deliveries,
            &self.uids,
            &self.metas,
        ]
    }

    pub(super) fn push(&mut self, e: &PreparedEvent) {
        let ev = &e.event;
        self.tenants.push(ev.tenant_id.to_string());
        self.ids.push(ev.id.to_string());
        self.types.push(ev.event_type.clone());
        self.payloads.push(ev.payload.get().to_owned());
        self.created.push(ms(ev.created_at_ms));
        self.deliveries.push(to_json(&ev.deliveries));
        self.uids.push(ev.labels.uid.clone());
        self.metas
            .push((!ev.labels.is_empty()).then(|| to_json(&ev.labels)));
    }
}

/// The deliveries' and queue's columns for one `UNNEST` insert.
#[derive(Default)]
pub(super) struct DeliveryColumns {
    pub(super) ids: Vec<String>,
    pub(super) tenants: Vec<String>,
    pub(super) endpoints: Vec<String>,
    pub(super) records: Vec<String>,
    pub(super) due: Vec<i64>,
    pub(super) events: Vec<String>,
}

impl DeliveryColumns {
    pub(super) fn push(&mut self, d: &crate::store::DeliveryRecord) {
        self.ids.push(d.id.to_string());
        self.tenants.push(d.tenant_id.to_string());
        self.endpoints.push(d.endpoint_id.to_string());
        self.records.push(to_json(d));
        self.due
            .push(ms(d.next_attempt_at_ms.unwrap_or(d.created_at_ms)));
        self.events.push(d.event_id.to_string());
    }
}
