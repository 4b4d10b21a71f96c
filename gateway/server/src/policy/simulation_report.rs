//! What the herd simulator takes and answers: its configuration, its budget,
//! and the report (per-attempt rows, delay statistics, retry arrivals per
//! second) with the bucketing the CLI draws it with.

use std::collections::BTreeMap;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::EffectivePolicy;

const SECOND_MS: u64 = 1_000;

/// What to simulate.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SimulationConfig {
    /// The policy every delivery follows.
    pub policy: EffectivePolicy,
    /// How many deliveries fail together at t=0.
    pub events: usize,
    /// The receiver answers 503 to attempts starting before this, 200 after.
    pub outage_ms: u64,
    /// Seed of every jitter draw; the same seed gives the same report.
    pub seed: u64,
    /// How long one attempt takes; delays run from the end of an attempt, not its start.
    pub attempt_ms: u64,
}

/// The delays chosen after attempt n, and the retry wave they scheduled.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct AttemptRow {
    /// n, 1-based.
    pub attempt: u32,
    /// Deliveries that made attempt n.
    pub attempts: usize,
    /// Of those, how many were scheduled for attempt n+1 (the rest were delivered or dead).
    pub retried: usize,
    /// The delays chosen after attempt n; `None` when nothing was retried.
    pub delay: Option<DelayStats>,
    /// The busiest second of attempt n+1's arrivals: how hard this wave hits.
    pub wave_peak_per_second: u32,
}

/// Minimum, median and maximum of a set of delays.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct DelayStats {
    /// Shortest delay.
    pub min_ms: u64,
    /// Median delay (the lower one for an even count).
    pub median_ms: u64,
    /// Longest delay.
    pub max_ms: u64,
}

/// How many retries (attempts after the first) started in one second of virtual time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SecondCount {
    /// Whole seconds since t=0.
    pub second: u64,
    /// Retries starting in that second.
    pub count: u32,
}

/// The outcome of a simulation; serialised as-is by `--format json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct SimulationReport {
    /// What was simulated.
    pub config: SimulationConfig,
    /// One row per attempt number that any delivery reached.
    pub schedule: Vec<AttemptRow>,
    /// Attempts made, first attempts included.
    pub total_attempts: usize,
    /// Deliveries that got a 200.
    pub delivered: usize,
    /// Dead deliveries by `dead_reason`.
    pub dead: BTreeMap<String, usize>,
    /// Retry arrivals per second, seconds with none left out, in time order.
    pub retry_arrivals: Vec<SecondCount>,
    /// The busiest second's retry count.
    pub peak_per_second: u32,
    /// When that busiest second starts, in whole seconds (the first, on a tie).
    pub peak_second: u64,
    /// Mean retries per second from the first retry's second to the last's.
    pub mean_per_second: f64,
    /// `peak_per_second / mean_per_second`: 1 is perfectly flat; 0 when nothing retried.
    pub herd_ratio: f64,
    /// The busiest second once the receiver is back (from the first whole second after
    /// the outage): what a recovering receiver has to absorb.
    pub recovery_peak_per_second: u32,
    /// When the last successful attempt ended; `None` when nothing was delivered.
    pub last_delivery_ms: Option<u64>,
}

/// Retry arrivals bucketed for drawing.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Histogram {
    /// Width of one bucket; bucket i starts at `i * bucket_ms`.
    pub bucket_ms: u64,
    /// Retries per bucket, from t=0 to the last retry.
    pub counts: Vec<u64>,
    /// The busiest second within each bucket.
    pub peaks: Vec<u32>,
}

/// The most work one bounded run may do. Attempts bound both time and memory (each
/// retry keeps 16 bytes until the report is built) and give the same answer on every
/// machine; the deadline is the backstop that holds however slow an attempt is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct SimulationBudget {
    /// Attempts the run may make in all, first attempts included.
    pub max_attempts: usize,
    /// When the run is abandoned, if it is still going.
    pub deadline: Option<Instant>,
}

/// Why a bounded run stopped before its report: no partial report is given, since
/// one missing the later waves would understate the herd.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum BudgetExceeded {
    /// The deliveries needed more attempts than the budget allows.
    #[error("the simulation needs more than {limit} attempts")]
    Attempts {
        /// The budget's `max_attempts`.
        limit: usize,
    },
    /// The run was still going at the deadline.
    #[error("the simulation did not finish within its time budget")]
    Time,
}

impl SimulationReport {
    /// Retries made: every attempt after a delivery's first.
    pub fn retries(&self) -> usize {
        self.total_attempts.saturating_sub(self.config.events)
    }

    /// Buckets the retry arrivals from t=0 into at most `buckets` buckets of a round
    /// width (1 s, 2 s, 5 s, … 1 d, then whole days).
    pub fn histogram(&self, buckets: usize) -> Histogram {
        let seconds = self.retry_arrivals.last().map_or(0, |last| last.second + 1);
        let width = bucket_seconds(seconds.div_ceil(buckets.max(1) as u64));
        let len = usize::try_from(seconds.div_ceil(width)).unwrap_or(0);
        let (mut counts, mut peaks) = (vec![0; len], vec![0; len]);
        for arrival in &self.retry_arrivals {
            let bucket = usize::try_from(arrival.second / width).unwrap_or(0);
            counts[bucket] += u64::from(arrival.count);
            peaks[bucket] = peaks[bucket].max(arrival.count);
        }
        Histogram {
            bucket_ms: width * SECOND_MS,
            counts,
            peaks,
        }
    }
}

/// The smallest round bucket width of at least `raw` seconds.
pub(super) fn bucket_seconds(raw: u64) -> u64 {
    const ROUND: [u64; 18] = [
        1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1_800, 3_600, 7_200, 10_800, 21_600, 43_200,
        86_400,
    ];
    let day = ROUND[ROUND.len() - 1];
    ROUND
        .into_iter()
        .find(|width| *width >= raw)
        .unwrap_or_else(|| raw.div_ceil(day) * day)
}
