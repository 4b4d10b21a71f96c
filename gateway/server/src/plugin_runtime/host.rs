//! [`PluginHost`]: the runtime's one face. It holds its parts, each a type with
//! what it needs: [`Installs`] (the loaded plugins and their artifacts),
//! [`Dispatch`] (where decisions run) and [`UploadChecker`] (upload checks
//! 1–9); it runs the decision chain for a bound endpoint ([`BoundPlugin`], the
//! [`PluginDecider`] the delivery worker passes to [`crate::policy::decide`]) and
//! reports plugins it disables.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use super::artifacts::ArtifactCache;
use super::chain::{self, BuiltinView, CallFailure};
use super::checks::{CheckedPlugin, UploadChecker};
use super::decision_pool::DecisionPool;
use super::dispatch::{DecisionPaths, Dispatch};
use super::engine::{Decide, Sandbox};
use super::events::{PluginEvent, PluginEvents};
use super::health::{PluginStatus, RunEnd};
use super::input::{PluginInput, attempt_record};
use super::installs::{Installs, MissingBytes, StoredPlugin};
use super::instance_pool::{DEFAULT_SLOTS, PoolShape, PoolUsage, ResetMode};
use super::registry::{LoadedPlugin, PluginSource, PluginView, VersionInfo};
use super::transform::{
    TransformFacts, TransformFailure, TransformRun, Transformed, check_answer, reshape_for,
    transform_label,
};
use super::{FUEL_PER_DECISION, SPINNING_CPU};
use super::{PluginBinding, PluginError, PluginKind};
use crate::policy::{
    AttemptFacts, BuiltinPolicy, Decision, EffectivePolicy, PluginDecider, RetryDecider, Verdict,
};

/// The plugin host: one engine, the loaded plugins and the decision pool. Created
/// once at start and shared.
pub struct PluginHost {
    /// The engine the parts share (its instance pool is reported from here).
    pub(super) sandbox: Arc<Sandbox>,
    /// The loaded plugins.
    pub(super) installs: Installs,
    /// Where decisions run, and how many took each path.
    dispatch: Dispatch,
    /// Upload checks 1–9.
    checker: UploadChecker,
    /// Where disabling a plugin is reported.
    events: PluginEvents,
    /// How the instance pool was sized and how it resets, and why: logged once the
    /// gateway has its data dir, so a refused start stays one line.
    pool_note: (u32, ResetMode, &'static str),
}

/// One plugin file to load at start, as a `[[plugins.preload]]` entry names it.
#[derive(Debug, Clone, Copy)]
pub struct PreloadFile<'a> {
    pub tenant: &'a str,
    pub name: &'a str,
    pub path: &'a Path,
}

impl std::fmt::Debug for PluginHost {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginHost").finish_non_exhaustive()
    }
}

/// The cores, as many as the runtime has tokio workers.
fn cores() -> u32 {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZero::get);
    u32::try_from(cores).unwrap_or(u32::MAX)
}

/// Decisions that may run at once on the decision threads: 2 × cores + 2.
fn concurrency() -> u32 {
    cores().min(64) * 2 + 2
}

impl PluginHost {
    /// A host with no plugins and [`DEFAULT_SLOTS`] instance slots; `max_bytes` is
    /// the largest plugin accepted.
    ///
    /// # Errors
    /// `Engine` if the engine or its threads cannot start.
    pub fn new(max_bytes: usize) -> Result<Self, PluginError> {
        Self::with_slots(max_bytes, DEFAULT_SLOTS)
    }

    /// [`PluginHost::new`] with `slots` instance slots (`plugins.slots`), raised to
    /// the decision threads plus the tokio workers (each may run one decision
    /// inline) plus one, so that no decision and no upload's conformance run
    /// ever waits for a slot.
    ///
    /// # Errors
    /// As [`PluginHost::new`].
    pub fn with_slots(max_bytes: usize, slots: u32) -> Result<Self, PluginError> {
        let size = concurrency();
        Self::with_limits(max_bytes, FUEL_PER_DECISION, size, slots, SPINNING_CPU)
    }

