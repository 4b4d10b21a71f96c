//! `/api/v1/app`: a Svix application is a hookgate tenant. Its id is the
//! tenant's (`app_…` when made here), its `uid` the tenant's uid, and either
//! names it wherever Svix takes an `app_id`.

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use super::error::SvixError;
use super::forward::{Caller, V1, seg, with_query};
use super::openapi::{params as p, schemas as s};
use super::wire::{Pairs, list_response, object_body, renamed};

/// An application as Svix shows it, from a v1 tenant.
pub(super) fn application_out(t: &Value) -> Value {
    json!({
        "id": t["id"],
        "uid": t["uid"],
        "name": t["name"],
        "metadata": t["metadata"],
        "throttleRate": null,
        "createdAt": t["created_at"],
        "updatedAt": t["updated_at"],
    })
}

/// The fields of an `ApplicationIn` or `ApplicationPatch`, as v1 names them
/// (its document refuses a `throttleRate`: hookgate's rates are endpoints').
fn tenant_fields(body: &Map<String, Value>) -> Map<String, Value> {
    renamed(
        body,
        &[("name", "name"), ("uid", "uid"), ("metadata", "metadata")],
    )
}

/// Creates a tenant for `fields` with a new `app_` id (or `id` when given).
async fn create_tenant(
    v1: &V1,
    caller: &Caller,
    mut fields: Map<String, Value>,
    id: Option<&str>,
) -> Result<Value, SvixError> {
    let id = id.map_or_else(new_app_id, str::to_owned);
    fields.insert("id".into(), Value::String(id));
    let created = v1
        .ok(
            caller,
            Method::POST,
            "/v1/tenants",
            Some(&Value::Object(fields)),
            "body",
        )
        .await?;
    Ok(application_out(&created))
}

/// Creates the application a path names (`app`), as PUT and a message's
/// inline `application` do: `app` is its id when an `app_` id, else its uid
/// (unless the body gives one).
async fn create_named(
    v1: &V1,
    caller: &Caller,
    app: &str,
    mut fields: Map<String, Value>,
) -> Result<Value, SvixError> {
    let id = app.starts_with("app_").then_some(app);
    if id.is_none() && !fields.contains_key("uid") {
        fields.insert("uid".into(), Value::String(app.to_owned()));
    }
    create_tenant(v1, caller, fields, id).await
}

/// Creates the application `app` names from an `ApplicationIn` (`body`).
///
/// # Errors
/// 422 at the field of `body` refused (`name` missing; API v1's own checks).
pub(super) async fn create_from(
    v1: &V1,
    caller: &Caller,
    app: &str,
    body: &Map<String, Value>,
) -> Result<Value, SvixError> {
    if !body.get("name").is_some_and(Value::is_string) {
        return Err(SvixError::body_field("name", "field required"));
    }
    create_named(v1, caller, app, tenant_fields(body)).await
}

/// `app_` and a lowercase ULID: a valid tenant id, and Svix's prefix.
fn new_app_id() -> String {
    format!("app_{}", ulid::Ulid::new().to_string().to_ascii_lowercase())
}

#[utoipa::path(get, path = "/app", tag = "Application", operation_id = "v1.application.list",
    params(p::Page, p::NewestFirst),
    responses((status = 200, description = "A page of applications", body = s::ListResponse<s::ApplicationOut>)))]
pub(super) async fn list(
    State(v1): State<V1>,
    caller: Caller,
    q: Pairs,
) -> Result<Json<Value>, SvixError> {
    let path = with_query("/v1/tenants", &q.page().v1_query()?);
    let page = v1.ok(&caller, Method::GET, &path, None, "query").await?;
    let data = page["data"]
        .as_array()
        .map(|a| a.iter().map(application_out).collect())
        .unwrap_or_default();
    Ok(Json(list_response(data, &page)))
}

#[utoipa::path(post, path = "/app", tag = "Application", operation_id = "v1.application.create",
    params(p::GetIfExists), request_body = s::ApplicationIn,
    responses((status = 201, description = "Created", body = s::ApplicationOut),
        (status = 200, description = "`get_if_exists`: the application with this uid", body = s::ApplicationOut)))]
pub(super) async fn create(
    State(v1): State<V1>,
    caller: Caller,
    q: Pairs,
    body: Body,
) -> Result<Response, SvixError> {
    let body = object_body(body, v1.body_limit(), "ApplicationIn").await?;
    if !body.get("name").is_some_and(Value::is_string) {
        return Err(SvixError::body_field("name", "field required"));
    }
    let fields = tenant_fields(&body);
    if q.flag("get_if_exists", false)?
        && let Some(uid) = body.get("uid").and_then(Value::as_str)
    {
        let path = format!("/v1/tenants/{}", seg(uid));
        let found = v1.call(&caller, Method::GET, &path, None).await?;
        if found.status == StatusCode::OK {
            return Ok(Json(application_out(&found.body)).into_response());
        }
    }
    let app = create_tenant(&v1, &caller, fields, None).await?;
    Ok((StatusCode::CREATED, Json(app)).into_response())
}

#[utoipa::path(get, path = "/app/{app_id}", tag = "Application", operation_id = "v1.application.get",
    params(p::AppPath),
    responses((status = 200, description = "The application", body = s::ApplicationOut)))]
