//! The sandbox: one wasmtime `Engine` with the pooling allocator, fuel and epoch
//! interruption, an epoch ticker, and one fresh `Store` per decision (§5 "Engine and
//! limits").
//!
//! Plugins are compiled once into a [`PluginPre`] (an `InstancePre` with typed
//! exports). Every decision instantiates it in a new `Store` with [`StoreLimits`], a
//! fuel budget and an epoch deadline, so nothing a plugin did last time survives.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use wasmtime::component::{Component, Linker};
use wasmtime::{
    Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig, ResourceLimiter, Store,
    StoreLimits, StoreLimitsBuilder, Trap,
};

use super::PluginError;
use super::bindings::{Attempt, PluginPre};
use super::chain::{CallFailure, PluginAnswer, wants_delay};

/// Linear memory a plugin may use, in bytes.
pub const MEMORY_LIMIT_BYTES: usize = 16 << 20;
/// Fuel for one decision (both calls): about 1 ms of work, the deterministic limit.
pub const FUEL_PER_DECISION: u64 = 10_000_000;
/// How often the epoch ticks.
pub const EPOCH_TICK: Duration = Duration::from_millis(10);
/// Ticks a decision may span: the wall-clock backstop behind fuel.
pub const EPOCH_DEADLINE_TICKS: u64 = 5;

/// What a decision's `Store` holds: its limits, and whether the memory limit was hit
/// (with `trap_on_grow_failure` that error is not a `Trap`, so it is recorded here).
pub(crate) struct PluginState {
    limits: StoreLimits,
    memory_exceeded: bool,
}

impl PluginState {
    fn new() -> Self {
        Self {
            limits: StoreLimitsBuilder::new()
                .memory_size(MEMORY_LIMIT_BYTES)
                .trap_on_grow_failure(true)
                .build(),
            memory_exceeded: false,
        }
    }
}

impl ResourceLimiter for PluginState {
    fn memory_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        let allowed = self.limits.memory_growing(current, desired, maximum);
        if !matches!(allowed, Ok(true)) {
            self.memory_exceeded = true;
        }
        allowed
    }

    fn memory_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.memory_exceeded = true;
        self.limits.memory_grow_failed(error)
    }

    fn table_growing(
        &mut self,
        current: usize,
        desired: usize,
        maximum: Option<usize>,
    ) -> wasmtime::Result<bool> {
        self.limits.table_growing(current, desired, maximum)
    }

    fn table_grow_failed(&mut self, error: wasmtime::Error) -> wasmtime::Result<()> {
        self.limits.table_grow_failed(error)
    }
}

/// Where in a decision an error arose; decides what a non-trap error means.
#[derive(Debug, Clone, Copy)]
enum Stage {
    Instantiate,
    Call,
}

/// The one engine every plugin runs in, and its empty linker (plugins import nothing).
pub(crate) struct Sandbox {
    engine: Engine,
    linker: Linker<PluginState>,
    /// Fuel per decision: [`FUEL_PER_DECISION`] but in tests of the epoch backstop.
    fuel: u64,
    _ticker: EpochTicker,
}

impl Sandbox {
    /// Builds the engine for `concurrency` simultaneous decisions, each with `fuel`,
    /// and starts its epoch ticker.
    ///
    /// # Errors
    /// `Engine` if wasmtime refuses the configuration (e.g. no address space).
    pub(crate) fn new(concurrency: u32, fuel: u64) -> Result<Self, PluginError> {
        let mut pool = PoolingAllocationConfig::new();
        pool.total_component_instances(concurrency)
            .total_memories(concurrency)
            .total_core_instances(concurrency * 4)
            .total_tables(concurrency * 4)
            .max_memory_size(MEMORY_LIMIT_BYTES);
        let mut config = Config::new();
        config
            .allocation_strategy(InstanceAllocationStrategy::Pooling(pool))
            .consume_fuel(true)
            .epoch_interruption(true)
            .concurrency_support(false)
            .wasm_component_model(true);
        let engine = Engine::new(&config).map_err(|e| PluginError::Engine(e.to_string()))?;
        let linker = Linker::new(&engine);
        let ticker = EpochTicker::start(engine.clone())?;
        Ok(Self {
            engine,
            linker,
            fuel,
            _ticker: ticker,
        })
    }

