//! What a portal session may call: one table of every operation a tenant key
//! may call, each with the capabilities it needs, or refused to portals (the
//! platform's own: sending events, the tenant's key, minting sessions). A
//! session is read from the store on every request, so an expiry or a
//! revocation holds at once on every gateway sharing the store.

use std::collections::HashMap;
use std::sync::OnceLock;

use axum::extract::MatchedPath;
use axum::http::Method;
use axum::http::request::Parts;

use super::error::ApiError;
use crate::context::AppContext;
use crate::store::PortalCapability as Cap;
use crate::store::PortalSessionRecord;

/// What an operation asks of a portal session.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum PortalAccess {
    /// Every one of these capabilities.
    Needs(&'static [Cap]),
    /// The platform's own: never a portal session.
    Platform,
}

use PortalAccess::{Needs, Platform};

const VIEW: PortalAccess = Needs(&[Cap::View]);
const MANAGE: PortalAccess = Needs(&[Cap::ManageEndpoints]);
const REPLAY: PortalAccess = Needs(&[Cap::Replay]);
const PLUGINS: PortalAccess = Needs(&[Cap::ManagePlugins]);

/// Every operation a tenant key may call, by operation id. Admin operations
/// are refused to portals by their own check; public ones need no token.
pub(super) const PORTAL_ACCESS: &[(&str, PortalAccess)] = &[
    ("get_tenant_stats", VIEW),
    ("get_tenant_stats_history", VIEW),
    ("simulate_policy", VIEW),
    ("get_tenant", VIEW),
    ("rotate_tenant_key", Platform),
    ("list_tasks", VIEW),
    ("get_task", VIEW),
    ("create_endpoint", MANAGE),
    ("list_endpoints", VIEW),
    ("get_endpoint", VIEW),
    ("update_endpoint", MANAGE),
    ("put_endpoint", MANAGE),
    ("delete_endpoint", MANAGE),
    ("reset_endpoint_breaker", MANAGE),
    ("recover_endpoint", REPLAY),
    ("replay_missing", REPLAY),
    ("get_endpoint_stats", VIEW),
    ("get_endpoint_secrets", Needs(&[Cap::ReadSecrets])),
    (
        "rotate_endpoint_secret",
        Needs(&[Cap::ManageEndpoints, Cap::ReadSecrets]),
    ),
    ("send_endpoint_example", MANAGE),
    ("list_event_types", VIEW),
    ("get_event_type", VIEW),
    ("create_tenant_operator_endpoint", MANAGE),
    ("list_tenant_operator_endpoints", VIEW),
    ("get_tenant_operator_endpoint", VIEW),
    ("update_tenant_operator_endpoint", MANAGE),
    ("delete_tenant_operator_endpoint", MANAGE),
    ("ingest_event", Platform),
    ("get_event", VIEW),
    ("expunge_event_payload", Platform),
    ("list_events", VIEW),
    ("list_deliveries", VIEW),
    ("get_delivery", VIEW),
    ("list_attempts", VIEW),
    ("get_attempt", VIEW),
    ("replay_delivery", REPLAY),
    ("replay_dead_deliveries", REPLAY),
    ("get_tenant_dlq_summary", VIEW),
    ("list_plugins", VIEW),
    ("upload_plugin", PLUGINS),
    ("get_plugin", VIEW),
    ("delete_plugin", PLUGINS),
    ("rollback_plugin", PLUGINS),
    ("create_portal_session", Platform),
    ("revoke_portal_sessions", Platform),
    ("get_portal_session", Needs(&[])),
    ("end_portal_session", Needs(&[])),
];

/// Operations that reach every endpoint of the tenant (or make a new one),
/// refused to a session limited to some endpoints. The others that name an
/// endpoint, a delivery or an attempt answer 404 for one outside its limit;
/// lists leave those out.
const WHOLE_TENANT: &[&str] = &[
    "get_tenant_stats",
    "list_tasks",
    "get_task",
    "create_endpoint",
    "put_endpoint",
    "create_tenant_operator_endpoint",
    "list_tenant_operator_endpoints",
    "get_tenant_operator_endpoint",
    "update_tenant_operator_endpoint",
    "delete_tenant_operator_endpoint",
    "get_event",
    "list_events",
    "replay_dead_deliveries",
    "get_tenant_dlq_summary",
];

