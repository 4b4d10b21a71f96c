//! `[store]`: which storage backend holds hookgate's state, and its settings:
//! the embedded sled database (the default, one process per data dir), or
//! PostgreSQL at `url`, which several gateways can share.
//!
//! The sled keys used to sit at the top level (`data_dir`, `cache_capacity`,
//! `min_free_disk`, and `HOOKGATE_DATA_DIR` and so on in the environment). They
//! still work: each layer's top-level key is moved under `[store]` before the
//! layers merge, with a deprecation note that the gateway logs at start.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};
use toml::{Table, Value};

use super::values::{de_byte_size, de_duration_ms};
use super::{ConfigError, MIB};
use crate::pg_target::PgTarget;

/// The keys that moved from the top level to `[store]`.
const MOVED_KEYS: [&str; 3] = ["data_dir", "cache_capacity", "min_free_disk"];

/// Which backend holds the state.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum StoreBackend {
    /// The embedded sled database in `data_dir`: one process per data dir.
    #[default]
    Sled,
    /// PostgreSQL at `url`; several gateways may share one database.
    Postgres,
}

/// `[store]`.
#[derive(Clone, Deserialize, Serialize)]
#[serde(deny_unknown_fields, default)]
pub struct StoreConfig {
    /// The backend.
    pub backend: StoreBackend,
    /// Directory holding the sled database and the caches; one process per data dir.
    pub data_dir: PathBuf,
    /// sled page cache size in bytes.
    #[serde(deserialize_with = "de_byte_size")]
    pub cache_capacity: u64,
    /// Below this many free bytes in `data_dir`, ingest answers 507 and
    /// `/healthz` 503.
    #[serde(deserialize_with = "de_byte_size")]
    pub min_free_disk: u64,
    /// PostgreSQL: the connection URL (`postgres://user:pass@host:5432/db?sslmode=...`).
    /// `sslmode` may be `disable`, `prefer`, `require`, `verify-ca` or `verify-full`.
    pub url: Option<String>,
    /// PostgreSQL: most connections the gateway opens.
    pub pool_size: usize,
    /// PostgreSQL: PEM roots to verify the server by (`verify-ca`, `verify-full`);
    /// the system's roots when unset.
    pub ca_file: Option<PathBuf>,
    /// PostgreSQL: how long past an endpoint's timeout a claimed attempt stays
    /// claimed; a gateway that dies holding work gives it back after this.
    #[serde(rename = "lease_margin", deserialize_with = "de_duration_ms")]
    pub lease_margin_ms: u64,
    /// PostgreSQL: how long past its end a lease still holds its endpoint's
    /// place while the gateway that took it is alive on the database but
    /// silent (paused, stopped: it may still have the request open at the
    /// receiver). A gateway that dies gives its session up, and with it this.
    #[serde(rename = "paused_node_hold", deserialize_with = "de_duration_ms")]
    pub paused_node_hold_ms: u64,
    /// This node's id (`cluster.node_id`, copied here when the layers are
    /// loaded); a fresh one at each open when unset.
    #[serde(skip)]
    pub node_id: Option<String>,
}

impl Default for StoreConfig {
    fn default() -> Self {
        Self {
            backend: StoreBackend::Sled,
            data_dir: PathBuf::from("./hookgate-data"),
            cache_capacity: 64 * MIB,
            min_free_disk: 1024 * MIB,
            url: None,
            pool_size: 16,
            ca_file: None,
            lease_margin_ms: 30_000,
            paused_node_hold_ms: 300_000,
            node_id: None,
        }
    }
}

impl std::fmt::Debug for StoreConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StoreConfig")
            .field("backend", &self.backend)
            .field("data_dir", &self.data_dir)
            .field("cache_capacity", &self.cache_capacity)
            .field("min_free_disk", &self.min_free_disk)
            .field("url", &self.url.as_deref().map(redact_password))
            .field("pool_size", &self.pool_size)
            .field("ca_file", &self.ca_file)
            .field("lease_margin_ms", &self.lease_margin_ms)
            .field("paused_node_hold_ms", &self.paused_node_hold_ms)
            .field("node_id", &self.node_id)
            .finish()
    }
}

