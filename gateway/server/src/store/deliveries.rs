//! Delivery reads: one delivery, its attempt log, filtered and paged lists, and
//! the counts that seed the gauges.

use super::{AttemptRecord, DeliveryRecord, DeliveryState, Store, StoreError};
use crate::ids::{DeliveryId, TenantId};
use crate::policy::DeadReason;

/// Filters of `GET .../deliveries`; every given field must match.
#[derive(Debug, Default, Clone)]
pub struct DeliveryFilter {
    pub state: Option<DeliveryState>,
    pub endpoint_id: Option<String>,
    pub event_type: Option<String>,
    /// Created at or after, Unix ms.
    pub since_ms: Option<u64>,
    /// Created before, Unix ms.
    pub until_ms: Option<u64>,
    /// Dead for this reason (so only dead deliveries match).
    pub dead_reason: Option<DeadReason>,
}

impl DeliveryFilter {
    /// Whether `d` passes every given filter.
    pub fn matches(&self, d: &DeliveryRecord) -> bool {
        self.state.is_none_or(|s| s == d.state)
            && self
                .endpoint_id
                .as_ref()
                .is_none_or(|e| d.endpoint_id == *e)
            && self.event_type.as_ref().is_none_or(|t| *t == d.event_type)
            && self.since_ms.is_none_or(|s| d.created_at_ms >= s)
            && self.until_ms.is_none_or(|u| d.created_at_ms < u)
            && self.dead_reason.is_none_or(|r| {
                d.state == DeliveryState::Dead && d.dead_reason.as_ref().is_some_and(|dr| *dr == r)
            })
    }
}

/// One page of deliveries, newest first.
#[derive(Debug)]
pub struct DeliveryPage {
    pub data: Vec<DeliveryRecord>,
    /// The id to pass as `cursor` for the next page, if there is one.
    pub next_cursor: Option<String>,
    /// How many stored records the scan read to fill the page.
    pub scanned: usize,
}

/// A page filled from records read newest first, as both backends read them:
/// each record read counts as scanned; those the filters pass are kept until
/// one more passes beyond `limit`, which says a next page exists.
pub(crate) struct PageFill<'a, F> {
    filter: &'a DeliveryFilter,
    extra: F,
    limit: usize,
    data: Vec<DeliveryRecord>,
    scanned: usize,
}

impl<'a, F: Fn(&DeliveryRecord) -> bool> PageFill<'a, F> {
    pub(crate) fn new(filter: &'a DeliveryFilter, extra: F, limit: usize) -> Self {
        Self {
            filter,
            extra,
            limit,
            data: Vec::new(),
            scanned: 0,
        }
    }

    /// Offers the next record read; the finished page once one passes beyond
    /// the limit (the caller stops reading then).
    pub(crate) fn offer(&mut self, d: DeliveryRecord) -> Option<DeliveryPage> {
        self.scanned += 1;
        if !self.filter.matches(&d) || !(self.extra)(&d) {
            return None;
        }
        if self.data.len() == self.limit {
            let next_cursor = self.data.last().map(|d| d.id.clone());
            return Some(DeliveryPage {
                data: std::mem::take(&mut self.data),
                next_cursor: next_cursor.map(String::from),
                scanned: self.scanned,
            });
        }
        self.data.push(d);
        None
    }

    /// The page once every record was read: there is no next one.
    pub(crate) fn last(self) -> DeliveryPage {
        DeliveryPage {
            data: self.data,
            next_cursor: None,
            scanned: self.scanned,
        }
    }
}

impl Store {
    /// One delivery of one tenant.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn delivery(
        &self,
        tenant: &TenantId,
        id: &DeliveryId,
    ) -> Result<Option<DeliveryRecord>, StoreError> {
        on_backend!(self, s => sync s.delivery(tenant, id))
    }

    /// A delivery's attempts across every series, oldest first.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn attempt_log(
        &self,
        delivery_id: &DeliveryId,
    ) -> Result<Vec<AttemptRecord>, StoreError> {
        on_backend!(self, s => sync s.attempt_log(delivery_id))
    }

    /// A tenant's deliveries that pass `filter` and `extra`, newest first, after `cursor`.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn list_deliveries(
        &self,
        tenant: &TenantId,
        filter: &DeliveryFilter,
        extra: impl Fn(&DeliveryRecord) -> bool,
        limit: usize,
        cursor: Option<&str>,
    ) -> Result<DeliveryPage, StoreError> {
        on_backend!(self, s => sync s.list_deliveries(tenant, filter, extra, limit, cursor))
    }

    /// Pending and dead deliveries per tenant (one full scan; used once at start).
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn count_deliveries(
        &self,
    ) -> Result<std::collections::HashMap<String, (i64, i64)>, StoreError> {
        on_backend!(self, s => s.count_deliveries().await)
    }
}
