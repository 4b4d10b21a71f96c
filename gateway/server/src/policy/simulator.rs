//! The herd simulator behind `hookgate policy simulate`: N deliveries fail together
//! at t=0 against a receiver that answers 503 for the length of an outage and 200
//! after it, in virtual time.
//!
//! Every decision goes through [`BuiltinPolicy`], so the delays, the limits and the
//! dead reasons are exactly the gateway's. The run is pure and deterministic: the same
//! [`SimulationConfig`] always gives the same [`SimulationReport`]. Each delivery is
//! independent against a fixed outage, so the cost is one `decide` per attempt plus a
//! sort of the retry times. [`simulate_within`] bounds that cost by a
//! [`SimulationBudget`], for runs on someone else's CPU (the API).

use std::collections::BTreeMap;
use std::time::Instant;

pub use super::simulation_report::SimulationConfig;
pub use super::simulation_report::SimulationReport;
pub(crate) use super::simulation_report::{
    AttemptRow, BudgetExceeded, DelayStats, SecondCount, SimulationBudget,
};
use super::{AttemptFacts, BuiltinPolicy, NextStep, Outcome, RetryDecider};

const SECOND_MS: u64 = 1_000;

/// How long one simulated attempt takes, for the CLI and the API alike.
pub const DEFAULT_ATTEMPT_MS: u64 = 50;
/// Attempts between two looks at the clock: reading it costs more than an attempt.
const ATTEMPTS_PER_CLOCK_CHECK: usize = 4_096;

/// Runs the simulation described by `cfg`, however long it takes.
pub fn simulate(cfg: &SimulationConfig) -> SimulationReport {
    let unlimited = SimulationBudget {
        max_attempts: usize::MAX,
        deadline: None,
    };
    simulate_within(cfg, &unlimited).expect("an unlimited budget is never exceeded")
}

/// Runs the simulation described by `cfg` within `budget`.
///
/// # Errors
/// [`BudgetExceeded`] as soon as the run makes more attempts than the budget allows
/// or is still going at its deadline.
pub(crate) fn simulate_within(
    cfg: &SimulationConfig,
    budget: &SimulationBudget,
) -> Result<SimulationReport, BudgetExceeded> {
    let mut tally = Tally::default();
    for index in 0..cfg.events {
        tally.run_delivery(cfg, index, budget)?;
    }
    Ok(tally.into_report(cfg))
}

/// Per-attempt-number accumulators; index n-1 is attempt n.
#[derive(Default)]
struct Tally {
    made: Vec<usize>,
    /// Attempts made so far by every delivery, for the budget.
    attempts_total: usize,
    delays: Vec<Vec<u64>>,
    /// Start second of attempt n+1, for every delivery retried after attempt n.
    arrivals: Vec<Vec<u64>>,
    delivered: usize,
    dead: BTreeMap<String, usize>,
    last_delivery_ms: Option<u64>,
}

impl Tally {
    fn run_delivery(
        &mut self,
        cfg: &SimulationConfig,
        index: usize,
        budget: &SimulationBudget,
    ) -> Result<(), BudgetExceeded> {
        let (down, up) = (Outcome::Status(503), Outcome::Status(200));
        let (mut start_ms, mut prev_delay_ms, mut attempt) = (0_u64, None, 1_u32);
        loop {
            let slot = attempt as usize - 1;
            if self.made.len() <= slot {
                self.made.push(0);
                self.delays.push(Vec::new());
                self.arrivals.push(Vec::new());
            }
            self.made[slot] += 1;
            self.charge(budget)?;
            let end_ms = start_ms.saturating_add(cfg.attempt_ms);
            let facts = AttemptFacts {
                outcome: if start_ms < cfg.outage_ms { &down } else { &up },
                attempt,
                first_attempt_at_ms: 0,
                now_ms: end_ms,
                retry_after: None,
                date: None,
                prev_delay_ms,
                seed: attempt_seed(cfg.seed, index, attempt),
            };
            match BuiltinPolicy.decide(&cfg.policy, &facts).next {
                // The built-in never skips: only a transform does.
                NextStep::Done | NextStep::Skipped => {
                    self.delivered += 1;
                    self.last_delivery_ms = self.last_delivery_ms.max(Some(end_ms));
                    return Ok(());
                }
                NextStep::Dead(reason) => {
                    *self.dead.entry(reason.as_str().to_owned()).or_default() += 1;
                    return Ok(());
                }
                NextStep::RetryAt { delay_ms } => {
                    start_ms = end_ms.saturating_add(delay_ms);
                    self.delays[slot].push(delay_ms);
                    self.arrivals[slot].push(start_ms / SECOND_MS);
                    prev_delay_ms = Some(delay_ms);
                    attempt += 1;
                }
            }
        }
    }

