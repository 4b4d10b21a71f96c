//! Delivery: signing, the HTTP client, the scheduler and its workers.

pub mod client;
pub mod connector;
mod scheduler;
pub mod signer;
mod worker;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};

use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;

use crate::clock::Clock;
use crate::policy::BuiltinPolicy;
use crate::store::Store;
pub use client::DeliveryClient;

/// A change the scheduler must hear about.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScheduleChange {
    /// An endpoint has work due at `due_ms` (new deliveries, a replay).
    Due { endpoint_id: String, due_ms: u64 },
    /// An endpoint was created, changed or deleted: reload it.
    Endpoint {
        tenant_id: String,
        endpoint_id: String,
    },
}

/// The API's handle on the delivery engine: tells it about new work and asks which
/// deliveries are in flight (an in-memory lease, never stored).
#[derive(Clone)]
pub struct DeliveryHandle {
    changes: mpsc::UnboundedSender<ScheduleChange>,
    leases: Arc<Mutex<HashSet<String>>>,
}

/// The scheduler's end of [`DeliveryHandle`].
pub struct ScheduleChanges(pub(crate) mpsc::UnboundedReceiver<ScheduleChange>);

impl DeliveryHandle {
    /// A handle and the receiver the scheduler reads.
    pub fn new() -> (Self, ScheduleChanges) {
        let (tx, rx) = mpsc::unbounded_channel();
        (
            Self {
                changes: tx,
                leases: Arc::default(),
            },
            ScheduleChanges(rx),
        )
    }

    /// Tells the scheduler about a change; lost only if the engine has stopped, in
    /// which case the work is still in the store and is found at the next start.
    pub fn notify(&self, change: ScheduleChange) {
        let _ = self.changes.send(change);
    }

    /// Whether a delivery is being attempted right now.
    pub fn is_in_flight(&self, delivery_id: &str) -> bool {
        self.leases.lock().is_ok_and(|l| l.contains(delivery_id))
    }

    /// Takes the lease on a delivery; `false` if it is already held.
    pub(crate) fn lease(&self, delivery_id: &str) -> bool {
        self.leases
            .lock()
            .is_ok_and(|mut l| l.insert(delivery_id.to_owned()))
    }

    /// Releases a lease.
    pub(crate) fn release(&self, delivery_id: &str) {
        if let Ok(mut l) = self.leases.lock() {
            l.remove(delivery_id);
        }
    }
}

/// Starts the delivery engine: the scheduler and its workers, until `shutdown`;
/// then in-flight attempts get `grace` to finish.
pub fn spawn_engine(
    store: Store,
    clock: Arc<dyn Clock>,
    client: DeliveryClient,
    handle: DeliveryHandle,
    changes: ScheduleChanges,
    shutdown: CancellationToken,
    grace: std::time::Duration,
) -> tokio::task::JoinHandle<()> {
    let ctx = Arc::new(worker::EngineContext {
        store,
        clock,
        client,
        decider: Arc::new(BuiltinPolicy),
    });
    tokio::spawn(scheduler::Scheduler::new(ctx, handle, changes).run(shutdown, grace))
}
