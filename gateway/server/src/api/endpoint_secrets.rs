//! An endpoint's signing secrets: the live ones, and rotation (a new secret
//! signs first; the others keep signing for a day, at most five at once). A
//! rotation of a `v1a` endpoint makes a new ed25519 key beside the new secret,
//! and the old key signs through the same grace period as the old secret.

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};

use super::answer_headers::NoStore;
use super::auth::Principal;
use super::body::body_or_default;
use super::endpoint_input::tenant_secret;
use super::endpoint_signature::key_for_rotation;
use super::endpoint_view::EndpointSecrets;
use super::endpoints::{load, modify};
use super::error::ApiError;
use super::openapi::ItemPath;
use crate::context::AppContext;
use crate::ids::{EndpointId, TenantId};
use crate::store::StoredSecret;

/// How long a rotated-out secret keeps signing.
const SECRET_GRACE_MS: u64 = 24 * 60 * 60 * 1000;
/// Most live secrets an endpoint may have, the current one included: each adds
/// a signature to every request, so rotations must not pile them up.
const MAX_LIVE_SECRETS: usize = 5;

/// The endpoint's live signing secrets, newest first.
#[utoipa::path(get, path = "/v1/tenants/{t}/endpoints/{id}/secret", tag = "endpoints",
    operation_id = "get_endpoint_secrets", params(ItemPath),
    responses((status = 200, description = "The live secrets", body = EndpointSecrets)))]
pub(super) async fn secret(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path((t, id)): Path<(TenantId, EndpointId)>,
) -> Result<NoStore<Json<EndpointSecrets>>, ApiError> {
    let ep = load(&ctx, &who, &t, &id).await?;
    Ok(NoStore(Json(EndpointSecrets::new(&ep, ctx.clock.now_ms()))))
}

/// The body of a secret rotation.
#[derive(Default, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RotateSecret {
    /// `whsec_` + padded standard base64 of 24 to 64 bytes (the prefix may be
    /// left out); generated when absent. A `v1a` endpoint gets a new ed25519
    /// key with it: both stop signing when their grace period ends.
    #[schema(
        pattern = r"^(?:whsec_)?(?:(?:[A-Za-z0-9+/]{4}){8,20}(?:[A-Za-z0-9+/][AQgw]==|[A-Za-z0-9+/]{2}[AEIMQUYcgkosw048]=)?|(?:[A-Za-z0-9+/]{4}){21}(?:[A-Za-z0-9+/][AQgw]==)?)$"
    )]
    secret: Option<String>,
}

/// Starts signing with a new secret (given, or generated); the others keep signing
/// for 24 hours.
#[utoipa::path(post, path = "/v1/tenants/{t}/endpoints/{id}/rotate-secret", tag = "endpoints",
    operation_id = "rotate_endpoint_secret", params(ItemPath),
    request_body(content = Option<RotateSecret>, description = "Empty, or a secret of the tenant's choosing"),
    responses((status = 200, description = "The live secrets, the new one first", body = EndpointSecrets)))]
pub(super) async fn rotate_secret(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path((t, id)): Path<(TenantId, EndpointId)>,
    body: Body,
) -> Result<NoStore<Json<EndpointSecrets>>, ApiError> {
    let t = who.require_tenant(&ctx, &t).await?;
    let input: RotateSecret = body_or_default(body, ctx.config.limits.json_body_bytes).await?;
    let new_secret = tenant_secret(input.secret.as_deref())?;
    let now = ctx.clock.now_ms();
    let new_secret = &new_secret;
    let ep = modify(&ctx, &who, &t, &id, |mut ep| async move {
        ep.secrets
            .retain(|s| s.expires_at_ms.is_none_or(|e| e > now));
        // Checked on the record being swapped, so concurrent rotations cannot
        // pass the cap together.
        if ep.secrets.len() >= MAX_LIVE_SECRETS {
            return Err(ApiError::too_many_secrets(ep.secrets.len()));
        }
        for s in &mut ep.secrets {
            s.expires_at_ms
                .get_or_insert(now.saturating_add(SECRET_GRACE_MS));
        }
        let signing_key = key_for_rotation(&ep);
        ep.secrets.insert(
            0,
            StoredSecret {
                secret: new_secret.as_str().to_owned(),
                expires_at_ms: None,
                signing_key,
            },
        );
        Ok(ep)
    })
    .await?;
    Ok(NoStore(Json(EndpointSecrets::new(&ep, now))))
}
