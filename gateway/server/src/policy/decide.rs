//! The one place an attempt's decision is made: the built-in decides, unless the
//! endpoint has a plugin bound and the outcome is one a plugin may weigh in on.

use std::future::Future;

use super::{AttemptFacts, BuiltinPolicy, Decision, EffectivePolicy, Outcome, RetryDecider};

/// An endpoint's bound plugin, ready to decide one attempt (the wasm host
/// provides it). It runs the plugin over the built-in decision and falls back to
/// the built-in on any failure, so it never fails.
pub trait PluginDecider: Sync {
    /// Decides an outcome the host does not decide alone.
    fn decide(
        &self,
        policy: &EffectivePolicy,
        facts: &AttemptFacts<'_>,
    ) -> impl Future<Output = Decision> + Send;
}

/// Outcomes the host decides alone, without calling a plugin: 2xx, 410, a
/// broker's confirmation, and a failed transform, which no policy world has a
/// name for (its `error_rules` decide it; a blocked address never reaches a
/// decision).
pub(crate) fn host_decides_alone(outcome: &Outcome) -> bool {
    matches!(
        outcome,
        Outcome::Status(200..=299 | 410)
            | Outcome::Published
            | Outcome::Failure(super::FailureKind::TransformFailed)
    )
}

/// Decides what follows an attempt under the endpoint's effective `policy`: its
/// `plugin` when one is bound and the outcome is not the host's alone, else the
/// built-in.
pub async fn decide<P: PluginDecider>(
    policy: &EffectivePolicy,
    facts: &AttemptFacts<'_>,
    plugin: Option<&P>,
) -> Decision {
    match plugin {
        Some(plugin) if !host_decides_alone(facts.outcome) => plugin.decide(policy, facts).await,
        _ => BuiltinPolicy.decide(policy, facts),
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use super::*;
    use crate::policy::{FailureKind, NextStep};

    /// A plugin that always retries after a minute, counting its calls.
    #[derive(Default)]
    struct CountingPlugin(AtomicUsize);

    impl PluginDecider for CountingPlugin {
        async fn decide(&self, policy: &EffectivePolicy, facts: &AttemptFacts<'_>) -> Decision {
            self.0.fetch_add(1, Ordering::Relaxed);
            Decision {
                decided_by: "plugin:counting@1".into(),
                next: NextStep::RetryAt { delay_ms: 60_000 },
                ..BuiltinPolicy.decide(policy, facts)
            }
        }
    }

    fn facts(outcome: &Outcome) -> AttemptFacts<'_> {
        AttemptFacts {
            outcome,
            attempt: 1,
            first_attempt_at_ms: 1_000,
            now_ms: 1_100,
            retry_after: None,
            date: None,
            prev_delay_ms: None,
            seed: 7,
        }
    }

    #[test]
    fn host_decides_2xx_and_410_alone() {
        assert!(host_decides_alone(&Outcome::Status(200)));
        assert!(host_decides_alone(&Outcome::Status(204)));
        assert!(host_decides_alone(&Outcome::Status(410)));
        assert!(!host_decides_alone(&Outcome::Status(400)));
        assert!(!host_decides_alone(&Outcome::Status(503)));
        assert!(!host_decides_alone(&Outcome::Failure(FailureKind::Timeout)));
    }

    #[tokio::test]
    async fn only_a_bound_plugin_is_asked_and_only_about_what_it_may_weigh() {
        let policy = EffectivePolicy::default_preset();
        let plugin = CountingPlugin::default();
        let unbound = decide::<CountingPlugin>(&policy, &facts(&Outcome::Status(503)), None).await;
        assert_eq!(
            unbound,
            BuiltinPolicy.decide(&policy, &facts(&Outcome::Status(503)))
        );
        for status in [200, 410] {
            let d = decide(&policy, &facts(&Outcome::Status(status)), Some(&plugin)).await;
            assert_eq!(d.decided_by, "builtin");
        }
        assert_eq!(plugin.0.load(Ordering::Relaxed), 0);
        let bound = decide(&policy, &facts(&Outcome::Status(503)), Some(&plugin)).await;
        assert_eq!(bound.decided_by, "plugin:counting@1");
        assert_eq!(plugin.0.load(Ordering::Relaxed), 1);
    }
}