    /// Counts one attempt against `budget`.
    fn charge(&mut self, budget: &SimulationBudget) -> Result<(), BudgetExceeded> {
        self.attempts_total += 1;
        if self.attempts_total > budget.max_attempts {
            return Err(BudgetExceeded::Attempts {
                limit: budget.max_attempts,
            });
        }
        let clock_due = self.attempts_total.is_multiple_of(ATTEMPTS_PER_CLOCK_CHECK);
        match budget.deadline {
            Some(deadline) if clock_due && Instant::now() >= deadline => Err(BudgetExceeded::Time),
            _ => Ok(()),
        }
    }

    fn into_report(self, cfg: &SimulationConfig) -> SimulationReport {
        let mut all_arrivals = Vec::new();
        let mut schedule = Vec::with_capacity(self.made.len());
        let rows = self.made.into_iter().zip(self.delays).zip(self.arrivals);
        for (slot, ((attempts, mut delays), mut wave)) in rows.enumerate() {
            delays.sort_unstable();
            wave.sort_unstable();
            let delay = (!delays.is_empty()).then(|| DelayStats {
                min_ms: delays[0],
                median_ms: delays[(delays.len() - 1) / 2],
                max_ms: delays[delays.len() - 1],
            });
            schedule.push(AttemptRow {
                attempt: u32::try_from(slot + 1).unwrap_or(u32::MAX),
                attempts,
                retried: delays.len(),
                delay,
                wave_peak_per_second: per_second(&wave).map(|s| s.count).max().unwrap_or(0),
            });
            all_arrivals.append(&mut wave);
        }
        all_arrivals.sort_unstable();
        let retry_arrivals: Vec<SecondCount> = per_second(&all_arrivals).collect();
        let peak = (retry_arrivals.iter().copied())
            .reduce(|best, s| if s.count > best.count { s } else { best });
        let span = match (retry_arrivals.first(), retry_arrivals.last()) {
            (Some(first), Some(last)) => last.second - first.second + 1,
            _ => 0,
        };
        let mean = if span == 0 {
            0.0
        } else {
            all_arrivals.len() as f64 / span as f64
        };
        let peak_per_second = peak.map_or(0, |p| p.count);
        let recovered = cfg.outage_ms.div_ceil(SECOND_MS);
        let recovery = retry_arrivals.iter().filter(|s| s.second >= recovered);
        SimulationReport {
            config: cfg.clone(),
            schedule,
            total_attempts: cfg.events + all_arrivals.len(),
            delivered: self.delivered,
            dead: self.dead,
            peak_per_second,
            peak_second: peak.map_or(0, |p| p.second),
            mean_per_second: mean,
            herd_ratio: if mean > 0.0 {
                f64::from(peak_per_second) / mean
            } else {
                0.0
            },
            recovery_peak_per_second: recovery.map(|s| s.count).max().unwrap_or(0),
            last_delivery_ms: self.last_delivery_ms,
            retry_arrivals,
        }
    }
}

/// Run-length counts of sorted seconds.
fn per_second(sorted: &[u64]) -> impl Iterator<Item = SecondCount> + '_ {
    sorted.chunk_by(|a, b| a == b).map(|run| SecondCount {
        second: run[0],
        count: u32::try_from(run.len()).unwrap_or(u32::MAX),
    })
}

/// A well-mixed seed per delivery and attempt (splitmix64), so that neither deliveries
/// nor a delivery's successive attempts share jitter draws.
fn attempt_seed(seed: u64, index: usize, attempt: u32) -> u64 {
    fn mix(mut z: u64) -> u64 {
        z = z.wrapping_add(0x9E37_79B9_7F4A_7C15);
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    mix(mix(seed ^ mix(index as u64)) ^ u64::from(attempt))
}

#[cfg(test)]
use super::simulation_report::bucket_seconds;
#[cfg(test)]
mod tests;
