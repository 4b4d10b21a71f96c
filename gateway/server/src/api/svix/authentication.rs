//! `/api/v1/auth`: Svix's app-portal access is a hookgate portal session
//! (`POST /v1/tenants/{t}/portal-sessions`), logout ends the calling session
//! (`DELETE /v1/portal-session`), and expire-all revokes every session of the
//! application at once.
//!
//! Svix's portal capabilities map onto hookgate's: `ViewBase` is `view`,
//! `ViewEndpointSecret` `read_secrets`, `ManageEndpointSecret` and
//! `ManageEndpoint` `manage_endpoints` with `read_secrets`, `CreateAttempts`
//! `replay`; none given (as Svix's default) is all of those, and `readOnly`
//! is `view` alone. `ManageTransformations`, `featureFlags` and `sessionId`
//! have nothing in hookgate to act on and are refused with a 422.

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{HeaderMap, Method, StatusCode, header};
use serde_json::{Map, Value, json};

use super::applications::ensure_application;
use super::error::SvixError;
use super::forward::{Caller, V1, seg};
use super::openapi::{params as p, schemas as s};
use super::wire::object_body;

/// Svix's default portal token lasts 7 days, as hookgate's longest session.
const DEFAULT_EXPIRY_S: u64 = 7 * 24 * 3600;

/// hookgate's capabilities for Svix's `capabilities` and `readOnly`.
fn capabilities(body: &Map<String, Value>) -> Result<Vec<&'static str>, SvixError> {
    if body.get("readOnly").and_then(Value::as_bool) == Some(true) {
        return Ok(vec!["view"]);
    }
    let Some(given) = body.get("capabilities").filter(|c| !c.is_null()) else {
        return Ok(vec!["view", "manage_endpoints", "read_secrets", "replay"]);
    };
    let Some(given) = given.as_array() else {
        return Err(SvixError::body_field(
            "capabilities",
            "capabilities must be a list",
        ));
    };
    let mut caps = vec!["view"];
    for (i, c) in given.iter().enumerate() {
        let more: &[&'static str] = match c.as_str() {
            Some("ViewBase") => &[],
            Some("ViewEndpointSecret") => &["read_secrets"],
            Some("ManageEndpointSecret" | "ManageEndpoint") => {
                &["manage_endpoints", "read_secrets"]
            }
            Some("CreateAttempts") => &["replay"],
            _ => {
                return Err(SvixError::body_field(
                    &format!("capabilities[{i}]"),
                    format!("hookgate has no portal capability {c}"),
                ));
            }
        };
        caps.extend(more);
    }
    caps.sort_unstable();
    caps.dedup();
    Ok(caps)
}

/// A whole number of seconds, written as an integer or as `3600.0` (JSON
/// does not tell them apart).
fn whole_seconds(v: &Value) -> Option<u64> {
    v.as_u64().or_else(|| {
        let f = v.as_f64()?;
        let whole = f.fract() == 0.0 && (0.0..=9.0e15).contains(&f);
        #[allow(
            clippy::cast_possible_truncation,
            clippy::cast_sign_loss,
            reason = "checked: whole, not negative, below 2^53"
        )]
        whole.then_some(f as u64)
    })
}

/// `url` made absolute with the request's own host when v1 answered a path
/// (no `console.public_url` configured).
fn absolute(url: &str, headers: &HeaderMap) -> String {
    if url.starts_with('/')
        && let Some(host) = headers.get(header::HOST).and_then(|h| h.to_str().ok())
    {
        return format!("http://{host}{url}");
    }
    url.to_owned()
}

#[utoipa::path(post, path = "/auth/app-portal-access/{app_id}", tag = "Authentication", operation_id = "v1.authentication.app-portal-access",
    params(p::AppPath), request_body = s::AppPortalAccessIn,
    responses((status = 200, description = "A portal session", body = s::AppPortalAccessOut)))]
pub(super) async fn app_portal_access(
    State(v1): State<V1>,
    caller: Caller,
    headers: HeaderMap,
    Path(app): Path<String>,
    body: Body,
) -> Result<Json<Value>, SvixError> {
    let body = object_body(body, v1.body_limit(), "AppPortalAccessIn").await?;
    for field in ["featureFlags", "sessionId"] {
        let given = body
            .get(field)
            .filter(|v| !v.is_null() && v.as_array().is_none_or(|a| !a.is_empty()));
        if given.is_some() {
            return Err(SvixError::body_field(
                field,
                format!("hookgate's portal sessions have no {field}"),
            ));
        }
    }
    let caps = capabilities(&body)?;
    let expiry = match body.get("expiry") {
        None | Some(Value::Null) => DEFAULT_EXPIRY_S,
        Some(v) => whole_seconds(v)
            .filter(|s| (3600..=DEFAULT_EXPIRY_S).contains(s))
            .ok_or_else(|| {
                SvixError::body_field("expiry", "expiry is from 3600 (1 hour) to 604800 (7 days)")
            })?,
    };
    let tenant = match body.get("application") {
        Some(Value::Object(app_in)) => ensure_application(&v1, &caller, &app, app_in).await?,
        _ => app,
    };
    let session = json!({"capabilities": caps, "expires_in_s": expiry});
    let path = format!("/v1/tenants/{}/portal-sessions", seg(&tenant));
    let made = v1
        .ok(&caller, Method::POST, &path, Some(&session), "body")
        .await?;
    let url = absolute(made["url"].as_str().unwrap_or_default(), &headers);
    Ok(Json(json!({"url": url, "token": made["token"]})))
}

/// Ends the portal session the request is made with.
#[utoipa::path(post, path = "/auth/logout", tag = "Authentication", operation_id = "v1.authentication.logout",
    responses((status = 204, description = "The calling portal session has ended")))]
pub(super) async fn logout(State(v1): State<V1>, caller: Caller) -> Result<StatusCode, SvixError> {
    v1.ok(&caller, Method::DELETE, "/v1/portal-session", None, "query")
        .await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Ends every portal session of the application, at once: a later
/// `expiry` or some `sessionIds` only are refused with a 422.
#[utoipa::path(post, path = "/auth/app/{app_id}/expire-all", tag = "Authentication", operation_id = "v1.authentication.expire-all",
    params(p::AppPath), request_body = s::ApplicationTokenExpireIn,
    responses((status = 204, description = "Every portal session of the application has ended")))]
pub(super) async fn expire_all(
    State(v1): State<V1>,
    caller: Caller,
    Path(app): Path<String>,
    body: Body,
) -> Result<StatusCode, SvixError> {
    let body = object_body(body, v1.body_limit(), "ApplicationTokenExpireIn").await?;
    if body
        .get("expiry")
        .is_some_and(|e| !e.is_null() && e.as_u64() != Some(0))
    {
        return Err(SvixError::body_field(
            "expiry",
            "hookgate ends the sessions at once: leave expiry out",
        ));
    }
    if body
        .get("sessionIds")
        .is_some_and(|s| s.as_array().is_some_and(|a| !a.is_empty()))
    {
        return Err(SvixError::body_field(
            "sessionIds",
            "hookgate ends every session of the application together",
        ));
    }
    let path = format!("/v1/tenants/{}/portal-sessions", seg(&app));
    v1.ok(&caller, Method::DELETE, &path, None, "query").await?;
    Ok(StatusCode::NO_CONTENT)
}
