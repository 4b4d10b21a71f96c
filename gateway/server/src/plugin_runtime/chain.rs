//! The decision chain (docs/plugins.md): how a plugin's answers combine with the built-in
//! decision, the clamps and the limits, and what `decided_by` says.
//!
//! Everything here is pure: the sandbox produces a [`PluginAnswer`] or a
//! [`CallFailure`], and these functions turn it into a [`Decision`].

use std::time::Duration;

use super::bindings::{Delay, Verdict as WitVerdict};
use crate::policy::{
    AttemptFacts, BuiltinPolicy, Decision, EffectivePolicy, RetryDecider, Verdict,
    builtin_delay_ms, classify, honored_retry_after_ms, next_step,
};

/// The shortest delay a plugin may pick.
pub(crate) const MIN_PLUGIN_DELAY_MS: u64 = 1_000;
/// The longest give-up reason kept, in bytes.
pub(crate) const MAX_REASON_BYTES: usize = 256;

/// What a plugin answered in one decision, whatever its WIT version.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PluginAnswer {
    /// The verdict: `classify`'s (0.1.0) or `decide`'s (0.2.0 and 0.3.0).
    pub(crate) verdict: WitVerdict,
    /// The delay, only when the final verdict was retry: `next-delay`'s answer
    /// (0.1.0, called only then) or `decide`'s (0.2.0 and 0.3.0, ignored
    /// otherwise).
    pub(crate) delay: Option<Delay>,
}

/// Why a decision fell back to the built-in policy.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum CallFailure {
    /// The guest trapped (unreachable, out-of-bounds access, division by zero...).
    Trap(String),
    /// The fuel budget ran out: the deterministic limit.
    OutOfFuel,
    /// The guest tried to grow its memory past the limit.
    MemoryLimit,
    /// The epoch deadline passed: the wall-clock backstop, which a busy machine can
    /// hit through no fault of the plugin: its thread was mostly waiting for a CPU.
    EpochDeadline,
    /// The epoch deadline passed while the plugin's own thread was on the CPU for
    /// most of it (`clocks::SPINNING_CPU` or more): it spun on work that fuel
    /// undercounts. Unlike starvation, this counts.
    Spinning { cpu_ms: u64 },
    /// The plugin could not be instantiated.
    Instantiate(String),
    /// The plugin's answer could not be read (a bad discriminant, invalid UTF-8, a
    /// pointer out of bounds...).
    InvalidOutput(String),
    /// No decision thread was free within the wait.
    PoolFull,
    /// The decision thread went away before answering.
    PoolLost,
    /// The host panicked while running the plugin on the calling worker.
    HostPanic,
}

impl CallFailure {
    /// The reason in `fallback:<reason>`.
    pub(crate) fn reason(&self) -> &'static str {
        match self {
            Self::Trap(_) => "trap",
            Self::OutOfFuel => "out_of_fuel",
            Self::MemoryLimit => "memory_limit",
            // Both are the same deadline to the attempt log; only counting differs.
            Self::EpochDeadline | Self::Spinning { .. } => "epoch_deadline",
            Self::Instantiate(_) => "instantiate",
            Self::InvalidOutput(_) => "invalid_output",
            Self::PoolFull => "pool_full",
            Self::PoolLost => "pool_lost",
            Self::HostPanic => "host_panic",
        }
    }

    /// Whether the failure is the plugin's own doing and counts toward disabling it.
    /// A starved epoch deadline does not: on a busy machine it can hit a well-behaved
    /// plugin. A spinning one does, or a fuel-cheap loop could hold a thread forever.
    pub(crate) fn counts(&self) -> bool {
        matches!(
            self,
            Self::Trap(_)
                | Self::OutOfFuel
                | Self::MemoryLimit
                | Self::InvalidOutput(_)
                | Self::Spinning { .. }
        )
    }

    /// Whether an inline run that failed this way only overran its small budget,
    /// so the decision is rerun on the pool with the full limits rather than
    /// ending here. A trap or a bad answer is final: the rerun would repeat it.
    pub(crate) fn is_overrun(&self) -> bool {
        matches!(
            self,
            Self::OutOfFuel | Self::MemoryLimit | Self::EpochDeadline | Self::Spinning { .. }
        )
    }

    /// The failure for an epoch deadline after the decision's own thread used `cpu`
    /// of CPU time: [`CallFailure::Spinning`] from `spinning_cpu` on (in production
    /// `clocks::SPINNING_CPU`), otherwise the uncounted [`CallFailure::EpochDeadline`].
    pub(crate) fn epoch_deadline(cpu: Duration, spinning_cpu: Duration) -> Self {
        if cpu >= spinning_cpu {
            Self::Spinning {
                cpu_ms: u64::try_from(cpu.as_millis()).unwrap_or(u64::MAX),
            }
        } else {
            Self::EpochDeadline
        }
    }
}