    /// [`PluginHost::with_slots`] with another fuel budget per decision, `size`
    /// decision threads, and the CPU time from which an epoch deadline counts; tests
    /// use it to reach the deadline (the backstop behind fuel) and see a spinner
    /// counted however busy the machine is.
    pub(super) fn with_limits(
        max_bytes: usize,
        fuel: u64,
        size: u32,
        slots: u32,
        spinning_cpu: Duration,
    ) -> Result<Self, PluginError> {
        let (reset, why) = ResetMode::detect();
        let shape = PoolShape {
            slots: slots.max(size.saturating_add(cores()).saturating_add(1)),
            reset,
        };
        let pool_note = (shape.slots, reset, why);
        let sandbox = Arc::new(Sandbox::new(shape, fuel, spinning_cpu)?);
        Ok(Self {
            installs: Installs::new(Arc::clone(&sandbox)),
            dispatch: Dispatch::new(Arc::clone(&sandbox), DecisionPool::new(size)?),
            checker: UploadChecker::new(Arc::clone(&sandbox), max_bytes),
            sandbox,
            events: PluginEvents::default(),
            pool_note,
        })
    }

    /// Logs how the instance pool was sized and how freed memory is reset.
    pub fn log_pool(&self) {
        let (slots, reset, why) = self.pool_note;
        tracing::info!(
            slots,
            reset = reset.as_str(),
            why,
            "plugin engine: instance pool sized, freed memory reset this way"
        );
    }

