//! Layered configuration for `hookgate serve`.
//!
//! Built-in defaults < `--config FILE` (TOML) < `HOOKGATE_*` environment variables.
//! The keys are the same everywhere; in the environment nested keys use a double
//! underscore (`HOOKGATE_LIMITS__JSON_BODY_BYTES` is `limits.json_body_bytes`) and
//! lists are comma-separated. Byte sizes take an integer or a string like `"512MiB"`,
//! durations an integer of milliseconds or a humantime string like `"10s"`. The result
//! is validated once, and every refusal names the key it is about.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use ipnet::IpNet;
use serde::{Deserialize, Serialize};
use toml::Table;

mod cluster_section;
mod layers;
mod sections;
mod store_section;
mod telemetry_section;
mod values;
pub use cluster_section::ClusterConfig;
#[cfg(any(test, feature = "lab"))]
pub(crate) use layers::TEST_POSTGRES_ENV;
pub use sections::AlertsConfig;
pub use sections::BreakerConfig;
pub use sections::DestinationsConfig;
pub use sections::Limits;
pub use sections::MetricsConfig;
pub use sections::OutboundConfig;
pub use sections::PluginsConfig;
pub use sections::PolicyConfig;
pub use sections::PreloadPlugin;
pub use sections::TlsConfig;
pub(crate) use sections::{ConsoleConfig, EventTypesConfig};
pub use sections::{IngestConfig, StatsConfig, TasksConfig};
pub use store_section::StoreBackend;
pub use store_section::StoreConfig;
pub use store_section::redact_password;
pub use telemetry_section::{OtlpConfig, OtlpProtocol, TelemetryConfig};
use values::{de_duration_ms, de_socket_addr};

const MIB: u64 = 1024 * 1024;
const DAY_MS: u64 = 24 * 60 * 60 * 1000;

/// Everything `hookgate serve` can be configured with. `Debug` hides the admin token.
#[derive(Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Address the HTTP API listens on.
    #[serde(deserialize_with = "de_socket_addr")]
    pub listen: SocketAddr,
    /// `[store]`: the storage backend and its settings.
    pub store: StoreConfig,
    /// `[cluster]`: this node among those sharing a PostgreSQL store.
    pub cluster: ClusterConfig,
    /// Admin token (`hgk_...`); when unset, one is generated at first start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub admin_token: Option<String>,
    /// CIDRs exempt from the block on non-global endpoint addresses.
    pub allow_private_subnets: Vec<IpNet>,
    /// `[outbound]`: the egress allow-list.
    pub outbound: OutboundConfig,
    /// `tracing` EnvFilter directive.
    pub log: String,
    /// Log line format.
    pub log_format: LogFormat,
    /// How long shutdown waits for in-flight work, in milliseconds.
    #[serde(deserialize_with = "de_duration_ms")]
    pub shutdown_grace_ms: u64,
    /// Per-route input limits.
    pub limits: Limits,
    /// Outbound TLS settings.
    pub tls: TlsConfig,
    /// Succeeded deliveries, and events whose deliveries are all gone, are pruned
    /// after this long (ms or humantime).
    #[serde(deserialize_with = "de_duration_ms")]
    pub retention: u64,
    /// Dead deliveries (the DLQ), and deliveries left pending on a disabled endpoint,
    /// are pruned or ended after this long; 0 keeps them forever.
    #[serde(deserialize_with = "de_duration_ms")]
    pub dlq_retention: u64,
    /// An endpoint that has not succeeded for this long while failing is disabled.
    #[serde(deserialize_with = "de_duration_ms")]
    pub disable_after: u64,
    /// How often retention and expiry sweeps run.
    #[serde(deserialize_with = "de_duration_ms")]
    pub sweep_interval: u64,
    /// The per-endpoint circuit breaker.
    pub breaker: BreakerConfig,
    /// `[ingest]`: slowing a tenant's ingest while its backlog is deep.
    pub ingest: IngestConfig,
    /// `[tasks]`: how background tasks pace their work.
    pub tasks: TasksConfig,
    /// `[stats]`: per-endpoint delivery stats and their history.
    pub stats: StatsConfig,
    /// `[event_types]`: how the event-type catalog binds endpoints.
    pub event_types: EventTypesConfig,
    /// `[console]`: who may embed the console, and where it is reached.
    pub console: ConsoleConfig,
    /// `[metrics]`.
    pub metrics: MetricsConfig,
    /// `[telemetry.otlp]`: OpenTelemetry traces.
    pub telemetry: TelemetryConfig,
    /// `[alerts]`: the alert rules, and where alerts are delivered.
    pub alerts: AlertsConfig,
    /// `[policy.default]`: the retry policy endpoints without their own start from.
    pub policy: PolicyConfig,
    /// Retry-policy plugins.
    pub plugins: PluginsConfig,
    /// `[destinations]`: broker credentials tenants may name.
    pub destinations: DestinationsConfig,
    /// Deprecated keys the layers used, one note each, for the start-up log.
    #[serde(skip)]
    pub deprecations: Vec<String>,
}

