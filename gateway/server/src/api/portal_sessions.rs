//! Portal sessions: a platform's backend mints one for a tenant's customer
//! (`POST /v1/tenants/{t}/portal-sessions`, the admin or the tenant's key) and
//! embeds the `url` it answers; the token is scoped to the tenant and its
//! capabilities, expires, and is revoked with every other session of the
//! tenant by one `DELETE`. `GET /v1/portal-session` tells the console which
//! session it holds, so it shows only what the session may do.

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};

use super::answer_headers::NoStore;
use super::auth::Principal;
use super::body::{parse_json, read_limited};
use super::error::ApiError;
use super::openapi::TenantPath;
use crate::clock::rfc3339_ms;
use crate::context::AppContext;
use crate::ids::{EndpointId, TenantId};
use crate::store::{PortalCapability, PortalSessionRecord, PortalTheme};

/// The shortest and longest a session may last, and its default.
const MIN_TTL_S: u64 = 300;
const MAX_TTL_S: u64 = 7 * 24 * 3600;
const DEFAULT_TTL_S: u64 = 3600;
/// The longest product name and logo (a `data:` URL) a theme may carry.
const PRODUCT_NAME_MAX: usize = 100;
const LOGO_MAX_BYTES: usize = 64 * 1024;

/// A new session.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
#[schema(example = json!({"capabilities": ["view", "manage_endpoints"], "expires_in_s": 3600,
    "theme": {"product_name": "Acme Webhooks", "accent_color": "#0a7cff", "mode": "light"}}))]
pub(super) struct PortalSessionInput {
    /// What it may do: `view`, `manage_endpoints`, `read_secrets`, `replay`,
    /// `manage_plugins`; `["view"]` when absent.
    #[serde(default)]
    #[schema(value_type = Option<Vec<CapabilityName>>)]
    capabilities: Option<Vec<PortalCapability>>,
    /// How long it lasts, 300 s to 7 days; an hour when absent.
    #[serde(default)]
    #[schema(minimum = 300, maximum = 604800)]
    expires_in_s: Option<u64>,
    /// How the portal looks for it.
    #[serde(default)]
    #[schema(value_type = Option<ThemeInput>)]
    theme: Option<serde_json::Map<String, serde_json::Value>>,
    /// The only endpoints it reaches (ids or uids of the tenant's endpoints,
    /// at most 100); every endpoint when absent. Such a session cannot create
    /// endpoints, nor call what reaches every endpoint of the tenant (its
    /// events, stats since start, DLQ summary and bulk replay, tasks, operator
    /// endpoints).
    #[serde(default)]
    endpoints: Option<Vec<String>>,
    /// The only event types it sees (names or patterns such as `order.*`, at
    /// most 100): the catalog, events and deliveries of other types are hidden
    /// from it, and the endpoints it creates or changes subscribe within them.
    /// Every type when absent.
    #[serde(default)]
    #[schema(value_type = Option<Vec<super::endpoint_schema::EventTypePattern>>)]
    event_types: Option<Vec<String>>,
}

/// The most endpoints or event types one session may be limited to.
const LIMITS_MAX: usize = 100;

/// The ids of the endpoints `given` names (ids or uids of `t`'s endpoints).
///
/// # Errors
/// 422 naming the first one that is not the tenant's.
async fn endpoints_named(
    ctx: &AppContext,
    t: &TenantId,
    given: Option<Vec<String>>,
) -> Result<Vec<EndpointId>, ApiError> {
    let given = given.unwrap_or_default();
    if given.len() > LIMITS_MAX {
        return Err(ApiError::validation(
            "endpoints",
            format!("at most {LIMITS_MAX} endpoints"),
        ));
    }
    let mut ids = Vec::with_capacity(given.len());
    for (i, name) in given.iter().enumerate() {
        let found = ctx
            .store
            .find_endpoint(t, &EndpointId::from(name.as_str()))
            .await?;
        let ep = found.ok_or_else(|| {
            ApiError::validation(
                format!("endpoints[{i}]"),
                format!("the tenant has no endpoint {name:?}"),
            )
        })?;
        ids.push(ep.id);
    }
    ids.sort();
    ids.dedup();
    Ok(ids)
}

/// The event types `given` (names or patterns), checked.
///
/// # Errors
/// 422 naming the first that is not a valid name or pattern.
fn event_types_named(
    ctx: &AppContext,
    given: Option<Vec<String>>,
) -> Result<Vec<String>, ApiError> {
    let given = given.unwrap_or_default();
    if given.len() > LIMITS_MAX {
        return Err(ApiError::validation(
            "event_types",
            format!("at most {LIMITS_MAX} event types"),
        ));
    }
    for (i, p) in given.iter().enumerate() {
        crate::event_type::validate_pattern(p, ctx.config.limits.event_type_len).map_err(|e| {
            ApiError::validation(format!("event_types[{i}]"), format!("{p:?}: {e}"))
        })?;
    }
    Ok(given)
}

