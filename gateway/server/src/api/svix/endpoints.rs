//! `/api/v1/app/{app_id}/endpoint`: a Svix endpoint is a hookgate endpoint of
//! the application's tenant. Svix's fields map onto v1's (`throttleRate` is
//! `rate_limit_per_s`, `eventTypes` or `filterTypes` is `event_types`, none
//! meaning every type); hookgate's own (policy, plugin, limits, filter,
//! signature) go in and come out under `hookgate`, never dropped. An endpoint
//! made here signs under both header sets (`svix-*`, which Svix sends, and
//! `webhook-*`) unless `hookgate.signature` says otherwise. Its own
//! operations (headers, secret, tasks, example, stats) are in
//! `endpoint_actions.rs`.

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

/// Svix's names for the fields v1 shares, `(svix, v1)`.
const SHARED: &[(&str, &str)] = &[
    ("url", "url"),
    ("description", "description"),
    ("uid", "uid"),
    ("disabled", "disabled"),
    ("channels", "channels"),
    ("metadata", "metadata"),
    ("throttleRate", "rate_limit_per_s"),
    ("headers", "headers"),
    ("secret", "secret"),
];

/// hookgate's own fields, reachable under `hookgate`.
const OWN: &[&str] = &[
    "policy",
    "plugin",
    "timeout_ms",
    "max_in_flight",
    "filter",
    "signature",
    "sensitive_headers",
];

/// `/v1/tenants/{t}/endpoints[/{id}]`.
pub(super) fn v1_path(app: &str, endpoint: Option<&str>) -> String {
    match endpoint {
        None => format!("/v1/tenants/{}/endpoints", seg(app)),
        Some(ep) => format!("/v1/tenants/{}/endpoints/{}", seg(app), seg(ep)),
    }
}

/// An endpoint as Svix shows it, from a v1 endpoint.
fn endpoint_out(ep: &Value) -> Value {
    let event_types = match ep["event_types"].as_array() {
        Some(types) if types.iter().any(|t| t == "*") => Value::Null,
        _ => ep["event_types"].clone(),
    };
    let channels = match ep["channels"].as_array() {
        Some(c) if !c.is_empty() => ep["channels"].clone(),
        _ => Value::Null,
    };
    let own: Map<String, Value> = OWN
        .iter()
        .chain(&["breaker", "policy_effective", "disabled_reason"])
        .filter_map(|k| ep.get(*k).map(|v| ((*k).to_owned(), v.clone())))
        .collect();
    json!({
        "id": ep["id"],
        "uid": ep["uid"],
        "url": ep["url"],
        "description": ep["description"],
        "version": 1,
        "disabled": ep["disabled"],
        "throttleRate": ep["rate_limit_per_s"],
        "rateLimit": ep["rate_limit_per_s"],
        "eventTypes": event_types,
        "filterTypes": event_types,
        "channels": channels,
        "metadata": ep["metadata"],
        "createdAt": ep["created_at"],
        "updatedAt": ep["updated_at"],
        "hookgate": own,
    })
}

/// The v1 body for a Svix `EndpointIn`, `EndpointUpdate` or `EndpointPatch`.
///
/// # Errors
/// 422 for a `hookgate` that is not an object or names an unknown field.
fn v1_body(body: &Map<String, Value>) -> Result<Map<String, Value>, SvixError> {
    let mut out = renamed(body, SHARED);
    // `filterTypes` is the newer name; `null` means every type.
    let types = body.get("filterTypes").or_else(|| body.get("eventTypes"));
    if let Some(types) = types {
        let every = types.is_null() || types.as_array().is_some_and(Vec::is_empty);
        out.insert(
            "event_types".into(),
            if every { json!(["*"]) } else { types.clone() },
        );
    }
    if out.get("channels").is_some_and(Value::is_null) {
        out.insert("channels".into(), json!([]));
    }
    if body.get("rateLimit").is_some() && !body.contains_key("throttleRate") {
        out.insert("rate_limit_per_s".into(), body["rateLimit"].clone());
    }
    match body.get("hookgate") {
        None | Some(Value::Null) => {}
        Some(Value::Object(own)) => {
            for (k, v) in own {
                if !OWN.contains(&k.as_str()) {
                    return Err(SvixError::body_field(
                        &format!("hookgate.{k}"),
                        format!("hookgate takes {}", OWN.join(", ")),
                    ));
                }
                out.insert(k.clone(), v.clone());
            }
        }
        Some(_) => {
            return Err(SvixError::body_field(
                "hookgate",
                "hookgate must be an object",
            ));
        }
    }
    Ok(out)
}

/// Refuses a body without `url` (create and PUT need one).
fn require_url(body: &Map<String, Value>) -> Result<(), SvixError> {
    if body.get("url").is_some_and(Value::is_string) {
        Ok(())
    } else {
        Err(SvixError::body_field("url", "field required"))
    }
}

#[utoipa::path(get, path = "/app/{app_id}/endpoint", tag = "Endpoint", operation_id = "v1.endpoint.list",
    params(p::AppPath, p::Page, p::NewestFirst),
    responses((status = 200, description = "A page of endpoints", body = s::ListResponse<s::EndpointOut>)))]
pub(super) async fn list(
    State(v1): State<V1>,
    caller: Caller,
    Path(app): Path<String>,
    q: Pairs,
) -> Result<Json<Value>, SvixError> {
    let path = with_query(&v1_path(&app, None), &q.page().v1_query()?);
    let page = v1.ok(&caller, Method::GET, &path, None, "query").await?;
    let data = page["data"]
        .as_array()
        .map(|a| a.iter().map(endpoint_out).collect())
        .unwrap_or_default();
    Ok(Json(list_response(data, &page)))
}

