//! Operator endpoints: where operator events go. The admin's
//! (`/v1/operator-endpoints`) hear every tenant's events and the gateway's own;
//! a tenant's (`/v1/tenants/{t}/operator-endpoints`) hear only that tenant's.
//! Each is an endpoint of an operator namespace, so the normal engine signs,
//! retries and dead-letters what it is sent; like any endpoint made over the
//! API it is not trusted: its URL passes the address guard and
//! `outbound.allow_only`.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::answer_headers::NoStore;
use super::auth::Principal;
use super::body::{parse_json, read_limited};
use super::endpoint_headers;
use super::endpoint_input::{
    checked_description, checked_patterns, checked_url, lower_header_names, merge_patch,
    set_disabled, tenant_secret,
};
use super::endpoints::modify_found;
use super::error::ApiError;
use super::openapi::{ItemPath, OperatorEndpointPath, TenantPath};
use super::{ListPage, list_body};
use crate::clock::rfc3339_ms;
use crate::context::AppContext;
use crate::ids::{EndpointId, TenantId};
use crate::operator_events::{OPERATOR_TENANT, OperatorEventType, tenant_namespace};
use crate::store::{EndpointCreate, EndpointRecord, StoredSecret};

/// Most operator endpoints one namespace (the admin's, or one tenant's) holds.
const MAX_PER_NAMESPACE: usize = 20;
/// An operator endpoint's request timeout and in-flight cap: operator events
/// are few, and a slow receiver of them must hold few places.
const TIMEOUT_MS: u64 = 15_000;
const MAX_IN_FLIGHT: u32 = 4;

/// What may be set on an operator endpoint, on create and by merge patch.
#[derive(Debug, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({
    "url": "https://ops.example.com/hookgate",
    "description": "on-call",
    "event_types": ["endpoint.disabled", "delivery.exhausted", "alert.*"]
}))]
pub(super) struct OperatorEndpointInput {
    /// Where operator events go: `http` or `https`, checked like any endpoint's.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(required = true, example = "https://ops.example.com/hookgate")]
    url: Option<String>,
    /// Free text for people.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    description: Option<String>,
    /// Operator event types or patterns (`endpoint.*`, `*`); `["*"]` when absent.
    /// Each must name at least one operator event type.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(min_items = 1, example = json!(["endpoint.*", "delivery.exhausted"]))]
    event_types: Option<Vec<String>>,
    /// Its signing secret (`whsec_...`); generated on create when absent. A
    /// patch that gives one replaces the old at once.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    secret: Option<String>,
    /// Headers sent with every request, name → value; `null` removes one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<BTreeMap<String, Option<String>>>)]
    headers: Option<BTreeMap<String, Option<String>>>,
    /// A disabled operator endpoint is sent nothing new.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    disabled: Option<bool>,
}

/// The API schema of an operator endpoint's merge patch: the fields of
/// [`OperatorEndpointInput`], none required, each nullable. Only described.
pub(super) enum OperatorEndpointPatch {}

impl utoipa::PartialSchema for OperatorEndpointPatch {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        super::endpoint_schema::merge_patch_schema::<OperatorEndpointInput>(
            "A JSON merge patch (RFC 7396) of the operator endpoint: absent fields stay, null resets one to its default",
            &[],
            json!({"event_types": ["endpoint.*"], "disabled": false}),
        )
    }
}

impl utoipa::ToSchema for OperatorEndpointPatch {}

/// An operator endpoint as shown.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct OperatorEndpointView {
    #[schema(example = "ep_01J9Z3V8M4Q2W6Y8A0C2E4G6J8")]
    id: String,
    url: String,
    description: String,
    event_types: Vec<String>,
    headers: BTreeMap<String, String>,
    disabled: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    disabled_reason: Option<String>,
    /// RFC 3339.
    created_at: String,
    /// Its signing secret, in the answer to create only.
    #[serde(skip_serializing_if = "Option::is_none")]
    secret: Option<String>,
}

impl OperatorEndpointView {
    fn of(ep: &EndpointRecord) -> Self {
        Self {
            id: ep.id.as_str().to_owned(),
            url: ep.url.clone(),
            description: ep.description.clone(),
            event_types: ep.event_types.clone(),
            headers: endpoint_headers::shown(&ep.headers),
            disabled: ep.disabled,
            disabled_reason: ep.disabled_reason.clone(),
            created_at: rfc3339_ms(ep.created_at_ms),
            secret: None,
        }
    }
}