/// Log line format.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines.
    #[default]
    Text,
    /// One JSON object per line.
    Json,
}

/// Why a configuration was refused.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    /// The config file could not be read.
    #[error("reading config file {}: {source}", path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The config file is not valid TOML. One line, with where: the parser's own
    /// message draws the offending line, over several.
    #[error("config file {} is not valid TOML{}: {message}", path.display(), at(*position))]
    Syntax {
        path: PathBuf,
        /// Line and column (from 1) of the error, when the parser knows it.
        position: Option<(usize, usize)>,
        message: String,
    },
    /// A key has a bad value.
    #[error("config key `{key}`: {message}")]
    Invalid { key: String, message: String },
    /// A key this config does not have; `origin` says where it was set.
    #[error("unknown config key `{key}` (from {origin})")]
    UnknownKey { key: String, origin: String },
}

impl Default for Config {
    fn default() -> Self {
        Self {
            listen: SocketAddr::from(([127, 0, 0, 1], 8080)),
            store: StoreConfig::default(),
            cluster: ClusterConfig::default(),
            admin_token: None,
            allow_private_subnets: Vec::new(),
            outbound: OutboundConfig::default(),
            log: "info".to_owned(),
            log_format: LogFormat::Text,
            shutdown_grace_ms: 10_000,
            limits: Limits::default(),
            tls: TlsConfig::default(),
            retention: 7 * DAY_MS,
            dlq_retention: 0,
            disable_after: 5 * DAY_MS,
            sweep_interval: 60_000,
            breaker: BreakerConfig::default(),
            ingest: IngestConfig::default(),
            tasks: TasksConfig::default(),
            stats: StatsConfig::default(),
            event_types: EventTypesConfig::default(),
            console: ConsoleConfig::default(),
            metrics: MetricsConfig::default(),
            telemetry: TelemetryConfig::default(),
            alerts: AlertsConfig::default(),
            policy: PolicyConfig::default(),
            plugins: PluginsConfig::default(),
            destinations: DestinationsConfig::default(),
            deprecations: Vec::new(),
        }
    }
}

