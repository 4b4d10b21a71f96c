//! Per-endpoint delivery stats with history: every attempt is counted in memory
//! in its endpoint's time bucket (`recorder.rs`), added to the store as deltas
//! that merge across gateways by addition, and read back as a dense series of
//! buckets (`series.rs`) whose percentiles come from merged latency histograms
//! (`histogram.rs`).

mod histogram;
mod recorder;
mod series;

pub(crate) use histogram::{Percentile, percentile_ms};
pub(crate) use recorder::{CountedAttempt, StatsRecorder, run_flusher};
pub(crate) use series::{BucketRange, RangeError, StatsWindow};
