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
use toml::{Table, Value};

mod values;
use values::{de_byte_size, de_duration_list_ms, de_duration_ms, de_socket_addr};

const ENV_PREFIX: &str = "HOOKGATE_";
/// Variables of the command-line client; the server ignores them.
const ENV_RESERVED: [&str; 2] = ["HOOKGATE_URL", "HOOKGATE_TOKEN"];
const MIB: u64 = 1024 * 1024;
const DAY_MS: u64 = 24 * 60 * 60 * 1000;

/// Everything `hookgate serve` can be configured with. `Debug` hides the admin token.
#[derive(Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    /// Address the HTTP API listens on.
    #[serde(deserialize_with = "de_socket_addr")]
    pub listen: SocketAddr,
    /// Directory holding the sled database; one process per data dir.
    pub data_dir: PathBuf,
    /// Admin token (`hgk_...`); when unset, one is generated at first start.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub admin_token: Option<String>,
    /// CIDRs exempt from the block on non-global endpoint addresses.
    pub allow_private_subnets: Vec<IpNet>,
    /// `tracing` EnvFilter directive.
    pub log: String,
    /// Log line format.
    pub log_format: LogFormat,
    /// Below this many free bytes, ingest answers 507 and `/healthz` 503.
    #[serde(deserialize_with = "de_byte_size")]
    pub min_free_disk: u64,
    /// sled page cache size in bytes.
    #[serde(deserialize_with = "de_byte_size")]
    pub cache_capacity: u64,
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
    /// `[metrics]`.
    pub metrics: MetricsConfig,
    /// `[alerts]`: the alert rules, and where alerts are delivered.
    pub alerts: AlertsConfig,
    /// `[policy.default]`: the retry policy endpoints without their own start from.
    pub policy: PolicyConfig,
    /// Retry-policy plugins.
    pub plugins: PluginsConfig,
}

/// `[breaker]`: when an endpoint's circuit opens, and for how long.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct BreakerConfig {
    /// Consecutive failed attempts (non-2xx or transport errors) that open it.
    pub failure_threshold: u32,
    /// Cool-downs of successive trips; the last repeats.
    #[serde(deserialize_with = "de_duration_list_ms")]
    pub cooldowns: Vec<u64>,
}

impl Default for BreakerConfig {
    fn default() -> Self {
        const MIN: u64 = 60_000;
        Self {
            failure_threshold: 20,
            cooldowns: vec![10 * MIN, 30 * MIN, 120 * MIN, 1440 * MIN],
        }
    }
}

/// `[metrics]`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct MetricsConfig {
    /// Adds an attempt counter labelled by endpoint id. Off by default: label
    /// cardinality then grows with the number of endpoints.
    pub per_endpoint_labels: bool,
}

/// `[alerts]`. Every alert goes to the log; with `url` set it is also delivered
/// there as a signed webhook, through hookgate's own queue and retries.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct AlertsConfig {
    /// Where alerts are delivered (exempt from the private-address block).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// `whsec_...` secret the alert webhooks are signed with; generated and kept
    /// in the data dir when unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub secret: Option<String>,
    /// The window of the rate rules.
    #[serde(deserialize_with = "de_duration_ms")]
    pub window: u64,
    /// No second alert for the same subject sooner than this after the last.
    #[serde(deserialize_with = "de_duration_ms")]
    pub cooldown: u64,
    /// DLQ growth: more than this many deliveries dead within the window.
    pub dlq_growth: u64,
    /// An endpoint with this many consecutive failed attempts.
    pub consecutive_failures: u32,
    /// An endpoint failing more than this share of attempts within the window...
    pub failure_rate: f64,
    /// ...out of at least this many attempts.
    pub failure_rate_min_attempts: u64,
    /// Receiver clock skew above this, from responses' `Date` header.
    #[serde(deserialize_with = "de_duration_ms")]
    pub clock_skew: u64,
}

