//! The plugin object as the API shows it:
//!
//! ```json
//! {"name": "json-error-code", "source": "upload", "active_version": 2,
//!  "sha256": "...", "size": 72623, "created_at": "...", "disabled": false,
//!  "versions": [{"version": 1, "sha256": "...", "size": 70210, "created_at": "...",
//!                "active": false, "disabled": false, "loaded": true,
//!                "consecutive_failures": 0,
//!                "checks": {"passed": ["1 size", ..., "9 conformance"],
//!                           "fuel_used": 6042, "fuel_limit": 10000000,
//!                           "memory_used_bytes": 1179648,
//!                           "memory_limit_bytes": 16777216}}, ...]}
//! ```
//!
//! The top-level `sha256`, `size`, `created_at` and `disabled` are the active
//! version's. `loaded` is false for a stored version that no longer loads.
//! `checks` is null where no results are known: versions stored by older builds,
//! and preloaded plugins (loaded with checks 1–8; conformance never runs on them).

use crate::plugin_runtime::{PluginKind, RunCounts};
use serde::Serialize;

use super::openapi::PluginSourceName;
use crate::clock::rfc3339_ms;
use crate::context::AppContext;
use crate::plugin_runtime::PluginView;
use crate::store::{PluginRecord, StoredChecks};

/// One version's row.
struct Row {
    version: u32,
    sha256: String,
    size: u64,
    created_at_ms: u64,
    disabled: bool,
    loaded: bool,
    consecutive_failures: u32,
    runs: RunCounts,
    checks: Option<StoredChecks>,
}

/// A version's runs on the gateway that answers, since it started: decisions
/// or transforms in all, those that failed, those a transform skipped, and the
/// time they took in all.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct RunsView {
    count: u64,
    failed: u64,
    skipped: u64,
    time_us: u64,
}

impl From<RunCounts> for RunsView {
    fn from(r: RunCounts) -> Self {
        Self {
            count: r.count,
            failed: r.failed,
            skipped: r.skipped,
            time_us: r.time_us,
        }
    }
}

/// What a version's upload checks found.
#[derive(Debug, Clone, Serialize, utoipa::ToSchema)]
#[schema(as = UploadChecks)]
pub(super) struct UploadChecksView {
    /// The checks passed, as the upload checks name them, in the order they ran.
    passed: Vec<String>,
    /// The most fuel one conformance sample used (check 9).
    fuel_used: u64,
    /// The fuel a decision may use.
    fuel_limit: u64,
    /// The most memory one conformance sample used, in bytes (check 9).
    memory_used_bytes: u64,
    /// The memory a decision may use, in bytes.
    memory_limit_bytes: u64,
}

impl From<&StoredChecks> for UploadChecksView {
    fn from(c: &StoredChecks) -> Self {
        Self {
            passed: c.passed.clone(),
            fuel_used: c.fuel_used,
            fuel_limit: c.fuel_limit,
            memory_used_bytes: c.memory_used_bytes,
            memory_limit_bytes: c.memory_limit_bytes,
        }
    }
}

// Fields are declared in alphabetical order: the `json!` bodies these replaced
// serialised that way (serde_json without `preserve_order`), and clients may
// compare bytes. A field that has no value is `null`, never left out.

/// The plugin object.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct PluginObject {
    active_version: u32,
    #[schema(format = DateTime)]
    created_at: Option<String>,
    disabled: bool,
    /// `policy` (bound by an endpoint's `plugin`) or `transform` (bound by its
    /// `transform`); null when no version is loaded.
    #[schema(value_type = Option<String>, example = "policy")]
    kind: Option<&'static str>,
    name: String,
    sha256: Option<String>,
    size: Option<u64>,
    #[schema(value_type = PluginSourceName)]
    source: &'static str,
    versions: Vec<PluginVersionView>,
}

/// One version of a plugin.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct PluginVersionView {
    active: bool,
    checks: Option<UploadChecksView>,
    consecutive_failures: u32,
    #[schema(format = DateTime)]
    created_at: String,
    disabled: bool,
    loaded: bool,
    runs: RunsView,
    sha256: String,
    size: u64,
    version: u32,
}

