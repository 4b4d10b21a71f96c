//! Delivery reads: one delivery, its attempt log, and filtered, paged lists.

use super::{AttemptRecord, DeliveryRecord, DeliveryState, Store, StoreError, keys};

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
}

impl DeliveryFilter {
    /// Whether `d` passes every given filter.
    pub fn matches(&self, d: &DeliveryRecord) -> bool {
        self.state.is_none_or(|s| s == d.state)
            && self
                .endpoint_id
                .as_ref()
                .is_none_or(|e| *e == d.endpoint_id)
            && self.event_type.as_ref().is_none_or(|t| *t == d.event_type)
            && self.since_ms.is_none_or(|s| d.created_at_ms >= s)
            && self.until_ms.is_none_or(|u| d.created_at_ms < u)
    }
}

/// One page of deliveries, newest first.
#[derive(Debug)]
pub struct DeliveryPage {
    pub data: Vec<DeliveryRecord>,
    /// The id to pass as `cursor` for the next page, if there is one.
    pub next_cursor: Option<String>,
}

impl Store {
    /// One delivery of one tenant.
    ///
    /// # Errors
    /// On a storage failure.
    pub fn delivery(&self, tenant: &str, id: &str) -> Result<Option<DeliveryRecord>, StoreError> {
        self.get(&keys::delivery(tenant, id))
    }

    /// A delivery's attempts across every series, oldest first.
    ///
    /// # Errors
    /// On a storage failure.
    pub fn attempt_log(&self, delivery_id: &str) -> Result<Vec<AttemptRecord>, StoreError> {
        let mut out: Vec<AttemptRecord> = self
            .scan_rev(&keys::attempts_of(delivery_id))
            .map(|r| r.map(|(_, a)| a))
            .collect::<Result<_, _>>()?;
        out.reverse();
        Ok(out)
    }

    /// A tenant's deliveries that pass `filter` and `extra`, newest first, after `cursor`.
    ///
    /// # Errors
    /// On a storage failure.
    pub fn list_deliveries(
        &self,
        tenant: &str,
        filter: &DeliveryFilter,
        extra: impl Fn(&DeliveryRecord) -> bool,
        limit: usize,
        cursor: Option<&str>,
    ) -> Result<DeliveryPage, StoreError> {
        let prefix = keys::deliveries_of(tenant);
        let iter = match cursor {
            // Start strictly below the cursor's key.
            Some(c) => self
                .inner
                .records
                .range(prefix.clone()..keys::delivery(tenant, c)),
            None => self.inner.records.range(prefix.clone()..),
        };
        let mut data = Vec::new();
        for item in iter.rev() {
            let (k, v) = item?;
            if !k.starts_with(&prefix) {
                continue;
            }
            let d: DeliveryRecord = super::records::decode(&v)?;
            if !filter.matches(&d) || !extra(&d) {
                continue;
            }
            if data.len() == limit {
                let next_cursor = data.last().map(|d: &DeliveryRecord| d.id.clone());
                return Ok(DeliveryPage { data, next_cursor });
            }
            data.push(d);
        }
        Ok(DeliveryPage {
            data,
            next_cursor: None,
        })
    }
}

impl Store {
    /// Pending and dead deliveries per tenant (one full scan; used once at start).
    ///
    /// # Errors
    /// On a storage failure.
    pub fn count_deliveries(
        &self,
    ) -> Result<std::collections::HashMap<String, (i64, i64)>, StoreError> {
        let mut out: std::collections::HashMap<String, (i64, i64)> =
            std::collections::HashMap::new();
        for item in self.inner.records.scan_prefix(b"dl\0") {
            let (_, v) = item?;
            let d: DeliveryRecord = super::records::decode(&v)?;
            let e = out.entry(d.tenant_id).or_default();
            match d.state {
                DeliveryState::Pending => e.0 += 1,
                DeliveryState::Dead => e.1 += 1,
                DeliveryState::Succeeded => {}
            }
        }
        Ok(out)
    }
}
