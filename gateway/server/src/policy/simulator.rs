//! The herd simulator behind `hookgate policy simulate`: N deliveries fail together
//! at t=0 against a receiver that answers 503 for the length of an outage and 200
//! after it, in virtual time.
//!
//! Every decision goes through [`BuiltinPolicy`], so the delays, the limits and the
//! dead reasons are exactly the gateway's. The run is pure and deterministic: the same
//! [`SimulationConfig`] always gives the same [`SimulationReport`]. Each delivery is
//! independent against a fixed outage, so the cost is one `decide` per attempt plus a
//! sort of the retry times.

use std::collections::BTreeMap;

use serde::Serialize;

use super::{AttemptFacts, BuiltinPolicy, EffectivePolicy, NextStep, Outcome, RetryDecider};

const SECOND_MS: u64 = 1_000;

/// What to simulate.
#[derive(Debug, Clone, PartialEq, Serialize)]
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
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
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
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct DelayStats {
    /// Shortest delay.
    pub min_ms: u64,
    /// Median delay (the lower one for an even count).
    pub median_ms: u64,
    /// Longest delay.
    pub max_ms: u64,
}

/// How many retries (attempts after the first) started in one second of virtual time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SecondCount {
    /// Whole seconds since t=0.
    pub second: u64,
    /// Retries starting in that second.
    pub count: u32,
}

/// The outcome of a simulation; serialised as-is by `--format json`.
#[derive(Debug, Clone, PartialEq, Serialize)]
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

