//! Endpoints: create, list, show, merge-patch, delete, and their signing secrets.

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::Value;

use super::answer_headers::NoStore;
use super::auth::Principal;
use super::body::{parse_json, read_limited};
use super::endpoint_input::{EndpointInput, lower_header_names, merge_patch, tenant_secret};
use super::endpoint_schema::EndpointPatch;
use super::endpoint_view::EndpointView;
use super::error::ApiError;
use super::openapi::{ItemPath, TenantPath};
use super::{ListPage, Page, bad_query, list_body};
use crate::context::AppContext;
use crate::ids::{EndpointId, TenantId};
use crate::operator_events::{OperatorEvent, OperatorEventType};
use crate::store::{EndpointCreate, EndpointRecord, Swap};

type Json201 = NoStore<(StatusCode, Json<EndpointView>)>;

/// The endpoint of tenant `t` that `id` names, by its id or its uid.
pub(super) async fn load(
    ctx: &AppContext,
    who: &Principal,
    t: &TenantId,
    id: &EndpointId,
) -> Result<EndpointRecord, ApiError> {
    let t = &who.require_tenant(ctx, t).await?;
    ctx.store
        .find_endpoint(t, id)
        .await?
        .filter(|ep| who.reaches_endpoint(&ep.id))
        .ok_or_else(|| ApiError::not_found("endpoint"))
}

/// The answer when a uid is another endpoint's.
fn uid_taken(uid: Option<&str>) -> ApiError {
    ApiError::conflict(format!(
        "another endpoint of this tenant has the uid {:?}",
        uid.unwrap_or_default()
    ))
}

/// Stores a new endpoint of tenant `t` from `input`; answers its view with
/// the signing secret.
async fn create_from(
    ctx: &AppContext,
    who: &Principal,
    t: TenantId,
    input: EndpointInput,
) -> Result<EndpointView, ApiError> {
    let now = ctx.clock.now_ms();
    let secret = tenant_secret(input.secret.as_deref())?;
    let mut ep = EndpointRecord::blank(t, secret.as_str(), now);
    input.apply_to(ctx, who, &mut ep).await?;
    let max = ctx.config.limits.endpoints_per_tenant;
    match ctx.store.create_endpoint(&ep, max).await? {
        EndpointCreate::Created => {}
        EndpointCreate::TooMany => {
            return Err(ApiError::validation(
                "endpoints",
                format!("a tenant may have at most {max} endpoints"),
            ));
        }
        EndpointCreate::UidTaken => return Err(uid_taken(ep.uid.as_deref())),
    }
    tell_changed(ctx, OperatorEventType::EndpointCreated, &ep, now);
    Ok(EndpointView::new(&ep, &ctx.config.policy.default).with_secret_for(&ep, who))
}

/// Registers an endpoint; the answer holds its signing secret (its live
/// secrets can be read again at `GET .../endpoints/{id}/secret`).
#[utoipa::path(post, path = "/v1/tenants/{t}/endpoints", tag = "endpoints",
    operation_id = "create_endpoint", params(TenantPath), request_body = EndpointInput,
    responses((status = 201, description = "The endpoint, with its signing secret", body = EndpointView)))]
pub(super) async fn create(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(t): Path<TenantId>,
    body: Body,
) -> Result<Json201, ApiError> {
    let t = who.require_tenant(&ctx, &t).await?;
    let input: EndpointInput =
        parse_json(&read_limited(body, ctx.config.limits.json_body_bytes).await?)?;
    let view = create_from(&ctx, &who, t, input).await?;
    Ok(NoStore((StatusCode::CREATED, Json(view))))
}

/// Creates or replaces the endpoint whose uid is `{id}`: an endpoint with that
/// uid is replaced whole (fields absent take their defaults; its id and
/// secrets stay), else one is created with it (201, with its secret).
#[utoipa::path(put, path = "/v1/tenants/{t}/endpoints/{id}", tag = "endpoints",
    operation_id = "put_endpoint", params(ItemPath), request_body = EndpointInput,
    responses(
        (status = 200, description = "The endpoint, replaced", body = EndpointView),
        (status = 201, description = "The endpoint, created with its signing secret", body = EndpointView)))]
