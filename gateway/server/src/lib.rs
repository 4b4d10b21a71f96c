//! hookgate's server as a library: a webhook delivery gateway.
//!
//! Events are accepted over HTTP API v1, stored durably (embedded sled with group
//! commit, or PostgreSQL shared by a cluster of gateways), and delivered to
//! tenants' endpoints signed per Standard Webhooks, with jittered retries decided
//! by the built-in policies or a tenant's WebAssembly plugin. [`run`] is the
//! whole server; the `hookgate` binary only parses the command line and calls it.
//!
//! # The face
//!
//! Everything below is what other crates may use; every module is private.
//! - **Serving:** [`run`], [`run_with`] and [`RunOptions`], [`RunError`],
//!   [`open_store`] and the [`Store`] it opens (with the typed ids its calls
//!   take: [`TenantId`], [`EndpointId`], [`EventId`], [`DeliveryId`]), [`reset_admin_token`],
//!   [`migrate_postgres`] and [`PgTarget`] (`hookgate migrate`).
//! - **Config:** [`Config`] and its sections, [`ConfigError`], [`redact_password`].
//! - **Retry policies:** [`PolicySpec`], [`EffectivePolicy`], [`decide`], the herd
//!   simulator ([`simulate`], [`SimulationConfig`], [`SimulationReport`]) and
//!   what they are made of, for `hookgate policy` and the property tests.
//! - **Plugins:** [`PluginHost`], [`CheckedPlugin`] and the upload checks, for
//!   `hookgate plugin check` and the plugin tests.
//! - **Signing and tokens:** [`SigningSecret`], [`sign`], [`verify`],
//!   [`generate_token`], [`hash_token`].
//! - **Addresses:** [`Resolver`] (a substitute resolver), [`EgressRule`],
//!   [`normalize_endpoint_url`].
//! - **Time:** [`Clock`], [`SystemClock`], [`parse_rfc3339_ms`], [`rfc3339_ms`].
//! - **The API's contract and parsers:** [`openapi_document`] (the OpenAPI
//!   document), [`svix_openapi_document`] (the Svix-compatible face's),
//!   [`parse_ingest_body`] (for the fuzz targets).
//! - **`lab`** (the cargo feature of that name, which only the `hookgate` CLI and
//!   the end-to-end tests enable): scratch PostgreSQL databases, the benchmarks'
//!   raw-backend references, a manual clock and a durability seam.

mod address_guard;
mod admin_token;
mod alerts;
mod api;
mod clock;
mod config;
mod context;
mod delivery;
mod destination;
mod endpoint_stats;
mod event_catalog;
mod event_type;
mod housekeeping;
mod ids;
mod operator_events;
mod payload_filter;
mod pg_target;
mod plugin_runtime;
mod plugins;
mod policy;
mod routing;
mod signing;
mod simulation_slots;
mod store;
mod tasks;
mod telemetry;
mod token;

use admin_token::admin_token_hash;

