//! The sandbox: one wasmtime `Engine` with the pooling allocator (shaped in
//! [`super::instance_pool`]), fuel and epoch interruption, an epoch ticker, and one
//! fresh `Store` per decision, so no state survives from one decision to the next.
//!
//! Plugins are compiled once into a [`PluginPre`] (an `InstancePre` with typed
//! exports). Every decision instantiates it in a new `Store` with [`StoreLimits`], a
//! fuel budget and an epoch deadline, so nothing a plugin did last time survives.
//! The decision's thread CPU time tells a spinning plugin from a starved one when
//! the deadline passes (see [`super::clocks::SPINNING_CPU`]).

use std::time::Duration;

use wasmtime::component::{Component, Linker};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, Store, Trap};

use super::PluginError;
use super::bindings::{TransformAnswer, TransformInput};
use super::budget::{Budget, Deadline};
use super::chain::{CallFailure, PluginAnswer, wants_delay};
use super::clocks::{EpochTicker, thread_cpu_time};
use super::instance_pool::{PoolShape, PoolUsage};
pub(crate) use super::state::PluginState;
use super::versions::{
    Plugin, PluginAttempt, PluginKind, PluginPre, answer_0_2, answer_0_3, delay_0_1, verdict_0_1,
};

/// Linear memory a plugin may use, in bytes.
pub const MEMORY_LIMIT_BYTES: usize = 16 << 20;
/// Fuel for one decision (all its calls): about 1 ms of work, the deterministic limit.
pub const FUEL_PER_DECISION: u64 = 10_000_000;
/// Fuel for one transform, [`TRANSFORM_FUEL_FACTOR`] decisions' worth: about
/// 20 ms of work, enough to parse and rebuild a maximal JSON payload.
pub const FUEL_PER_TRANSFORM: u64 = FUEL_PER_DECISION * TRANSFORM_FUEL_FACTOR;
/// How many decisions' fuel a transform gets (tests that lower a decision's
/// fuel lower a transform's with it).
const TRANSFORM_FUEL_FACTOR: u64 = 20;
/// Native stack a plugin's frames may use: well under a tokio worker's 2 MiB,
/// since decisions run inline on the workers first.
const MAX_WASM_STACK: usize = 256 << 10;
/// What one decision used: fuel, and linear memory in bytes (the peak, and how
/// far it grew past the initial size).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Usage {
    pub fuel: u64,
    pub memory_bytes: usize,
    pub grown_bytes: usize,
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
    /// CPU time from which an epoch deadline counts: [`super::clocks::SPINNING_CPU`]
    /// but in tests that must see a spinner counted on however busy a machine.
    spinning_cpu: Duration,
    /// The pooling allocator's slots and reset mode.
    shape: PoolShape,
    _ticker: EpochTicker,
}

impl Sandbox {
    /// Builds the engine with the pool `shape`, each decision with `fuel` and an
    /// epoch deadline counted from `spinning_cpu` of CPU time, and starts its
    /// epoch ticker.
    ///
    /// # Errors
    /// `Engine` if wasmtime refuses the configuration (e.g. no address space).
    pub(crate) fn new(
        shape: PoolShape,
        fuel: u64,
        spinning_cpu: Duration,
    ) -> Result<Self, PluginError> {
        let mut config = Config::new();
        config
            .allocation_strategy(InstanceAllocationStrategy::Pooling(shape.config()))
            .consume_fuel(true)
            .epoch_interruption(true)
            .concurrency_support(false)
            .max_wasm_stack(MAX_WASM_STACK)
            .wasm_component_model(true);
        let engine = Engine::new(&config).map_err(|e| PluginError::Engine(e.to_string()))?;
        let linker = Linker::new(&engine);
        let ticker = EpochTicker::start(engine.clone())?;
        Ok(Self {
            engine,
            linker,
            fuel,
            spinning_cpu,
            shape,
            _ticker: ticker,
        })
    }

    /// How the pool's slots are used now.
    pub(crate) fn pool_usage(&self) -> PoolUsage {
        PoolUsage::read(&self.engine, self.shape)
    }

    /// Compiles a component and pre-instantiates it with the empty linker
    /// (upload steps 5–8). Runs no guest code.
    ///
    /// # Errors
    /// As [`Sandbox::compile`] and [`Sandbox::pre`].
    pub(crate) fn prepare(&self, component: &[u8]) -> Result<PluginPre, PluginError> {
        self.pre(&self.compile(component)?)
    }

    /// The engine, for the artifact cache.
    pub(crate) fn engine(&self) -> &Engine {
        &self.engine
    }

