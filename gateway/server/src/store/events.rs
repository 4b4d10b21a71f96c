//! Event ingest (one atomic write, durable before the ack, idempotent by key)
//! and event reads.

use serde_json::value::RawValue;

use super::{
    Change, DeliveryRecord, EndpointRecord, EventLabels, EventRecord, IngestReceipt,
    IngestedDelivery, Store, StoreError,
};
use crate::ids::{EventId, TenantId};

/// Whether a repeat's body hash `new` is the same request as the `stored`
/// one's. Hashes of the body's JSON meaning carry a `c1:` mark; a record
/// stored before (a hash of the raw bytes) is taken as the same, so a retry
/// across an upgrade is answered, not refused.
pub(crate) fn same_body(stored: &str, new: &str) -> bool {
    stored == new || !stored.starts_with("c1:")
}

/// What `Store::event_payload` answers for an event whose payload was
/// expunged: no JSON is empty, so the worker tells it from any payload.
pub(crate) const EXPUNGED: &str = "";

/// What expunging an event's payload did.
#[derive(Debug)]
pub enum Expunge {
    /// Done, now or before.
    Expunged,
    /// Refused: this many of its deliveries are pending and would send it.
    Pending(usize),
    /// No such event.
    Missing,
}

/// How long an `Idempotency-Key` is remembered.
pub(crate) const IDEMPOTENCY_TTL_MS: u64 = 24 * 60 * 60 * 1000;

/// An event to ingest, already validated and matched to its endpoints.
pub struct NewEvent<'a> {
    pub tenant_id: &'a str,
    pub event_type: &'a str,
    pub payload: &'a RawValue,
    /// `(Idempotency-Key, sha256 hex of the request body)`.
    pub idempotency: Option<(&'a str, String)>,
    pub endpoints: Vec<&'a EndpointRecord>,
    pub now_ms: u64,
    /// Its uid, channels, tags and scheduled send.
    pub labels: EventLabels,
}

/// What an ingest did.
#[derive(Debug)]
pub enum IngestOutcome {
    /// A new event.
    Created {
        receipt: IngestReceipt,
        deliveries: Vec<DeliveryRecord>,
    },
    /// A repeat of an earlier request with the same key and body: what that one created.
    Replayed(IngestReceipt),
    /// The key was used before with another body.
    KeyReused,
    /// One of the endpoints was deleted after it was read: nothing was written;
    /// read the endpoints again and retry.
    EndpointsChanged,
}

/// An event made ready to store, the same for every backend: its record, one
/// pending delivery per endpoint (due at once), and its receipt.
pub(crate) struct PreparedEvent {
    pub(crate) event: EventRecord,
    pub(crate) deliveries: Vec<DeliveryRecord>,
    pub(crate) receipt: IngestReceipt,
}

impl PreparedEvent {
    pub(crate) fn new(ev: &NewEvent<'_>) -> Self {
        let event_id = EventId::generate(ev.now_ms);
        // A scheduled send: every delivery is first due then.
        let due_ms = ev
            .labels
            .deliver_at_ms
            .map_or(ev.now_ms, |at| at.max(ev.now_ms));
        let tenant = TenantId::from(ev.tenant_id);
        let deliveries: Vec<DeliveryRecord> = ev
            .endpoints
            .iter()
            .map(|ep| {
                let event = (&tenant, &event_id, ev.event_type);
                let mut d = DeliveryRecord::first(event, &ep.id, due_ms, ev.now_ms);
                d.test = ev.labels.test;
                d
            })
            .collect();
        let receipt = IngestReceipt {
            event_id: event_id.clone(),
            deliveries: deliveries
                .iter()
                .map(|d| IngestedDelivery {
                    delivery_id: d.id.clone(),
                    endpoint_id: d.endpoint_id.clone(),
                })
                .collect(),
        };
        let event = EventRecord {
            id: event_id,
            tenant_id: ev.tenant_id.into(),
            event_type: ev.event_type.to_owned(),
            payload: ev.payload.to_owned(),
            created_at_ms: ev.now_ms,
            deliveries: deliveries
                .iter()
                .map(|d| (d.id.clone(), d.endpoint_id.clone()))
                .collect(),
            labels: ev.labels.clone(),
        };
        Self {
            event,
            deliveries,
            receipt,
        }
    }
}

impl Store {
    /// Ingests an event: event, deliveries, schedule entries and idempotency record in
    /// one batch, durable before this returns.
    ///
    /// # Errors
    /// `Unavailable` if the write or flush failed; nothing may be acknowledged then.
    pub async fn ingest(&self, ev: NewEvent<'_>) -> Result<IngestOutcome, StoreError> {
        let outcome = on_backend!(self, s => s.ingest(ev).await)?;
        if let IngestOutcome::Created { deliveries, .. } = &outcome {
            self.feed
                .publish_all(deliveries.iter().map(|d| Change::Due {
                    endpoint_id: d.endpoint_id.clone(),
                    due_ms: d.next_attempt_at_ms.unwrap_or(d.created_at_ms),
                }));
        }
        Ok(outcome)
    }

    /// One event of one tenant.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn event(
        &self,
        tenant: &TenantId,
        id: &EventId,
    ) -> Result<Option<EventRecord>, StoreError> {
        on_backend!(self, s => sync s.event(tenant, id))
    }

    /// Adds a delivery of event `event_id` to endpoint `endpoint`, due now,
    /// unless the event already has one to it (`None` then, or when the event
    /// or the endpoint is gone): a delivery the endpoint missed because it was
    /// created or subscribed later.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn add_delivery(
        &self,
        tenant: &TenantId,
        event_id: &EventId,
        endpoint: &EndpointRecord,
        now_ms: u64,
    ) -> Result<Option<DeliveryRecord>, StoreError> {
        let added =
            on_backend!(self, s => s.add_delivery(tenant, event_id, endpoint, now_ms).await)?;
        if let Some(d) = &added {
            self.feed.publish(Change::Due {
                endpoint_id: d.endpoint_id.clone(),
                due_ms: now_ms,
            });
        }
        Ok(added)
    }

    /// One event of one tenant by its id or, failing that, its uid (the
    /// platform's own id for it; the newest event that carries it).
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn find_event(
        &self,
        tenant: &TenantId,
        id_or_uid: &str,
    ) -> Result<Option<EventRecord>, StoreError> {
        if let Some(ev) = self.event(tenant, &EventId::from(id_or_uid)).await? {
            return Ok(Some(ev));
        }
        on_backend!(self, s => sync s.event_by_uid(tenant, id_or_uid))
    }

    /// Forgets idempotency keys older than their 24 h, in bounded batches; returns
    /// how many went.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn sweep_idempotency(&self, now_ms: u64) -> Result<usize, StoreError> {
        on_backend!(self, s => s.sweep_idempotency(now_ms).await)
    }

    /// Removes an event's payload (it reads as `null`, and a delivery of it
    /// replayed later ends `payload_expunged`), keeping the event, its labels
    /// and its deliveries' logs; refused while a delivery of it is pending.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn expunge_payload(
        &self,
        tenant: &TenantId,
        event_id: &EventId,
        now_ms: u64,
    ) -> Result<Expunge, StoreError> {
        on_backend!(self, s => s.expunge_payload(tenant, event_id, now_ms).await)
    }

    /// What an attempt of one event sends: its payload bytes ([`EXPUNGED`] once
    /// expunged) and the trace context it continues.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn event_payload(
        &self,
        tenant: &TenantId,
        event_id: &EventId,
    ) -> Result<Option<super::EventBody>, StoreError> {
        on_backend!(self, s => sync s.event_payload(tenant, event_id))
    }
}