/// Runs the simulation described by `cfg`.
pub fn simulate(cfg: &SimulationConfig) -> SimulationReport {
    let mut tally = Tally::default();
    for index in 0..cfg.events {
        tally.run_delivery(cfg, index);
    }
    tally.into_report(cfg)
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
fn bucket_seconds(raw: u64) -> u64 {
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

/// Per-attempt-number accumulators; index n-1 is attempt n.
#[derive(Default)]
struct Tally {
    made: Vec<usize>,
    delays: Vec<Vec<u64>>,
    /// Start second of attempt n+1, for every delivery retried after attempt n.
    arrivals: Vec<Vec<u64>>,
    delivered: usize,
    dead: BTreeMap<String, usize>,
    last_delivery_ms: Option<u64>,
}

impl Tally {
    fn run_delivery(&mut self, cfg: &SimulationConfig, index: usize) {
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
                NextStep::Done => {
                    self.delivered += 1;
                    self.last_delivery_ms = self.last_delivery_ms.max(Some(end_ms));
                    return;
                }
                NextStep::Dead(reason) => {
                    *self.dead.entry(reason.as_str().to_owned()).or_default() += 1;
                    return;
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
mod tests {
    use super::*;
    use crate::policy::{PRESET_NAMES, PolicySpec};
    use serde_json::{Value, json};

    const MINUTE_MS: u64 = 60_000;

    fn policy(value: Value) -> EffectivePolicy {
        PolicySpec::from_json(&value).unwrap().resolve().unwrap()
    }

    fn run(policy: EffectivePolicy, events: usize, outage_ms: u64) -> SimulationReport {
        simulate(&SimulationConfig {
            policy,
            events,
            outage_ms,
            seed: 1,
            attempt_ms: 50,
        })
    }

    /// Base 60 s, 1000 deliveries, a 10 min outage: waves near 1, 3 and 7 min fail too.
    fn herd(jitter: &str) -> SimulationReport {
        run(
            policy(json!({"base_ms": "60s", "jitter": jitter})),
            1_000,
            10 * MINUTE_MS,
        )
    }

    #[test]
    fn herd_without_jitter_hits_in_one_second_and_jitter_spreads_it() {
        let none = herd("none");
        assert_eq!(none.schedule[1].attempts, 1_000);
        assert_eq!(
            none.schedule[1].retried, 1_000,
            "the first retry wave fails too"
        );
        assert_eq!(none.schedule[0].wave_peak_per_second, 1_000);
        assert_eq!((none.peak_per_second, none.peak_second), (1_000, 60));
        for jitter in ["equal", "full"] {
            let spread = herd(jitter);
            assert_eq!(spread.schedule[1].retried, 1_000, "{jitter}");
            let first_wave = spread.schedule[0].wave_peak_per_second;
            assert!(first_wave < 100, "{jitter}: {first_wave} in one second");
            assert!(spread.peak_per_second < 100, "{jitter}");
            assert!(spread.herd_ratio * 5.0 < none.herd_ratio, "{jitter}");
            assert_eq!(spread.delivered, 1_000, "{jitter}");
        }
    }

    #[test]
    fn the_same_seed_gives_the_same_report() {
        let config = SimulationConfig {
            policy: EffectivePolicy::default_preset(),
            events: 300,
            outage_ms: 30 * MINUTE_MS,
            seed: 42,
            attempt_ms: 50,
        };
        assert_eq!(simulate(&config), simulate(&config));
        let other = simulate(&SimulationConfig {
            seed: 43,
            ..config.clone()
        });
        assert_ne!(other.retry_arrivals, simulate(&config).retry_arrivals);
    }

    #[test]
    fn every_delivery_ends_delivered_or_dead_within_max_delay() {
        for name in PRESET_NAMES {
            for outage_ms in [0, 90 * MINUTE_MS, 3 * 24 * 60 * MINUTE_MS, u64::MAX] {
                let preset = EffectivePolicy::preset(name).unwrap();
                let report = run(preset.clone(), 200, outage_ms);
                let dead: usize = report.dead.values().sum();
                assert_eq!(report.delivered + dead, 200, "{name} {outage_ms}");
                let made: usize = report.schedule.iter().map(|row| row.attempts).sum();
                assert_eq!(made, report.total_attempts, "{name}");
                assert!(
                    report.schedule.len() <= preset.max_attempts as usize,
                    "{name}"
                );
                for delay in report.schedule.iter().filter_map(|row| row.delay) {
                    assert!(delay.min_ms <= delay.median_ms && delay.median_ms <= delay.max_ms);
                    assert!(delay.max_ms <= preset.max_delay_ms, "{name}");
                }
                let counted: u64 = report.histogram(40).counts.iter().sum();
                assert_eq!(counted, report.retries() as u64, "{name}");
                assert!(report.histogram(40).counts.len() <= 40, "{name}");
            }
        }
    }

    #[test]
    fn dead_reasons_are_the_policy_limits() {
        // Without jitter, default retries hourly once capped: 40 attempts need over 24 h.
        let hourly = run(policy(json!({"jitter": "none"})), 50, u64::MAX);
        assert_eq!(hourly.dead.get("retry_window"), Some(&50));
        assert_eq!(hourly.schedule.len(), 35);
        // Equal jitter averages 45 min at the cap, so the 40 attempts fit in the window.
        let jittered = run(EffectivePolicy::default_preset(), 50, u64::MAX);
        assert_eq!(jittered.dead.get("max_attempts"), Some(&50));
        assert_eq!(jittered.schedule.len(), 40);
        // ladder: 8 attempts take under 4 days of its 5-day window.
        let ladder = run(EffectivePolicy::preset("ladder").unwrap(), 50, u64::MAX);
        assert_eq!(ladder.dead.get("max_attempts"), Some(&50));
        assert_eq!(ladder.schedule.len(), 8);
        let give_up = run(policy(json!({"give_up_on": ["503"]})), 50, u64::MAX);
        assert_eq!(
            (give_up.dead.get("give_up"), give_up.retries()),
            (Some(&50), 0)
        );
    }

    #[test]
    fn a_short_outage_delivers_everything() {
        let report = run(EffectivePolicy::default_preset(), 1_000, 2_000);
        assert_eq!((report.delivered, report.dead.len()), (1_000, 0));
        assert!(report.last_delivery_ms.unwrap() < 10_000);
        let none = run(EffectivePolicy::default_preset(), 10, 0);
        assert_eq!((none.retries(), none.herd_ratio), (0, 0.0));
        assert!(none.histogram(40).counts.is_empty());
    }

    #[test]
    fn buckets_have_round_widths() {
        assert_eq!(bucket_seconds(0), 1);
        assert_eq!(bucket_seconds(17), 30);
        assert_eq!(bucket_seconds(3_601), 7_200);
        assert_eq!(bucket_seconds(100_000), 172_800);
    }

    /// Prints each preset's schedule without jitter, for docs/policies.md:
    /// `cargo test -p hookgate --lib preset_schedules -- --ignored --nocapture`.
    #[test]
    #[ignore = "prints the docs table"]
    fn preset_schedules() {
        let human = |ms| humantime::format_duration(std::time::Duration::from_millis(ms));
        for name in PRESET_NAMES {
            let policy = policy(json!({"preset": name, "jitter": "none"}));
            let report = simulate(&SimulationConfig {
                policy,
                events: 1,
                outage_ms: u64::MAX,
                seed: 1,
                attempt_ms: 0,
            });
            println!("\n`{name}`\n\n| after attempt | delay | next attempt at |\n|---|---|---|");
            let mut at = 0;
            for row in &report.schedule {
                let Some(delay) = row.delay else { continue };
                at += delay.min_ms;
                let (n, d, t) = (row.attempt, human(delay.min_ms), human(at));
                println!("| {n} | {d} | {t} |");
            }
            println!(
                "\nThen dead: {:?} after {} attempts.",
                report.dead, report.total_attempts
            );
        }
    }
}
