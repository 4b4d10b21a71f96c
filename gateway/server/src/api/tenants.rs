//! Tenants: create and list (admin), rotate a key (admin or the tenant).

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use serde::Deserialize;
use serde_json::{Value, json};

use super::auth::Principal;
use super::body::{parse_json, read_limited};
use super::error::ApiError;
use super::{Page, bad_query, list_body};
use crate::clock::rfc3339_ms;
use crate::context::AppContext;
use crate::{ids, token};

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct CreateTenant {
    id: String,
}

pub(super) async fn create(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    body: Body,
) -> Result<(StatusCode, Json<Value>), ApiError> {
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
        .create_tenant(&input.id, token::hash(&key), now)
        .await?
    {
        Some(t) => Ok((
            StatusCode::CREATED,
            Json(json!({"id": t.id, "api_key": key, "created_at": rfc3339_ms(now)})),
        )),
        None => Err(ApiError::conflict(format!(
            "tenant {} already exists",
            input.id
        ))),
    }
}

pub(super) async fn list(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    page: Result<Query<Page>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<Value>, ApiError> {
    who.require_admin()?;
    let Query(page) = page.map_err(bad_query)?;
    let (tenants, more) = ctx
        .store
        .list_tenants(page.limit()?, page.cursor.as_deref())?;
    let next = if more {
        tenants.last().map(|t| t.id.clone())
    } else {
        None
    };
    let data = tenants
        .iter()
        .map(|t| json!({"id": t.id, "created_at": rfc3339_ms(t.created_at_ms)}))
        .collect();
    Ok(list_body(data, next))
}

pub(super) async fn rotate_key(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(t): Path<String>,
) -> Result<Json<Value>, ApiError> {
    who.require_tenant(&ctx, &t)?;
    let key = token::generate();
    if !ctx.store.rotate_tenant_key(&t, token::hash(&key)).await? {
        return Err(ApiError::not_found("tenant"));
    }
    Ok(Json(json!({"id": t, "api_key": key})))
}