/// A capability's name, as the API's schema lists them. Only described.
pub(super) enum CapabilityName {}

impl utoipa::PartialSchema for CapabilityName {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        let names = PortalCapability::ALL.iter().map(|c| c.as_str());
        ObjectBuilder::new()
            .schema_type(Type::String)
            .enum_values(Some(names))
            .into()
    }
}

impl utoipa::ToSchema for CapabilityName {}

/// A session's look: no third-party request is ever made, so a logo is a
/// `data:image/...` URL.
#[derive(Debug, Default, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct ThemeInput {
    /// Shown in the header (at most 100 characters).
    #[serde(default)]
    #[schema(max_length = 100)]
    product_name: Option<String>,
    /// A `data:image/png|jpeg|gif|webp|svg+xml;base64,...` URL, at most 64 KiB.
    #[serde(default)]
    #[schema(
        max_length = 65536,
        pattern = r"^data:image/(png|jpeg|gif|webp|svg\+xml);base64,[A-Za-z0-9+/=]*$"
    )]
    logo_url: Option<String>,
    /// `#rrggbb`.
    #[serde(default)]
    #[schema(pattern = "^#[0-9a-fA-F]{6}$")]
    accent_color: Option<String>,
    /// `light` or `dark`.
    #[serde(default)]
    #[schema(pattern = "^(light|dark)$")]
    mode: Option<String>,
}

/// A theme given as JSON under `field`, checked: read as an object first,
/// since serde would take a struct from an array too.
pub(super) fn theme_of(
    given: Option<serde_json::Map<String, serde_json::Value>>,
    field: &str,
) -> Result<PortalTheme, ApiError> {
    let theme: ThemeInput =
        serde_path_to_error::deserialize(serde_json::Value::Object(given.unwrap_or_default()))
            .map_err(|e| {
                ApiError::invalid_field(format!("{field}.{}", e.path()), e.into_inner().to_string())
            })?;
    theme.checked(field)
}

impl ThemeInput {
    fn checked(self, field: &str) -> Result<PortalTheme, ApiError> {
        if let Some(n) = &self.product_name
            && n.chars().count() > PRODUCT_NAME_MAX
        {
            return Err(ApiError::validation(
                format!("{field}.product_name"),
                format!("at most {PRODUCT_NAME_MAX} characters"),
            ));
        }
        if let Some(logo) = &self.logo_url {
            let image = ["png", "jpeg", "gif", "webp", "svg+xml"].iter().any(|t| {
                logo.strip_prefix(&format!("data:image/{t};base64,"))
                    .is_some_and(|data| {
                        data.bytes()
                            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'/' | b'='))
                    })
            });
            if !image || logo.len() > LOGO_MAX_BYTES {
                return Err(ApiError::validation(
                    format!("{field}.logo_url"),
                    "a data:image/(png|jpeg|gif|webp|svg+xml);base64 URL of at most 64 KiB: \
                     the portal makes no request to another site",
                ));
            }
        }
        if let Some(c) = &self.accent_color
            && !(c.len() == 7
                && c.starts_with('#')
                && c[1..].bytes().all(|b| b.is_ascii_hexdigit()))
        {
            return Err(ApiError::validation(
                format!("{field}.accent_color"),
                "a colour as #rrggbb",
            ));
        }
        if let Some(m) = &self.mode
            && m != "light"
            && m != "dark"
        {
            return Err(ApiError::validation(
                format!("{field}.mode"),
                "light or dark",
            ));
        }
        Ok(PortalTheme {
            product_name: self.product_name,
            logo_url: self.logo_url,
            accent_color: self.accent_color,
            mode: self.mode,
        })
    }
}

/// A session as shown; the token only in the answer to its creation.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct PortalSessionView {
    #[schema(example = "pss_01J9Z3V8M4Q2W6Y8A0C2E4G6J8")]
    id: String,
    tenant_id: String,
    #[schema(value_type = Vec<CapabilityName>, example = json!(["view"]))]
    capabilities: Vec<PortalCapability>,
    /// RFC 3339.
    expires_at: String,
    #[schema(value_type = ThemeInput)]
    theme: PortalTheme,
    /// The only endpoints it reaches, by id; every endpoint when empty.
    endpoints: Vec<String>,
    /// The only event types it sees; every type when empty.
    event_types: Vec<String>,
    /// `hgp_...`: in the answer to create only.
    #[serde(skip_serializing_if = "Option::is_none")]
    token: Option<String>,
    /// Opens the portal signed in: the token travels in the URL's fragment,
    /// which browsers never send to a server. In the answer to create only.
    #[serde(skip_serializing_if = "Option::is_none")]
    url: Option<String>,
}

