//! The sandbox's two clocks: the epoch, which ticks in wall time and stops a
//! decision at its deadline (the backstop behind fuel), and the decision thread's
//! CPU clock, which tells a plugin that spent that deadline spinning from one that
//! was starved of a core on a busy machine (issue 18).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use wasmtime::Engine;

use super::PluginError;

/// How often the epoch ticks.
pub(crate) const EPOCH_TICK: Duration = Duration::from_millis(10);
/// Ticks a decision may span: the wall-clock backstop behind fuel.
pub(crate) const EPOCH_DEADLINE_TICKS: u64 = 5;
/// Thread CPU time from which an epoch deadline counts toward disabling: the
/// plugin spun rather than waited. The deadline passes 40–50 ms after the start
/// (the first tick comes any time within 10 ms), so a thread with this much CPU
/// time ran for most of even the shortest deadline, alone on a core or nearly.
/// It is above what a plugin's whole fuel buys (the tightest loop burns
/// [`super::FUEL_PER_DECISION`] in about 22 ms of CPU on the 2-core reference
/// machine), so a plugin that stays within its fuel is never counted for being
/// slow on a busy machine.
pub(crate) const SPINNING_CPU: Duration = Duration::from_millis(30);

/// CPU time the calling thread has used (`CLOCK_THREAD_CPUTIME_ID`): unlike wall
/// time, it does not grow while the thread waits for a core.
pub(crate) fn thread_cpu_time() -> Duration {
    let now = rustix::time::clock_gettime(rustix::time::ClockId::ThreadCPUTime);
    Duration::new(
        u64::try_from(now.tv_sec).unwrap_or(0),
        u32::try_from(now.tv_nsec).unwrap_or(0),
    )
}

/// Advances the engine's epoch every [`EPOCH_TICK`] until dropped.
pub(crate) struct EpochTicker {
    stop: Arc<AtomicBool>,
}

impl EpochTicker {
    pub(crate) fn start(engine: Engine) -> Result<Self, PluginError> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = Arc::clone(&stop);
        std::thread::Builder::new()
            .name("hookgate-epoch".into())
            .spawn(move || {
                while !flag.load(Ordering::Relaxed) {
                    std::thread::sleep(EPOCH_TICK);
                    engine.increment_epoch();
                }
            })
            .map_err(|e| PluginError::Engine(format!("cannot start the epoch ticker: {e}")))?;
        Ok(Self { stop })
    }
}

impl Drop for EpochTicker {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_thread_cpu_clock_grows_while_running_not_while_waiting() {
        let before_sleep = thread_cpu_time();
        std::thread::sleep(Duration::from_millis(100));
        let asleep = thread_cpu_time().saturating_sub(before_sleep);
        assert!(
            asleep < Duration::from_millis(50),
            "{asleep:?} while asleep"
        );
        // Spin until the clock moves; the wall-time bound only ends a failing run.
        let (started, wall) = (thread_cpu_time(), std::time::Instant::now());
        while thread_cpu_time().saturating_sub(started) < Duration::from_millis(5) {
            assert!(
                wall.elapsed() < Duration::from_secs(60),
                "the clock never moved"
            );
        }
    }
}
