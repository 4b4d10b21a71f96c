//! What the chaos receiver does to each request.
//!
//! A [`FaultPlan`] comes from the command line: weighted statuses, a latency, the
//! rates of hangs and resets, and a number of requests to fail first. Request `n` (in
//! order of arrival, from 1) gets its [`Fault`] from a generator seeded with the plan's
//! seed and `n` alone, so the same seed and the same requests give the same answers,
//! however the requests interleave.

use std::time::Duration;

use rand::rngs::StdRng;
use rand::{RngExt, SeedableRng};

/// Statuses and their weights, as `200:70,503:20,429:10`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusWeights(Vec<(u16, u32)>);

impl StatusWeights {
    /// Every response is `status`.
    pub fn only(status: u16) -> Self {
        Self(vec![(status, 1)])
    }

    /// The statuses and their weights, in the order given.
    pub fn entries(&self) -> &[(u16, u32)] {
        &self.0
    }

    /// The status whose cumulative weight passes `roll`, in `0..total`.
    fn pick(&self, roll: u64) -> u16 {
        let mut seen = 0u64;
        for &(status, weight) in &self.0 {
            seen += u64::from(weight);
            if roll < seen {
                return status;
            }
        }
        self.0.last().map_or(200, |&(s, _)| s)
    }

    fn total(&self) -> u64 {
        self.0.iter().map(|&(_, w)| u64::from(w)).sum()
    }
}

/// Parses `--status`: comma-separated `STATUS[:WEIGHT]`, statuses 200–599, weights
/// whole numbers above 0 (1 when left out).
///
/// # Errors
/// A message naming the bad entry.
pub fn parse_statuses(text: &str) -> Result<StatusWeights, String> {
    let mut entries = Vec::new();
    for entry in text.split(',').map(str::trim).filter(|e| !e.is_empty()) {
        let (status, weight) = entry.split_once(':').unwrap_or((entry, "1"));
        let status: u16 = status
            .trim()
            .parse()
            .ok()
            .filter(|s| (200..=599).contains(s))
            .ok_or_else(|| format!("{entry:?}: the status must be a number from 200 to 599"))?;
        let weight: u32 = weight
            .trim()
            .parse()
            .ok()
            .filter(|w| *w > 0)
            .ok_or_else(|| format!("{entry:?}: the weight must be a whole number above 0"))?;
        entries.push((status, weight));
    }
    if entries.is_empty() {
        return Err("give at least one status, e.g. 200:70,503:20,429:10".to_owned());
    }
    Ok(StatusWeights(entries))
}

/// How long the receiver waits before answering: fixed, or uniform in a range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Latency {
    /// Always this long.
    Fixed(Duration),
    /// Uniform in `[low, high]`.
    Range(Duration, Duration),
}

impl Default for Latency {
    fn default() -> Self {
        Self::Fixed(Duration::ZERO)
    }
}

/// Parses `--latency`: `50ms`, or a range `10ms..200ms`.
///
/// # Errors
/// A message when a bound is not a duration or the range is reversed.
pub fn parse_latency(text: &str) -> Result<Latency, String> {
    let duration = |t: &str| {
        humantime::parse_duration(t.trim())
            .map_err(|e| format!("{t:?} is not a duration such as 50ms or 1s: {e}"))
    };
    match text.split_once("..") {
        None => Ok(Latency::Fixed(duration(text)?)),
        Some((low, high)) => {
            let (low, high) = (duration(low)?, duration(high)?);
            if low > high {
                return Err(format!(
                    "{text:?}: the range's low end is above its high end"
                ));
            }
            Ok(Latency::Range(low, high))
        }
    }
}

/// Parses a rate in `[0, 1]` (`--hang-rate`, `--reset-rate`).
///
/// # Errors
/// A message when the text is not a number in `[0, 1]`.
pub fn parse_rate(text: &str) -> Result<f64, String> {
    text.trim()
        .parse::<f64>()
        .ok()
        .filter(|r| (0.0..=1.0).contains(r))
        .ok_or_else(|| format!("{text:?}: a rate is a number from 0 to 1, e.g. 0.05"))
}

/// What the receiver does with one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Wait `delay`, then answer `status`.
    Respond { status: u16, delay: Duration },
    /// Wait `delay`, then reset the connection (TCP RST) without answering.
    Reset { delay: Duration },
    /// Never answer; hold the connection until the client gives up.
    Hang,
}

/// The faults of a run, drawn per request from the seed.
#[derive(Debug, Clone)]
pub struct FaultPlan {
    /// Statuses answered, by weight.
    pub statuses: StatusWeights,
    /// `Retry-After` seconds sent with 429 and 503.
    pub retry_after_s: Option<u64>,
    /// Delay before each answer or reset.
    pub latency: Latency,
    /// Share of requests never answered.
    pub hang_rate: f64,
    /// Share of requests whose connection is reset.
    pub reset_rate: f64,
    /// The first this many requests are answered 503, whatever else the plan says.
    pub fail_first: u64,
    /// The seed of every draw.
    pub seed: u64,
}

impl Default for FaultPlan {
    fn default() -> Self {
        Self {
            statuses: StatusWeights::only(200),
            retry_after_s: None,
            latency: Latency::default(),
            hang_rate: 0.0,
            reset_rate: 0.0,
            fail_first: 0,
            seed: 1,
        }
    }
}

impl FaultPlan {
    /// The fault of request `n` (1-based, in order of arrival). Every draw is made,
    /// in the same order, whatever the outcome, so `n` alone decides.
    pub fn fault(&self, n: u64) -> Fault {
        let mut rng = StdRng::seed_from_u64(splitmix64(self.seed ^ splitmix64(n)));
        let reset_roll: f64 = rng.random();
        let hang_roll: f64 = rng.random();
        let status_roll = rng.random_range(0..self.statuses.total().max(1));
        let delay = match self.latency {
            Latency::Fixed(d) => d,
            Latency::Range(low, high) => {
                let (low_us, high_us) = (micros(low), micros(high));
                Duration::from_micros(rng.random_range(low_us..=high_us))
            }
        };
        if n <= self.fail_first {
            return Fault::Respond { status: 503, delay };
        }
        if reset_roll < self.reset_rate {
            Fault::Reset { delay }
        } else if hang_roll < self.hang_rate {
            Fault::Hang
        } else {
            let status = self.statuses.pick(status_roll);
            Fault::Respond { status, delay }
        }
    }

    /// The `Retry-After` header value for `status`, if any.
    pub fn retry_after(&self, status: u16) -> Option<u64> {
        self.retry_after_s
            .filter(|_| status == 429 || status == 503)
    }
}

fn micros(d: Duration) -> u64 {
    u64::try_from(d.as_micros()).unwrap_or(u64::MAX)
}

/// A bijective 64-bit mix, so nearby seeds and request numbers give unrelated streams.
fn splitmix64(x: u64) -> u64 {
    let mut z = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

#[cfg(test)]
mod tests;
