//! A tenant's retry-policy plugins (docs/plugins.md): upload a new version, list, show, delete,
//! and roll the active version back.
//!
//! An upload runs upload checks 1–9 (see `policy::wasm::PluginHost::check`), then
//! stores the bytes as the next version and makes it active (step 10). Limits: a
//! body past 4× the upload limit is 413; past the limit itself it is refused by
//! check 1 (422 `plugin_rejected`); 10 uploads per tenant per rolling hour (429
//! `rate_limited`); one compile at a time (503 `busy` after 30 s of waiting).
//! After an upload only the newest `plugins.keep_versions` versions are kept, plus
//! the active one and any an endpoint binds as `name@version`.
//! Plugins from `[[plugins.preload]]` are listed but belong to the config: changing
//! one is 409.

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde_json::{Value, json};

use super::auth::Principal;
use super::body::read_limited;
use super::error::ApiError;
use super::list_body;
use super::plugin_view::{plugin_view, preloaded_view};
use crate::context::AppContext;
use crate::policy::wasm::{PluginBinding, PluginSource, UploadError, check_upload};

/// Bodies up to this many times the upload limit are read (and refused by check
/// 1 with a reason); larger ones are 413.
const TRANSPORT_FACTOR: usize = 4;

/// A name endpoints can bind: the tenant-id alphabet, 1 to 63 characters.
fn valid_name(name: &str) -> bool {
    crate::ids::is_valid_tenant_id(name)
}

/// 409 for a plugin the config owns.
fn refuse_preloaded(ctx: &AppContext, t: &str, name: &str) -> Result<(), ApiError> {
    if ctx.plugins.source(t, name) == Some(PluginSource::Preload) {
        return Err(ApiError::conflict(format!(
            "plugin {name:?} is loaded from [[plugins.preload]]; change it in the config"
        )));
    }
    Ok(())
}

/// `PUT /v1/tenants/{t}/plugins/{name}`: the body is the `.wasm` (a core module
/// built for `wasm32-unknown-unknown`, or a component). 201
/// `{"name","version","sha256","size"}`.
pub(super) async fn upload(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path((t, name)): Path<(String, String)>,
    body: Body,
) -> Result<(StatusCode, Json<Value>), ApiError> {
    who.require_tenant(&ctx, &t)?;
    if !valid_name(&name) {
        return Err(ApiError::validation(
            "name",
            "a plugin name is 1 to 63 of a-z, 0-9, _ and -, starting with a letter or digit",
        ));
    }
    refuse_preloaded(&ctx, &t, &name)?;
    let max = ctx.config.limits.plugins_per_tenant;
    if ctx.store.plugin(&t, &name)?.is_none() && ctx.store.plugins_of(&t)?.len() >= max {
        return Err(ApiError::validation(
            "name",
            format!("a tenant may have at most {max} plugins"),
        ));
    }
    ctx.plugins
        .uploads()
        .admit(&t, ctx.clock.now_ms())
        .map_err(|wait_ms| {
            ApiError::rate_limited(format!(
                "at most {} plugin uploads per tenant per hour; try again in {} s",
                crate::policy::wasm::UPLOADS_PER_HOUR,
                wait_ms.div_ceil(1_000)
            ))
        })?;
    let limit = ctx.config.limits.plugin_upload_bytes;
    let bytes = read_limited(body, limit.saturating_mul(TRANSPORT_FACTOR)).await?;
    let checked = check_upload(&ctx.plugins, bytes.clone())
        .await
        .map_err(|e| match e {
            UploadError::Busy => ApiError::busy(e.to_string()),
            UploadError::Rejected(e) => match e.check() {
                Some(check) => ApiError::plugin_rejected(format!("check {check}: {e}")),
                None => ApiError::plugin_rejected(e.to_string()),
            },
        })?;
    let _changes = ctx.plugins.uploads().changes().await;
    let now = ctx.clock.now_ms();
    let (sha256, size) = (checked.sha256.clone(), checked.size);
    let rec = ctx
        .store
        .add_plugin_version(&t, &name, &bytes, &sha256, now, max)
        .await?
        .ok_or_else(|| {
            ApiError::validation("name", format!("a tenant may have at most {max} plugins"))
        })?;
    ctx.plugins.install(&t, &name, rec.active, now, checked);
    // The new version is stored and active; older ones past the cap go now.
    let keep = ctx.config.plugins.keep_versions as usize;
    ctx.plugins
        .prune_versions(&ctx.store, &t, &name, keep)
        .await?;
    let body = json!({"name": name, "version": rec.active, "sha256": sha256, "size": size});
    Ok((StatusCode::CREATED, Json(body)))
}

