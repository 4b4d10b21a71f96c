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
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use toml::{Table, Value};

const ENV_PREFIX: &str = "HOOKGATE_";
/// Variables of the command-line client; the server ignores them.
const ENV_RESERVED: [&str; 2] = ["HOOKGATE_URL", "HOOKGATE_TOKEN"];
const MIB: u64 = 1024 * 1024;

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
        let mut merged = to_table(&Config::default());
        // Every key, including the optional ones the defaults leave out.
        let mut full = Config {
            admin_token: Some(String::new()),
            ..Config::default()
        };
        full.tls.extra_ca_file = Some(PathBuf::new());
        let schema = to_table(&full);
        if let Some(path) = file {
            let path_buf = path.to_owned();
            let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                path: path_buf.clone(),
                source,
            })?;
            let layer: Table = toml::from_str(&text).map_err(|source| ConfigError::Syntax {
                path: path_buf,
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

fn de_socket_addr<'de, D: Deserializer<'de>>(d: D) -> Result<SocketAddr, D::Error> {
    let text = String::deserialize(d)?;
    let message =
        format!("invalid socket address {text:?} (expected IP:PORT, e.g. 127.0.0.1:8080)");
    text.parse().map_err(|_| de::Error::custom(message))
}

/// Parses `"2048"`, `"10MB"`, `"512MiB"`, `"1 GiB"`: a whole number and an optional unit.
fn parse_byte_size(text: &str) -> Result<u64, String> {
    let trimmed = text.trim();
    let split = trimmed.find(|c: char| !c.is_ascii_digit());
    let (digits, unit) = trimmed.split_at(split.unwrap_or(trimmed.len()));
    let multiplier = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => Some(1),
        "kb" => Some(1_000),
        "mb" => Some(1_000_000),
        "gb" => Some(1_000_000_000),
        "tb" => Some(1_000_000_000_000),
        "kib" => Some(1024),
        "mib" => Some(MIB),
        "gib" => Some(1024 * MIB),
        "tib" => Some(1024 * 1024 * MIB),
        _ => None,
    };
    match (digits.parse::<u64>(), multiplier) {
        (Ok(n), Some(m)) => n
            .checked_mul(m)
            .ok_or_else(|| format!("{text:?} is too large")),
        _ => Err(format!(
            "invalid byte size {text:?}: expected a whole number and an optional unit \
             (B, KB, MB, GB, TB, KiB, MiB, GiB, TiB)"
        )),
    }
}

/// A byte size or a duration as written: a number, or a string to parse.
#[derive(Deserialize)]
#[serde(untagged, expecting = "expected an integer or a string")]
enum IntOrString {
    Int(i64),
    String(String),
}

fn int_or_string<'de, D: Deserializer<'de>>(
    d: D,
    parse: fn(&str) -> Result<u64, String>,
) -> Result<u64, D::Error> {
    match IntOrString::deserialize(d)? {
        IntOrString::Int(n) => u64::try_from(n).map_err(|_| format!("must not be negative: {n}")),
        IntOrString::String(text) => parse(&text),
    }
    .map_err(de::Error::custom)
}

fn de_byte_size<'de, D: Deserializer<'de>, T: TryFrom<u64>>(d: D) -> Result<T, D::Error> {
    let n = int_or_string(d, parse_byte_size)?;
    T::try_from(n).map_err(|_| de::Error::custom(format!("{n} bytes is too large")))
}

fn de_duration_ms<'de, D: Deserializer<'de>>(d: D) -> Result<u64, D::Error> {
    int_or_string(d, |text| {
        let text = text.trim();
        let ms = match text.parse::<u64>() {
            Ok(ms) => u128::from(ms),
            Err(_) => humantime::parse_duration(text)
                .map_err(|e| format!("invalid duration {text:?}: {e} (e.g. 10000 or \"10s\")"))?
                .as_millis(),
        };
        u64::try_from(ms).map_err(|_| format!("duration {text:?} is too long"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write as _;

    type Loaded = Result<Config, ConfigError>;

    fn load(file_text: Option<&str>, env: &[(&str, &str)]) -> Loaded {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        write!(file, "{}", file_text.unwrap_or_default()).unwrap();
        let env = env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned()));
        Config::load(file_text.map(|_| file.path()), env)
    }

    fn file(text: &str) -> Loaded {
        load(Some(text), &[])
    }

    /// Loads with the one variable `HOOKGATE_{name}`.
    fn env(name: &str, value: &str) -> Loaded {
        load(None, &[(&format!("HOOKGATE_{name}"), value)])
    }

    /// Asserts a refusal whose message starts by naming `key`.
    fn names(loaded: Loaded, key: &str) -> String {
        let message = loaded.unwrap_err().to_string();
        let prefix = format!("config key `{key}`: ");
        assert!(message.starts_with(&prefix), "{message}");
        message
    }

    #[test]
    fn defaults() {
        let c = load(None, &[]).unwrap();
        assert_eq!(c.listen, SocketAddr::from(([127, 0, 0, 1], 8080)));
        assert_eq!(c.data_dir, PathBuf::from("./hookgate-data"));
        assert_eq!((c.log.as_str(), c.log_format), ("info", LogFormat::Text));
        assert_eq!((c.min_free_disk, c.cache_capacity), (1 << 30, 64 << 20));
        assert_eq!((c.shutdown_grace_ms, c.limits.url_len), (10_000, 2048));
        assert!(c.admin_token.is_none() && c.allow_private_subnets.is_empty());
    }

    #[test]
    fn layers_override_in_order() {
        let text = "log = 'debug'\nlisten = '0.0.0.0:9000'\n[limits]\nurl_len = 100\n";
        let c = file(text).unwrap();
        assert_eq!((c.log.as_str(), c.listen.port()), ("debug", 9000));
        assert_eq!(
            (c.limits.url_len, c.limits.json_body_bytes),
            (100, 256 * 1024)
        );
        let vars = [("HOOKGATE_LOG", "warn"), ("HOOKGATE_LIMITS__URL_LEN", "99")];
        let c = load(Some(text), &vars).unwrap();
        assert_eq!((c.log.as_str(), c.limits.url_len), ("warn", 99));
        let c = env("TLS__EXTRA_CA_FILE", "/etc/ca.pem").unwrap();
        assert_eq!(c.tls.extra_ca_file, Some(PathBuf::from("/etc/ca.pem")));
    }

    #[test]
    fn cidr_lists() {
        let c = env("ALLOW_PRIVATE_SUBNETS", "127.0.0.0/8, ::1/128").unwrap();
        let want: Vec<IpNet> = vec!["127.0.0.0/8".parse().unwrap(), "::1/128".parse().unwrap()];
        assert_eq!(c.allow_private_subnets, want);
        let c = file("allow_private_subnets = ['10.0.0.0/8']").unwrap();
        assert_eq!(c.allow_private_subnets.len(), 1);
        let bad = env("ALLOW_PRIVATE_SUBNETS", "10.0.0.0/33");
        names(bad, "allow_private_subnets[0]");
    }

    #[test]
    fn unknown_keys_refused_and_client_vars_ignored() {
        let e = file("[limits]\nnope = 1\n").unwrap_err();
        assert!(matches!(&e, ConfigError::UnknownKey { key, .. } if key == "limits.nope"));
        assert!(e.to_string().contains("(from file "), "{e}");
        let e = env("TLS__NOPE", "x").unwrap_err().to_string();
        assert!(
            e.contains("`tls.nope`") && e.contains("HOOKGATE_TLS__NOPE"),
            "{e}"
        );
        let vars = [("HOOKGATE_URL", "http://x"), ("HOOKGATE_TOKEN", "t")];
        assert!(load(None, &vars).is_ok());
    }

    #[test]
    fn bad_values_name_their_key() {
        let e = names(file("listen = 'abc'"), "listen");
        assert!(e.contains("invalid socket address \"abc\""), "{e}");
        names(env("LOG_FORMAT", "xml"), "log_format");
        names(env("LIMITS__URL_LEN", "long"), "limits.url_len");
        names(env("LIMITS", "5"), "limits");
        let e = file("listen = ").unwrap_err().to_string();
        assert!(e.contains("not valid TOML"), "{e}");
    }

    #[test]
    fn byte_sizes_and_durations() {
        let c = file("min_free_disk = '1GiB'\ncache_capacity = '64MiB'").unwrap();
        assert_eq!((c.min_free_disk, c.cache_capacity), (1 << 30, 64 << 20));
        assert_eq!(
            env("MIN_FREE_DISK", "10MB").unwrap().min_free_disk,
            10_000_000
        );
        assert_eq!(
            parse_byte_size("2048").and(parse_byte_size("512 kib")),
            Ok(1 << 19)
        );
        assert!(parse_byte_size("1.5GiB").is_err() && parse_byte_size("GiB").is_err());
        names(env("MIN_FREE_DISK", "lots"), "min_free_disk");
        names(file("cache_capacity = 1000"), "cache_capacity");
        let c = file("shutdown_grace_ms = '10s'").unwrap();
        assert_eq!(c.shutdown_grace_ms, 10_000);
        let c = env("SHUTDOWN_GRACE_MS", "1m 30s").unwrap();
        assert_eq!(c.shutdown_grace_ms, 90_000);
        names(file("shutdown_grace_ms = -1"), "shutdown_grace_ms");
    }

    #[test]
    fn validation() {
        let e = names(file("[limits]\nurl_len = 0"), "limits.url_len");
        assert!(e.ends_with("must be greater than 0"), "{e}");
        let e = names(env("ADMIN_TOKEN", "secret-no-prefix-0123"), "admin_token");
        assert!(!e.contains("secret"), "the token is not echoed: {e}");
        names(env("ADMIN_TOKEN", "hgk_short"), "admin_token");
        assert!(env("ADMIN_TOKEN", "hgk_0123456789abcdefghij").is_ok());
        names(env("LOG", " "), "log");
        names(env("LOG", "hookgate=notalevel"), "log");
        let c = env("ADMIN_TOKEN", "hgk_0123456789abcdefghij").unwrap();
        assert!(
            !format!("{c:?}").contains("hgk_0123"),
            "Debug hides the admin token"
        );
    }
}