impl Default for AlertsConfig {
    fn default() -> Self {
        Self {
            url: None,
            secret: None,
            window: 600_000,
            cooldown: 3_600_000,
            dlq_growth: 100,
            consecutive_failures: 10,
            failure_rate: 0.5,
            failure_rate_min_attempts: 20,
            clock_skew: 60_000,
        }
    }
}

/// `[policy]`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PolicyConfig {
    /// The same policy object as the endpoint API's `"policy"` (§4).
    pub default: crate::policy::PolicySpec,
}

/// `[plugins]`.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct PluginsConfig {
    /// Plugins loaded from files at start (`[[plugins.preload]]`), until uploads exist.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub preload: Vec<PreloadPlugin>,
}

/// One plugin loaded from a file at start.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct PreloadPlugin {
    /// The tenant that owns it.
    pub tenant: String,
    /// The name endpoints bind.
    pub name: String,
    /// A `.wasm` core module or component.
    pub path: PathBuf,
}

/// Input limits: every input has one (rule 9). All must be greater than zero.
#[derive(Debug, Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct Limits {
    /// Largest JSON request body, in bytes.
    #[serde(deserialize_with = "de_byte_size")]
    pub json_body_bytes: usize,
    /// Largest plugin upload, in bytes.
    #[serde(deserialize_with = "de_byte_size")]
    pub plugin_upload_bytes: usize,
    /// Longest event type, in bytes.
    pub event_type_len: usize,
    /// Longest endpoint URL, in bytes.
    pub url_len: usize,
    /// Longest description, in bytes.
    pub description_len: usize,
    /// Longest idempotency key, in bytes.
    pub idempotency_key_len: usize,
    /// Most endpoints a tenant may have.
    pub endpoints_per_tenant: usize,
    /// Most plugins a tenant may have.
    pub plugins_per_tenant: usize,
    /// Most event types one endpoint may filter on.
    pub event_types_per_endpoint: usize,
    /// Most request headers (more: 431).
    pub max_headers: usize,
    /// Largest request head, headers included, in bytes (more: 431); at least 8 KiB.
    #[serde(deserialize_with = "de_byte_size")]
    pub header_bytes: usize,
    /// Most open client connections (more: 503, then closed).
    pub max_connections: usize,
}

/// Outbound TLS settings for deliveries.
#[derive(Debug, Clone, Default, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct TlsConfig {
    /// PEM file of CA certificates trusted in addition to the webpki roots.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub extra_ca_file: Option<PathBuf>,
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
    /// The config file is not valid TOML.
    #[error("config file {} is not valid TOML: {source}", path.display())]
    Syntax {
        path: PathBuf,
        source: toml::de::Error,
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
            data_dir: PathBuf::from("./hookgate-data"),
            admin_token: None,
            allow_private_subnets: Vec::new(),
            log: "info".to_owned(),
            log_format: LogFormat::Text,
            min_free_disk: 1024 * MIB,
            cache_capacity: 64 * MIB,
            shutdown_grace_ms: 10_000,
            limits: Limits::default(),
            tls: TlsConfig::default(),
            retention: 7 * DAY_MS,
            dlq_retention: 0,
            disable_after: 5 * DAY_MS,
            sweep_interval: 60_000,
            breaker: BreakerConfig::default(),
            metrics: MetricsConfig::default(),
            alerts: AlertsConfig::default(),
            policy: PolicyConfig::default(),
            plugins: PluginsConfig::default(),
        }
    }
}

impl Default for Limits {
    fn default() -> Self {
        Self {
            json_body_bytes: 256 * 1024,
            plugin_upload_bytes: 512 * 1024,
            event_type_len: 128,
            url_len: 2048,
            description_len: 1024,
            idempotency_key_len: 255,
            endpoints_per_tenant: 100,
            plugins_per_tenant: 20,
            event_types_per_endpoint: 64,
            max_headers: 64,
            header_bytes: 16 * 1024,
            max_connections: 1024,
        }
    }
}