impl OperatorEndpointInput {
    /// The settable fields of `ep`, as a merge patch starts from.
    fn of(ep: &EndpointRecord) -> Self {
        Self {
            url: Some(ep.url.clone()),
            description: Some(ep.description.clone()),
            event_types: Some(ep.event_types.clone()),
            secret: None,
            headers: Some(
                endpoint_headers::stored(&ep.headers)
                    .into_iter()
                    .map(|(k, v)| (k, Some(v)))
                    .collect(),
            ),
            disabled: Some(ep.disabled),
        }
    }

    /// Validates every field and writes the result into `ep`.
    async fn apply_to(self, ctx: &AppContext, ep: &mut EndpointRecord) -> Result<(), ApiError> {
        let url = checked_url(ctx, self.url.as_deref()).await?;
        let description = checked_description(ctx, self.description)?;
        let event_types = checked_patterns(ctx, self.event_types)?;
        for (i, p) in event_types.iter().enumerate() {
            if !OperatorEventType::subscribable(p) {
                let known: Vec<&str> = OperatorEventType::ALL.iter().map(|k| k.as_str()).collect();
                return Err(ApiError::validation(
                    format!("event_types[{i}]"),
                    format!(
                        "{p:?} names no operator event type; they are {}",
                        known.join(", ")
                    ),
                ));
            }
        }
        let given: BTreeMap<String, String> = (self.headers.unwrap_or_default().into_iter())
            .filter_map(|(k, v)| Some((k, v?)))
            .collect();
        let headers = endpoint_headers::validate(&given, &[], &ep.headers)?;
        if let Some(given) = self.secret.as_deref() {
            let secret = tenant_secret(Some(given))?;
            ep.secrets = vec![StoredSecret {
                secret: secret.as_str().to_owned(),
                expires_at_ms: None,
                signing_key: None,
            }];
        }
        set_disabled(ctx, ep, self.disabled.unwrap_or(false));
        ep.url = url.to_string();
        ep.description = description;
        ep.event_types = event_types;
        ep.headers = headers;
        Ok(())
    }
}

/// The admin's namespace; only the admin may use it.
fn admin_namespace(who: &Principal) -> Result<TenantId, ApiError> {
    who.require_admin()?;
    Ok(TenantId::from(OPERATOR_TENANT))
}

/// Tenant `t`'s namespace, for the admin or that tenant.
async fn tenant_ns(ctx: &AppContext, who: &Principal, t: &TenantId) -> Result<TenantId, ApiError> {
    Ok(tenant_namespace(&who.require_tenant(ctx, t).await?))
}

async fn create_in(ctx: &AppContext, ns: TenantId, body: Body) -> Result<Json201, ApiError> {
    let input: OperatorEndpointInput =
        parse_json(&read_limited(body, ctx.config.limits.json_body_bytes).await?)?;
    let now = ctx.clock.now_ms();
    let secret = tenant_secret(None)?;
    let mut ep = EndpointRecord::blank(ns, secret.as_str(), now);
    (ep.timeout_ms, ep.max_in_flight) = (TIMEOUT_MS, MAX_IN_FLIGHT);
    input.apply_to(ctx, &mut ep).await?;
    match ctx.store.create_endpoint(&ep, MAX_PER_NAMESPACE).await? {
        EndpointCreate::Created => {}
        EndpointCreate::TooMany | EndpointCreate::UidTaken => {
            return Err(ApiError::validation(
                "operator_endpoints",
                format!("at most {MAX_PER_NAMESPACE} operator endpoints"),
            ));
        }
    }
    let mut view = OperatorEndpointView::of(&ep);
    view.secret = ep.secrets.first().map(|s| s.secret.clone());
    Ok(NoStore((StatusCode::CREATED, Json(view))))
}

async fn list_in(
    ctx: &AppContext,
    ns: &TenantId,
) -> Result<Json<ListPage<OperatorEndpointView>>, ApiError> {
    let mut eps = ctx.store.endpoints_of(ns).await?;
    eps.sort_by(|a, b| b.id.as_str().cmp(a.id.as_str()));
    // Config-made ones (alerts.url) are the config's: shown by neither list.
    let views = eps
        .iter()
        .filter(|e| !e.trusted)
        .map(OperatorEndpointView::of);
    Ok(list_body(views.collect(), None))
}

