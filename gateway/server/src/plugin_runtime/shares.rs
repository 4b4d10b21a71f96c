//! Fair shares of the decision pool: no tenant may hold more than half of its
//! threads (rounded up) at once, however many decisions it has waiting.
//!
//! Why a fixed cap: a decision thread cannot be taken back from a plugin before its
//! epoch deadline (50 ms), while a decision waits only [`super::decision_pool::POOL_WAIT`]
//! (5 ms) for a thread. So fairness has to be decided when a thread is handed out:
//! a tenant whose plugin spins until the deadline holds at most its share, and the
//! other half of the pool stays free for everyone else. A round-robin queue would
//! not help here, since the threads it hands out would still be held 50 ms each.
//! Half is the trade-off between one tenant's bursts (a decision normally takes
//! about a millisecond, so half the pool still makes thousands a second) and the
//! room it leaves the others. Two hostile tenants at once can still fill the pool
//! between them, but only until their plugins are disabled: a spinning plugin's
//! epoch deadlines count toward that (see `clocks::SPINNING_CPU`).
//!
//! A tenant at its share waits like any other decision, then falls back with
//! `pool_full`: its own plugin's doing, and no other tenant's. A tenant's entry
//! exists only while it holds a thread, so the table never outgrows the pool.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::Notify;

/// Who holds the pool's threads: in all, and per tenant.
#[derive(Debug, Default)]
struct Holders {
    in_use: usize,
    by_tenant: HashMap<String, usize>,
}

/// The pool's threads as slots, handed out within each tenant's share.
#[derive(Debug)]
pub(crate) struct PoolShares {
    size: usize,
    tenant_share: usize,
    holders: Mutex<Holders>,
    freed: Notify,
}

/// One pool thread held by one tenant; dropping it frees the thread.
#[derive(Debug)]
pub(crate) struct Slot {
    shares: Arc<PoolShares>,
    tenant: String,
}

impl PoolShares {
    /// Slots for a pool of `size` threads; a tenant may hold `ceil(size / 2)`.
    pub(crate) fn new(size: usize) -> Self {
        Self {
            size,
            tenant_share: size.div_ceil(2).max(1),
            holders: Mutex::new(Holders::default()),
            freed: Notify::new(),
        }
    }

    /// How many threads one tenant may hold at once.
    #[cfg(test)]
    pub(crate) fn tenant_share(&self) -> usize {
        self.tenant_share
    }

    /// Takes a slot for `tenant`, waiting at most `wait` for one within its share.
    pub(crate) async fn take(self: &Arc<Self>, tenant: &str, wait: Duration) -> Option<Slot> {
        let deadline = tokio::time::Instant::now() + wait;
        loop {
            // Registered before looking, so a slot freed in between still wakes us.
            let freed = self.freed.notified();
            tokio::pin!(freed);
            freed.as_mut().enable();
            if let Some(slot) = self.try_take(tenant) {
                return Some(slot);
            }
            tokio::time::timeout_at(deadline, freed).await.ok()?;
        }
    }

    /// A slot for `tenant` now, if the pool has one and the tenant is within its share.
    fn try_take(self: &Arc<Self>, tenant: &str) -> Option<Slot> {
        let mut holders = self.lock();
        let held = holders.by_tenant.get(tenant).copied().unwrap_or(0);
        if holders.in_use >= self.size || held >= self.tenant_share {
            return None;
        }
        holders.in_use += 1;
        holders.by_tenant.insert(tenant.to_owned(), held + 1);
        Some(Slot {
            shares: Arc::clone(self),
            tenant: tenant.to_owned(),
        })
    }

    /// Slots held by `tenant`, and tenants holding any (for tests).
    #[cfg(test)]
    pub(crate) fn held(&self, tenant: &str) -> (usize, usize) {
        let holders = self.lock();
        let by = holders.by_tenant.get(tenant).copied().unwrap_or(0);
        (by, holders.by_tenant.len())
    }

    fn lock(&self) -> MutexGuard<'_, Holders> {
        // The counts stay consistent under a panic elsewhere: every update is one step.
        self.holders.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        {
            let mut holders = self.shares.lock();
            holders.in_use = holders.in_use.saturating_sub(1);
            if let Some(held) = holders.by_tenant.get_mut(&self.tenant) {
                *held = held.saturating_sub(1);
                if *held == 0 {
                    holders.by_tenant.remove(&self.tenant);
                }
            }
        }
        // Every waiter looks again: the freed slot may be within only some shares.
        self.shares.freed.notify_waiters();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const NO_WAIT: Duration = Duration::from_millis(1);

    #[tokio::test]
    async fn a_tenant_holds_at_most_half_the_pool_and_others_get_the_rest() {
        let shares = Arc::new(PoolShares::new(5));
        assert_eq!(shares.tenant_share(), 3);
        let mut hostile = Vec::new();
        for _ in 0..3 {
            hostile.push(shares.take("a", NO_WAIT).await.unwrap());
        }
        assert!(
            shares.take("a", NO_WAIT).await.is_none(),
            "beyond its share"
        );
        let b1 = shares.take("b", NO_WAIT).await.unwrap();
        let b2 = shares.take("b", NO_WAIT).await.unwrap();
        assert!(
            shares.take("c", NO_WAIT).await.is_none(),
            "the pool is full"
        );
        drop(b1);
        assert!(shares.take("c", NO_WAIT).await.is_some());
        assert!(
            shares.take("a", NO_WAIT).await.is_none(),
            "a freed slot is not a's"
        );
        drop((hostile, b2));
        assert_eq!(
            shares.held("a"),
            (0, 0),
            "no tenant is remembered once idle"
        );
    }

    #[tokio::test]
    async fn a_waiting_tenant_gets_a_slot_freed_while_it_waits() {
        let shares = Arc::new(PoolShares::new(1));
        let held = shares.take("a", NO_WAIT).await.unwrap();
        let waiter = {
            let shares = Arc::clone(&shares);
            tokio::spawn(async move { shares.take("b", Duration::from_secs(30)).await.is_some() })
        };
        tokio::task::yield_now().await;
        drop(held);
        assert!(waiter.await.unwrap());
    }
}