    /// Upload step 5: compiles a component. A refusal caused by a memory beyond
    /// the limit (the pooling allocator checks it here) is reported as `Resources`.
    ///
    /// # Errors
    /// `Compile` or `Resources`.
    pub(crate) fn compile(&self, component: &[u8]) -> Result<Component, PluginError> {
        Component::new(&self.engine, component).map_err(|e| {
            match super::componentize::largest_initial_memory(component) {
                Some(bytes) if bytes > MEMORY_LIMIT_BYTES as u64 => {
                    PluginError::Resources(format!(
                        "it starts with {bytes} bytes of memory; the limit is {MEMORY_LIMIT_BYTES}"
                    ))
                }
                _ => PluginError::Compile(format!("{e:#}")),
            }
        })
    }

    /// Upload steps 6–8: no imports at all, `instantiate_pre` with the empty
    /// linker and the typed exports, and memory within the limit. Runs nothing.
    ///
    /// # Errors
    /// `Imports`, `Exports` (not the `plugin` world) or `Resources`.
    pub(crate) fn pre(&self, component: &Component) -> Result<PluginPre, PluginError> {
        let imports: Vec<String> = component
            .component_type()
            .imports(&self.engine)
            .map(|(name, _)| name.to_owned())
            .collect();
        if !imports.is_empty() {
            return Err(PluginError::Imports(imports.join(", ")));
        }
        let pre = self
            .linker
            .instantiate_pre(component)
            .map_err(|e| PluginError::Exports(format!("{e:#}")))?;
        let pre = PluginPre::new(pre).map_err(|e| PluginError::Exports(format!("{e:#}")))?;
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
        Ok(pre)
    }

    /// The full limits of a decision-pool run of a plugin of `kind`.
    pub(crate) fn full_budget(&self, kind: PluginKind) -> Budget {
        match kind {
            PluginKind::Policy => Budget::full(self.fuel),
            PluginKind::Transform => Budget::full(self.fuel * TRANSFORM_FUEL_FACTOR),
        }
    }

    /// A store with `budget`: memory, fuel and the epoch deadline.
    fn new_store(&self, budget: Budget) -> Result<Store<PluginState>, CallFailure> {
        let mut store = Store::new(&self.engine, PluginState::new(budget.growth_cap));
        store.limiter(|state| state);
        budget.apply(&mut store)?;
        Ok(store)
    }

    /// Runs one call (a decision or a transform) in a fresh store with the
    /// full limits of the plugin's kind. Also says what it used.
    ///
    /// # Errors
    /// A [`CallFailure`] for anything that went wrong; the caller falls back
    /// (a decision) or ends the attempt (a transform).
    pub(crate) fn run_measured<C: Call>(
        &self,
        pre: &PluginPre,
        call: &C,
    ) -> (Result<C::Answer, CallFailure>, Usage) {
        self.run_within(pre, call, self.full_budget(pre.version().kind()))
    }

    /// [`Sandbox::run_measured`] within `budget`.
    pub(crate) fn run_within<C: Call>(
        &self,
        pre: &PluginPre,
        call: &C,
        budget: Budget,
    ) -> (Result<C::Answer, CallFailure>, Usage) {
        // Only a deadline in ticks counts spinning; an inline run's deadline is
        // an overrun whatever the CPU did, so it skips the clock's system call.
        let cpu_at_start = matches!(budget.deadline, Deadline::Ticks(_)).then(thread_cpu_time);
        let mut store = match self.new_store(budget) {
            Ok(store) => store,
            Err(e) => return (Err(e), Usage::default()),
        };
        let answer = pre
            .instantiate(&mut store)
            .map_err(|e| failure(&e, &store, Stage::Instantiate))
            .and_then(|plugin| call.run(&mut store, &plugin))
            .map_err(|f| match (f, cpu_at_start) {
                (CallFailure::EpochDeadline, Some(start)) => {
                    let cpu = thread_cpu_time().saturating_sub(start);
                    CallFailure::epoch_deadline(cpu, self.spinning_cpu)
                }
                (other, _) => other,
            });
        let usage = Usage {
            fuel: budget.fuel.saturating_sub(store.get_fuel().unwrap_or(0)),
            memory_bytes: store.data().peak_memory,
            grown_bytes: store.data().grown_bytes(),
        };
        (answer, usage)
    }