async fn find_in(
    ctx: &AppContext,
    ns: &TenantId,
    id: &EndpointId,
) -> Result<EndpointRecord, ApiError> {
    match ctx.store.endpoint(ns, id).await? {
        Some(ep) if !ep.trusted => Ok(ep),
        _ => Err(ApiError::not_found("operator endpoint")),
    }
}

async fn update_in(
    ctx: &AppContext,
    ns: &TenantId,
    id: &EndpointId,
    body: Body,
) -> Result<Json<OperatorEndpointView>, ApiError> {
    let mut patch: Value =
        parse_json(&read_limited(body, ctx.config.limits.json_body_bytes).await?)?;
    if !patch.is_object() {
        return Err(ApiError::invalid_field(
            "",
            "a merge patch must be a JSON object",
        ));
    }
    let _: OperatorEndpointInput = serde_path_to_error::deserialize(patch.clone())
        .map_err(|e| ApiError::invalid_field(e.path().to_string(), e.into_inner().to_string()))?;
    lower_header_names(&mut patch);
    let found = find_in(ctx, ns, id).await?;
    let patch = &patch;
    let ep = modify_found(ctx, &found, |mut ep| async move {
        let mut merged = serde_json::to_value(OperatorEndpointInput::of(&ep)).unwrap_or_default();
        merge_patch(&mut merged, patch);
        let input: OperatorEndpointInput =
            serde_path_to_error::deserialize(merged).map_err(|e| {
                ApiError::invalid_field(e.path().to_string(), e.into_inner().to_string())
            })?;
        input.apply_to(ctx, &mut ep).await?;
        Ok(ep)
    })
    .await?;
    Ok(Json(OperatorEndpointView::of(&ep)))
}

async fn delete_in(
    ctx: &AppContext,
    ns: &TenantId,
    id: &EndpointId,
) -> Result<StatusCode, ApiError> {
    let ep = find_in(ctx, ns, id).await?;
    ctx.store.delete_endpoint(&ep, ctx.clock.now_ms()).await?;
    Ok(StatusCode::NO_CONTENT)
}

type Json201 = NoStore<(StatusCode, Json<OperatorEndpointView>)>;

/// Adds an operator endpoint of the admin's, which hears every tenant's
/// operator events and the gateway's own; the answer holds its secret.
#[utoipa::path(post, path = "/v1/operator-endpoints", tag = "operator-endpoints",
    operation_id = "create_operator_endpoint", request_body = OperatorEndpointInput,
    responses((status = 201, description = "The operator endpoint, with its signing secret", body = OperatorEndpointView)))]
pub(super) async fn create(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    body: Body,
) -> Result<Json201, ApiError> {
    create_in(&ctx, admin_namespace(&who)?, body).await
}

/// The admin's operator endpoints (`alerts.url`, the config's, is not listed).
#[utoipa::path(get, path = "/v1/operator-endpoints", tag = "operator-endpoints",
    operation_id = "list_operator_endpoints",
    responses((status = 200, description = "Every operator endpoint of the admin's", body = ListPage<OperatorEndpointView>)))]
pub(super) async fn list(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
) -> Result<Json<ListPage<OperatorEndpointView>>, ApiError> {
    list_in(&ctx, &admin_namespace(&who)?).await
}

/// One of the admin's operator endpoints.
#[utoipa::path(get, path = "/v1/operator-endpoints/{id}", tag = "operator-endpoints",
    operation_id = "get_operator_endpoint", params(OperatorEndpointPath),
    responses((status = 200, description = "The operator endpoint", body = OperatorEndpointView)))]
pub(super) async fn show(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(id): Path<EndpointId>,
) -> Result<Json<OperatorEndpointView>, ApiError> {
    let ep = find_in(&ctx, &admin_namespace(&who)?, &id).await?;
    Ok(Json(OperatorEndpointView::of(&ep)))
}