pub use address_guard::{DnsResolver, EgressRule, LookupFuture, Resolver, normalize_endpoint_url};
pub use admin_token::reset_admin_token;
pub use api::document_json as openapi_document;
pub use api::events::parse_ingest_body;
pub use api::svix_document_json as svix_openapi_document;
pub use clock::{Clock, MAX_RFC3339_MS, SystemClock, parse_rfc3339_ms, rfc3339_ms};
pub use config::{
    AlertsConfig, BreakerConfig, ClusterConfig, Config, ConfigError, DestinationsConfig,
    IngestConfig, Limits, LogFormat, MetricsConfig, OtlpConfig, OtlpProtocol, OutboundConfig,
    PluginsConfig, PolicyConfig, PreloadPlugin, StatsConfig, StoreBackend, StoreConfig,
    TasksConfig, TelemetryConfig, TlsConfig, redact_password,
};
pub use delivery::BeforeAttempt;
pub use destination::{DestinationKind, NamedCredentials};
pub use ids::{DeliveryId, EndpointId, EventId, TenantId};
pub use pg_target::PgTarget;
pub use plugin_runtime::{
    COMPILE_LIMIT, CheckedPlugin, FUEL_PER_DECISION, FUEL_PER_TRANSFORM, MEMORY_LIMIT_BYTES,
    PluginBinding, PluginError, PluginHost, PluginInput, PluginKind, TransformFacts,
    TransformFailure, TransformMethod, TransformRequest, TransformRun, Transformed, UPLOAD_CHECKS,
    WitVersion,
};
pub use policy::{
    AttemptFacts, Attempts, BuiltinPolicy, DEFAULT_ATTEMPT_MS, DeadReason, EffectivePolicy,
    ErrorRule, ErrorRules, FailureKind, Jitter, MAX_DURATION_MS, NextStep, Outcome, PRESET_NAMES,
    PolicySpec, RetryDecider, SimulationConfig, SimulationReport, Strategy, backoff_delay,
    builtin_delay_ms, decide, parse_retry_after, simulate, strategy_delay_ms,
};
pub use signing::{
    Ed25519Key, Ed25519PublicKey, HeaderSet, KeyError, SignatureScheme, SignatureSettings,
    SigningSecret, sign, sign_with, verify, verify_v1a,
};
pub use store::Store;
pub use store::migrate_postgres;
pub use token::{generate as generate_token, hash as hash_token};

/// Lab and test support: what the drills, benchmarks and end-to-end tests use and
/// a production gateway never does.
#[cfg(feature = "lab")]
pub mod lab {
    pub use crate::clock::ManualClock;
    pub use crate::store::postgres::reference::{
        raw_deliver_rate as raw_postgres_deliver_rate, raw_ingest_rate as raw_postgres_ingest_rate,
    };
    pub use crate::store::scratch_database::{DEFAULT_TEST_POSTGRES, SERVER_ENV, ScratchDatabase};
    pub use crate::store::sled::reference::raw_ingest_rate as raw_sled_ingest_rate;
    pub use crate::store::sled::{DurabilityBackend, PersistFuture};
    pub use crate::store::{EventLabels, NewEvent};
}

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

use crate::address_guard::AddressGuard;
use crate::context::AppContext;
use crate::delivery::{CountedWrites, DeliveryClient, DeliveryHandle, EngineParts, Protection};
use crate::plugins::{PluginLimits, PluginService, host_from_config};
use crate::store::{Singleton, StoreError};
use crate::telemetry::Telemetry;

