//! `docs/operations.md` lists every config key there is, each with its real default.
//!
//! The keys come from the config types themselves: each struct refuses unknown
//! fields, and serde's refusal names every field it expects, so probing a section
//! with an unknown key lists that section's keys, optional ones included. The
//! documented defaults are checked by loading them: setting a key to the value the
//! doc gives must leave the config exactly as the built-in default.

use std::collections::{BTreeMap, BTreeSet};

use hookgate_server::Config;
use toml::{Table, Value};

const DOC: &str = include_str!("../../../../docs/operations.md");
/// The section of the doc holding the key table.
const SECTION: &str = "## Configuration reference";

/// The fields serde expects where it refused `__probe` (inside `toml_prefix`), or
/// `None` when that spot is not a struct.
fn probe_fields(toml_prefix: &str) -> Option<Vec<String>> {
    let text = format!("{toml_prefix}__probe = 1\n");
    let err = toml::from_str::<Config>(&text).err()?.to_string();
    let (_, expected) = err.split_once("unknown field `__probe`, expected ")?;
    let expected = expected.lines().next().unwrap_or_default();
    let names = expected
        .split('`')
        .skip(1)
        .step_by(2)
        .map(str::to_owned)
        .collect();
    Some(names)
}

/// Every dotted config key, recursing into sub-tables. An array of tables
/// (`plugins.preload`) is one key.
fn config_keys() -> BTreeSet<String> {
    let mut keys = BTreeSet::new();
    let mut stack = vec![String::new()];
    while let Some(section) = stack.pop() {
        let header = if section.is_empty() {
            String::new()
        } else {
            format!("[{section}]\n")
        };
        let fields = probe_fields(&header).unwrap_or_else(|| panic!("cannot probe [{section}]"));
        assert!(!fields.is_empty(), "no fields found in [{section}]");
        for field in fields {
            let key = if section.is_empty() {
                field
            } else {
                format!("{section}.{field}")
            };
            if probe_fields(&format!("[{key}]\n")).is_some() {
                stack.push(key);
            } else {
                keys.insert(key);
            }
        }
    }
    keys
}

/// The rows of the doc's key table: key → default cell.
fn documented() -> BTreeMap<String, String> {
    let start = DOC
        .find(SECTION)
        .unwrap_or_else(|| panic!("docs/operations.md has no {SECTION:?} section"));
    let body = &DOC[start + SECTION.len()..];
    let body = &body[..body.find("\n## ").unwrap_or(body.len())];
    let mut rows = BTreeMap::new();
    for line in body.lines().filter(|l| l.starts_with("| `")) {
        let cells: Vec<&str> = line.trim_matches('|').split(" | ").map(str::trim).collect();
        assert!(
            cells.len() >= 3,
            "a row is | key | default | meaning |: {line}"
        );
        let key = cells[0].trim_matches('`').to_owned();
        let previous = rows.insert(key.clone(), cells[1].to_owned());
        assert!(previous.is_none(), "{key} is listed twice");
    }
    rows
}

/// A default cell holding one backticked TOML value, parsed.
fn literal(cell: &str) -> Option<Value> {
    let inner = cell.strip_prefix('`')?.strip_suffix('`')?;
    if inner.contains('`') {
        return None;
    }
    let table: Table = toml::from_str(&format!("v = {inner}")).ok()?;
    table.get("v").cloned()
}

/// `key = value` as a TOML document, the dotted key split into tables.
fn document(key: &str, value: Value) -> String {
    let mut parts: Vec<&str> = key.split('.').collect();
    let last = parts.pop().unwrap();
    let mut table = Table::from_iter([(last.to_owned(), value)]);
    while let Some(part) = parts.pop() {
        table = Table::from_iter([(part.to_owned(), Value::Table(table))]);
    }
    toml::to_string(&table).unwrap()
}

/// The keys that have a value by default (leaves of the serialized default).
fn keys_with_a_default() -> BTreeSet<String> {
    fn walk(prefix: &str, table: &Table, out: &mut BTreeSet<String>) {
        for (k, v) in table {
            let key = format!("{prefix}{k}");
            match v {
                Value::Table(t) if !t.is_empty() => walk(&format!("{key}."), t, out),
                Value::Table(_) => {}
                _ => {
                    out.insert(key);
                }
            }
        }
    }
    let mut out = BTreeSet::new();
    walk("", &Table::try_from(Config::default()).unwrap(), &mut out);
    out
}

/// The config as a table, with the policy left out (compared resolved instead).
fn comparable(config: &Config) -> Table {
    let mut table = Table::try_from(config).unwrap();
    table.remove("policy");
    table
}