impl Config {
    /// Loads defaults < `file` < `env`, then validates. `env` is passed in so tests
    /// need not touch the process environment; only `HOOKGATE_*` names are read.
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
        Self::load_layers(text.as_deref().zip(file), env)
    }

    /// [`Config::load`] with the file's text given (the fuzzer's entry point).
    ///
    /// # Errors
    /// As [`Config::load`].
    pub fn from_toml_str(
        text: &str,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Config, ConfigError> {
        Self::load_layers(Some((text, Path::new("<text>"))), env)
    }

    fn load_layers(
        file: Option<(&str, &Path)>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Config, ConfigError> {
        let mut merged = to_table(&Config::default());
        // Every key, including the optional ones the defaults leave out.
        let mut full = Config {
            admin_token: Some(String::new()),
            ..Config::default()
        };
        full.tls.extra_ca_file = Some(PathBuf::new());
        (full.alerts.url, full.alerts.secret) = (Some(String::new()), Some(String::new()));
        let schema = to_table(&full);
        if let Some((text, path)) = file {
            let layer: Table = toml::from_str(text).map_err(|source| ConfigError::Syntax {
                path: path.to_owned(),
                source,
            })?;
            let origin = format!("file {}", path.display());
            merge(&mut merged, &schema, layer, "", &origin, false)?;
        }
        let mut vars: Vec<_> = env.into_iter().filter(|(k, _)| is_server_var(k)).collect();
        vars.sort();
        for (var, raw) in vars {
            // `HOOKGATE_A__B=v` becomes the layer `{ a = { b = "v" } }`.
            let mut layer = Value::String(raw);
            for segment in var[ENV_PREFIX.len()..].to_ascii_lowercase().rsplit("__") {
                layer = Value::Table(Table::from_iter([(segment.to_owned(), layer)]));
            }
            if let Value::Table(layer) = layer {
                let origin = format!("environment variable {var}");
                merge(&mut merged, &schema, layer, "", &origin, true)?;
            }
        }
        let config: Config = serde_path_to_error::deserialize(Value::Table(merged))
            .map_err(|e| invalid(e.path().to_string(), e.into_inner().message()))?;
        config.validate()?;
        Ok(config)
    }

    /// [`Config::load`] with the process environment.
    ///
    /// # Errors
    /// As [`Config::load`]; also a `HOOKGATE_*` variable whose value is not UTF-8.
    pub fn from_env_and_file(file: Option<&Path>) -> Result<Config, ConfigError> {
        let mut vars = Vec::new();
        for (name, value) in std::env::vars_os() {
            if let Some(name) = name.to_str().filter(|name| is_server_var(name)) {
                let value = value.into_string();
                let value = value.map_err(|_| invalid(name, "value is not valid UTF-8"))?;
                vars.push((name.to_owned(), value));
            }
        }
        Self::load(file, vars)
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
        if let Err(e) = tracing_subscriber::EnvFilter::try_new(&self.log) {
            return Err(invalid("log", format!("not a valid tracing filter: {e}")));
        }
        if self.cache_capacity < MIB {
            let message = format!("must be at least 1 MiB, got {} bytes", self.cache_capacity);
            return Err(invalid("cache_capacity", message));
        }
        if let Some(url) = &self.alerts.url
            && let Err(e) = crate::address_guard::normalize_endpoint_url(url, self.limits.url_len)
        {
            return Err(invalid("alerts.url", e.to_string()));
        }
        if let Some(secret) = &self.alerts.secret
            && crate::delivery::signer::SigningSecret::parse(secret).is_err()
        {
            return Err(invalid(
                "alerts.secret",
                "must be whsec_ followed by base64 of 24 to 64 bytes",
            ));
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

impl std::fmt::Debug for Config {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Config")
            .field("listen", &self.listen)
            .field("data_dir", &self.data_dir)
            .field(
                "admin_token",
                &self.admin_token.as_ref().map(|_| "<redacted>"),
            )
            .field("allow_private_subnets", &self.allow_private_subnets)
            .field("log", &self.log)
            .field("log_format", &self.log_format)
            .field("min_free_disk", &self.min_free_disk)
            .field("cache_capacity", &self.cache_capacity)
            .field("shutdown_grace_ms", &self.shutdown_grace_ms)
            .field("limits", &self.limits)
            .field("tls", &self.tls)
            .field("retention", &self.retention)
            .field("dlq_retention", &self.dlq_retention)
            .field("disable_after", &self.disable_after)
            .field("sweep_interval", &self.sweep_interval)
            .field("breaker", &self.breaker)
            .field("metrics", &self.metrics)
            .field("alerts", &self.alerts)
            .field("policy", &self.policy)
            .field("plugins", &self.plugins)
            .finish()
    }
}

fn invalid(key: impl Into<String>, message: impl Into<String>) -> ConfigError {
    let (key, message) = (key.into(), message.into());
    ConfigError::Invalid { key, message }
}

fn is_server_var(name: &str) -> bool {
    name.starts_with(ENV_PREFIX) && !ENV_RESERVED.contains(&name)
}

/// Types an environment value for an open table: integer, float or bool if it
/// reads as one, else a string.
fn typed_env_value(v: Value) -> Value {
    let Value::String(raw) = v else { return v };
    let t = raw.trim();
    if let Ok(i) = t.parse::<i64>() {
        Value::Integer(i)
    } else if let Ok(f) = t.parse::<f64>() {
        Value::Float(f)
    } else if let Ok(b) = t.parse::<bool>() {
        Value::Boolean(b)
    } else {
        Value::String(raw)
    }
}

fn to_table(config: &Config) -> Table {
    Table::try_from(config).expect("Config always serializes to a TOML table")
}

/// Deep-merges `layer` over `target`, refusing keys not in `schema`; `prefix` is `""`
/// or the parent key and a dot. Environment values arrive as strings and are typed
/// here by the shape of their key in `schema`.
fn merge(
    target: &mut Table,
    schema: &Table,
    layer: Table,
    prefix: &str,
    origin: &str,
    from_env: bool,
) -> Result<(), ConfigError> {
    for (name, value) in layer {
        let key = format!("{prefix}{name}");
        let Some(shape) = schema.get(&name) else {
            let origin = origin.to_owned();
            return Err(ConfigError::UnknownKey { key, origin });
        };
        let value = match (shape, value) {
            // An empty table in the defaults is open (`policy.default`): its own
            // type refuses unknown keys when it is deserialized.
            (Value::Table(schema), Value::Table(layer)) if schema.is_empty() => {
                let slot = target
                    .entry(name)
                    .or_insert_with(|| Value::Table(Table::new()));
                if let Value::Table(target) = slot {
                    for (k, v) in layer {
                        target.insert(k, if from_env { typed_env_value(v) } else { v });
                    }
                }
                continue;
            }
            (Value::Table(schema), Value::Table(layer)) => {
                let slot = target
                    .entry(name)
                    .or_insert_with(|| Value::Table(Table::new()));
                if let Value::Table(target) = slot {
                    merge(target, schema, layer, &format!("{key}."), origin, from_env)?;
                }
                continue;
            }
            (Value::Table(_), _) => {
                let message = "expected a table of keys (in the environment: KEY__SUBKEY)";
                return Err(invalid(key, message));
            }
            (Value::Array(_), Value::String(raw)) if from_env => {
                let items = raw.split(',').map(str::trim).filter(|s| !s.is_empty());
                Value::Array(items.map(|s| Value::String(s.to_owned())).collect())
            }
            (Value::Integer(_), Value::String(raw)) if from_env => raw
                .trim()
                .parse()
                .map_or(Value::String(raw), Value::Integer),
            (_, value) => value,
        };
        target.insert(name, value);
    }
    Ok(())
}

#[cfg(test)]
mod tests;