pub(super) async fn put(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path((t, uid)): Path<(TenantId, String)>,
    body: Body,
) -> Result<Response, ApiError> {
    let t = who.require_tenant(&ctx, &t).await?;
    let mut input: EndpointInput =
        parse_json(&read_limited(body, ctx.config.limits.json_body_bytes).await?)?;
    if !crate::ids::is_valid_uid(&uid) {
        return Err(ApiError::validation(
            "uid",
            "a uid is 1 to 256 of A-Z, a-z, 0-9, _, . and -",
        ));
    }
    if input.uid.as_ref().is_some_and(|given| *given != uid) {
        return Err(ApiError::validation(
            "uid",
            "the body's uid must be the path's",
        ));
    }
    input.uid = Some(uid.clone());
    let existing = ctx
        .store
        .endpoints_of(&t)
        .await?
        .into_iter()
        .find(|ep| ep.uid.as_deref() == Some(uid.as_str()));
    let Some(existing) = existing else {
        let view = create_from(&ctx, &who, t, input).await?;
        return Ok(NoStore((StatusCode::CREATED, Json(view))).into_response());
    };
    if input.secret.is_some() {
        return Err(ApiError::invalid_field(
            "secret",
            "change the secret with rotate-secret",
        ));
    }
    let ctx = &ctx;
    let input = &serde_json::to_value(&input).unwrap_or_default();
    let started = ctx.clock.now_ms();
    let who = &who;
    let ep = modify(ctx, who, &t, &existing.id, |mut ep| async move {
        let input: EndpointInput = serde_json::from_value(input.clone())
            .map_err(|e| ApiError::invalid_field("", e.to_string()))?;
        input.apply_to(ctx, who, &mut ep).await?;
        Ok(ep)
    })
    .await?;
    tell_changed(ctx, OperatorEventType::EndpointUpdated, &ep, started);
    Ok(Json(EndpointView::new(&ep, &ctx.config.policy.default)).into_response())
}

/// Lists the tenant's endpoints, newest first.
#[utoipa::path(get, path = "/v1/tenants/{t}/endpoints", tag = "endpoints",
    operation_id = "list_endpoints", params(TenantPath, Page),
    responses((status = 200, description = "A page of endpoints", body = ListPage<EndpointView>)))]
pub(super) async fn list(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(t): Path<TenantId>,
    page: Result<Query<Page>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<ListPage<EndpointView>>, ApiError> {
    let t = who.require_tenant(&ctx, &t).await?;
    let Query(page) = page.map_err(bad_query)?;
    let (eps, more) = ctx
        .store
        .list_endpoints(&t, page.limit()?, page.cursor.as_deref())
        .await?;
    let next = if more {
        eps.last().map(|e| e.id.clone())
    } else {
        None
    };
    Ok(list_body(
        eps.iter()
            .filter(|e| who.reaches_endpoint(&e.id))
            .map(|e| EndpointView::new(e, &ctx.config.policy.default))
            .collect(),
        next.map(String::from),
    ))
}

/// One endpoint.
#[utoipa::path(get, path = "/v1/tenants/{t}/endpoints/{id}", tag = "endpoints",
    operation_id = "get_endpoint", params(ItemPath),
    responses((status = 200, description = "The endpoint", body = EndpointView)))]
pub(super) async fn show(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path((t, id)): Path<(TenantId, EndpointId)>,
) -> Result<Json<EndpointView>, ApiError> {
    Ok(Json(EndpointView::new(
        &load(&ctx, &who, &t, &id).await?,
        &ctx.config.policy.default,
    )))
}

/// How often a read-modify-write of an endpoint is redone when the endpoint
/// changed under it (breaker saves, a 410, another request).
const MAX_SWAP_TRIES: usize = 16;

/// Read-modify-write of one endpoint: `change` makes the new record from the
/// current one, and the store replaces it only if nothing changed meanwhile;
/// otherwise the endpoint is read again and `change` runs again, so a concurrent
/// change is never undone.
pub(super) async fn modify<F>(
    ctx: &AppContext,
    who: &Principal,
    t: &TenantId,
    id: &EndpointId,
    change: impl FnMut(EndpointRecord) -> F,
) -> Result<EndpointRecord, ApiError>
where
    F: Future<Output = Result<EndpointRecord, ApiError>>,
{
    let found = load(ctx, who, t, id).await?;
    modify_found(ctx, &found, change).await
}

/// [`modify`] of an endpoint already found (and its caller's access checked).
pub(super) async fn modify_found<F>(
    ctx: &AppContext,
    found: &EndpointRecord,
    mut change: impl FnMut(EndpointRecord) -> F,
) -> Result<EndpointRecord, ApiError>
where
    F: Future<Output = Result<EndpointRecord, ApiError>>,
{
    let (t, id) = (&found.tenant_id, &found.id);
    for _ in 0..MAX_SWAP_TRIES {
        let read = ctx
            .store
            .endpoint_version(t, id)
            .await?
            .ok_or_else(|| ApiError::not_found("endpoint"))?;
        let new = change(read.record.clone()).await?;
        match ctx.store.swap_endpoint(&read, &new).await? {
            Swap::Swapped => return Ok(new),
            Swap::Gone => return Err(ApiError::not_found("endpoint")),
            Swap::UidTaken => return Err(uid_taken(new.uid.as_deref())),
            Swap::Changed => {}
        }
    }
    Err(ApiError::conflict(
        "the endpoint kept changing while this request applied; retry",
    ))
}

/// Changes an endpoint with a JSON merge patch (RFC 7396): `null` resets a field to
/// its default. The secret changes only through rotate-secret.
#[utoipa::path(patch, path = "/v1/tenants/{t}/endpoints/{id}", tag = "endpoints",
    operation_id = "update_endpoint", params(ItemPath),
    request_body(content = EndpointPatch, content_type = "application/merge-patch+json"),
    responses((status = 200, description = "The endpoint as changed", body = EndpointView)))]