impl Config {
    /// Loads defaults < `file` < `env`, then validates. `env` is passed in so tests
    /// need not touch the process environment; only `HOOKGATE_*` names and the
    /// standard `OTEL_*` ones of `[telemetry.otlp]` are read.
    ///
    /// # Errors
    /// The file is unreadable or not TOML, a key is unknown, or a value is invalid.
    pub fn load(
        file: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Config, ConfigError> {
        let text = match file {
            Some(path) => {
                Some(
                    std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                        path: path.to_owned(),
                        source,
                    })?,
                )
            }
            None => None,
        };
        layers::merged(text.as_deref().zip(file), env)
    }

    /// [`Config::load`] with the file's text given (the fuzzer's entry point).
    ///
    /// # Errors
    /// As [`Config::load`].
    pub fn from_toml_str(
        text: &str,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Config, ConfigError> {
        layers::merged(Some((text, Path::new("<text>"))), env)
    }

    /// [`Config::load`] with the process environment.
    ///
    /// # Errors
    /// As [`Config::load`]; also a `HOOKGATE_*` variable whose value is not UTF-8.
    pub fn from_env_and_file(file: Option<&Path>) -> Result<Config, ConfigError> {
        Self::load(file, layers::server_vars()?)
    }

    /// Checks what the types alone do not; called by [`Config::load`].
    ///
    /// # Errors
    /// [`ConfigError::Invalid`] naming the first bad key.
    pub fn validate(&self) -> Result<(), ConfigError> {
        let token = self.admin_token.as_deref();
        if !token.is_none_or(|t| t.starts_with("hgk_") && t.len() >= 20) {
            let message = "must start with \"hgk_\" and be at least 20 characters";
            return Err(invalid("admin_token", message));
        }
        if self.log.trim().is_empty() {
            return Err(invalid("log", "must not be empty (e.g. \"info\")"));
        }
        if !(1..=10_000).contains(&self.tasks.batch) {
            return Err(invalid("tasks.batch", "must be from 1 to 10000"));
        }
        if self.tasks.pause > 60_000 {
            return Err(invalid("tasks.pause", "must be at most 1 minute"));
        }
        self.validate_stats()?;
        if let Err(e) = tracing_subscriber::EnvFilter::try_new(&self.log) {
            return Err(invalid("log", format!("not a valid tracing filter: {e}")));
        }
        if self.outbound.allow_only.as_ref().is_some_and(Vec::is_empty) {
            let message =
                "must list at least one CIDR or host pattern; leave it unset to allow any host";
            return Err(invalid("outbound.allow_only", message));
        }
        self.store.validate()?;
        self.cluster.validate()?;
        for (name, named) in &self.destinations.credentials {
            let key = format!("destinations.credentials.{name}");
            if !crate::ids::is_valid_uid(name) {
                return Err(invalid(
                    &key,
                    "a name is 1 to 256 of A-Z, a-z, 0-9, _, . and -",
                ));
            }
            named.resolved().map_err(|e| invalid(&key, e))?;
        }
        self.telemetry.otlp.validate()?;
        if let Some(url) = &self.alerts.url
            && let Err(e) = crate::address_guard::normalize_endpoint_url(url, self.limits.url_len)
        {
            return Err(invalid("alerts.url", e.to_string()));
        }
        if let Some(secret) = &self.alerts.secret
            && crate::signing::SigningSecret::parse(secret).is_err()
        {
            return Err(invalid(
                "alerts.secret",
                "must be whsec_ followed by base64 of 24 to 64 bytes",
            ));
        }
        for origin in &self.console.embed_origins {
            if !crate::address_guard::is_origin(origin) {
                return Err(invalid(
                    "console.embed_origins",
                    format!("{origin:?} is not an origin: scheme://host[:port], no path"),
                ));
            }
        }
        if let Some(url) = &self.console.public_url
            && !(url.starts_with("https://") || url.starts_with("http://"))
        {
            return Err(invalid("console.public_url", "must be an http(s) URL"));
        }
        if self.alerts.event_types.is_empty() {
            return Err(invalid(
                "alerts.event_types",
                "must list at least one type or pattern",
            ));
        }
        for t in &self.alerts.event_types {
            if let Err(e) = crate::event_type::validate_pattern(t, 256) {
                return Err(invalid("alerts.event_types", format!("{t:?}: {e}")));
            }
        }
        if !(self.alerts.failure_rate > 0.0 && self.alerts.failure_rate <= 1.0) {
            return Err(invalid("alerts.failure_rate", "must be in (0, 1]"));
        }
        if self.alerts.window == 0 || self.alerts.consecutive_failures == 0 {
            return Err(invalid(
                "alerts.window",
                "the window and consecutive_failures must be above 0",
            ));
        }
        if self.limits.header_bytes < 8192 {
            return Err(invalid("limits.header_bytes", "must be at least 8 KiB"));
        }
        if self.breaker.failure_threshold == 0 {
            return Err(invalid("breaker.failure_threshold", "must be at least 1"));
        }
        if self.breaker.cooldowns.is_empty() || self.breaker.cooldowns.contains(&0) {
            return Err(invalid(
                "breaker.cooldowns",
                "must list at least one cool-down, each above 0",
            ));
        }
        for (key, v) in [
            ("retention", self.retention),
            ("disable_after", self.disable_after),
            ("sweep_interval", self.sweep_interval),
        ] {
            if v == 0 {
                return Err(invalid(key, "must be greater than 0"));
            }
        }
        if let Err(e) = self.policy.default.resolve() {
            let key = format!("policy.default.{}", e.field.trim_start_matches("policy."));
            return Err(invalid(key, e.message));
        }
        if self.plugins.keep_versions == 0 {
            return Err(invalid("plugins.keep_versions", "must be at least 1"));
        }
        let slots = crate::plugin_runtime::SLOTS_RANGE;
        if !slots.contains(&self.plugins.slots) {
            let (low, high, got) = (slots.start(), slots.end(), self.plugins.slots);
            let message = format!("must be from {low} to {high}, got {got}");
            return Err(invalid("plugins.slots", message));
        }
        for (i, p) in self.plugins.preload.iter().enumerate() {
            if !crate::ids::is_valid_tenant_id(&p.tenant) || p.name.is_empty() {
                return Err(invalid(
                    format!("plugins.preload[{i}]"),
                    "needs a valid tenant and a name",
                ));
            }
        }
        for (name, value) in Table::try_from(&self.limits).unwrap_or_default() {
            if value.as_integer() == Some(0) {
                return Err(invalid(format!("limits.{name}"), "must be greater than 0"));
            }
        }
        Ok(())
    }
}

