//! The change feed: the backend reports what its writes changed, after they
//! commit, to every part that must react (the scheduler, above all). Callers
//! write and never notify by hand, so no write can forget to tell.
//!
//! The embedded backend delivers in process. A subscriber that fell behind loses
//! nothing: messages queue until read, and a subscriber that has gone is dropped
//! at the next send. The engine's own attempt outcomes are not reported here:
//! the worker that wrote one tells its scheduler directly.

use std::sync::{Arc, Mutex, OnceLock};

use serde::{Deserialize, Serialize};
use tokio::sync::mpsc;

use crate::ids::{EndpointId, TenantId};

/// What a committed write changed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Change {
    /// An endpoint has work due at `due_ms` (new deliveries).
    Due {
        endpoint_id: EndpointId,
        due_ms: u64,
    },
    /// Work was replayed by hand: the receiver is said to be fixed, so an open
    /// breaker lets its half-open probe go now.
    Replayed { endpoint_id: EndpointId },
    /// An endpoint's breaker was closed by hand.
    BreakerReset { endpoint_id: EndpointId },
    /// An endpoint was created, changed or deleted.
    Endpoint {
        tenant_id: TenantId,
        endpoint_id: EndpointId,
    },
    /// A plugin's versions or active version changed, or it was deleted.
    Plugin { tenant_id: TenantId, name: String },
    /// A tenant was created or its API key rotated.
    Tenant { tenant_id: TenantId },
    /// A type of the event-type catalog was created, changed or removed.
    EventType { name: String },
}

impl Change {
    pub(crate) fn endpoint(tenant: &TenantId, id: &EndpointId) -> Self {
        Self::Endpoint {
            tenant_id: tenant.clone(),
            endpoint_id: id.clone(),
        }
    }

    pub(crate) fn plugin(tenant: &TenantId, name: &str) -> Self {
        Self::Plugin {
            tenant_id: tenant.clone(),
            name: name.to_owned(),
        }
    }

    pub(crate) fn tenant(id: &TenantId) -> Self {
        Self::Tenant {
            tenant_id: id.clone(),
        }
    }
}

/// Where the store publishes its changes; cheap to clone.
#[derive(Clone, Default)]
pub struct ChangeFeed {
    subscribers: Arc<Mutex<Vec<mpsc::UnboundedSender<Change>>>>,
    /// A shared backend's way to tell the other gateways, if it has one.
    outbox: Arc<OnceLock<mpsc::UnboundedSender<Change>>>,
}

/// One subscriber's end of the feed: every change published after it
/// subscribed, in order.
pub struct Changes(mpsc::UnboundedReceiver<Change>);

impl ChangeFeed {
    /// A new subscriber.
    pub fn subscribe(&self) -> Changes {
        let (tx, rx) = mpsc::unbounded_channel();
        if let Ok(mut subs) = self.subscribers.lock() {
            subs.push(tx);
        }
        Changes(rx)
    }

    /// Tells every subscriber, in the order published.
    pub(crate) fn publish(&self, change: Change) {
        self.publish_all(std::iter::once(change));
    }

    /// [`ChangeFeed::publish`] for several changes, under one lock.
    pub(crate) fn publish_all(&self, changes: impl IntoIterator<Item = Change>) {
        let Some(outbox) = self.outbox.get() else {
            return self.publish_remote(changes);
        };
        let changes: Vec<Change> = changes.into_iter().collect();
        for change in &changes {
            let _ = outbox.send(change.clone());
        }
        self.publish_remote(changes);
    }

    /// Tells this gateway's subscribers of changes another gateway made (they
    /// are not sent out again).
    pub(crate) fn publish_remote(&self, changes: impl IntoIterator<Item = Change>) {
        let Ok(mut subs) = self.subscribers.lock() else {
            return;
        };
        for change in changes {
            subs.retain(|tx| tx.send(change.clone()).is_ok());
        }
    }

    /// Sends every change published here from now on to `outbox` as well (a
    /// shared backend tells the other gateways from there). Set once.
    pub(crate) fn send_out(&self, outbox: mpsc::UnboundedSender<Change>) {
        let _ = self.outbox.set(outbox);
    }
}

impl Changes {
    /// The next change; `None` once the store is gone.
    pub async fn recv(&mut self) -> Option<Change> {
        self.0.recv().await
    }

    /// The next change if one is waiting.
    pub fn try_recv(&mut self) -> Option<Change> {
        self.0.try_recv().ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn every_subscriber_hears_each_change_in_order_and_gone_ones_are_dropped() {
        let feed = ChangeFeed::default();
        let (mut a, b) = (feed.subscribe(), feed.subscribe());
        drop(b);
        let due = |ms| Change::Due {
            endpoint_id: "ep".into(),
            due_ms: ms,
        };
        feed.publish_all([due(1), due(2)]);
        assert_eq!(a.recv().await, Some(due(1)));
        assert_eq!(a.try_recv(), Some(due(2)));
        assert_eq!(a.try_recv(), None);
        assert_eq!(feed.subscribers.lock().unwrap().len(), 1, "b was dropped");
    }
}
