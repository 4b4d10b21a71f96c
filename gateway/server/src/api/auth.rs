//! Bearer-token authentication and who may call what: the admin token
//! everything, a tenant key its own tenant only, a portal session its tenant
//! only and only what its capabilities allow (`portal_access.rs` says what
//! each operation needs).
//!
//! The admin token manages tenants and may act for any tenant. A tenant key
//! reaches that tenant alone: another tenant's resources are 404 (their existence
//! is not revealed), and admin routes are 403.

use std::sync::Arc;

use axum::extract::FromRequestParts;
use axum::http::request::Parts;

use super::body::read_guard::ReadClaim;
use super::error::ApiError;
use crate::context::AppContext;
use crate::event_type;
use crate::ids::{EndpointId, TenantId};
use crate::token;

/// Who is calling.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Principal {
    Admin,
    Tenant(String),
    /// A customer's portal session, its capabilities checked at extraction.
    Portal(Box<crate::store::PortalSessionRecord>),
}

impl Principal {
    /// Admin routes: a tenant key gets 403.
    ///
    /// # Errors
    /// 403 for a tenant.
    pub(crate) fn require_admin(&self) -> Result<(), ApiError> {
        match self {
            Self::Admin => Ok(()),
            Self::Tenant(_) | Self::Portal(_) => Err(ApiError::forbidden()),
        }
    }

    /// Tenant routes: the admin, or that tenant itself; the tenant, named by
    /// its id or its uid, must exist and not be being deleted. Answers its id.
    ///
    /// # Errors
    /// 404 for another tenant or an unknown one.
    pub(crate) async fn require_tenant(
        &self,
        ctx: &AppContext,
        tenant: &TenantId,
    ) -> Result<TenantId, ApiError> {
        if let Some(own) = self.own_tenant()
            && own == tenant.as_str()
        {
            return Ok(tenant.clone());
        }
        let found = ctx.store.find_tenant(tenant).await?;
        match (self, found) {
            (Self::Admin, Some(t)) => Ok(t.id),
            (_, Some(t)) if self.own_tenant() == Some(t.id.as_str()) => Ok(t.id),
            _ => Err(ApiError::not_found("tenant")),
        }
    }

    /// Whether answers may carry signing secrets: not to a portal session
    /// without `read_secrets`.
    pub(crate) fn may_read_secrets(&self) -> bool {
        match self {
            Self::Admin | Self::Tenant(_) => true,
            Self::Portal(s) => s.allows(crate::store::PortalCapability::ReadSecrets),
        }
    }

    /// Whether it reaches `endpoint`: a portal session limited to some
    /// endpoints reaches only those (the others are 404 to it).
    pub(crate) fn reaches_endpoint(&self, endpoint: &EndpointId) -> bool {
        match self {
            Self::Portal(s) => s.reaches_endpoint(endpoint),
            Self::Admin | Self::Tenant(_) => true,
        }
    }

    /// Whether it sees events of type `name`: a portal session limited to
    /// some event types sees only those.
    pub(crate) fn sees_event_type(&self, name: &str) -> bool {
        match self {
            Self::Portal(s) => {
                s.event_types.is_empty() || event_type::any_matches(&s.event_types, name)
            }
            Self::Admin | Self::Tenant(_) => true,
        }
    }

    /// Whether it sees what went to `endpoint` for an event of type
    /// `event_type` (a delivery, an attempt).
    pub(crate) fn sees(&self, endpoint: &EndpointId, event_type: &str) -> bool {
        self.reaches_endpoint(endpoint) && self.sees_event_type(event_type)
    }