/// The operation id of each `(method, path template)` of the API.
fn operation_ids() -> &'static HashMap<(Method, String), String> {
    static IDS: OnceLock<HashMap<(Method, String), String>> = OnceLock::new();
    IDS.get_or_init(|| {
        let doc = super::openapi::document();
        let mut ids = HashMap::new();
        for (path, item) in &doc.paths.paths {
            let ops = [
                (Method::GET, &item.get),
                (Method::POST, &item.post),
                (Method::PUT, &item.put),
                (Method::PATCH, &item.patch),
                (Method::DELETE, &item.delete),
            ];
            for (method, op) in ops {
                if let Some(id) = op.as_ref().and_then(|o| o.operation_id.clone()) {
                    ids.insert((method, path.clone()), id);
                }
            }
        }
        ids
    })
}

/// The operation at `method` and `path` (a route template), if the API has one.
fn operation_at(method: &Method, path: &str) -> Option<&'static str> {
    let method = if method == Method::HEAD {
        Method::GET
    } else {
        method.clone()
    };
    operation_ids()
        .get(&(method, path.to_owned()))
        .map(String::as_str)
}

/// What the operation at `method` and `path` (a route template) asks of a
/// portal session; an operation no row names is refused.
pub(super) fn access_of(method: &Method, path: &str) -> PortalAccess {
    operation_at(method, path)
        .and_then(|id| PORTAL_ACCESS.iter().find(|(op, _)| *op == id))
        .map_or(Platform, |(_, access)| *access)
}

/// The live session `token_hash` names, if the route it calls is one its
/// capabilities allow.
///
/// # Errors
/// 401 for an unknown, revoked or expired session; 403 naming what it lacks.
pub(super) async fn admit(
    ctx: &AppContext,
    parts: &Parts,
    token_hash: &[u8; 32],
) -> Result<PortalSessionRecord, ApiError> {
    let session = ctx
        .store
        .portal_session(token_hash)
        .await?
        .ok_or_else(ApiError::unauthorized)?;
    if ctx.clock.now_ms() >= session.expires_at_ms {
        return Err(ApiError::unauthorized_because(
            "this portal session has expired",
        ));
    }
    let path = parts
        .extensions
        .get::<MatchedPath>()
        .map(MatchedPath::as_str);
    let access = path.map_or(Platform, |p| access_of(&parts.method, p));
    let op = path.and_then(|p| operation_at(&parts.method, p));
    if !session.endpoints.is_empty()
        && let Some(op) = op.filter(|op| WHOLE_TENANT.contains(op))
    {
        return Err(ApiError::forbidden_because(format!(
            "this portal session is limited to some endpoints; {op} reaches every endpoint of the tenant"
        )));
    }
    match access {
        Platform => Err(ApiError::forbidden_because(
            "a portal session cannot call this route: it is the platform's own",
        )),
        Needs(caps) => match caps.iter().find(|c| !session.allows(**c)) {
            Some(missing) => Err(ApiError::forbidden_because(format!(
                "this portal session lacks the {} capability",
                missing.as_str()
            ))),
            None => Ok(session),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_map_to_their_operation() {
        assert_eq!(access_of(&Method::GET, "/v1/tenants/{t}/endpoints"), VIEW);
        assert_eq!(access_of(&Method::HEAD, "/v1/tenants/{t}/endpoints"), VIEW);
        assert_eq!(
            access_of(&Method::POST, "/v1/tenants/{t}/endpoints"),
            MANAGE
        );
        assert_eq!(access_of(&Method::POST, "/v1/tenants/{t}/events"), Platform);
        assert_eq!(access_of(&Method::GET, "/v1/nowhere"), Platform);
    }
}