/// Changes one of the admin's operator endpoints with a JSON merge patch.
#[utoipa::path(patch, path = "/v1/operator-endpoints/{id}", tag = "operator-endpoints",
    operation_id = "update_operator_endpoint", params(OperatorEndpointPath),
    request_body(content = OperatorEndpointPatch, content_type = "application/merge-patch+json"),
    responses((status = 200, description = "The operator endpoint as changed", body = OperatorEndpointView)))]
pub(super) async fn update(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(id): Path<EndpointId>,
    body: Body,
) -> Result<Json<OperatorEndpointView>, ApiError> {
    update_in(&ctx, &admin_namespace(&who)?, &id, body).await
}

/// Deletes one of the admin's operator endpoints.
#[utoipa::path(delete, path = "/v1/operator-endpoints/{id}", tag = "operator-endpoints",
    operation_id = "delete_operator_endpoint", params(OperatorEndpointPath),
    responses((status = 204, description = "Deleted")))]
pub(super) async fn delete(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(id): Path<EndpointId>,
) -> Result<StatusCode, ApiError> {
    delete_in(&ctx, &admin_namespace(&who)?, &id).await
}

/// Adds an operator endpoint of the tenant's, which hears that tenant's
/// operator events only; the answer holds its secret.
#[utoipa::path(post, path = "/v1/tenants/{t}/operator-endpoints", tag = "operator-endpoints",
    operation_id = "create_tenant_operator_endpoint", params(TenantPath),
    request_body = OperatorEndpointInput,
    responses((status = 201, description = "The operator endpoint, with its signing secret", body = OperatorEndpointView)))]
pub(super) async fn tenant_create(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(t): Path<TenantId>,
    body: Body,
) -> Result<Json201, ApiError> {
    let ns = tenant_ns(&ctx, &who, &t).await?;
    create_in(&ctx, ns, body).await
}

/// The tenant's operator endpoints.
#[utoipa::path(get, path = "/v1/tenants/{t}/operator-endpoints", tag = "operator-endpoints",
    operation_id = "list_tenant_operator_endpoints", params(TenantPath),
    responses((status = 200, description = "Every operator endpoint of the tenant's", body = ListPage<OperatorEndpointView>)))]
pub(super) async fn tenant_list(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(t): Path<TenantId>,
) -> Result<Json<ListPage<OperatorEndpointView>>, ApiError> {
    list_in(&ctx, &tenant_ns(&ctx, &who, &t).await?).await
}

/// One of the tenant's operator endpoints.
#[utoipa::path(get, path = "/v1/tenants/{t}/operator-endpoints/{id}", tag = "operator-endpoints",
    operation_id = "get_tenant_operator_endpoint", params(ItemPath),
    responses((status = 200, description = "The operator endpoint", body = OperatorEndpointView)))]
pub(super) async fn tenant_show(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path((t, id)): Path<(TenantId, EndpointId)>,
) -> Result<Json<OperatorEndpointView>, ApiError> {
    let ep = find_in(&ctx, &tenant_ns(&ctx, &who, &t).await?, &id).await?;
    Ok(Json(OperatorEndpointView::of(&ep)))
}

/// Changes one of the tenant's operator endpoints with a JSON merge patch.
#[utoipa::path(patch, path = "/v1/tenants/{t}/operator-endpoints/{id}", tag = "operator-endpoints",
    operation_id = "update_tenant_operator_endpoint", params(ItemPath),
    request_body(content = OperatorEndpointPatch, content_type = "application/merge-patch+json"),
    responses((status = 200, description = "The operator endpoint as changed", body = OperatorEndpointView)))]
pub(super) async fn tenant_update(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path((t, id)): Path<(TenantId, EndpointId)>,
    body: Body,
) -> Result<Json<OperatorEndpointView>, ApiError> {
    update_in(&ctx, &tenant_ns(&ctx, &who, &t).await?, &id, body).await
}

/// Deletes one of the tenant's operator endpoints.
#[utoipa::path(delete, path = "/v1/tenants/{t}/operator-endpoints/{id}", tag = "operator-endpoints",
    operation_id = "delete_tenant_operator_endpoint", params(ItemPath),
    responses((status = 204, description = "Deleted")))]
pub(super) async fn tenant_delete(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path((t, id)): Path<(TenantId, EndpointId)>,
) -> Result<StatusCode, ApiError> {
    delete_in(&ctx, &tenant_ns(&ctx, &who, &t).await?, &id).await
}