    /// Refuses a subscription a portal session limited to some event types
    /// may not make; what the endpoint already had (`had`) stays allowed.
    ///
    /// # Errors
    /// 422 naming the first entry of `wanted` outside the session's types.
    pub(crate) fn check_subscription(
        &self,
        wanted: &[String],
        had: &[String],
    ) -> Result<(), ApiError> {
        let Self::Portal(s) = self else {
            return Ok(());
        };
        let refused = wanted
            .iter()
            .position(|w| !had.contains(w) && !may_subscribe(&s.event_types, w));
        match refused {
            None => Ok(()),
            Some(i) => Err(ApiError::validation(
                format!("event_types[{i}]"),
                format!(
                    "this portal session may subscribe only to {}; {:?} is outside them",
                    s.event_types.join(", "),
                    wanted[i]
                ),
            )),
        }
    }

    /// The one tenant a tenant key or a portal session reaches.
    pub(crate) fn own_tenant(&self) -> Option<&str> {
        match self {
            Self::Admin => None,
            Self::Tenant(t) => Some(t),
            Self::Portal(s) => Some(s.tenant_id.as_str()),
        }
    }
}

/// Whether a session limited to `allowed` (empty: every type) may subscribe
/// an endpoint to `wanted` (a name or a pattern): one of its own entries, or a
/// name or narrower pattern one of its patterns covers.
fn may_subscribe(allowed: &[String], wanted: &str) -> bool {
    if allowed.is_empty() || allowed.iter().any(|t| t == wanted) {
        return true;
    }
    // `a.b.*` is covered where `a.b.x` would be: by `a.*`, `a.b.*` or `*`.
    let probe = match wanted.strip_suffix(".*") {
        Some(prefix) => format!("{prefix}.x"),
        None if wanted == "*" => return false,
        None => wanted.to_owned(),
    };
    allowed
        .iter()
        .any(|t| event_type::is_pattern(t) && event_type::matches(t, &probe))
}

impl FromRequestParts<Arc<AppContext>> for Principal {
    type Rejection = ApiError;

    async fn from_request_parts(
        parts: &mut Parts,
        ctx: &Arc<AppContext>,
    ) -> Result<Self, ApiError> {
        let header = parts
            .headers
            .get(axum::http::header::AUTHORIZATION)
            .ok_or_else(ApiError::unauthorized)?;
        let value = header.to_str().map_err(|_| ApiError::unauthorized())?;
        let presented = value
            .strip_prefix("Bearer ")
            .or_else(|| value.strip_prefix("bearer "))
            .map(str::trim)
            .filter(|t| {
                (t.starts_with(token::PREFIX) || t.starts_with(token::PORTAL_PREFIX))
                    && t.len() <= 128
            })
            .ok_or_else(ApiError::unauthorized)?;
        let hash = token::hash(presented);
        if presented.starts_with(token::PORTAL_PREFIX) {
            let session = super::portal_access::admit(ctx, parts, &hash).await?;
            if let Some(claim) = parts.extensions.get::<ReadClaim>() {
                claim.name_tenant(&session.tenant_id);
            }
            return Ok(Self::Portal(Box::new(session)));
        }
        if token::hashes_equal(&hash, &ctx.admin_hash) {
            return Ok(Self::Admin);
        }
        match ctx.store.tenant_by_key(&hash).await? {
            Some(t) => {
                // The body, read later by the handler, counts against this tenant.
                if let Some(claim) = parts.extensions.get::<ReadClaim>() {
                    claim.name_tenant(&t);
                }
                Ok(Self::Tenant(t))
            }
            None => Err(ApiError::unauthorized()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::may_subscribe;

    #[test]
    fn a_limited_session_subscribes_within_its_types() {
        let allowed = ["order.*".to_owned(), "invoice.paid".to_owned()];
        for (wanted, ok) in [
            ("order.*", true),
            ("order.paid", true),
            ("order.item.added", true),
            ("order.item.*", true),
            ("invoice.paid", true),
            ("invoice.*", false),
            ("invoice.voided", false),
            ("order", false),
            ("*", false),
        ] {
            assert_eq!(may_subscribe(&allowed, wanted), ok, "{wanted}");
        }
        assert!(may_subscribe(&[], "*"), "an unlimited session");
        assert!(may_subscribe(&["*".to_owned()], "*"));
    }
}
