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

use serde_json::{Value, json};

use crate::clock::rfc3339_ms;
use crate::context::AppContext;
use crate::policy::wasm::{PluginView, UploadChecks};
use crate::store::PluginRecord;

/// One version's row.
struct Row {
    version: u32,
    sha256: String,
    size: u64,
    created_at_ms: u64,
    disabled: bool,
    loaded: bool,
    consecutive_failures: u32,
    checks: Option<UploadChecks>,
}

fn render(name: &str, source: &str, active: u32, rows: &[Row]) -> Value {
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
                "checks": r.checks,
            })
        })
        .collect();
    let current = rows.iter().find(|r| r.version == active);
    json!({
        "name": name,
        "source": source,
        "active_version": active,
        "sha256": current.map(|r| r.sha256.as_str()),
        "size": current.map(|r| r.size),
        "created_at": current.map(|r| rfc3339_ms(r.created_at_ms)),
        "disabled": current.is_some_and(|r| r.disabled),
        "versions": versions,
    })
}

/// An uploaded plugin: versions from the store, health from the host.
pub(super) fn plugin_view(ctx: &AppContext, rec: &PluginRecord) -> Value {
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
                checks: v.checks.clone(),
            }
        })
        .collect();
    render(&rec.name, "upload", rec.active, &rows)
}

/// A plugin from `[[plugins.preload]]`, from the host alone.
pub(super) fn preloaded_view(view: &PluginView) -> Value {
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
            checks: None,
        })
        .collect();
    render(&view.name, "preload", view.active, &rows)
}
