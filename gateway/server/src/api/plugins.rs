//! A tenant's retry-policy plugins (docs/plugins.md): upload a new version, list, show, delete,
//! and roll the active version back.
//!
//! The work is the plugin service's ([`crate::plugins`]); this is its HTTP face.
//! An upload runs upload checks 1–9 (see `plugin_runtime::PluginHost::check`), then
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

use super::auth::Principal;
use super::body::read_limited;
use super::error::ApiError;
use super::openapi::{PluginPath, TenantPath};
use super::plugin_view::{PluginObject, UploadChecksView, plugin_view, preloaded_view};
use super::{ListPage, list_body};
use crate::context::AppContext;
use crate::ids::TenantId;
use crate::plugins::ListedPlugin;

/// Bodies up to this many times the upload limit are read (and refused by check
/// 1 with a reason); larger ones are 413.
const TRANSPORT_FACTOR: usize = 4;

fn render(ctx: &AppContext, plugin: &ListedPlugin) -> PluginObject {
    match plugin {
        ListedPlugin::Preloaded(view) => preloaded_view(view),
        ListedPlugin::Uploaded(rec) => plugin_view(ctx, rec),
    }
}

/// The API schema of an uploaded `.wasm`: raw bytes. Only described, never built.
pub(super) enum WasmBytes {}

impl utoipa::PartialSchema for WasmBytes {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::ObjectBuilder::new()
            .schema_type(utoipa::openapi::schema::Type::String)
            .format(Some(utoipa::openapi::SchemaFormat::KnownFormat(
                utoipa::openapi::KnownFormat::Binary,
            )))
            .content_media_type("application/wasm")
            .into()
    }
}

impl utoipa::ToSchema for WasmBytes {}

/// The answer to an upload. Fields are in alphabetical order, as clients have
/// always received them.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub(super) struct UploadedVersion {
    checks: UploadChecksView,
    /// `policy` (bound by an endpoint's `plugin`) or `transform` (bound by its
    /// `transform`): what the plugin exports.
    #[schema(example = "policy")]
    kind: &'static str,
    name: String,
    /// SHA-256 of the bytes as uploaded, hex.
    sha256: String,
    size: u64,
    version: u32,
}

/// Uploads a new version of a plugin; it runs the upload checks, then becomes active.
#[utoipa::path(put, path = "/v1/tenants/{t}/plugins/{name}", tag = "plugins",
    operation_id = "upload_plugin", params(PluginPath),
    request_body(description = "The `.wasm`: a core module for `wasm32-unknown-unknown`, or a component",
        content((WasmBytes = "application/wasm"), (WasmBytes = "application/octet-stream"))),
    responses((status = 201, description = "The version stored, with its check results", body = UploadedVersion)))]
pub(super) async fn upload(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path((t, name)): Path<(TenantId, String)>,
    body: Body,
) -> Result<(StatusCode, Json<UploadedVersion>), ApiError> {
    let t = who.require_tenant(&ctx, &t).await?;
    let admitted = ctx.plugins.admit_upload(&t, &name).await?;
    let limit = ctx.config.limits.plugin_upload_bytes;
    let bytes = read_limited(body, limit.saturating_mul(TRANSPORT_FACTOR)).await?;
    let up = ctx.plugins.upload(admitted, bytes).await?;
    let body = UploadedVersion {
        checks: UploadChecksView::from(&up.checks),
        kind: up.kind.as_str(),
        name: up.name,
        sha256: up.sha256,
        size: up.size,
        version: up.version,
    };
    Ok((StatusCode::CREATED, Json(body)))
}

/// Lists the tenant's plugins, by name.
#[utoipa::path(get, path = "/v1/tenants/{t}/plugins", tag = "plugins",
    operation_id = "list_plugins", params(TenantPath),
    responses((status = 200, description = "Every plugin", body = ListPage<PluginObject>)))]
pub(super) async fn list(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(t): Path<TenantId>,
) -> Result<Json<ListPage<PluginObject>>, ApiError> {
    let t = who.require_tenant(&ctx, &t).await?;
    let items = ctx.plugins.list(&t).await?;
    Ok(list_body(
        items.iter().map(|p| render(&ctx, p)).collect(),
        None,
    ))
}

/// One plugin with its versions.
#[utoipa::path(get, path = "/v1/tenants/{t}/plugins/{name}", tag = "plugins",
    operation_id = "get_plugin", params(PluginPath),
    responses((status = 200, description = "The plugin", body = PluginObject)))]
pub(super) async fn show(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path((t, name)): Path<(TenantId, String)>,
) -> Result<Json<PluginObject>, ApiError> {
    let t = who.require_tenant(&ctx, &t).await?;
    let plugin = ctx.plugins.show(&t, &name).await?;
    Ok(Json(render(&ctx, &plugin)))
}

/// Deletes every version of a plugin; 409 while an endpoint binds it.
#[utoipa::path(delete, path = "/v1/tenants/{t}/plugins/{name}", tag = "plugins",
    operation_id = "delete_plugin", params(PluginPath),
    responses((status = 204, description = "Deleted")))]
pub(super) async fn delete(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path((t, name)): Path<(TenantId, String)>,
) -> Result<StatusCode, ApiError> {
    let t = who.require_tenant(&ctx, &t).await?;
    ctx.plugins.delete(&t, &name).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Makes the version before the active one active.
#[utoipa::path(post, path = "/v1/tenants/{t}/plugins/{name}/rollback", tag = "plugins",
    operation_id = "rollback_plugin", params(PluginPath),
    responses((status = 200, description = "The plugin", body = PluginObject)))]
pub(super) async fn rollback(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path((t, name)): Path<(TenantId, String)>,
) -> Result<Json<PluginObject>, ApiError> {
    let t = who.require_tenant(&ctx, &t).await?;
    let rec = ctx.plugins.rollback(&t, &name).await?;
    Ok(Json(plugin_view(&ctx, &rec)))
}