impl PortalSessionView {
    fn of(s: &PortalSessionRecord) -> Self {
        Self {
            id: s.id.clone(),
            tenant_id: s.tenant_id.to_string(),
            capabilities: s.capabilities.clone(),
            expires_at: rfc3339_ms(s.expires_at_ms),
            theme: s.theme.clone(),
            endpoints: s.endpoints.iter().map(ToString::to_string).collect(),
            event_types: s.event_types.clone(),
            token: None,
            url: None,
        }
    }
}

/// How many sessions were revoked.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct Revoked {
    revoked: usize,
}

/// Mints a portal session for one of the tenant's customers. Embed its
/// `url`; the token is shown this once.
#[utoipa::path(post, path = "/v1/tenants/{t}/portal-sessions", tag = "portal",
    operation_id = "create_portal_session", params(TenantPath), request_body = PortalSessionInput,
    responses((status = 201, description = "The session, with its token and URL", body = PortalSessionView)))]
pub(super) async fn create(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(t): Path<TenantId>,
    body: Body,
) -> Result<NoStore<(StatusCode, Json<PortalSessionView>)>, ApiError> {
    let t = who.require_tenant(&ctx, &t).await?;
    let input: PortalSessionInput =
        parse_json(&read_limited(body, ctx.config.limits.json_body_bytes).await?)?;
    let ttl = input.expires_in_s.unwrap_or(DEFAULT_TTL_S);
    if !(MIN_TTL_S..=MAX_TTL_S).contains(&ttl) {
        return Err(ApiError::validation(
            "expires_in_s",
            format!("from {MIN_TTL_S} (5 minutes) to {MAX_TTL_S} (7 days)"),
        ));
    }
    let mut capabilities = input
        .capabilities
        .unwrap_or_else(|| vec![PortalCapability::View]);
    capabilities.sort();
    capabilities.dedup();
    let own = theme_of(input.theme, "theme")?;
    let endpoints = endpoints_named(&ctx, &t, input.endpoints).await?;
    let event_types = event_types_named(&ctx, input.event_types)?;
    // The tenant's theme, with what this session sets laid over it.
    let tenant = ctx.store.tenant(&t).await?;
    let theme = tenant.map_or_else(|| own.clone(), |rec| rec.portal.theme.overlaid(&own));
    let now = ctx.clock.now_ms();
    let token = crate::token::generate_portal();
    let session = PortalSessionRecord {
        id: crate::ids::new_id("pss_", now),
        tenant_id: t,
        token_hash: hex::encode(crate::token::hash(&token)),
        capabilities,
        theme,
        endpoints,
        event_types,
        created_at_ms: now,
        expires_at_ms: now + ttl * 1000,
    };
    ctx.store.create_portal_session(&session).await?;
    let base = ctx
        .config
        .console
        .public_url
        .as_deref()
        .unwrap_or("/console/");
    let mut view = PortalSessionView::of(&session);
    // The tenant in the query lets the console's page name the tenant's own
    // embed origins; the token stays in the fragment.
    view.url = Some(format!(
        "{base}?tenant={}#portal={token}",
        session.tenant_id
    ));
    view.token = Some(token);
    Ok(NoStore((StatusCode::CREATED, Json(view))))
}

/// Revokes every portal session of the tenant at once, on every gateway.
#[utoipa::path(delete, path = "/v1/tenants/{t}/portal-sessions", tag = "portal",
    operation_id = "revoke_portal_sessions", params(TenantPath),
    responses((status = 200, description = "How many were revoked", body = Revoked)))]
pub(super) async fn revoke(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(t): Path<TenantId>,
) -> Result<Json<Revoked>, ApiError> {
    let t = who.require_tenant(&ctx, &t).await?;
    let revoked = ctx.store.revoke_portal_sessions(&t).await?;
    Ok(Json(Revoked { revoked }))
}

/// Ends the portal session the request is made with (signing out); its
/// token is refused from then on, on every gateway. A key or the admin token
/// has none (404).
#[utoipa::path(delete, path = "/v1/portal-session", tag = "portal",
    operation_id = "end_portal_session",
    responses((status = 204, description = "The session has ended")))]
pub(super) async fn end(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
) -> Result<StatusCode, ApiError> {
    match who {
        Principal::Portal(s) => {
            ctx.store.end_portal_session(&s).await?;
            Ok(StatusCode::NO_CONTENT)
        }
        Principal::Admin | Principal::Tenant(_) => Err(ApiError::not_found("portal session")),
    }
}

/// The portal session the request is made with: its tenant, capabilities,
/// expiry and theme. A key or the admin token has none (404).
#[utoipa::path(get, path = "/v1/portal-session", tag = "portal",
    operation_id = "get_portal_session",
    responses((status = 200, description = "The calling session", body = PortalSessionView)))]
pub(super) async fn current(who: Principal) -> Result<Json<PortalSessionView>, ApiError> {
    match who {
        Principal::Portal(s) => Ok(Json(PortalSessionView::of(&s))),
        Principal::Admin | Principal::Tenant(_) => Err(ApiError::not_found("portal session")),
    }
}
