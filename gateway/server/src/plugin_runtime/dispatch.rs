//! Where a plugin call (a decision or a transform) runs (see
//! [`super::budget`]): inline on the calling tokio worker with the small
//! budget, rerun on the decision pool when it overruns, or straight on the
//! pool for a version that often does. [`Dispatch`] holds the
//! engine and the pool it runs them on, and counts each path.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use super::budget::{Budget, Deadline, Route};
use super::chain::CallFailure;
use super::clocks::thread_cpu_time;
use super::decision_pool::{DecisionPool, PoolError};
use super::engine::{Call, Sandbox};
use super::registry::LoadedPlugin;

/// How many plugin decisions took each path since start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DecisionPaths {
    /// Decided inline, within the small budget.
    pub inline: u64,
    /// Overran the inline budget and were rerun on the pool.
    pub escalated: u64,
    /// Sent straight to the pool.
    pub pool: u64,
}

/// Runs decisions: the engine, the decision pool, whether decisions run inline
/// at all, the inline budget, and the counters behind [`DecisionPaths`].
pub(super) struct Dispatch {
    sandbox: Arc<Sandbox>,
    pool: DecisionPool,
    inline_first: AtomicBool,
    /// The inline runs' wall-time limit in µs: [`super::budget::INLINE_TIME`]
    /// but in tests, where a slow machine must not turn a quick run into an
    /// escalation.
    inline_time_us: AtomicU64,
    inline: AtomicU64,
    escalated: AtomicU64,
    pooled: AtomicU64,
}

impl Dispatch {
    pub(super) fn new(sandbox: Arc<Sandbox>, pool: DecisionPool) -> Self {
        Self {
            sandbox,
            pool,
            inline_first: AtomicBool::new(true),
            inline_time_us: AtomicU64::new(micros(super::budget::INLINE_TIME)),
            inline: AtomicU64::new(0),
            escalated: AtomicU64::new(0),
            pooled: AtomicU64::new(0),
        }
    }

    /// How many decisions took each path since start.
    pub(super) fn paths(&self) -> DecisionPaths {
        DecisionPaths {
            inline: self.inline.load(Ordering::Relaxed),
            escalated: self.escalated.load(Ordering::Relaxed),
            pool: self.pooled.load(Ordering::Relaxed),
        }
    }

    /// Whether decisions try the inline run first.
    pub(super) fn set_inline_first(&self, on: bool) {
        self.inline_first.store(on, Ordering::Relaxed);
    }

    /// Gives inline runs `time` of wall time instead of [`super::budget::INLINE_TIME`].
    #[cfg(test)]
    pub(super) fn set_inline_time(&self, time: Duration) {
        self.inline_time_us.store(micros(time), Ordering::Relaxed);
    }

    fn inline_budget(&self) -> Budget {
        let time = Duration::from_micros(self.inline_time_us.load(Ordering::Relaxed));
        Budget {
            deadline: Deadline::After(time),
            ..Budget::inline()
        }
    }

    /// Asks `plugin` `call` (a decision or a transform) where
    /// [`super::budget`] says it should run.
    pub(super) async fn run_plugin<C: Call>(
        &self,
        plugin: &Arc<LoadedPlugin>,
        call: C,
    ) -> Result<C::Answer, CallFailure> {
        let inline_first = self.inline_first.load(Ordering::Relaxed);
        if inline_first && plugin.inline.route() == Route::Inline {
            if let Some(answer) = self.run_inline(plugin, &call) {
                plugin.inline.record(false);
                self.inline.fetch_add(1, Ordering::Relaxed);
                return answer;
            }
            plugin.inline.record(true);
            self.escalated.fetch_add(1, Ordering::Relaxed);
            return self.run_on_pool(plugin, call, false).await;
        }
        self.pooled.fetch_add(1, Ordering::Relaxed);
        self.run_on_pool(plugin, call, inline_first).await
    }

    /// The inline run; `None` when it overran the budget and must be rerun. A
    /// panic in the host is caught here, so it costs this decision only.
    fn run_inline<C: Call>(
        &self,
        plugin: &LoadedPlugin,
        call: &C,
    ) -> Option<Result<C::Answer, CallFailure>> {
        let ran = catch_unwind(AssertUnwindSafe(|| {
            self.sandbox
                .run_within(&plugin.pre, call, self.inline_budget())
                .0
        }));
        match ran {
            Err(_) => Some(Err(CallFailure::HostPanic)),
            // Not instantiating is the engine's doing (e.g. no free instance
            // slot), not the plugin's: the pool's run decides.
            Ok(Err(failure))
                if failure.is_overrun() || matches!(failure, CallFailure::Instantiate(_)) =>
            {
                None
            }
            Ok(answer) => Some(answer),
        }
    }

    /// A run on the decision pool with the full limits, within the tenant's
    /// share. With `record`, what it used is recorded as fitting the inline
    /// budget or not, so a version sent to the pool can come back.
    async fn run_on_pool<C: Call>(
        &self,
        plugin: &Arc<LoadedPlugin>,
        call: C,
        record: bool,
    ) -> Result<C::Answer, CallFailure> {
        let (sandbox, job_plugin) = (Arc::clone(&self.sandbox), Arc::clone(plugin));
        let inline_budget = self.inline_budget();
        let ran = self
            .pool
            .run(&plugin.tenant, move || {
                // CPU time, not wall time: a pool thread waiting for a core on a
                // busy machine says nothing about the plugin.
                let started = thread_cpu_time();
                let (answer, usage) = sandbox.run_measured(&job_plugin.pre, &call);
                if record {
                    let cpu = thread_cpu_time().saturating_sub(started);
                    let fits = inline_budget.fits(&usage, cpu);
                    job_plugin.inline.record(!fits);
                }
                answer
            })
            .await;
        match ran {
            Ok(answer) => answer,
            Err(PoolError::Full) => Err(CallFailure::PoolFull),
            Err(PoolError::Lost) => Err(CallFailure::PoolLost),
        }
    }
}

fn micros(time: Duration) -> u64 {
    u64::try_from(time.as_micros()).unwrap_or(u64::MAX)
}
