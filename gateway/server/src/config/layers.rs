//! The layers of the configuration and how they merge: the built-in defaults,
//! then the TOML file, then `HOOKGATE_*` variables (nested keys joined with a
//! double underscore, lists comma-separated), each checked against the keys
//! the defaults have.

use std::path::{Path, PathBuf};

use toml::{Table, Value};

use super::{Config, ConfigError, PreloadPlugin, invalid, store_section, telemetry_section};

const ENV_PREFIX: &str = "HOOKGATE_";
/// Variables of the command-line client and of the test setup; the server
/// ignores them.
const ENV_RESERVED: [&str; 4] = [
    "HOOKGATE_URL",
    "HOOKGATE_TOKEN",
    "HOOKGATE_CHROMIUM",
    TEST_POSTGRES_ENV,
];

/// The PostgreSQL server the tests make their scratch databases on.
pub(crate) const TEST_POSTGRES_ENV: &str = "HOOKGATE_TEST_POSTGRES";
/// Merges the defaults, the file's text (with its path, for messages) and the
/// `HOOKGATE_*` variables of `env`, then validates.
///
/// # Errors
/// A layer is not TOML, a key is unknown, or a value is invalid.
pub(super) fn merged(
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
    (full.store.url, full.store.ca_file) = (Some(String::new()), Some(PathBuf::new()));
    full.outbound.allow_only = Some(Vec::new());
    full.cluster.node_id = Some(String::new());
    full.telemetry.otlp.endpoint = Some(String::new());
    (full.alerts.url, full.alerts.secret) = (Some(String::new()), Some(String::new()));
    full.plugins.preload = vec![PreloadPlugin {
        tenant: String::new(),
        name: String::new(),
        path: PathBuf::new(),
    }];
    let schema = to_table(&full);
    let mut deprecations = Vec::new();
    if let Some((text, path)) = file {
        let mut layer: Table = toml::from_str(text).map_err(|e| syntax(path, text, &e))?;
        let origin = format!("file {}", path.display());
        deprecations.extend(store_section::lift_moved_keys(&mut layer, &origin)?);
        merge(&mut merged, &schema, layer, "", &origin, false)?;
    }
    let env: Vec<_> = env.into_iter().collect();
    // The standard OpenTelemetry variables: over the file, under `HOOKGATE_*`.
    for (var, key) in telemetry_section::OTEL_VARS {
        if let Some((_, raw)) = env.iter().find(|(k, _)| k == var) {
            let otlp = Table::from_iter([(key.to_owned(), Value::String(raw.clone()))]);
            let telemetry = Table::from_iter([("otlp".to_owned(), Value::Table(otlp))]);
            let layer = Table::from_iter([("telemetry".to_owned(), Value::Table(telemetry))]);
            let origin = format!("environment variable {var}");
            merge(&mut merged, &schema, layer, "", &origin, true)?;
        }
    }
    let mut vars: Vec<_> = env.into_iter().filter(|(k, _)| is_server_var(k)).collect();
    vars.sort();
    for (var, raw) in vars {
        // `HOOKGATE_A__B=v` becomes the layer `{ a = { b = "v" } }`.
        let mut layer = Value::String(raw);
        for segment in var[ENV_PREFIX.len()..].to_ascii_lowercase().rsplit("__") {
            layer = Value::Table(Table::from_iter([(segment.to_owned(), layer)]));
        }
        if let Value::Table(mut layer) = layer {
            let origin = format!("environment variable {var}");
            deprecations.extend(store_section::lift_moved_keys(&mut layer, &origin)?);
            merge(&mut merged, &schema, layer, "", &origin, true)?;
        }
    }
    let mut config: Config = serde_path_to_error::deserialize(Value::Table(merged))
        .map_err(|e| invalid(e.path().to_string(), e.into_inner().message()))?;
    config.validate()?;
    config.store.node_id.clone_from(&config.cluster.node_id);
    config.deprecations = deprecations;
    Ok(config)
}

/// The process environment's `HOOKGATE_*` variables the server reads, and the
/// standard `OTEL_*` ones of `[telemetry.otlp]`.
///
/// # Errors
/// A `HOOKGATE_*` variable whose value is not UTF-8.
pub(super) fn server_vars() -> Result<Vec<(String, String)>, ConfigError> {
    let mut vars = Vec::new();
    for (name, value) in std::env::vars_os() {
        let otel = |name: &str| telemetry_section::OTEL_VARS.iter().any(|(v, _)| *v == name);
        if let Some(name) = name
            .to_str()
            .filter(|name| is_server_var(name) || otel(name))
        {
            let value = value.into_string();
            let value = value.map_err(|_| invalid(name, "value is not valid UTF-8"))?;
            vars.push((name.to_owned(), value));
        }
    }
    Ok(vars)
}

fn syntax(path: &Path, text: &str, e: &toml::de::Error) -> ConfigError {
    let position = e
        .span()
        .and_then(|span| text.get(..span.start))
        .map(|before| {
            let line = before.matches('\n').count() + 1;
            let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
            (line, column)
        });
    let message = e.message().split_whitespace().collect::<Vec<_>>().join(" ");
    ConfigError::Syntax {
        path: path.to_owned(),
        position,
        message,
    }
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