    /// A host with `slots` instance slots and `files` loaded, in order (a name
    /// given twice gets version 2).
    ///
    /// # Errors
    /// `Engine` as [`PluginHost::new`]; `Preload`, naming the tenant, plugin and
    /// path, for the first file that fails.
    pub fn preloaded<'a>(
        max_bytes: usize,
        slots: u32,
        files: impl IntoIterator<Item = PreloadFile<'a>>,
    ) -> Result<Self, PluginError> {
        let host = Self::with_slots(max_bytes, slots)?;
        for p in files {
            host.load_file(p.tenant, p.name, p.path)
                .map_err(|e| PluginError::Preload {
                    tenant: p.tenant.to_owned(),
                    name: p.name.to_owned(),
                    path: p.path.to_path_buf(),
                    source: Box::new(e),
                })?;
        }
        Ok(host)
    }

    /// How the engine's instance slots are used now, for `/metrics`.
    pub fn pool_usage(&self) -> PoolUsage {
        self.sandbox.pool_usage()
    }

    /// A channel that gets every [`PluginEvent`] from now on.
    pub fn subscribe(&self) -> tokio::sync::mpsc::UnboundedReceiver<PluginEvent> {
        self.events.subscribe()
    }

    /// Ends every subscriber's channel once it has read what was already sent: at
    /// shutdown, when no decision can run any more.
    pub fn close_events(&self) {
        self.events.close();
    }

    /// Loads a plugin file as a new version of `tenant`'s `name`; returns the version.
    ///
    /// # Errors
    /// `Read` if the file cannot be read; otherwise as [`PluginHost::load`].
    pub fn load_file(&self, tenant: &str, name: &str, path: &Path) -> Result<u32, PluginError> {
        let bytes = std::fs::read(path).map_err(|source| PluginError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        self.load(tenant, name, &bytes)
    }

    /// Checks, componentizes, compiles and pre-instantiates plugin bytes as a new,
    /// active version of `tenant`'s `name`; returns the version. Runs no plugin code.
    ///
    /// # Errors
    /// Any [`PluginError`] of the checks: size, validation, componentizing, imports,
    /// compile, resources, exports.
    pub fn load(&self, tenant: &str, name: &str, bytes: &[u8]) -> Result<u32, PluginError> {
        let (pre, prepared) = self.checker.prepare_preloaded(bytes)?;
        let info = VersionInfo {
            version: 0,
            sha256: prepared.sha256.clone(),
            size: bytes.len() as u64,
            created_at_ms: crate::clock::Clock::now_ms(&crate::clock::SystemClock),
        };
        let version = self.installs.add_preloaded(tenant, name, pre, info);
        tracing::info!(
            tenant = %tenant, plugin = name, version, sha256 = %prepared.sha256,
            componentized = prepared.componentized, "plugin loaded"
        );
        Ok(version)
    }

    /// Resolves an endpoint's `plugin` field for `tenant` to (name, version); `None`
    /// if it names no loaded plugin.
    pub fn resolve(&self, tenant: &str, spec: &str) -> Option<(String, u32)> {
        let b = PluginBinding::parse(tenant, spec)?;
        let p = self.installs.loaded(b.tenant, b.name, b.version)?;
        Some((p.name.clone(), p.version))
    }

    /// The kind of the plugin an endpoint's `plugin` or `transform` field
    /// names for `tenant`; `None` if it names no loaded plugin.
    pub fn kind_of(&self, tenant: &str, spec: &str) -> Option<PluginKind> {
        let b = PluginBinding::parse(tenant, spec)?;
        let p = self.installs.loaded(b.tenant, b.name, b.version)?;
        Some(p.pre.version().kind())
    }

    /// The health of `tenant`'s `name` (its active version).
    pub fn status(&self, tenant: &str, name: &str) -> Option<PluginStatus> {
        self.installs.status(tenant, name, None)
    }

    /// The health of one version of `tenant`'s `name`.
    pub fn version_status(&self, tenant: &str, name: &str, version: u32) -> Option<PluginStatus> {
        self.installs.status(tenant, name, Some(version))
    }

    /// The bound plugin `binding` names, ready to decide the attempt `input` describes.
    pub fn bind<'a>(
        &'a self,
        binding: PluginBinding<'a>,
        input: &'a PluginInput<'a>,
    ) -> BoundPlugin<'a> {
        BoundPlugin {
            host: self,
            binding,
            input,
        }
    }

    /// Runs the decision chain (in [`super::chain`]) for an outcome a plugin may
    /// weigh in on (see [`crate::policy::decide`], which leaves 2xx, 410 and a
    /// broker's confirmation to the built-in): the plugin runs in a fresh store,
    /// inline or on the decision pool within its tenant's share (see
    /// [`super::budget`]); any failure falls back to the built-in with
    /// `decided_by` = `fallback:<reason>`. A failure kind the plugin's WIT
    /// version cannot name (a broker's, before 0.3.0) is the built-in's alone,
    /// `decided_by` = `builtin`, and the plugin is not run. Never fails.
    pub async fn decide(
        &self,
        b: &PluginBinding<'_>,
        policy: &EffectivePolicy,
        facts: &AttemptFacts<'_>,
        input: &PluginInput<'_>,
    ) -> Decision {
        let Some(plugin) = self.installs.loaded(b.tenant, b.name, b.version) else {
            return chain::fallback_decision(policy, facts, "not_loaded");
        };
        if plugin.health.is_disabled() {
            return chain::fallback_decision(policy, facts, "disabled");
        }
        let builtin = BuiltinView::of(policy, facts);
        let record = attempt_record(policy, facts, input, &builtin);
        let Some(attempt) = record.and_then(|r| plugin.pre.attempt(r)) else {
            // A plugin of a world older than 0.3.0 has no name for a broker's
            // failure kind: it is never asked, and the built-in decides alone.
            return BuiltinPolicy.decide(policy, facts);
        };
        let builtin_retry = builtin.verdict == Verdict::Retry;
        let decide = Decide {
            attempt,
            builtin_retry,
        };
        let started = std::time::Instant::now();
        let answer = self.dispatch.run_plugin(&plugin, decide).await;
        self.count_run(&plugin, answer.as_ref().map(|_| ()));
        let end = if answer.is_ok() {
            RunEnd::Answered
        } else {
            RunEnd::Failed
        };
        let time_us = u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        plugin.health.count_run(end, time_us);
        match answer {
            Ok(answer) => chain::plugin_decision(policy, facts, &builtin, &answer, &plugin.label),
            Err(failure) => {
                tracing::warn!(
                    tenant = %plugin.tenant, plugin = %plugin.name, version = plugin.version,
                    error = %failure, counted = failure.counts(), "plugin failed; built-in decides"
                );
                chain::fallback_decision(policy, facts, failure.reason())
            }
        }
    }

    /// Runs `tenant`'s transform `spec` (`name` or `name@version`) on `facts`,
    /// for an endpoint at `endpoint_url`: in a fresh store, inline or on the
    /// decision pool within the tenant's share, like a decision. Its answer is
    /// checked ([`super::transform`]); a failure, or an answer the host
    /// refuses, counts toward disabling the version. Never panics.
    pub async fn transform(
        &self,
        tenant: &str,
        spec: &str,
        facts: &TransformFacts<'_>,
        endpoint_url: &url::Url,
    ) -> TransformRun {
        let started = std::time::Instant::now();
        let run_us = || u64::try_from(started.elapsed().as_micros()).unwrap_or(u64::MAX);
        let loaded = PluginBinding::parse(tenant, spec)
            .and_then(|b| self.installs.loaded(b.tenant, b.name, b.version));
        let Some(plugin) = loaded else {
            let result = Err(TransformFailure::NotLoaded(spec.to_owned()));
            return TransformRun {
                label: None,
                result,
                run_us: run_us(),
            };
        };
        let label = transform_label(&plugin);
        let call = match reshape_for(&plugin, facts) {
            Ok(call) => call,
            Err(failure) => {
                return TransformRun {
                    label: Some(label),
                    result: Err(failure),
                    run_us: run_us(),
                };
            }
        };
        let answer = self.dispatch.run_plugin(&plugin, call).await;
        let result = answer
            .map_err(|f| (TransformFailure::of_call(&label, &f), f))
            .and_then(|answer| {
                check_answer(answer, endpoint_url).map_err(|why| {
                    let failure = CallFailure::InvalidOutput(why.clone());
                    (
                        TransformFailure::Invalid {
                            label: label.clone(),
                            why,
                        },
                        failure,
                    )
                })
            });
        self.count_run(&plugin, result.as_ref().map(|_| ()).map_err(|(_, f)| f));
        let run_us = run_us();
        let end = match &result {
            Ok(Transformed::Skip(_)) => RunEnd::Skipped,
            Ok(Transformed::Send(_)) => RunEnd::Answered,
            Err(_) => RunEnd::Failed,
        };
        plugin.health.count_run(end, run_us);
        TransformRun {
            label: Some(label),
            result: result.map_err(|(failure, _)| failure),
            run_us,
        }
    }

    /// Counts a run toward `plugin`'s health, and reports and logs disabling it.
    fn count_run(&self, plugin: &LoadedPlugin, result: Result<(), &CallFailure>) {
        if plugin.health.record(result) {
            self.events.send(&PluginEvent::Disabled {
                tenant: plugin.tenant.clone(),
                name: plugin.name.clone(),
                version: plugin.version,
                reason: result.err().map_or("", CallFailure::reason),
            });
            tracing::error!(
                tenant = %plugin.tenant, plugin = %plugin.name, version = plugin.version,
                failures = super::DISABLE_AFTER_FAILURES,
                kind = plugin.pre.version().kind().as_str(),
                "plugin disabled after consecutive failures"
            );
        }
    }

    /// Upload checks 1–9 (docs/plugins.md), in order: size, sha256, validation, componentizing a
    /// core module with the host's own world, compile, no imports, `instantiate_pre`
    /// with the typed exports, memory, and conformance. No tenant code runs before
    /// step 9. Blocking: callers run it on a blocking thread, within
    /// [`super::COMPILE_LIMIT`].
    ///
    /// # Errors
    /// The [`PluginError`] of the first check that failed; see
    /// [`PluginError::check`].
    pub fn check(&self, bytes: &[u8]) -> Result<CheckedPlugin, PluginError> {
        self.checker.check(bytes)
    }

    /// Makes a checked plugin version `version` of `tenant`'s `name`, active, and
    /// caches its compiled artifact. The caller stored it first (step 10).
    pub fn install(
        &self,
        tenant: &str,
        name: &str,
        version: u32,
        created_at_ms: u64,
        checked: CheckedPlugin,
    ) {
        self.installs
            .install(tenant, name, version, created_at_ms, checked);
    }

    /// Gives the host the data dir's artifact cache; only the first call counts.
    pub fn attach_artifacts(&self, cache: ArtifactCache) {
        self.installs.attach_artifacts(cache);
    }

    /// Loads a stored plugin's versions at start, from the artifact cache when a
    /// verified artifact exists, else from the bytes `bytes_of` reads (steps 1–8;
    /// conformance passed at upload). A version that no longer loads is skipped
    /// with an error logged; returns how many loaded.
    ///
    /// # Errors
    /// What `bytes_of` fails with, or [`MissingBytes`] when it finds none.
    pub async fn restore<E, F>(
        &self,
        record: &StoredPlugin,
        bytes_of: impl Fn(u32) -> F,
    ) -> Result<usize, E>
    where
        E: From<MissingBytes>,
        F: Future<Output = Result<Option<Vec<u8>>, E>>,
    {
        self.installs.restore(record, bytes_of).await
    }

    /// Forgets `versions` of `tenant`'s `name` (never the active one) and drops the
    /// artifacts of `unused` sha256s. The caller dropped them from the store first.
    pub fn remove_versions(&self, tenant: &str, name: &str, versions: &[u32], unused: &[String]) {
        self.installs
            .remove_versions(tenant, name, versions, unused);
    }

    /// Disables `version` of `tenant`'s `name` as stored elsewhere (another
    /// gateway counted its failures); `false` if not loaded.
    pub fn force_disable(&self, tenant: &str, name: &str, version: u32) -> bool {
        self.installs.force_disable(tenant, name, version)
    }

    /// Points bindings of the bare name at `version`; `false` if not loaded.
    pub fn set_active(&self, tenant: &str, name: &str, version: u32) -> bool {
        self.installs.set_active(tenant, name, version)
    }

    /// Unloads every version of a plugin and drops the artifacts of `unused`
    /// sha256s; `false` if it was not loaded.
    pub fn unload(&self, tenant: &str, name: &str, unused: &[String]) -> bool {
        self.installs.unload(tenant, name, unused)
    }

    /// Where a loaded plugin came from.
    pub fn source(&self, tenant: &str, name: &str) -> Option<PluginSource> {
        self.installs.source(tenant, name)
    }

    /// One of `tenant`'s plugins, with its versions and their health.
    pub fn view(&self, tenant: &str, name: &str) -> Option<PluginView> {
        self.installs.view(tenant, name)
    }

    /// `tenant`'s plugins (uploaded and preloaded), by name.
    pub fn views(&self, tenant: &str) -> Vec<PluginView> {
        self.installs.views(tenant)
    }

    /// How many plugin decisions ran inline, escalated to the pool, or went
    /// straight to it.
    pub fn decision_paths(&self) -> DecisionPaths {
        self.dispatch.paths()
    }

    /// Whether decisions try the inline run first (the default); off sends each
    /// straight to the pool, which benchmarks compare against.
    pub fn set_inline_first(&self, on: bool) {
        self.dispatch.set_inline_first(on);
    }

    /// Gives inline runs `time` of wall time instead of the inline budget's:
    /// tests that count paths set it long, so that only fuel and memory decide.
    #[cfg(test)]
    pub(crate) fn set_inline_time(&self, time: Duration) {
        self.dispatch.set_inline_time(time);
    }
}

/// An endpoint's plugin binding with the attempt's response: the plugin side of
/// [`crate::policy::decide`].
#[derive(Debug, Clone, Copy)]
pub struct BoundPlugin<'a> {
    host: &'a PluginHost,
    binding: PluginBinding<'a>,
    input: &'a PluginInput<'a>,
}

impl PluginDecider for BoundPlugin<'_> {
    async fn decide(&self, policy: &EffectivePolicy, facts: &AttemptFacts<'_>) -> Decision {
        self.host
            .decide(&self.binding, policy, facts, self.input)
            .await
    }
}