    /// Runs every call in turn in **one** instance, refuelled before each: what
    /// a plugin answers when its instance is reused. Conformance compares it with
    /// fresh instances, so hidden state kept between calls shows.
    ///
    /// # Errors
    /// The index of the call that failed, and why.
    pub(crate) fn run_reused<C: Call>(
        &self,
        pre: &PluginPre,
        calls: &[C],
    ) -> Result<Vec<C::Answer>, (usize, CallFailure)> {
        let budget = self.full_budget(pre.version().kind());
        let mut store = self.new_store(budget).map_err(|e| (0, e))?;
        let plugin = pre
            .instantiate(&mut store)
            .map_err(|e| (0, failure(&e, &store, Stage::Instantiate)))?;
        let mut out = Vec::with_capacity(calls.len());
        for (i, call) in calls.iter().enumerate() {
            budget.apply(&mut store).map_err(|e| (i, e))?;
            out.push(call.run(&mut store, &plugin).map_err(|e| (i, e))?);
        }
        Ok(out)
    }
}

/// One question put to a plugin instance: a decision or a transform.
pub(crate) trait Call: Send + Sync + 'static {
    /// What the plugin answers, in the host's types.
    type Answer: Send + 'static;

    /// Asks `plugin`, in `store`.
    ///
    /// # Errors
    /// What the call raised, classified; a plugin of the other kind is an
    /// [`CallFailure::Instantiate`] error, never asked.
    fn run(
        &self,
        store: &mut Store<PluginState>,
        plugin: &Plugin,
    ) -> Result<Self::Answer, CallFailure>;
}

/// A decision: the attempt in the plugin's version's types, and whether the
/// built-in retries (what `use-default` means).
#[derive(Debug, Clone)]
pub(crate) struct Decide {
    pub(crate) attempt: PluginAttempt,
    pub(crate) builtin_retry: bool,
}

impl Call for Decide {
    type Answer = PluginAnswer;

    /// For 0.1.0 `classify`, then `next-delay` only when the final verdict is
    /// retry; for 0.2.0 and 0.3.0 one `decide`, its delay kept only then.
    fn run(
        &self,
        store: &mut Store<PluginState>,
        plugin: &Plugin,
    ) -> Result<PluginAnswer, CallFailure> {
        decide(store, plugin, &self.attempt, self.builtin_retry)
    }
}

/// A transform of one attempt's request.
#[derive(Debug, Clone)]
pub(crate) struct Reshape(pub(crate) TransformInput);

impl Call for Reshape {
    type Answer = TransformAnswer;

    fn run(
        &self,
        store: &mut Store<PluginState>,
        plugin: &Plugin,
    ) -> Result<TransformAnswer, CallFailure> {
        let Plugin::Transform(plugin) = plugin else {
            let message = "a transform asked of a retry policy";
            return Err(CallFailure::Instantiate(message.to_owned()));
        };
        plugin
            .hookgate_transform_transform()
            .call_transform(&mut *store, &self.0)
            .map_err(|e| failure(&e, store, Stage::Call))
    }
}

fn decide(
    store: &mut Store<PluginState>,
    plugin: &Plugin,
    attempt: &PluginAttempt,
    builtin_retry: bool,
) -> Result<PluginAnswer, CallFailure> {
    match (plugin, attempt) {
        (Plugin::V0_3(plugin), PluginAttempt::V0_3(attempt)) => {
            let decision = plugin
                .hookgate_policy_decide()
                .call_decide(&mut *store, attempt)
                .map_err(|e| failure(&e, store, Stage::Call))?;
            Ok(answer_0_3(decision, builtin_retry))
        }
        (Plugin::V0_2(plugin), PluginAttempt::V0_2(attempt)) => {
            let decision = plugin
                .hookgate_policy_decide()
                .call_decide(&mut *store, attempt)
                .map_err(|e| failure(&e, store, Stage::Call))?;
            Ok(answer_0_2(decision, builtin_retry))
        }
        (Plugin::V0_1(plugin), PluginAttempt::V0_1(attempt)) => {
            let decide = plugin.hookgate_policy_decide();
            let verdict = decide
                .call_classify(&mut *store, attempt)
                .map(verdict_0_1)
                .map_err(|e| failure(&e, store, Stage::Call))?;
            let delay = if wants_delay(&verdict, builtin_retry) {
                let delay = decide
                    .call_next_delay(&mut *store, attempt)
                    .map_err(|e| failure(&e, store, Stage::Call))?;
                Some(delay_0_1(delay))
            } else {
                None
            };
            Ok(PluginAnswer { verdict, delay })
        }
        _ => {
            let message = "the attempt was built for another WIT version";
            Err(CallFailure::Instantiate(message.to_owned()))
        }
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
