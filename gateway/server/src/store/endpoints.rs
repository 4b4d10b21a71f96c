//! Endpoints: create (within the tenant's cap), read, list, compare-and-swap,
//! change in place, delete.

use super::{Backend, BreakerRecord, BreakerState, Change, EndpointRecord, Store, StoreError};
use crate::ids::{EndpointId, TenantId};

/// An endpoint and the exact stored bytes it was read from.
#[derive(Debug, Clone)]
pub struct EndpointVersion {
    pub record: EndpointRecord,
    pub(crate) bytes: Vec<u8>,
}

/// What [`SledStore::swap_endpoint`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Swap {
    Swapped,
    /// The new uid is another endpoint's of the tenant: nothing was written.
    UidTaken,
    /// The endpoint changed since it was read: nothing was written.
    Changed,
    /// The endpoint was deleted.
    Gone,
}

/// What creating an endpoint did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndpointCreate {
    Created,
    /// The tenant already has its most endpoints.
    TooMany,
    /// Another endpoint of the tenant has its uid.
    UidTaken,
}

impl EndpointCreate {
    /// Whether it was stored.
    pub fn is_created(self) -> bool {
        self == Self::Created
    }
}

/// Whether `uid` is set and another of `endpoints` than `me` has it.
pub(crate) fn uid_taken<'a>(
    uid: Option<&str>,
    me: &str,
    endpoints: impl IntoIterator<Item = &'a EndpointRecord>,
) -> bool {
    uid.is_some_and(|uid| {
        endpoints
            .into_iter()
            .any(|ep| ep.id != me && ep.uid.as_deref() == Some(uid))
    })
}

impl Store {
    /// Stores a new endpoint unless the tenant already has `max` of them or
    /// another has its uid.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn create_endpoint(
        &self,
        ep: &EndpointRecord,
        max: usize,
    ) -> Result<EndpointCreate, StoreError> {
        let created = on_backend!(self, s => s.create_endpoint(ep, max).await)?;
        if created.is_created() {
            self.feed.publish(Change::endpoint(&ep.tenant_id, &ep.id));
        }
        Ok(created)
    }

    /// One endpoint of `tenant` by its id or, failing that, its uid.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn find_endpoint(
        &self,
        tenant: &TenantId,
        id_or_uid: &str,
    ) -> Result<Option<EndpointRecord>, StoreError> {
        if let Some(ep) = self.endpoint(tenant, &EndpointId::from(id_or_uid)).await? {
            return Ok(Some(ep));
        }
        let all = self.endpoints_of(tenant).await?;
        Ok(all
            .into_iter()
            .find(|ep| ep.uid.as_deref() == Some(id_or_uid)))
    }

    /// Replaces an endpoint record.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn put_endpoint(&self, ep: &EndpointRecord) -> Result<(), StoreError> {
        on_backend!(self, s => s.put_endpoint(ep).await)?;
        self.feed.publish(Change::endpoint(&ep.tenant_id, &ep.id));
        Ok(())
    }

    /// One endpoint as stored now, for a read-modify-write ([`Store::swap_endpoint`]).
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn endpoint_version(
        &self,
        tenant: &TenantId,
        id: &EndpointId,
    ) -> Result<Option<EndpointVersion>, StoreError> {
        on_backend!(self, s => sync s.endpoint_version(tenant, id))
    }

    /// Replaces the endpoint with `new` only if it is still exactly as `read`:
    /// a change made meanwhile (a breaker save, a 410 disabling it, another
    /// request) is never undone; the caller reads again and redoes its change.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn swap_endpoint(
        &self,
        read: &EndpointVersion,
        new: &EndpointRecord,
    ) -> Result<Swap, StoreError> {
        let swap = on_backend!(self, s => s.swap_endpoint(read, new).await)?;
        if swap == Swap::Swapped {
            self.feed.publish(Change::endpoint(&new.tenant_id, &new.id));
        }
        Ok(swap)
    }

    /// One endpoint of one tenant.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn endpoint(
        &self,
        tenant: &TenantId,
        id: &EndpointId,
    ) -> Result<Option<EndpointRecord>, StoreError> {
        on_backend!(self, s => sync s.endpoint(tenant, id))
    }

    /// A tenant's endpoints, newest first, after `cursor`; `true` if more follow.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn list_endpoints(
        &self,
        tenant: &TenantId,
        limit: usize,
        cursor: Option<&str>,
    ) -> Result<(Vec<EndpointRecord>, bool), StoreError> {
        on_backend!(self, s => sync s.list_endpoints(tenant, limit, cursor))
    }

    /// All of a tenant's endpoints (for fan-out).
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn endpoints_of(&self, tenant: &TenantId) -> Result<Vec<EndpointRecord>, StoreError> {
        on_backend!(self, s => sync s.endpoints_of(tenant))
    }

    /// Every endpoint of every tenant (for the scheduler at start).
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn all_endpoints(&self) -> Result<Vec<EndpointRecord>, StoreError> {
        on_backend!(self, s => sync s.all_endpoints())
    }

    /// Deletes an endpoint; its pending deliveries become dead (`endpoint_deleted`).
    /// Returns how many deliveries that ended.
    ///
    /// The endpoint goes first, so no ingest, replay or outcome can add or move its
    /// work afterwards; then its stats buckets go, and its schedule is emptied in
    /// bounded batches, each a transaction that ends a delivery only if it is
    /// still as it was read. Work left behind by a crash in between is ended by
    /// the retention sweep, and buckets by the stats sweep once past the history.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn delete_endpoint(
        &self,
        ep: &EndpointRecord,
        now_ms: u64,
    ) -> Result<usize, StoreError> {
        let ended = on_backend!(self, s => s.delete_endpoint(ep, now_ms).await)?;
        self.feed.publish(Change::endpoint(&ep.tenant_id, &ep.id));
        Ok(ended)
    }

    /// Changes one endpoint in place (breaker transitions, automatic disabling);
    /// `false` if it no longer exists.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn update_endpoint(
        &self,
        tenant: &TenantId,
        id: &EndpointId,
        change: impl Fn(&mut EndpointRecord),
    ) -> Result<bool, StoreError> {
        let found = on_backend!(self, s => s.update_endpoint(tenant, id, change).await)?;
        if found {
            self.feed.publish(Change::endpoint(tenant, id));
        }
        Ok(found)
    }

    /// Closes an endpoint's breaker by hand; `None` if there is no such endpoint.
    /// Its pending work is served at once. `Some(true)` when the breaker every
    /// node shares (PostgreSQL) was open: the caller counts that transition, as
    /// no node's scheduler does; an embedded store's scheduler counts its own.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn reset_breaker(
        &self,
        tenant: &TenantId,
        id: &EndpointId,
    ) -> Result<Option<bool>, StoreError> {
        let closed = BreakerRecord {
            state: BreakerState::Closed.into(),
            ..BreakerRecord::default()
        };
        let found = on_backend!(self, s => s.update_endpoint(tenant, id, |ep| ep.breaker = closed.clone()).await)?;
        if !found {
            return Ok(None);
        }
        let mut shared_was_open = false;
        if let Backend::Postgres(pg) = &self.backend {
            // Every node's breaker is the shared one.
            let reset = pg.update_runtime(id, |shared| {
                let was_open = shared.breaker.state != BreakerState::Closed;
                shared.breaker = closed;
                shared.probe_until_ms = None;
                was_open
            });
            shared_was_open = self.observed(reset.await)?;
        }
        self.feed.publish(Change::BreakerReset {
            endpoint_id: id.to_owned(),
        });
        Ok(Some(shared_was_open))
    }
}