/// Why the gateway could not start or stopped with an error.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    /// Another process (a running gateway, `admin reset-token`) has the data dir open.
    #[error("data dir {} is in use by another hookgate process", path.display())]
    DataDirInUse { path: PathBuf },
    /// The data dir cannot be created or opened, or a newer hookgate wrote it.
    #[error("cannot use data dir {}: {message}", path.display())]
    DataDir { path: PathBuf, message: String },
    /// The database in `[store] url` cannot be reached at start, or a newer
    /// hookgate wrote it.
    #[error("cannot use the database at {url}: {message}")]
    Database { url: String, message: String },
    #[error(transparent)]
    Store(#[from] StoreError),
    #[error(transparent)]
    Client(#[from] delivery::client::ClientError),
    #[error("alerts: {0}")]
    Alerts(String),
    #[error("server: {0}")]
    Serve(#[from] std::io::Error),
    #[error("plugin host: {0}")]
    Plugins(#[from] plugin_runtime::PluginError),
    #[error(transparent)]
    Traces(#[from] telemetry::TracesError),
}

impl RunError {
    /// A mistake the user can fix (an unusable or busy data dir, a bad preloaded
    /// plugin or CA file), as opposed to a failure that may be a bug. The binary
    /// prints the one for what it is and the other with its whole chain.
    pub fn is_user_error(&self) -> bool {
        match self {
            Self::DataDirInUse { .. } | Self::DataDir { .. } | Self::Database { .. } => true,
            Self::Plugins(e) => matches!(e, plugin_runtime::PluginError::Preload { .. }),
            Self::Client(e) => matches!(e, delivery::client::ClientError::ExtraCa { .. }),
            // The config checked the endpoint: what is left is not the user's.
            Self::Store(_) | Self::Alerts(_) | Self::Serve(_) | Self::Traces(_) => false,
        }
    }
}

/// Opens the configured store, telling the user's problems with it (it cannot
/// be created, another process has it open, a newer hookgate wrote it) from
/// storage failures.
///
/// # Errors
/// [`RunError::DataDirInUse`], [`RunError::DataDir`], or [`RunError::Store`].
pub async fn open_store(config: &StoreConfig) -> Result<Store, RunError> {
    let unusable = |message: String| RunError::DataDir {
        path: config.data_dir.clone(),
        message,
    };
    if config.backend == crate::config::StoreBackend::Postgres {
        let url = config.url.as_deref().unwrap_or_default();
        return Store::open(config).await.map_err(|e| RunError::Database {
            url: crate::config::redact_password(url),
            message: e.to_string(),
        });
    }
    match Store::open(config).await {
        Ok(store) => Ok(store),
        Err(StoreError::InUse { path }) => Err(RunError::DataDirInUse { path }),
        Err(StoreError::Unusable { message, .. }) => Err(unusable(message)),
        Err(e @ StoreError::NewerSchema { .. }) => Err(unusable(e.to_string())),
        Err(e) => Err(e.into()),
    }
}

/// What tests may substitute in a running gateway.
#[derive(Default)]
pub struct RunOptions {
    /// A store already open, served instead of the configured one (tests open it
    /// with flushes they count, delay or fail).
    pub store: Option<Store>,
    /// Replaces the system clock.
    pub clock: Option<Arc<dyn Clock>>,
    /// Replaces the system resolver (endpoint checks and connections alike).
    pub resolver: Option<Arc<dyn address_guard::Resolver>>,
    /// Runs before each delivery request is sent (to inject a panic, say).
    pub before_attempt: Option<BeforeAttempt>,
}

/// Runs the gateway on `listener` until `shutdown` is cancelled.
///
/// # Errors
/// If the data dir cannot be opened or the server fails.
pub async fn run(
    config: Config,
    listener: TcpListener,
    shutdown: CancellationToken,
) -> Result<(), RunError> {
    run_with(config, listener, shutdown, RunOptions::default()).await
}

/// [`run`] with test substitutions.
///
/// # Errors
/// As [`run`].
pub async fn run_with(
    config: Config,
    listener: TcpListener,
    shutdown: CancellationToken,
    options: RunOptions,
) -> Result<(), RunError> {
    for note in &config.deprecations {
        tracing::warn!("{note}");
    }
    // Preloaded plugins are checked and compiled first: a bad one stops start-up.
    let host = Arc::new(host_from_config(&config)?);
    let store = match options.store {
        Some(store) => store,
        None => open_store(&config.store).await?,
    };
    host.log_pool();
    let clock = options.clock.unwrap_or_else(|| Arc::new(SystemClock));
    // Uploaded plugins load next (from verified artifacts where cached), before
    // the delivery engine starts; a preloaded name keeps its preloaded plugin.
    let limits = PluginLimits::of(&config);
    let artifacts = &config.store.data_dir;
    let plugins =
        PluginService::start(host, store.clone(), Arc::clone(&clock), limits, artifacts).await?;
    let plugins = Arc::new(plugins);
    let admin_hash = admin_token_hash(&store, &config).await?;
    // Listening before it reads, so no change made meanwhile goes unheard.
    let catalog_changes = store.changes();
    let catalog = Arc::new(event_catalog::EventCatalog::load(store.clone()).await?);
    let catalog_follower = catalog.spawn_follower(catalog_changes, shutdown.clone());
    plugins.prune_stored().await?;
    let delivery = DeliveryHandle::default();
    // The alert endpoint's guard below is the operator's own and has no allow-list.
    let mut guard = AddressGuard::new(config.allow_private_subnets.clone())
        .with_allow_only(config.outbound.allow_only.as_deref());
    if let Some(resolver) = options.resolver {
        guard = guard.with_resolver(resolver);
    }
    let client = DeliveryClient::new(
        guard.clone(),
        config.tls.extra_ca_file.as_deref(),
        config.destinations.credentials.clone(),
    )?;
    // hookgate's own alert endpoint may be anywhere the operator points it.
    let anywhere = AddressGuard::new(vec![
        "0.0.0.0/0".parse().expect("CIDR"),
        "::/0".parse().expect("CIDR"),
    ]);
    let trusted_client = DeliveryClient::new(
        anywhere,
        config.tls.extra_ca_file.as_deref(),
        Default::default(),
    )?;
    let (monitor, alerts) = alerts::AlertMonitor::new(config.alerts.clone());
    let mut telemetry = Telemetry::new(config.metrics.per_endpoint_labels, monitor);
    telemetry.register_store(&store);
    let telemetry = Arc::new(telemetry);
    seed_counts(&store, &telemetry);
    // This gateway's own tracer provider; its collector is trusted like alerts.url.
    let otlp = &config.telemetry.otlp;
    let transport =
        delivery::OtlpTransport::new(trusted_client.clone(), Duration::from_millis(otlp.timeout));
    let traces =
        telemetry::Traces::start(otlp, store.node_id(), transport, telemetry.span_drops())?;
    // Both listen before the delivery engine starts, so no disabling is missed.
    let (operator_events, operator_queue) = operator_events::OperatorEvents::channel();
    let disabled_recorder = plugins.spawn_disabled_recorder(operator_events.clone());
    // Plugins another gateway uploads, rolls back or deletes are loaded here too.
    let plugin_follower = plugins.spawn_change_follower();
    let plugin_watch = tokio::spawn(
        Arc::clone(&telemetry).watch_plugins(Arc::clone(&clock), plugins.host().subscribe()),
    );
    let holds = Arc::new(delivery::EndpointHolds::default());
    let admission = delivery::IngestAdmission::new(
        store.clone(),
        Arc::clone(&clock),
        Arc::clone(&holds),
        Arc::clone(&telemetry),
        &config.ingest,
    );
    let writes = CountedWrites::new(store.clone(), Arc::clone(&telemetry), Arc::new(admission));
    let stats = Arc::new(endpoint_stats::StatsRecorder::new(
        endpoint_stats::StatsWindow::of(&config.stats),
    ));
    alerts::sender::install(&store, &config.alerts, clock.now_ms()).await?;
    let alert_sender = tokio::spawn(alerts::sender::run(
        operator_events.clone(),
        config.alerts.cooldown,
        alerts,
    ));
    let operator_stop = CancellationToken::new();
    let operator_fan_out = tokio::spawn(operator_events::fan_out::run(
        store.clone(),
        writes.clone(),
        operator_queue,
        operator_stop.clone(),
    ));
    let engine = delivery::spawn_engine(
        EngineParts {
            store: store.clone(),
            clock: Arc::clone(&clock),
            client,
            trusted_client,
            handle: delivery.clone(),
            default_policy: config.policy.default.clone(),
            grace: Duration::from_millis(config.shutdown_grace_ms),
            protection: Protection {
                node_max_in_flight: config.cluster.node_max_in_flight,
                tenant_max_in_flight: config.cluster.tenant_places(),
                breaker: config.breaker.clone(),
                disable_after_ms: config.disable_after,
            },
            telemetry: Arc::clone(&telemetry),
            plugins: Arc::clone(plugins.host()),
            before_attempt: options.before_attempt,
            holds,
            stats: Arc::clone(&stats),
            traces: traces.clone(),
            operator_events: operator_events.clone(),
        },
        shutdown.clone(),
    );
    // It stops after the engine's last attempt, and flushes once more then.
    let stats_stop = CancellationToken::new();
    let stats_flusher = tokio::spawn(endpoint_stats::run_flusher(
        stats,
        store.clone(),
        Arc::clone(&clock),
        config.stats.flush_ms,
        stats_stop.clone(),
    ));
    let ctx = Arc::new(AppContext {
        guard,
        config: Arc::new(config),
        store,
        clock,
        admin_hash,
        delivery,
        writes,
        plugins,
        telemetry,
        catalog,
        traces,
        simulations: simulation_slots::SimulationSlots::default(),
        task_wake: Arc::default(),
        operator_events,
    });
    let housekeeping = tokio::spawn(housekeeping::run(Arc::clone(&ctx), shutdown.clone()));
    let task_runner = tokio::spawn(tasks::run(Arc::clone(&ctx), shutdown.clone()));
    tracing::info!(
        addr = %listener.local_addr()?,
        node_id = ctx.store.node_id(),
        backend = ctx.store.backend_name(),
        "hookgate listening"
    );
    let served = api::server::serve(
        listener,
        api::router(Arc::clone(&ctx)),
        &ctx.config.limits,
        shutdown.clone(),
    )
    .await;
    // Each is awaited after its abort: one that still holds the store (a sweep
    // in progress) would keep sled's lock on the data dir past the return.
    for background in [housekeeping, task_runner, plugin_follower, catalog_follower] {
        background.abort();
        let _ = tokio::time::timeout(LISTENERS_DRAIN, background).await;
    }
    // In-flight attempts finish (or are abandoned after the grace period) first;
    // the last flush happens after every request and attempt has finished.
    let _ = engine.await;
    // Every attempt is recorded now: the last stats go to the store.
    stats_stop.cancel();
    let _ = stats_flusher.await;
    // No attempt can disable a plugin now: the listeners store and count what is
    // left, then end, before the last flush.
    ctx.plugins.host().close_events();
    for listener in [disabled_recorder, plugin_watch] {
        let overrun = listener.abort_handle();
        if tokio::time::timeout(LISTENERS_DRAIN, listener)
            .await
            .is_err()
        {
            tracing::warn!("plugin-event listeners did not finish at shutdown");
            overrun.abort();
        }
    }
    // What the last attempts and requests told operators is queued before the
    // store closes.
    alert_sender.abort();
    let _ = tokio::time::timeout(LISTENERS_DRAIN, alert_sender).await;
    operator_stop.cancel();
    if tokio::time::timeout(LISTENERS_DRAIN, operator_fan_out)
        .await
        .is_err()
    {
        tracing::warn!("operator events were still being queued at shutdown");
    }
    // Spans of the last attempts and requests go out before the store closes.
    ctx.traces.shutdown().await;
    ctx.store.close().await;
    served?;
    Ok(())
}

/// How long the plugin-event listeners may take at shutdown to store and count
/// what is left: a store write or two.
const LISTENERS_DRAIN: Duration = Duration::from_secs(5);

/// Counts pending and dead deliveries once, in the background, to seed the gauges
/// and stats; changes made meanwhile are counted as they happen.
fn seed_counts(store: &Store, telemetry: &Arc<Telemetry>) {
    let (store, telemetry) = (store.clone(), Arc::clone(telemetry));
    tokio::spawn(async move {
        match store.singleton(Singleton::GaugeSeed).await {
            Ok(Some(_grant)) => {}
            Ok(None) => return,
            Err(e) => {
                tracing::warn!(error = %e, "cannot ask to seed the gauges; they start at zero");
                return;
            }
        }
        match store.count_deliveries().await {
            Ok(counts) => telemetry.seed_counts(&counts),
            Err(e) => tracing::warn!(error = %e, "cannot count deliveries; gauges start at zero"),
        }
    });
}