#[utoipa::path(post, path = "/app/{app_id}/endpoint", tag = "Endpoint", operation_id = "v1.endpoint.create",
    params(p::AppPath), request_body = s::EndpointIn,
    responses((status = 201, description = "Created", body = s::EndpointOut)))]
pub(super) async fn create(
    State(v1): State<V1>,
    caller: Caller,
    Path(app): Path<String>,
    body: Body,
) -> Result<Response, SvixError> {
    let body = object_body(body, v1.body_limit(), "EndpointIn").await?;
    require_url(&body)?;
    let fields = v1_body(&body)?;
    create_endpoint(&v1, &caller, &app, fields).await
}

/// Creates the endpoint `fields` describe in `app`, signing under both header
/// sets unless they say otherwise; answers it, 201.
async fn create_endpoint(
    v1: &V1,
    caller: &Caller,
    app: &str,
    mut fields: Map<String, Value>,
) -> Result<Response, SvixError> {
    fields
        .entry("signature")
        .or_insert_with(|| json!({"headers": "both"}));
    let path = v1_path(app, None);
    let made = v1
        .ok(
            caller,
            Method::POST,
            &path,
            Some(&Value::Object(fields)),
            "body",
        )
        .await?;
    Ok((StatusCode::CREATED, Json(endpoint_out(&made))).into_response())
}

#[utoipa::path(get, path = "/app/{app_id}/endpoint/{endpoint_id}", tag = "Endpoint", operation_id = "v1.endpoint.get",
    params(p::EndpointPath),
    responses((status = 200, description = "The endpoint", body = s::EndpointOut)))]
pub(super) async fn get(
    State(v1): State<V1>,
    caller: Caller,
    Path((app, ep)): Path<(String, String)>,
) -> Result<Json<Value>, SvixError> {
    let found = v1
        .ok(
            &caller,
            Method::GET,
            &v1_path(&app, Some(&ep)),
            None,
            "query",
        )
        .await?;
    Ok(Json(endpoint_out(&found)))
}

/// `PUT`: replaces the endpoint (what is left out goes back to its default),
/// or creates it (201) when `endpoint_id` names none, the name as its uid.
#[utoipa::path(put, path = "/app/{app_id}/endpoint/{endpoint_id}", tag = "Endpoint", operation_id = "v1.endpoint.update",
    params(p::EndpointPath), request_body = s::EndpointIn,
    responses((status = 200, description = "Replaced", body = s::EndpointOut),
        (status = 201, description = "Created with the path's uid", body = s::EndpointOut)))]
pub(super) async fn update(
    State(v1): State<V1>,
    caller: Caller,
    Path((app, ep)): Path<(String, String)>,
    body: Body,
) -> Result<Response, SvixError> {
    let body = object_body(body, v1.body_limit(), "EndpointIn").await?;
    require_url(&body)?;
    let mut fields = v1_body(&body)?;
    let path = v1_path(&app, Some(&ep));
    let found = v1.call(&caller, Method::GET, &path, None).await?;
    if found.status == StatusCode::NOT_FOUND {
        fields
            .entry("uid")
            .or_insert_with(|| Value::String(ep.clone()));
        return create_endpoint(&v1, &caller, &app, fields).await;
    }
    if !found.status.is_success() {
        return Err(SvixError::from_v1(found.status, &found.body, "query"));
    }
    // What Svix's PUT leaves out is reset: every type, no channels, no
    // limit, enabled; hookgate's own fields and the secret stay as they are.
    for (key, reset) in [
        ("event_types", json!(["*"])),
        ("channels", json!([])),
        ("rate_limit_per_s", Value::Null),
        ("disabled", json!(false)),
        ("description", json!("")),
    ] {
        fields.entry(key).or_insert(reset);
    }
    fields.remove("secret");
    let id = found.body["id"].as_str().unwrap_or(&ep).to_owned();
    let patch = Value::Object(fields);
    let changed = v1
        .ok(
            &caller,
            Method::PATCH,
            &v1_path(&app, Some(&id)),
            Some(&patch),
            "body",
        )
        .await?;
    Ok(Json(endpoint_out(&changed)).into_response())
}

#[utoipa::path(patch, path = "/app/{app_id}/endpoint/{endpoint_id}", tag = "Endpoint", operation_id = "v1.endpoint.patch",
    params(p::EndpointPath), request_body = s::EndpointPatch,
    responses((status = 200, description = "Changed", body = s::EndpointOut)))]
pub(super) async fn patch(
    State(v1): State<V1>,
    caller: Caller,
    Path((app, ep)): Path<(String, String)>,
    body: Body,
) -> Result<Json<Value>, SvixError> {
    let body = object_body(body, v1.body_limit(), "EndpointPatch").await?;
    if body.contains_key("secret") {
        return Err(SvixError::body_field(
            "secret",
            "change the secret with secret/rotate",
        ));
    }
    let patch = Value::Object(v1_body(&body)?);
    let changed = v1
        .ok(
            &caller,
            Method::PATCH,
            &v1_path(&app, Some(&ep)),
            Some(&patch),
            "body",
        )
        .await?;
    Ok(Json(endpoint_out(&changed)))
}

#[utoipa::path(delete, path = "/app/{app_id}/endpoint/{endpoint_id}", tag = "Endpoint", operation_id = "v1.endpoint.delete",
    params(p::EndpointPath),
    responses((status = 204, description = "Deleted")))]
pub(super) async fn delete(
    State(v1): State<V1>,
    caller: Caller,
    Path((app, ep)): Path<(String, String)>,
) -> Result<StatusCode, SvixError> {
    v1.ok(
        &caller,
        Method::DELETE,
        &v1_path(&app, Some(&ep)),
        None,
        "query",
    )
    .await?;
    Ok(StatusCode::NO_CONTENT)
}
