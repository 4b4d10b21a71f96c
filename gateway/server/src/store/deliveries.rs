//! Delivery reads: one delivery, its attempt log, filtered and paged lists, and
//! the counts that seed the gauges.

use super::{AttemptRecord, DeliveryRecord, DeliveryState, Store, StoreError};
use crate::ids::{DeliveryId, TenantId};
use crate::policy::DeadReason;

/// Most records one page of deliveries reads, however few its filters pass:
/// ten pages of the largest size. A page that stops there answers what it
/// found and a cursor to read on, so no request's cost grows with a tenant's
/// history.
pub(crate) const LIST_SCAN_LIMIT: usize = 2_500;

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
    /// The ids a page reads, newest first: below `upper` (exclusive: the
    /// cursor's, or the first id `until` excludes, whichever is lower) and at
    /// or above `lower` (the first id `since` lets in).
    pub(crate) fn id_range(&self, cursor: Option<&str>) -> IdRange {
        let until = self
            .until_ms
            .map(|ms| String::from(DeliveryId::first_at(ms)));
        let upper = match (cursor.map(str::to_owned), until) {
            (Some(c), Some(u)) => Some(c.min(u)),
            (c, u) => c.or(u),
        };
        let lower = self
            .since_ms
            .map(|ms| String::from(DeliveryId::first_at(ms)));
        IdRange { lower, upper }
    }

    /// Whether `d` passes every given filter.
    /// The state a bulk replay of this filter takes deliveries from: dead,
    /// unless it asks for succeeded ones (a bulk resend).
    pub(crate) fn replayed_state(&self) -> DeliveryState {
        match self.state {
            Some(DeliveryState::Succeeded) => DeliveryState::Succeeded,
            _ => DeliveryState::Dead,
        }
    }

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

/// The ids a page of deliveries may read.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct IdRange {
    /// Inclusive.
    pub(crate) lower: Option<String>,
    /// Exclusive.
    pub(crate) upper: Option<String>,
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
/// one more passes beyond `limit`, which says a next page exists, or until
/// [`LIST_SCAN_LIMIT`] records were read, when the page ends early with a
/// cursor after the last one read.
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

    /// How many more records the page may read.
    pub(crate) fn may_read(&self) -> usize {
        LIST_SCAN_LIMIT - self.scanned
    }

    /// Offers the next record read; the finished page once one passes beyond
    /// the limit or the scan reached its bound (the caller stops reading then).
    pub(crate) fn offer(&mut self, d: DeliveryRecord) -> Option<DeliveryPage> {
        if self.filter.matches(&d) && (self.extra)(&d) {
            if self.data.len() == self.limit {
                self.scanned += 1;
                let next_cursor = self.data.last().map(|d| d.id.clone());
                return Some(self.finish(next_cursor));
            }
            let id = d.id.clone();
            self.data.push(d);
            return self.read(id);
        }
        self.read(d.id)
    }

    /// Counts a record the backend read and its filters refused.
    pub(crate) fn refused(&mut self, id: DeliveryId) -> Option<DeliveryPage> {
        self.read(id)
    }

    fn read(&mut self, id: DeliveryId) -> Option<DeliveryPage> {
        self.scanned += 1;
        (self.scanned >= LIST_SCAN_LIMIT).then(|| self.finish(Some(id)))
    }

    fn finish(&mut self, next_cursor: Option<DeliveryId>) -> DeliveryPage {
        DeliveryPage {
            data: std::mem::take(&mut self.data),
            next_cursor: next_cursor.map(String::from),
            scanned: self.scanned,
        }
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
        tenant: &TenantId,
        delivery_id: &DeliveryId,
    ) -> Result<Vec<AttemptRecord>, StoreError> {
        on_backend!(self, s => sync s.attempt_log(tenant, delivery_id))
    }

    /// A tenant's deliveries that pass `filter` and `extra`, newest first, after
    /// `cursor`; at most [`LIST_SCAN_LIMIT`] records are read (sled reads them
    /// off the runtime's workers).
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn list_deliveries(
        &self,
        tenant: &TenantId,
        filter: &DeliveryFilter,
        extra: impl Fn(&DeliveryRecord) -> bool + Send + 'static,
        limit: usize,
        cursor: Option<&str>,
    ) -> Result<DeliveryPage, StoreError> {
        on_backend!(self, s => s.list_deliveries(tenant, filter, extra, limit, cursor).await)
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