impl std::fmt::Display for CallFailure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Trap(m) | Self::Instantiate(m) | Self::InvalidOutput(m) => {
                write!(f, "{}: {m}", self.reason())
            }
            Self::Spinning { cpu_ms } => {
                write!(f, "{}: its thread spun {cpu_ms} ms of CPU", self.reason())
            }
            _ => f.write_str(self.reason()),
        }
    }
}

/// The built-in policy's verdict and delay, computed before the plugin runs (step 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct BuiltinView {
    pub(crate) verdict: Verdict,
    pub(crate) delay_ms: u64,
}

impl BuiltinView {
    /// Computes both, the delay even on a give-up.
    pub(crate) fn of(policy: &EffectivePolicy, facts: &AttemptFacts<'_>) -> Self {
        Self {
            verdict: classify(policy, facts.outcome, facts.attempt),
            delay_ms: builtin_delay_ms(policy, facts),
        }
    }
}

/// Whether the final verdict is retry once a plugin answered `verdict`: whether
/// 0.1.0's `next-delay` is called, and whether a `decide`'s delay counts.
pub(crate) fn wants_delay(verdict: &WitVerdict, builtin_retry: bool) -> bool {
    match verdict {
        WitVerdict::Retry => true,
        WitVerdict::UseDefault => builtin_retry,
        WitVerdict::Delivered | WitVerdict::GiveUp(_) => false,
    }
}

/// Steps 3–6: the plugin's answer over the built-in, clamped and limited.
/// `label` is `plugin:<name>@<version>`, used when either answer was not default.
pub(crate) fn plugin_decision(
    policy: &EffectivePolicy,
    facts: &AttemptFacts<'_>,
    builtin: &BuiltinView,
    answer: &PluginAnswer,
    label: &str,
) -> Decision {
    let mut custom = !matches!(answer.verdict, WitVerdict::UseDefault);
    let mut verdict = match &answer.verdict {
        WitVerdict::Delivered => Verdict::Delivered,
        WitVerdict::Retry => Verdict::Retry,
        WitVerdict::GiveUp(reason) => Verdict::GiveUp {
            reason: cut_reason(reason),
        },
        WitVerdict::UseDefault => builtin.verdict.clone(),
    };
    let mut delay_ms = builtin.delay_ms;
    if verdict == Verdict::Retry {
        match &answer.delay {
            Some(Delay::AfterMs(ms)) => {
                custom = true;
                delay_ms = plugin_delay_ms(policy, facts, *ms);
            }
            Some(Delay::GiveUp(reason)) => {
                custom = true;
                verdict = Verdict::GiveUp {
                    reason: cut_reason(reason),
                };
            }
            Some(Delay::UseDefault) | None => {}
        }
    }
    let next = next_step(policy, facts, &verdict, delay_ms);
    let decided_by = if custom {
        label.to_owned()
    } else {
        crate::policy::BUILTIN_DECIDER.to_owned()
    };
    Decision {
        verdict,
        next,
        decided_by,
    }
}

/// Step 7: the built-in decides both, and `decided_by` says why.
pub(crate) fn fallback_decision(
    policy: &EffectivePolicy,
    facts: &AttemptFacts<'_>,
    reason: &str,
) -> Decision {
    Decision {
        decided_by: format!("fallback:{reason}"),
        ..BuiltinPolicy.decide(policy, facts)
    }
}

/// Step 4: a plugin's delay clamped to [1 s, `max_delay`], never jittered, and with
/// `honor_retry_after` never below the `Retry-After` (itself capped at `max_delay`).
pub(crate) fn plugin_delay_ms(policy: &EffectivePolicy, facts: &AttemptFacts<'_>, ms: u64) -> u64 {
    let clamped = ms.max(MIN_PLUGIN_DELAY_MS).min(policy.max_delay_ms);
    match honored_retry_after_ms(policy, facts) {
        Some(floor) => clamped.max(floor.min(policy.max_delay_ms)),
        None => clamped,
    }
}

/// A reason cut to [`MAX_REASON_BYTES`], on a character boundary.
pub(crate) fn cut_reason(reason: &str) -> String {
    let mut end = reason.len().min(MAX_REASON_BYTES);
    while !reason.is_char_boundary(end) {
        end -= 1;
    }
    reason[..end].to_owned()
}

#[cfg(test)]
mod tests;
