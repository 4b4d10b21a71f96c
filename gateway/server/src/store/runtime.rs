//! What an endpoint's limits need when several gateways serve it: the breaker
//! and the rate window kept beside the queue, read and changed by one node at
//! a time; and which gateways are alive. Only a backend that claims due work
//! (PostgreSQL) keeps them; on sled the one process keeps them in memory.

use crate::ids::EndpointId;
use serde::{Deserialize, Serialize};

use super::{
    AttemptWrite, Backend, BreakerRecord, BreakerState, Lease, Store, StoreError, WriteResult,
};

/// An endpoint's shared state.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct RuntimeRecord {
    /// The breaker, as every node sees it.
    #[serde(default)]
    pub breaker: BreakerRecord,
    /// A half-open probe is out until then (its lease's expiry).
    #[serde(default)]
    pub probe_until_ms: Option<u64>,
    /// When attempts started, within the rate window.
    #[serde(default)]
    pub starts: Vec<u64>,
}

/// How a node plans an endpoint's turn while it holds the endpoint's state.
pub trait TurnPlan: Send {
    /// How many attempts may start, given the shared state and how many
    /// unexpired leases the endpoint has on every node.
    fn allowed(&mut self, runtime: &RuntimeRecord, live_leases: usize) -> usize;
    /// `started` of them were claimed, leased until `lease_until_ms`: change the
    /// shared state to match.
    fn started(&mut self, runtime: &mut RuntimeRecord, started: usize, lease_until_ms: u64);
}

/// What a claim of an endpoint's turn came to.
#[derive(Debug)]
pub enum ClaimedTurn {
    /// Another node is planning this endpoint's turn now.
    Busy,
    /// The leases claimed (none if nothing was due or allowed), and the shared
    /// state after them.
    Claimed {
        leases: Vec<Lease>,
        runtime: RuntimeRecord,
    },
}

/// One gateway sharing the store.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct NodeRecord {
    pub node_id: String,
    pub started_at_ms: u64,
    pub last_seen_at_ms: u64,
    /// The hookgate version it runs.
    pub version: String,
    /// Unexpired leases it holds.
    pub leases: u64,
}

/// A node is listed as alive while its last heartbeat is this recent.
pub(crate) const NODE_ALIVE_MS: u64 = 10_000;

impl Store {
    /// Plans and claims one turn of `endpoint_id` under its shared state, which
    /// no other node changes meanwhile. Claiming backends only.
    ///
    /// # Errors
    /// On a storage failure, or on a backend that keeps no shared state.
    pub async fn claim_turn(
        &self,
        endpoint_id: &EndpointId,
        now_ms: u64,
        plan: &mut dyn TurnPlan,
    ) -> Result<ClaimedTurn, StoreError> {
        match &self.backend {
            Backend::Postgres(pg) => self.observed(pg.claim_turn(endpoint_id, now_ms, plan).await),
            Backend::Sled(_) => Err(not_shared()),
        }
    }

    /// Changes `endpoint_id`'s shared state, waiting for any node planning it.
    /// Claiming backends only.
    ///
    /// # Errors
    /// As [`Store::claim_turn`].
    pub async fn update_runtime<R: Send>(
        &self,
        endpoint_id: &EndpointId,
        change: impl FnOnce(&mut RuntimeRecord) -> R + Send,
    ) -> Result<R, StoreError> {
        match &self.backend {
            Backend::Postgres(pg) => self.observed(pg.update_runtime(endpoint_id, change).await),
            Backend::Sled(_) => Err(not_shared()),
        }
    }

    /// Records an attempt as [`Store::record_attempt`] does and, only if it
    /// was written, changes `endpoint_id`'s shared state with `change` (counts
    /// the outcome on the shared breaker), in one transaction: a stale outcome
    /// is never counted, and no node plans the endpoint between the outcome
    /// giving up its lease and the count. Claiming backends only.
    ///
    /// # Errors
    /// As [`Store::claim_turn`].
    pub async fn record_counted_attempt<R: Send>(
        &self,
        w: AttemptWrite<'_>,
        change: impl FnOnce(&mut RuntimeRecord) -> R + Send,
    ) -> Result<(WriteResult, Option<R>), StoreError> {
        match &self.backend {
            Backend::Postgres(pg) => self.observed(pg.record_counted_attempt(w, change).await),
            Backend::Sled(_) => Err(not_shared()),
        }
    }

    /// The gateways alive at `now_ms` (heard from within [`NODE_ALIVE_MS`]),
    /// by id. On sled, only this one, whose leases the caller knows.
    ///
    /// # Errors
    /// On a storage failure.
    pub async fn cluster_nodes(&self, now_ms: u64) -> Result<Vec<NodeRecord>, StoreError> {
        match &self.backend {
            Backend::Postgres(pg) => self.observed(pg.cluster_nodes(now_ms).await),
            Backend::Sled(_) => Ok(vec![NodeRecord {
                node_id: self.node_id().to_owned(),
                started_at_ms: self.opened_at_ms,
                last_seen_at_ms: now_ms,
                version: env!("CARGO_PKG_VERSION").to_owned(),
                leases: 0,
            }]),
        }
    }
}

impl Store {
    /// An operator replayed work to `endpoint_id`: where every node shares the
    /// breaker, an open one lets its half-open probe go now rather than at the
    /// cool-down's end (each node's scheduler then serves the endpoint).
    pub(crate) async fn probe_now(&self, endpoint_id: &EndpointId) -> Result<(), StoreError> {
        let Backend::Postgres(pg) = &self.backend else {
            return Ok(());
        };
        let changed = pg.update_runtime(endpoint_id, |shared| {
            if shared.breaker.state == BreakerState::Open {
                shared.breaker.state = BreakerState::HalfOpen.into();
                shared.breaker.open_until_ms = None;
                shared.probe_until_ms = None;
            }
        });
        self.observed(changed.await)
    }
}

fn not_shared() -> StoreError {
    StoreError::unavailable("this backend keeps no state shared between gateways")
}