impl Config {
    /// `[stats]`: buckets of 10 s to 1 day, a history of 1 hour to 90 days
    /// holding at most [`StatsConfig::MAX_BUCKETS`] buckets, a flush every 10 ms
    /// to 1 minute.
    fn validate_stats(&self) -> Result<(), ConfigError> {
        let stats = &self.stats;
        if !(10..=86_400).contains(&stats.bucket_seconds) {
            return Err(invalid("stats.bucket_seconds", "must be from 10 to 86400"));
        }
        if !(1..=2_160).contains(&stats.history_hours) {
            return Err(invalid("stats.history_hours", "must be from 1 to 2160"));
        }
        if stats.history_ms() / stats.bucket_ms() > StatsConfig::MAX_BUCKETS {
            let message = format!(
                "holds at most {} buckets of stats.bucket_seconds",
                StatsConfig::MAX_BUCKETS
            );
            return Err(invalid("stats.history_hours", message));
        }
        if !(10..=60_000).contains(&stats.flush_ms) {
            return Err(invalid("stats.flush_ms", "must be from 10ms to 1 minute"));
        }
        Ok(())
    }
}

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("listen", &self.listen)
            .field("store", &self.store)
            .field("cluster", &self.cluster)
            .field(
                "admin_token",
                &self.admin_token.as_ref().map(|_| "<redacted>"),
            )
            .field("allow_private_subnets", &self.allow_private_subnets)
            .field("outbound", &self.outbound)
            .field("log", &self.log)
            .field("log_format", &self.log_format)
            .field("shutdown_grace_ms", &self.shutdown_grace_ms)
            .field("limits", &self.limits)
            .field("tls", &self.tls)
            .field("retention", &self.retention)
            .field("dlq_retention", &self.dlq_retention)
            .field("disable_after", &self.disable_after)
            .field("sweep_interval", &self.sweep_interval)
            .field("breaker", &self.breaker)
            .field("stats", &self.stats)
            .field("event_types", &self.event_types)
            .field("console", &self.console)
            .field("metrics", &self.metrics)
            .field("alerts", &self.alerts)
            .field("policy", &self.policy)
            .field("plugins", &self.plugins)
            .finish()
    }
}

/// ` at line L, column C`, or nothing when the position is unknown.
fn at(position: Option<(usize, usize)>) -> String {
    position.map_or_else(String::new, |(line, column)| {
        format!(" at line {line}, column {column}")
    })
}

fn invalid(key: impl Into<String>, message: impl Into<String>) -> ConfigError {
    let (key, message) = (key.into(), message.into());
    ConfigError::Invalid { key, message }
}

#[cfg(test)]
mod tests;