/// A connection string with its password hidden, for logs and messages, in
/// every form PostgreSQL's parser takes: a URL's user info or its `password`
/// parameter, and a key/value string's `password`, quoted or not. As a last
/// guard, the password the parser reads must not survive the text's
/// redaction; if it does, the connection is described from the parsed form.
pub fn redact_password(url: &str) -> String {
    let redacted = if url.starts_with("postgres://") || url.starts_with("postgresql://") {
        redact_url(url)
    } else {
        redact_key_values(url)
    };
    let parsed = url.parse::<tokio_postgres::Config>();
    match parsed.as_ref().ok().and_then(|c| c.get_password()) {
        Some(password) if !password.is_empty() => {
            let password = String::from_utf8_lossy(password);
            if redacted.contains(password.as_ref()) {
                parsed.map_or_else(|_| "(a connection string)".to_owned(), |c| describe(&c))
            } else {
                redacted
            }
        }
        _ => redacted,
    }
}

/// A URL with the password of its user info and of its query hidden.
fn redact_url(url: &str) -> String {
    let Ok(mut parsed) = url::Url::parse(url) else {
        return "(a connection URL that does not parse)".to_owned();
    };
    if parsed.password().is_some() {
        let _ = parsed.set_password(Some("redacted"));
    }
    if parsed.query_pairs().any(|(k, _)| k == "password") {
        let pairs: Vec<(String, String)> = parsed
            .query_pairs()
            .map(|(k, v)| {
                let v = if k == "password" {
                    "redacted".into()
                } else {
                    v
                };
                (k.into_owned(), v.into_owned())
            })
            .collect();
        parsed.query_pairs_mut().clear().extend_pairs(pairs);
    }
    parsed.to_string()
}

/// A `key=value` string (values quoted in `'…'` with `\` escapes, or bare up
/// to a space; spaces allowed around `=`) with its password's value hidden.
fn redact_key_values(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        let trimmed = rest.trim_start();
        out.push_str(&rest[..rest.len() - trimmed.len()]);
        rest = trimmed;
        let Some(eq) = rest.find('=') else {
            out.push_str(rest);
            break;
        };
        let key = rest[..eq].trim_end();
        out.push_str(&rest[..=eq]);
        rest = &rest[eq + 1..];
        let trimmed = rest.trim_start();
        out.push_str(&rest[..rest.len() - trimmed.len()]);
        rest = trimmed;
        let end = value_end(rest);
        if key == "password" {
            out.push_str("redacted");
        } else {
            out.push_str(&rest[..end]);
        }
        rest = &rest[end..];
    }
    out
}

/// Where a key/value string's value that starts `text` ends.
fn value_end(text: &str) -> usize {
    let mut chars = text.char_indices();
    if text.starts_with('\'') {
        chars.next();
        let mut escaped = false;
        for (i, c) in chars {
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '\'' => return i + 1,
                _ => {}
            }
        }
        return text.len();
    }
    chars
        .find(|(_, c)| c.is_whitespace())
        .map_or(text.len(), |(i, _)| i)
}

/// A parsed connection described without its password.
fn describe(config: &tokio_postgres::Config) -> String {
    let hosts: Vec<String> = config
        .get_hosts()
        .iter()
        .map(|h| match h {
            tokio_postgres::config::Host::Tcp(name) => name.clone(),
            tokio_postgres::config::Host::Unix(path) => path.display().to_string(),
        })
        .collect();
    let ports: Vec<String> = config.get_ports().iter().map(u16::to_string).collect();
    format!(
        "host={} port={} user={} dbname={} password=redacted",
        hosts.join(","),
        ports.join(","),
        config.get_user().unwrap_or(""),
        config.get_dbname().unwrap_or(""),
    )
}

impl StoreConfig {
    /// Checks the keys of the backend in use.
    ///
    /// # Errors
    /// `Invalid`, naming the key.
    pub(super) fn validate(&self) -> Result<(), ConfigError> {
        let invalid = |key: &str, message: String| ConfigError::Invalid {
            key: format!("store.{key}"),
            message,
        };
        if self.cache_capacity < MIB {
            let capacity = self.cache_capacity;
            let message = format!("must be at least 1 MiB, got {capacity} bytes");
            return Err(invalid("cache_capacity", message));
        }
        if self.backend != StoreBackend::Postgres {
            return Ok(());
        }
        let Some(url) = &self.url else {
            let message =
                "must be set when store.backend is \"postgres\" (postgres://user@host:5432/db)";
            return Err(invalid("url", message.to_owned()));
        };
        PgTarget::parse(url).map_err(|e| invalid("url", e))?;
        if !(1..=1024).contains(&self.pool_size) {
            let message = format!("must be from 1 to 1024, got {}", self.pool_size);
            return Err(invalid("pool_size", message));
        }
        if self.lease_margin_ms < 1_000 {
            let message = format!("must be at least 1s, got {}ms", self.lease_margin_ms);
            return Err(invalid("lease_margin", message));
        }
        if let Some(path) = &self.ca_file {
            PgTarget::check_ca_file(path).map_err(|e| invalid("ca_file", e))?;
        }
        Ok(())
    }
}

