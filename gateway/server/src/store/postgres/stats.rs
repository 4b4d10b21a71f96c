//! What the PostgreSQL backend tells `/metrics`: how long each store operation
//! held its connection (a histogram), its errors by kind, and the pool's use.
//! The gateway registers them beside its own metrics when it runs on PostgreSQL.

use std::time::Instant;

use deadpool_postgres::Object;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};

use crate::store::StoreError;

/// An operation's result, its error counted: how the backend's own background
/// work returns what the database answered.
pub(crate) fn counted<T>(result: Result<T, StoreError>) -> Result<T, StoreError> {
    if let Err(e) = &result {
        crate::store::count_error(e.failure());
    }
    result
}

/// How the backend's batching works out: claims and the rows they took, ingest
/// batches and the events they wrote, outcome statements and the outcomes
/// they wrote. Their ratios are the batch sizes the
/// benchmark's reference runs at.
#[derive(Clone, Default)]
pub struct BatchCounters {
    pub claims: Counter,
    pub claimed_rows: Counter,
    pub ingest_batches: Counter,
    pub ingested_events: Counter,
    pub outcome_batches: Counter,
    pub batched_outcomes: Counter,
}

/// Seconds a store operation held its connection: 0.25 ms to about 4 s.
pub(crate) fn operation_histogram() -> Histogram {
    Histogram::new(exponential_buckets(0.000_25, 2.0, 15))
}

/// A pooled connection that, when dropped, records how long it was held.
pub(crate) struct Timed {
    client: Object,
    since: Instant,
    seconds: Histogram,
}

impl Timed {
    pub(crate) fn new(client: Object, seconds: &Histogram) -> Self {
        Self {
            client,
            since: Instant::now(),
            seconds: seconds.clone(),
        }
    }
}

impl std::ops::Deref for Timed {
    type Target = Object;
    fn deref(&self) -> &Object {
        &self.client
    }
}

impl std::ops::DerefMut for Timed {
    fn deref_mut(&mut self) -> &mut Object {
        &mut self.client
    }
}

impl Drop for Timed {
    fn drop(&mut self) {
        self.seconds.observe(self.since.elapsed().as_secs_f64());
    }
}