/// `GET /v1/tenants/{t}/plugins`: every plugin of the tenant, by name.
pub(super) async fn list(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(t): Path<String>,
) -> Result<Json<Value>, ApiError> {
    who.require_tenant(&ctx, &t)?;
    let mut items: Vec<(String, Value)> = ctx
        .plugins
        .views(&t)
        .iter()
        .filter(|v| v.source == PluginSource::Preload)
        .map(|v| (v.name.clone(), preloaded_view(v)))
        .collect();
    for rec in ctx.store.plugins_of(&t)? {
        if ctx.plugins.source(&t, &rec.name) != Some(PluginSource::Preload) {
            items.push((rec.name.clone(), plugin_view(&ctx, &rec)));
        }
    }
    items.sort_by(|a, b| a.0.cmp(&b.0));
    Ok(list_body(items.into_iter().map(|(_, v)| v).collect(), None))
}

/// `GET /v1/tenants/{t}/plugins/{name}`.
pub(super) async fn show(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path((t, name)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    who.require_tenant(&ctx, &t)?;
    if ctx.plugins.source(&t, &name) == Some(PluginSource::Preload)
        && let Some(view) = ctx.plugins.view(&t, &name)
    {
        return Ok(Json(preloaded_view(&view)));
    }
    let rec = ctx
        .store
        .plugin(&t, &name)?
        .ok_or_else(|| ApiError::not_found("plugin"))?;
    Ok(Json(plugin_view(&ctx, &rec)))
}

/// `DELETE /v1/tenants/{t}/plugins/{name}`: every version goes; 409 while an
/// endpoint binds it.
pub(super) async fn delete(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path((t, name)): Path<(String, String)>,
) -> Result<StatusCode, ApiError> {
    who.require_tenant(&ctx, &t)?;
    refuse_preloaded(&ctx, &t, &name)?;
    let _changes = ctx.plugins.uploads().changes().await;
    if ctx.store.plugin(&t, &name)?.is_none() {
        return Err(ApiError::not_found("plugin"));
    }
    let bound: Vec<String> = ctx
        .store
        .endpoints_of(&t)?
        .into_iter()
        .filter(|ep| {
            ep.plugin
                .as_deref()
                .and_then(|p| PluginBinding::parse(&t, p))
                .is_some_and(|b| b.name == name)
        })
        .map(|ep| ep.id)
        .collect();
    if !bound.is_empty() {
        return Err(ApiError::conflict(format!(
            "plugin {name:?} is bound by endpoint(s) {}; unbind it first",
            bound.join(", ")
        )));
    }
    let Some(rec) = ctx.store.delete_plugin(&t, &name).await? else {
        return Err(ApiError::not_found("plugin"));
    };
    let remaining = ctx.store.all_plugins()?;
    let unused: Vec<String> = rec
        .versions
        .iter()
        .map(|v| v.sha256.clone())
        .filter(|sha| {
            !remaining
                .iter()
                .flat_map(|r| &r.versions)
                .any(|v| &v.sha256 == sha)
        })
        .collect();
    ctx.plugins.unload(&t, &name, &unused);
    tracing::info!(tenant = %t, plugin = %name, "plugin deleted");
    Ok(StatusCode::NO_CONTENT)
}

/// `POST /v1/tenants/{t}/plugins/{name}/rollback`: the active pointer moves to the
/// version before it; 409 at the oldest. Answers the plugin object.
pub(super) async fn rollback(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path((t, name)): Path<(String, String)>,
) -> Result<Json<Value>, ApiError> {
    who.require_tenant(&ctx, &t)?;
    refuse_preloaded(&ctx, &t, &name)?;
    let _changes = ctx.plugins.uploads().changes().await;
    let rec = ctx
        .store
        .plugin(&t, &name)?
        .ok_or_else(|| ApiError::not_found("plugin"))?;
    let Some(previous) = rec.previous() else {
        return Err(ApiError::conflict(format!(
            "version {} of plugin {name:?} is the oldest; there is nothing to roll back to",
            rec.active
        )));
    };
    let rec = ctx
        .store
        .update_plugin(&t, &name, |r| r.active = previous)
        .await?
        .ok_or_else(|| ApiError::not_found("plugin"))?;
    ctx.plugins.set_active(&t, &name, previous);
    tracing::info!(tenant = %t, plugin = %name, active = previous, "plugin rolled back");
    Ok(Json(plugin_view(&ctx, &rec)))
}