/// Moves `layer`'s top-level sled keys under `store`; returns a deprecation
/// note for each one moved. `origin` says where the layer came from.
///
/// # Errors
/// `Invalid` when a layer sets a key both ways, since which one it meant is
/// not clear.
pub(super) fn lift_moved_keys(layer: &mut Table, origin: &str) -> Result<Vec<String>, ConfigError> {
    let mut notes = Vec::new();
    for key in MOVED_KEYS {
        let Some(value) = layer.remove(key) else {
            continue;
        };
        let store = layer
            .entry("store")
            .or_insert_with(|| Value::Table(Table::new()));
        let Value::Table(store) = store else {
            return Err(ConfigError::Invalid {
                key: "store".to_owned(),
                message: format!("must be a table (from {origin})"),
            });
        };
        if store.contains_key(key) {
            return Err(ConfigError::Invalid {
                key: format!("store.{key}"),
                message: format!(
                    "`{key}` and `store.{key}` are both set (from {origin}); keep `store.{key}`"
                ),
            });
        }
        store.insert(key.to_owned(), value);
        notes.push(format!(
            "config key `{key}` (from {origin}) is deprecated; use `store.{key}` (in the environment, HOOKGATE_STORE__{})",
            key.to_ascii_uppercase()
        ));
    }
    Ok(notes)
}

#[cfg(test)]
mod postgres_tests;

#[cfg(test)]
mod tests {
    use super::super::Config;
    use super::*;

    fn load(file: &str, env: &[(&str, &str)]) -> Result<Config, ConfigError> {
        let env = env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned()));
        Config::from_toml_str(file, env)
    }

    #[test]
    fn store_keys_default_to_sled_in_the_old_places() {
        let c = load("", &[]).unwrap();
        assert_eq!(c.store.backend, StoreBackend::Sled);
        assert_eq!(c.store.data_dir, PathBuf::from("./hookgate-data"));
        assert!(c.deprecations.is_empty());
    }

    #[test]
    fn the_old_top_level_keys_still_work_with_a_deprecation_note() {
        let file = "data_dir = '/srv/a'\ncache_capacity = '8MiB'";
        let env = [("HOOKGATE_MIN_FREE_DISK", "0")];
        let c = load(file, &env).unwrap();
        assert_eq!(c.store.data_dir, PathBuf::from("/srv/a"));
        assert_eq!(
            (c.store.cache_capacity, c.store.min_free_disk),
            (8 << 20, 0)
        );
        assert_eq!(c.deprecations.len(), 3, "{:?}", c.deprecations);
        assert!(
            c.deprecations[2].contains("HOOKGATE_MIN_FREE_DISK")
                && c.deprecations[2].contains("HOOKGATE_STORE__MIN_FREE_DISK"),
            "{:?}",
            c.deprecations
        );
    }

    #[test]
    fn a_later_layer_overrides_an_old_key_in_an_earlier_one() {
        let c = load(
            "data_dir = '/srv/a'",
            &[("HOOKGATE_STORE__DATA_DIR", "/srv/b")],
        )
        .unwrap();
        assert_eq!(c.store.data_dir, PathBuf::from("/srv/b"));
        let c = load(
            "[store]\ndata_dir = '/srv/a'",
            &[("HOOKGATE_DATA_DIR", "/srv/b")],
        )
        .unwrap();
        assert_eq!(c.store.data_dir, PathBuf::from("/srv/b"));
    }

    #[test]
    fn one_layer_setting_a_key_both_ways_is_refused() {
        let e = load("data_dir = '/a'\n[store]\ndata_dir = '/b'", &[]).unwrap_err();
        let e = e.to_string();
        assert!(e.starts_with("config key `store.data_dir`: "), "{e}");
        assert!(e.contains("both set"), "{e}");
        let e = load("[store]\nbackend = 'oracle'", &[]).unwrap_err();
        assert!(
            e.to_string().starts_with("config key `store.backend`"),
            "{e}"
        );
    }
}
