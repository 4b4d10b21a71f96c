//! Tenants: create and list (admin), rotate a key (admin or the tenant).

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};

use super::answer_headers::NoStore;
use super::auth::Principal;
use super::body::{parse_json, read_limited};
use super::error::ApiError;
use super::openapi::TenantPath;
use super::{ListPage, Page, bad_query, list_body};
use crate::clock::rfc3339_ms;
use crate::context::AppContext;
use crate::ids::TenantId;
use crate::{ids, token};

/// The body of tenant creation.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct CreateTenant {
    /// Lowercase letters, digits, `_` and `-`, starting with a letter or digit.
    #[schema(pattern = r"^[a-z0-9][a-z0-9_-]{0,62}$", example = "acme")]
    id: String,
}

// Fields are declared in alphabetical order: the `json!` bodies these replace
// serialised that way, and clients may compare bytes.

/// A new tenant, with the only copy of its API key.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct CreatedTenant {
    api_key: String,
    #[schema(format = DateTime)]
    created_at: String,
    id: String,
}

/// A tenant as the admin's list shows it.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct TenantView {
    #[schema(format = DateTime)]
    created_at: String,
    id: String,
}

/// A tenant's new API key after a rotation.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct TenantKey {
    api_key: String,
    id: String,
}

/// Creates a tenant and answers its API key, shown this once.
#[utoipa::path(post, path = "/v1/tenants", tag = "tenants", operation_id = "create_tenant",
    request_body = CreateTenant,
    responses((status = 201, description = "The tenant, with its only API key", body = CreatedTenant)))]
pub(super) async fn create(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    body: Body,
) -> Result<NoStore<(StatusCode, Json<CreatedTenant>)>, ApiError> {
    who.require_admin()?;
    let input: CreateTenant =
        parse_json(&read_limited(body, ctx.config.limits.json_body_bytes).await?)?;
    if !ids::is_valid_tenant_id(&input.id) {
        return Err(ApiError::validation(
            "id",
            "tenant id must match ^[a-z0-9][a-z0-9_-]{0,62}$",
        ));
    }
    let key = token::generate();
    let now = ctx.clock.now_ms();
    match ctx
        .store
        .create_tenant(&TenantId::from(input.id.as_str()), token::hash(&key), now)
        .await?
    {
        Some(t) => Ok(NoStore((
            StatusCode::CREATED,
            Json(CreatedTenant {
                api_key: key,
                created_at: rfc3339_ms(now),
                id: t.id.to_string(),
            }),
        ))),
        None => Err(ApiError::conflict(format!(
            "tenant {} already exists",
            input.id
        ))),
    }
}

/// Lists tenants, newest id first (the reverse of id order).
#[utoipa::path(get, path = "/v1/tenants", tag = "tenants", operation_id = "list_tenants",
    params(Page),
    responses((status = 200, description = "A page of tenants", body = ListPage<TenantView>)))]
pub(super) async fn list(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    page: Result<Query<Page>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<ListPage<TenantView>>, ApiError> {
    who.require_admin()?;
    let Query(page) = page.map_err(bad_query)?;
    let (tenants, more) = ctx
        .store
        .list_tenants(page.limit()?, page.cursor.as_deref())
        .await?;
    let next = if more {
        tenants.last().map(|t| t.id.clone())
    } else {
        None
    };
    let data = tenants
        .iter()
        .map(|t| TenantView {
            created_at: rfc3339_ms(t.created_at_ms),
            id: t.id.to_string(),
        })
        .collect();
    Ok(list_body(data, next.map(String::from)))
}

/// Gives the tenant a new API key; the old one stops working at once.
#[utoipa::path(post, path = "/v1/tenants/{t}/rotate-key", tag = "tenants",
    operation_id = "rotate_tenant_key", params(TenantPath),
    responses((status = 200, description = "The new key, shown this once", body = TenantKey)))]
pub(super) async fn rotate_key(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(t): Path<TenantId>,
) -> Result<NoStore<Json<TenantKey>>, ApiError> {
    who.require_tenant(&ctx, &t).await?;
    let key = token::generate();
    if !ctx.store.rotate_tenant_key(&t, token::hash(&key)).await? {
        return Err(ApiError::not_found("tenant"));
    }
    Ok(NoStore(Json(TenantKey {
        api_key: key,
        id: t.to_string(),
    })))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The typed body's bytes against the `json!` body it replaced.
    fn same_bytes(typed: impl Serialize, before: serde_json::Value) {
        assert_eq!(
            serde_json::to_string(&typed).unwrap(),
            serde_json::to_string(&before).unwrap()
        );
    }

    #[test]
    fn tenant_bodies_match_their_json_forms() {
        let (id, key, at) = ("acme", "hg_key", "2026-01-02T03:04:05.006Z");
        same_bytes(
            CreatedTenant {
                api_key: key.into(),
                created_at: at.into(),
                id: id.into(),
            },
            json!({"id": id, "api_key": key, "created_at": at}),
        );
        let view = TenantView {
            created_at: at.into(),
            id: id.into(),
        };
        same_bytes(&view, json!({"id": id, "created_at": at}));
        same_bytes(
            list_body(vec![view], Some(id.into())).0,
            json!({"data": [{"id": id, "created_at": at}], "next_cursor": id}),
        );
        same_bytes(
            list_body(Vec::<TenantView>::new(), None).0,
            json!({"data": [], "next_cursor": null}),
        );
        same_bytes(
            TenantKey {
                api_key: key.into(),
                id: id.into(),
            },
            json!({"id": id, "api_key": key}),
        );
    }
}