pub(super) async fn get(
    State(v1): State<V1>,
    caller: Caller,
    Path(app): Path<String>,
) -> Result<Json<Value>, SvixError> {
    let t = v1
        .ok(
            &caller,
            Method::GET,
            &format!("/v1/tenants/{}", seg(&app)),
            None,
            "query",
        )
        .await?;
    Ok(Json(application_out(&t)))
}

/// `PUT`: replaces the application's fields, or creates it (201) named by
/// `app_id`: as its id when it is an `app_` id, else as its uid.
#[utoipa::path(put, path = "/app/{app_id}", tag = "Application", operation_id = "v1.application.update",
    params(p::AppPath), request_body = s::ApplicationIn,
    responses((status = 200, description = "Replaced", body = s::ApplicationOut),
        (status = 201, description = "Created, named by the path", body = s::ApplicationOut)))]
pub(super) async fn update(
    State(v1): State<V1>,
    caller: Caller,
    Path(app): Path<String>,
    body: Body,
) -> Result<Response, SvixError> {
    let body = object_body(body, v1.body_limit(), "ApplicationIn").await?;
    if !body.get("name").is_some_and(Value::is_string) {
        return Err(SvixError::body_field("name", "field required"));
    }
    let mut fields = tenant_fields(&body);
    let path = format!("/v1/tenants/{}", seg(&app));
    let found = v1.call(&caller, Method::GET, &path, None).await?;
    if found.status == StatusCode::NOT_FOUND {
        let created = create_named(&v1, &caller, &app, fields).await?;
        return Ok((StatusCode::CREATED, Json(created)).into_response());
    }
    if !found.status.is_success() {
        return Err(SvixError::from_v1(found.status, &found.body, "query"));
    }
    // A PUT replaces: fields left out are reset, old metadata keys removed.
    let mut metadata: Map<String, Value> = found.body["metadata"]
        .as_object()
        .map(|m| m.keys().map(|k| (k.clone(), Value::Null)).collect())
        .unwrap_or_default();
    if let Some(Value::Object(given)) = fields.get("metadata") {
        metadata.extend(given.clone());
    }
    fields.insert("metadata".into(), Value::Object(metadata));
    fields.entry("uid").or_insert(Value::Null);
    let id = found.body["id"].as_str().unwrap_or(&app).to_owned();
    let patch = Value::Object(fields);
    let t = v1
        .ok(
            &caller,
            Method::PATCH,
            &format!("/v1/tenants/{}", seg(&id)),
            Some(&patch),
            "body",
        )
        .await?;
    Ok(Json(application_out(&t)).into_response())
}

#[utoipa::path(patch, path = "/app/{app_id}", tag = "Application", operation_id = "v1.application.patch",
    params(p::AppPath), request_body = s::ApplicationPatch,
    responses((status = 200, description = "Changed", body = s::ApplicationOut)))]
pub(super) async fn patch(
    State(v1): State<V1>,
    caller: Caller,
    Path(app): Path<String>,
    body: Body,
) -> Result<Json<Value>, SvixError> {
    let body = object_body(body, v1.body_limit(), "ApplicationPatch").await?;
    let patch = Value::Object(tenant_fields(&body));
    let path = format!("/v1/tenants/{}", seg(&app));
    let t = v1
        .ok(&caller, Method::PATCH, &path, Some(&patch), "body")
        .await?;
    Ok(Json(application_out(&t)))
}

/// The tenant's delete runs as a v1 task; Svix answers 204 once it is begun
/// (the application is gone from every read at once).
#[utoipa::path(delete, path = "/app/{app_id}", tag = "Application", operation_id = "v1.application.delete",
    params(p::AppPath),
    responses((status = 204, description = "Gone from every read; its records are removed by a task")))]
pub(super) async fn delete(
    State(v1): State<V1>,
    caller: Caller,
    Path(app): Path<String>,
) -> Result<StatusCode, SvixError> {
    let path = format!("/v1/tenants/{}", seg(&app));
    v1.ok(&caller, Method::DELETE, &path, None, "query").await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A refusal of the inline `application`, placed under `application`.
fn inside_application(e: SvixError) -> SvixError {
    match e {
        SvixError::Validation { mut loc, msg } if loc.first().is_some_and(|p| p == "body") => {
            loc.insert(1, "application".into());
            SvixError::Validation { loc, msg }
        }
        other => other,
    }
}

/// The tenant id of the app `app` names, creating it from `app_in` (an
/// `ApplicationIn`) when there is none yet.
pub(super) async fn ensure_application(
    v1: &V1,
    caller: &Caller,
    app: &str,
    app_in: &Map<String, Value>,
) -> Result<String, SvixError> {
    let path = format!("/v1/tenants/{}", seg(app));
    for _ in 0..2 {
        let found = v1.call(caller, Method::GET, &path, None).await?;
        if found.status.is_success() {
            return Ok(found.body["id"].as_str().unwrap_or(app).to_owned());
        }
        if found.status != StatusCode::NOT_FOUND {
            return Err(SvixError::from_v1(found.status, &found.body, "query"));
        }
        match create_from(v1, caller, app, app_in).await {
            Ok(created) => return Ok(created["id"].as_str().unwrap_or(app).to_owned()),
            // Made meanwhile by a request beside this one: read it again.
            Err(SvixError::Http { status, .. }) if status == StatusCode::CONFLICT => {}
            Err(e) => return Err(inside_application(e)),
        }
    }
    Err(SvixError::not_found("application"))
}
