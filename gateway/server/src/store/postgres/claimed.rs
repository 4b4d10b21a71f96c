//! Delivery records as their claim read them, kept until the worker that holds
//! the lease asks for its delivery: the claim already joined them, so asking
//! the database again would cost a round trip per attempt for nothing.

use std::collections::HashMap;
use std::sync::Mutex;

use crate::store::DeliveryRecord;

/// Most records kept; past it the lot is dropped (the workers read them again).
const MOST: usize = 4_096;

/// Records by (delivery id, lease token).
#[derive(Default)]
pub(super) struct ClaimedRecords(Mutex<HashMap<(String, i64), DeliveryRecord>>);

impl ClaimedRecords {
    /// Keeps the record a claim under `token` read.
    pub(super) fn keep(&self, delivery_id: &str, token: i64, d: DeliveryRecord) {
        let Ok(mut kept) = self.0.lock() else { return };
        if kept.len() >= MOST {
            kept.clear();
        }
        kept.insert((delivery_id.to_owned(), token), d);
    }

    /// The record read under `token`, once.
    pub(super) fn take(&self, delivery_id: &str, token: i64) -> Option<DeliveryRecord> {
        let mut kept = self.0.lock().ok()?;
        kept.remove(&(delivery_id.to_owned(), token))
    }
}