#[test]
fn operations_md_lists_every_config_key() {
    let keys = config_keys();
    // The probe finds the sections it must, so an empty or partial list cannot pass.
    for key in [
        "listen",
        "limits.json_body_bytes",
        "alerts.url",
        "policy.default.base_ms",
    ] {
        assert!(keys.contains(key), "probe missed {key}: {keys:?}");
    }
    let documented = documented();
    let doc_keys: BTreeSet<String> = documented.keys().cloned().collect();
    let missing: Vec<_> = keys.difference(&doc_keys).collect();
    let stale: Vec<_> = doc_keys.difference(&keys).collect();
    assert!(
        missing.is_empty(),
        "docs/operations.md does not list {missing:?}"
    );
    assert!(
        stale.is_empty(),
        "docs/operations.md lists keys that do not exist: {stale:?}"
    );
}

#[test]
fn operations_md_gives_the_real_defaults() {
    let defaults = Config::default();
    let default_policy = defaults.policy.default.resolve().unwrap();
    let with_default = keys_with_a_default();
    for (key, cell) in documented() {
        let Some(value) = literal(&cell) else {
            // Prose ("unset", "the preset's") only where the default has no value.
            assert!(
                !with_default.contains(&key),
                "{key} has a default; its cell must be that value as TOML in backticks, not {cell:?}"
            );
            continue;
        };
        let text = document(&key, value);
        let loaded = Config::from_toml_str(&text, Vec::new())
            .unwrap_or_else(|e| panic!("the documented default of {key} ({cell}) is refused: {e}"));
        assert_eq!(
            comparable(&loaded),
            comparable(&defaults),
            "setting {key} = {cell}, its documented default, changes the config"
        );
        let policy = loaded.policy.default.resolve().unwrap();
        assert_eq!(
            policy, default_policy,
            "setting {key} = {cell}, its documented default, changes the default policy"
        );
    }
}

#[test]
fn every_key_with_a_default_shows_it() {
    let documented = documented();
    for key in keys_with_a_default() {
        let cell = documented
            .get(&key)
            .unwrap_or_else(|| panic!("{key} is not listed"));
        assert!(
            literal(cell).is_some(),
            "{key}: the default cell must be a TOML value in backticks, got {cell:?}"
        );
    }
}

/// The metrics the gateway registers, read from the one file that registers them:
/// each `registry.register(` is followed by the metric's name (without the prefix).
fn registered_metrics() -> BTreeSet<String> {
    const SOURCE: &str = include_str!("../../../server/src/telemetry/metrics.rs");
    SOURCE
        .split(".register(")
        .skip(1)
        .filter_map(|rest| rest.split('"').nth(1))
        .map(|name| format!("hookgate_{name}"))
        .collect()
}

/// Every `hookgate_...` name in `text`.
fn metric_names(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    for (i, _) in text.match_indices("hookgate_") {
        let name: String = text[i..]
            .chars()
            .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
            .collect();
        names.insert(name);
    }
    names
}

/// A name as exposed refers to a registered metric: counters gain `_total`,
/// histograms `_bucket`, `_sum` and `_count`.
fn base_metric<'a>(name: &str, registered: &'a BTreeSet<String>) -> Option<&'a String> {
    let suffixes = ["", "_total", "_bucket", "_sum", "_count"];
    registered
        .iter()
        .find(|m| suffixes.iter().any(|s| name == format!("{m}{s}")))
}

#[test]
fn the_dashboard_and_the_doc_cover_every_metric() {
    let registered = registered_metrics();
    assert!(registered.len() >= 15, "{registered:?}");
    let dashboard: serde_json::Value = serde_json::from_str(include_str!(
        "../../../../docs/grafana/hookgate-dashboard.json"
    ))
    .expect("the dashboard is JSON");
    let mut exprs = String::new();
    for panel in dashboard["panels"].as_array().expect("panels") {
        for target in panel["targets"].as_array().into_iter().flatten() {
            exprs.push_str(target["expr"].as_str().expect("an expr"));
            exprs.push('\n');
        }
    }
    let metrics_section = DOC
        .split("## Metrics")
        .nth(1)
        .and_then(|s| s.split("\n## ").next())
        .expect("a Metrics section");
    let texts = [
        ("the dashboard", exprs.as_str()),
        ("operations.md", metrics_section),
    ];
    for (what, text) in texts {
        let mut used = BTreeSet::new();
        for name in metric_names(text) {
            // The namespace itself (`hookgate_`) may appear in prose.
            if name == "hookgate_" {
                continue;
            }
            let base = base_metric(&name, &registered)
                .unwrap_or_else(|| panic!("{what} uses {name}, which the gateway does not export"));
            used.insert(base.clone());
        }
        // The per-endpoint counter exists only when an operator turns it on; the
        // dashboard leaves it out, the doc does not.
        let mut expected = registered.clone();
        if what == "the dashboard" {
            expected.remove("hookgate_endpoint_attempts");
        }
        let missing: Vec<_> = expected.difference(&used).collect();
        assert!(missing.is_empty(), "{what} does not cover {missing:?}");
    }
}
