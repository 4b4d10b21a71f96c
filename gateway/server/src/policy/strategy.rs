//! Delay strategies and jitters (docs/policies.md): their names as users give them, and their
//! parameters as the resolved policy holds them.
//!
//! Both serialise internally tagged so that they flatten into the policy object:
//! `"strategy":"exponential","base_ms":1000,"factor":2.0` and
//! `"jitter":"proportional","jitter_ratio":0.2`.

use serde::{Deserialize, Serialize};

/// The name of a delay strategy, as a user gives it in `"strategy"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum StrategyKind {
    /// `base * factor^(n-1)`.
    Exponential,
    /// `base + step*(n-1)`.
    Linear,
    /// Always `base`.
    Fixed,
    /// An explicit list of delays whose last step repeats.
    Schedule,
}

impl StrategyKind {
    /// Every strategy name, for error messages.
    pub const NAMES: [&str; 4] = ["exponential", "linear", "fixed", "schedule"];

    /// The name used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Exponential => "exponential",
            Self::Linear => "linear",
            Self::Fixed => "fixed",
            Self::Schedule => "schedule",
        }
    }

    /// Looks a strategy up by its JSON name.
    pub fn from_name(name: &str) -> Option<Self> {
        [Self::Exponential, Self::Linear, Self::Fixed, Self::Schedule]
            .into_iter()
            .find(|kind| kind.as_str() == name)
    }
}

/// A delay strategy with its parameters; the un-jittered delay after attempt n.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "strategy", rename_all = "snake_case")]
pub enum Strategy {
    /// `min(max_delay, base_ms * factor^(n-1))`.
    Exponential {
        /// Delay after the first attempt.
        base_ms: u64,
        /// Growth per attempt, at least 1.
        factor: f64,
    },
    /// `base_ms + step_ms*(n-1)`.
    Linear {
        /// Delay after the first attempt.
        base_ms: u64,
        /// Added per further attempt.
        step_ms: u64,
    },
    /// Always `base_ms`.
    Fixed {
        /// The delay.
        base_ms: u64,
    },
    /// `schedule_ms[n-1]`, the last step repeating.
    Schedule {
        /// Delays after attempts 1, 2, …
        schedule_ms: Vec<u64>,
    },
}

impl Strategy {
    /// Which strategy this is.
    pub fn kind(&self) -> StrategyKind {
        match self {
            Self::Exponential { .. } => StrategyKind::Exponential,
            Self::Linear { .. } => StrategyKind::Linear,
            Self::Fixed { .. } => StrategyKind::Fixed,
            Self::Schedule { .. } => StrategyKind::Schedule,
        }
    }

    /// The first delay: `base_ms`, or a schedule's first step. Decorrelated jitter starts
    /// from it and the retry window may not be shorter.
    pub fn base_ms(&self) -> u64 {
        match self {
            Self::Exponential { base_ms, .. }
            | Self::Linear { base_ms, .. }
            | Self::Fixed { base_ms } => *base_ms,
            Self::Schedule { schedule_ms } => schedule_ms.first().copied().unwrap_or(0),
        }
    }
}

/// The name of a jitter, as a user gives it in `"jitter"`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum JitterKind {
    /// No jitter.
    None,
    /// U(0, d).
    Full,
    /// d/2 + U(0, d/2).
    Equal,
    /// U(base, 3·prev), capped.
    Decorrelated,
    /// d·U(1−r, 1+r), capped.
    Proportional,
}

impl JitterKind {
    /// Every jitter name, for error messages.
    pub const NAMES: [&str; 5] = ["none", "full", "equal", "decorrelated", "proportional"];

    /// The name used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::None => "none",
            Self::Full => "full",
            Self::Equal => "equal",
            Self::Decorrelated => "decorrelated",
            Self::Proportional => "proportional",
        }
    }

    /// Looks a jitter up by its JSON name.
    pub fn from_name(name: &str) -> Option<Self> {
        [
            Self::None,
            Self::Full,
            Self::Equal,
            Self::Decorrelated,
            Self::Proportional,
        ]
        .into_iter()
        .find(|kind| kind.as_str() == name)
    }
}

/// How a delay is randomised so that retries of many deliveries spread out (rule 6).
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(tag = "jitter", rename_all = "snake_case")]
pub enum Jitter {
    /// The delay as computed.
    None,
    /// U(0, d).
    Full,
    /// d/2 + U(0, d/2).
    Equal,
    /// prev₀ = base, then min(max_delay, U(base, 3·prev)).
    Decorrelated,
    /// min(max_delay, d·U(1−r, 1+r)).
    Proportional {
        /// r, in (0, 1].
        #[serde(rename = "jitter_ratio")]
        ratio: f64,
    },
}

impl Jitter {
    /// Which jitter this is.
    pub fn kind(self) -> JitterKind {
        match self {
            Self::None => JitterKind::None,
            Self::Full => JitterKind::Full,
            Self::Equal => JitterKind::Equal,
            Self::Decorrelated => JitterKind::Decorrelated,
            Self::Proportional { .. } => JitterKind::Proportional,
        }
    }

    /// The proportional ratio, if this jitter has one.
    pub fn ratio(self) -> Option<f64> {
        match self {
            Self::Proportional { ratio } => Some(ratio),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kinds_look_up_by_name() {
        for name in StrategyKind::NAMES {
            assert_eq!(StrategyKind::from_name(name).unwrap().as_str(), name);
        }
        for name in JitterKind::NAMES {
            assert_eq!(JitterKind::from_name(name).unwrap().as_str(), name);
        }
        assert!(StrategyKind::from_name("random").is_none());
        assert!(JitterKind::from_name("half").is_none());
    }

    #[test]
    fn schedules_start_from_their_first_step() {
        let schedule = Strategy::Schedule {
            schedule_ms: vec![5_000, 60_000],
        };
        assert_eq!(schedule.base_ms(), 5_000);
        assert_eq!(schedule.kind(), StrategyKind::Schedule);
        let linear = Strategy::Linear {
            base_ms: 2_000,
            step_ms: 1,
        };
        assert_eq!(linear.base_ms(), 2_000);
        assert_eq!(Jitter::Proportional { ratio: 0.2 }.ratio(), Some(0.2));
        assert_eq!(Jitter::Equal.ratio(), None);
    }
}