    /// Compiles a component and pre-instantiates it with the empty linker. Runs no
    /// guest code.
    ///
    /// # Errors
    /// `Compile`, `Imports` (any import at all), `Resources` (memory beyond the
    /// limit) or `Exports` (not the `plugin` world).
    pub(crate) fn prepare(&self, component: &[u8]) -> Result<PluginPre<PluginState>, PluginError> {
        let component = Component::new(&self.engine, component)
            .map_err(|e| PluginError::Compile(format!("{e:#}")))?;
        let imports: Vec<String> = component
            .component_type()
            .imports(&self.engine)
            .map(|(name, _)| name.to_owned())
            .collect();
        if !imports.is_empty() {
            return Err(PluginError::Imports(imports.join(", ")));
        }
        let resources = component.resources_required().ok_or_else(|| {
            PluginError::Resources("its resource needs cannot be determined".into())
        })?;
        if resources.num_memories > 1 {
            return Err(PluginError::Resources(format!(
                "it has {} memories; a plugin may have one",
                resources.num_memories
            )));
        }
        let pages = resources.max_initial_memory_size.unwrap_or(0);
        let initial_bytes = pages.saturating_mul(64 * 1024);
        if initial_bytes > MEMORY_LIMIT_BYTES as u64 {
            return Err(PluginError::Resources(format!(
                "it starts with {initial_bytes} bytes of memory; the limit is {MEMORY_LIMIT_BYTES}"
            )));
        }
        let pre = self
            .linker
            .instantiate_pre(&component)
            .map_err(|e| PluginError::Exports(format!("{e:#}")))?;
        PluginPre::new(pre).map_err(|e| PluginError::Exports(format!("{e:#}")))
    }

    /// Runs one decision in a fresh store: `classify`, then `next-delay` only when the
    /// final verdict is retry (`builtin_retry` says what `use-default` means).
    ///
    /// # Errors
    /// A [`CallFailure`] for anything that went wrong; the caller falls back.
    pub(crate) fn run(
        &self,
        pre: &PluginPre<PluginState>,
        attempt: &Attempt,
        builtin_retry: bool,
    ) -> Result<PluginAnswer, CallFailure> {
        let mut store = Store::new(&self.engine, PluginState::new());
        store.limiter(|state| state);
        store
            .set_fuel(self.fuel)
            .map_err(|e| CallFailure::Instantiate(e.to_string()))?;
        store.set_epoch_deadline(EPOCH_DEADLINE_TICKS);
        store.epoch_deadline_trap();
        let plugin = pre
            .instantiate(&mut store)
            .map_err(|e| failure(&e, &store, Stage::Instantiate))?;
        let decide = plugin.hookgate_policy_decide();
        let verdict = decide
            .call_classify(&mut store, attempt)
            .map_err(|e| failure(&e, &store, Stage::Call))?;
        let delay = if wants_delay(&verdict, builtin_retry) {
            let delay = decide
                .call_next_delay(&mut store, attempt)
                .map_err(|e| failure(&e, &store, Stage::Call))?;
            Some(delay)
        } else {
            None
        };
        Ok(PluginAnswer { verdict, delay })
    }
}

/// Classifies an error from wasmtime. The memory flag is checked first: a memory
/// limit hit with `trap_on_grow_failure` surfaces as a plain error, not a `Trap`.
fn failure(error: &wasmtime::Error, store: &Store<PluginState>, stage: Stage) -> CallFailure {
    if store.data().memory_exceeded {
        return CallFailure::MemoryLimit;
    }
    match (error.downcast_ref::<Trap>(), stage) {
        (Some(Trap::OutOfFuel), _) => CallFailure::OutOfFuel,
        (Some(Trap::Interrupt), _) => CallFailure::EpochDeadline,
        (Some(trap), _) => CallFailure::Trap(trap.to_string()),
        (None, Stage::Instantiate) => CallFailure::Instantiate(format!("{error:#}")),
        (None, Stage::Call) => CallFailure::InvalidOutput(format!("{error:#}")),
    }
}

/// Advances the engine's epoch every [`EPOCH_TICK`] until dropped.
struct EpochTicker {
    stop: Arc<AtomicBool>,
}

impl EpochTicker {
    fn start(engine: Engine) -> Result<Self, PluginError> {
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