pub(super) async fn update(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path((t, id)): Path<(TenantId, EndpointId)>,
    body: Body,
) -> Result<Json<EndpointView>, ApiError> {
    let t = who.require_tenant(&ctx, &t).await?;
    let patch: Value = parse_json(&read_limited(body, ctx.config.limits.json_body_bytes).await?)?;
    if patch.get("secret").is_some() {
        return Err(ApiError::invalid_field(
            "secret",
            "change the secret with rotate-secret",
        ));
    }
    if !patch.is_object() {
        return Err(ApiError::invalid_field(
            "",
            "a merge patch must be a JSON object",
        ));
    }
    // The patch alone must be a valid input too: a key the schema does not
    // know is refused even when set to null, which the merge would drop.
    let _: EndpointInput = serde_path_to_error::deserialize(patch.clone()).map_err(|e| {
        let field = e.path().to_string();
        ApiError::invalid_field(field, e.into_inner().to_string())
    })?;
    let mut patch = patch;
    lower_header_names(&mut patch);
    let ctx = &ctx;
    let patch = &patch;
    let started = ctx.clock.now_ms();
    let who = &who;
    let ep = modify(ctx, who, &t, &id, |mut ep| async move {
        let mut merged = serde_json::to_value(EndpointInput::of(&ep)).unwrap_or_default();
        merge_patch(&mut merged, patch);
        // The filter is one value, replaced whole: merging two filters would
        // make a third neither side wrote.
        if let (Some(filter), Value::Object(m)) = (patch.get("filter"), &mut merged) {
            match filter {
                Value::Null => m.remove("filter"),
                given => m.insert("filter".into(), given.clone()),
            };
        }
        let input: EndpointInput = serde_path_to_error::deserialize(merged).map_err(|e| {
            let field = e.path().to_string();
            ApiError::invalid_field(field, e.into_inner().to_string())
        })?;
        input.apply_to(ctx, who, &mut ep).await?;
        Ok(ep)
    })
    .await?;
    tell_changed(ctx, OperatorEventType::EndpointUpdated, &ep, started);
    Ok(Json(EndpointView::new(&ep, &ctx.config.policy.default)))
}

/// Tells operator endpoints that `ep` was created, updated or deleted by a
/// request that started at `started`, and that it was disabled, if that request
/// disabled it.
fn tell_changed(ctx: &AppContext, kind: OperatorEventType, ep: &EndpointRecord, started: u64) {
    let now = ctx.clock.now_ms();
    ctx.operator_events
        .emit(OperatorEvent::endpoint(kind, ep, now));
    if kind == OperatorEventType::EndpointUpdated
        && ep.disabled
        && ep.disabled_at_ms.is_some_and(|at| at >= started)
    {
        ctx.operator_events
            .emit(OperatorEvent::endpoint_disabled(ep, now));
    }
}

/// Deletes an endpoint; its pending deliveries end.
#[utoipa::path(delete, path = "/v1/tenants/{t}/endpoints/{id}", tag = "endpoints",
    operation_id = "delete_endpoint", params(ItemPath),
    responses((status = 204, description = "Deleted")))]
pub(super) async fn delete(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path((t, id)): Path<(TenantId, EndpointId)>,
) -> Result<StatusCode, ApiError> {
    let ep = load(&ctx, &who, &t, &id).await?;
    let now = ctx.clock.now_ms();
    ctx.store.delete_endpoint(&ep, now).await?;
    ctx.telemetry.alerts().forget_endpoint(&ep.id);
    tell_changed(&ctx, OperatorEventType::EndpointDeleted, &ep, now);
    Ok(StatusCode::NO_CONTENT)
}

/// Closes the endpoint's circuit breaker by hand: the streak and the cool-down
/// ladder start over, and its pending work is served at once.
#[utoipa::path(post, path = "/v1/tenants/{t}/endpoints/{id}/breaker/reset", tag = "endpoints",
    operation_id = "reset_endpoint_breaker", params(ItemPath),
    responses((status = 200, description = "The endpoint, breaker closed", body = EndpointView)))]
pub(super) async fn reset_breaker(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path((t, id)): Path<(TenantId, EndpointId)>,
) -> Result<Json<EndpointView>, ApiError> {
    let ep = load(&ctx, &who, &t, &id).await?;
    let (t, id) = (&ep.tenant_id, &ep.id);
    match ctx.store.reset_breaker(t, id).await? {
        None => return Err(ApiError::not_found("endpoint")),
        Some(true) => {
            let now = ctx.clock.now_ms();
            ctx.telemetry.breaker_transition(t, id, false, now);
            (ctx.operator_events).emit(OperatorEvent::breaker(t, id.as_str(), false, now));
        }
        Some(false) => {}
    }
    Ok(Json(EndpointView::new(
        &load(&ctx, &who, t, id).await?,
        &ctx.config.policy.default,
    )))
}