fn render(
    name: &str,
    source: &'static str,
    kind: Option<PluginKind>,
    active: u32,
    rows: &[Row],
) -> PluginObject {
    let versions = rows
        .iter()
        .map(|r| PluginVersionView {
            active: r.version == active,
            checks: r.checks.as_ref().map(UploadChecksView::from),
            consecutive_failures: r.consecutive_failures,
            created_at: rfc3339_ms(r.created_at_ms),
            disabled: r.disabled,
            loaded: r.loaded,
            runs: RunsView::from(r.runs),
            sha256: r.sha256.clone(),
            size: r.size,
            version: r.version,
        })
        .collect();
    let current = rows.iter().find(|r| r.version == active);
    PluginObject {
        active_version: active,
        created_at: current.map(|r| rfc3339_ms(r.created_at_ms)),
        disabled: current.is_some_and(|r| r.disabled),
        kind: kind.map(PluginKind::as_str),
        name: name.to_owned(),
        sha256: current.map(|r| r.sha256.clone()),
        size: current.map(|r| r.size),
        source,
        versions,
    }
}

/// An uploaded plugin: versions from the store, health from the host.
pub(super) fn plugin_view(ctx: &AppContext, rec: &PluginRecord) -> PluginObject {
    let rows: Vec<Row> = rec
        .versions
        .iter()
        .map(|v| {
            let status = ctx
                .plugins
                .version_status(&rec.tenant_id, &rec.name, v.version);
            Row {
                version: v.version,
                sha256: v.sha256.clone(),
                size: v.size,
                created_at_ms: v.created_at_ms,
                disabled: v.disabled || status.is_some_and(|s| s.disabled),
                loaded: status.is_some(),
                consecutive_failures: status.map_or(0, |s| s.consecutive_failures),
                runs: status.map_or_else(RunCounts::default, |s| s.runs),
                checks: v.checks.clone(),
            }
        })
        .collect();
    let kind = ctx.plugins.kind_of(&rec.tenant_id, &rec.name);
    render(&rec.name, "upload", kind, rec.active, &rows)
}

/// A plugin from `[[plugins.preload]]`, from the host alone.
pub(super) fn preloaded_view(view: &PluginView) -> PluginObject {
    let rows: Vec<Row> = view
        .versions
        .iter()
        .map(|v| Row {
            version: v.info.version,
            sha256: v.info.sha256.clone(),
            size: v.info.size,
            created_at_ms: v.info.created_at_ms,
            disabled: v.status.disabled,
            loaded: true,
            consecutive_failures: v.status.consecutive_failures,
            runs: v.status.runs,
            checks: None,
        })
        .collect();
    render(&view.name, "preload", Some(view.kind), view.active, &rows)
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// The plugin object as `render` built it with `json!`.
    fn render_json(name: &str, source: &str, active: u32, rows: &[Row]) -> Value {
        let versions: Vec<Value> = rows
            .iter()
            .map(|r| {
                json!({
                    "version": r.version,
                    "sha256": r.sha256,
                    "size": r.size,
                    "created_at": rfc3339_ms(r.created_at_ms),
                    "active": r.version == active,
                    "disabled": r.disabled,
                    "loaded": r.loaded,
                    "consecutive_failures": r.consecutive_failures,
                    "runs": {"count": r.runs.count, "failed": r.runs.failed,
                             "skipped": r.runs.skipped, "time_us": r.runs.time_us},
                    "checks": r.checks,
                })
            })
            .collect();
        let current = rows.iter().find(|r| r.version == active);
        json!({
            "name": name,
            "source": source,
            "kind": "policy",
            "active_version": active,
            "sha256": current.map(|r| r.sha256.as_str()),
            "size": current.map(|r| r.size),
            "created_at": current.map(|r| rfc3339_ms(r.created_at_ms)),
            "disabled": current.is_some_and(|r| r.disabled),
            "versions": versions,
        })
    }

    fn row(version: u32, disabled: bool, loaded: bool) -> Row {
        Row {
            version,
            sha256: format!("{version:064x}"),
            size: 70_000 + u64::from(version),
            created_at_ms: 1_700_000_000_000 + u64::from(version),
            disabled,
            loaded,
            consecutive_failures: version * 3,
            runs: RunCounts {
                count: u64::from(version) * 10,
                failed: u64::from(version),
                skipped: 0,
                time_us: 77,
            },
            checks: None,
        }
    }

    #[test]
    fn the_plugin_object_matches_its_json_form() {
        let rows = [
            row(1, false, false),
            row(2, true, true),
            row(3, false, true),
        ];
        // The active version disabled, then none of the rows active (all `null`).
        for (source, active) in [("upload", 2), ("preload", 3), ("upload", 9)] {
            assert_eq!(
                serde_json::to_string(&render(
                    "json-error-code",
                    source,
                    Some(PluginKind::Policy),
                    active,
                    &rows
                ))
                .unwrap(),
                serde_json::to_string(&render_json("json-error-code", source, active, &rows))
                    .unwrap()
            );
        }
    }
}
