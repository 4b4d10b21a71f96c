//! Delivery records and their events' payloads as their claim read them, kept
//! until the worker that holds the lease asks for them: the claim already
//! joined them, so asking the database again would cost two round trips per
//! attempt for nothing. (A payload never changes once stored.)

use std::collections::HashMap;
use std::sync::Mutex;

use super::from_json;
use crate::store::{DeliveryRecord, EventBody, StoreError};

/// Most records kept; past it the lot is dropped (the workers read them again).
const MOST: usize = 4_096;

/// Records by (delivery id, lease token), and their events' payloads by
/// (tenant, event id).
#[derive(Default)]
pub(super) struct ClaimedRecords {
    records: Mutex<HashMap<(String, i64), DeliveryRecord>>,
    payloads: Mutex<HashMap<(String, String), EventBody>>,
}

impl ClaimedRecords {
    /// Keeps the record a claim under `token` read, and its event's payload.
    pub(super) fn keep(&self, token: i64, d: DeliveryRecord, payload: Option<EventBody>) {
        if let (Some(payload), Ok(mut kept)) = (payload, self.payloads.lock()) {
            if kept.len() >= MOST {
                kept.clear();
            }
            kept.insert((d.tenant_id.to_string(), d.event_id.to_string()), payload);
        }
        let Ok(mut kept) = self.records.lock() else {
            return;
        };
        if kept.len() >= MOST {
            kept.clear();
        }
        kept.insert((d.id.to_string(), token), d);
    }

    /// The record read under `token`, once.
    pub(super) fn take(&self, delivery_id: &str, token: i64) -> Option<DeliveryRecord> {
        let mut kept = self.records.lock().ok()?;
        kept.remove(&(delivery_id.to_owned(), token))
    }

    /// The payload of an event a claim read, once.
    pub(super) fn take_payload(&self, tenant: &str, event_id: &str) -> Option<EventBody> {
        let mut kept = self.payloads.lock().ok()?;
        kept.remove(&(tenant.to_owned(), event_id.to_owned()))
    }
}

/// An event's payload and its trace context as `meta->'trace'` reads (JSON text).
///
/// # Errors
/// `Corrupt` if the trace context is not one.
pub(super) fn event_body(payload: String, trace: Option<String>) -> Result<EventBody, StoreError> {
    let trace = match trace {
        Some(text) => Some(from_json(&text, "event trace context")?),
        None => None,
    };
    Ok(EventBody {
        payload,
        trace,
        seen: None,
    })
}
