//! An endpoint's own operations on the Svix face: its headers (`GET`, `PUT`,
//! `PATCH .../headers`), its secret and rotation, recover and replay-missing
//! (v1 tasks, answered as Svix's task objects), send-example, and stats.

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use super::endpoints::v1_path;
use super::error::SvixError;
use super::forward::{Caller, V1, with_query};
use super::messages::{find_event, message_out};
use super::openapi::{params as p, schemas as s};
use super::wire::{Pairs, object_body, renamed};

/// `GET .../secret`: the newest signing secret.
#[utoipa::path(get, path = "/app/{app_id}/endpoint/{endpoint_id}/secret", tag = "Endpoint", operation_id = "v1.endpoint.get-secret",
    params(p::EndpointPath),
    responses((status = 200, description = "The newest signing secret", body = s::EndpointSecretOut)))]
pub(super) async fn secret(
    State(v1): State<V1>,
    caller: Caller,
    Path((app, ep)): Path<(String, String)>,
) -> Result<Json<Value>, SvixError> {
    let path = format!("{}/secret", v1_path(&app, Some(&ep)));
    let secrets = v1.ok(&caller, Method::GET, &path, None, "query").await?;
    Ok(Json(json!({"key": secrets["secret"]})))
}

/// `POST .../secret/rotate`: a new secret (`key`, or a generated one); the old
/// one keeps signing for the configured overlap, as in v1. Answers the new
/// secret, as the official SDKs read it (the open-source server's 204 has no
/// body; an SDK reading one would fail).
#[utoipa::path(post, path = "/app/{app_id}/endpoint/{endpoint_id}/secret/rotate", tag = "Endpoint", operation_id = "v1.endpoint.rotate-secret",
    params(p::EndpointPath), request_body = s::EndpointSecretRotateIn,
    responses((status = 200, description = "The new secret (the old one signs too for 24 hours)", body = s::EndpointSecretOut)))]
pub(super) async fn rotate_secret(
    State(v1): State<V1>,
    caller: Caller,
    Path((app, ep)): Path<(String, String)>,
    body: Body,
) -> Result<Json<Value>, SvixError> {
    let body = object_body(body, v1.body_limit(), "EndpointSecretRotateIn").await?;
    let mut rotate = Map::new();
    if let Some(key) = body.get("key").filter(|k| !k.is_null()) {
        rotate.insert("secret".into(), key.clone());
    }
    if body.get("gracePeriodSeconds").is_some_and(|v| !v.is_null()) {
        return Err(SvixError::body_field(
            "gracePeriodSeconds",
            "the old secret keeps signing for 24 hours, the same for every endpoint",
        ));
    }
    let path = format!("{}/rotate-secret", v1_path(&app, Some(&ep)));
    let secrets = v1
        .ok(
            &caller,
            Method::POST,
            &path,
            Some(&Value::Object(rotate)),
            "body",
        )
        .await?;
    Ok(Json(json!({"key": secrets["secret"]})))
}

/// A v1 task as Svix's `RecoverOut` or `ReplayOut`.
fn task_out(task: &Value, kind: &str) -> Value {
    json!({
        "id": task["id"],
        "status": task["state"].as_str().unwrap_or("running"),
        "task": kind,
        "updatedAt": task["updated_at"],
    })
}

/// Starts the v1 task at `.../{action}` (`recover`, `replay-missing`) for a
/// body with `since` and maybe `until`; answers it as Svix's task `kind`.
async fn start_task(
    v1: &V1,
    caller: &Caller,
    (app, ep): (&str, &str),
    body: Body,
    (action, kind): (&str, &str),
) -> Result<Response, SvixError> {
    let body = object_body(body, v1.body_limit(), "RecoverIn").await?;
    if !body.get("since").is_some_and(Value::is_string) {
        return Err(SvixError::body_field("since", "field required"));
    }
    let input = Value::Object(renamed(&body, &[("since", "since"), ("until", "until")]));
    let path = format!("{}/{action}", v1_path(app, Some(ep)));
    let task = v1
        .ok(caller, Method::POST, &path, Some(&input), "body")
        .await?;
    Ok((StatusCode::ACCEPTED, Json(task_out(&task, kind))).into_response())
}

/// `POST .../recover`: replays the dead deliveries since a time, as a v1 task.
#[utoipa::path(post, path = "/app/{app_id}/endpoint/{endpoint_id}/recover", tag = "Endpoint", operation_id = "v1.endpoint.recover",
    params(p::EndpointPath), request_body = s::RecoverIn,
    responses((status = 202, description = "The task replaying the dead deliveries", body = s::RecoverOut)))]
pub(super) async fn recover(
    State(v1): State<V1>,
    caller: Caller,
    Path((app, ep)): Path<(String, String)>,
    body: Body,
) -> Result<Response, SvixError> {
    let action = ("recover", "endpoint.recover");
    start_task(&v1, &caller, (&app, &ep), body, action).await
}

/// `POST .../replay-missing`: sends the endpoint what it never got since a
/// time, as a v1 task.
#[utoipa::path(post, path = "/app/{app_id}/endpoint/{endpoint_id}/replay-missing", tag = "Endpoint", operation_id = "v1.endpoint.replay-missing",
    params(p::EndpointPath), request_body = s::RecoverIn,
    responses((status = 202, description = "The task sending what the endpoint never got", body = s::RecoverOut)))]
pub(super) async fn replay_missing(
    State(v1): State<V1>,
    caller: Caller,
    Path((app, ep)): Path<(String, String)>,
    body: Body,
) -> Result<Response, SvixError> {
    let action = ("replay-missing", "endpoint.replay");
    start_task(&v1, &caller, (&app, &ep), body, action).await
}

/// `POST .../send-example`: the catalog type's example, as a real delivery
/// to this endpoint alone; answers the message made.
#[utoipa::path(post, path = "/app/{app_id}/endpoint/{endpoint_id}/send-example", tag = "Endpoint", operation_id = "v1.endpoint.send-example",
    params(p::EndpointPath), request_body = s::EventExampleIn,
    responses((status = 200, description = "The message made of the type's example", body = s::MessageOut)))]
pub(super) async fn send_example(
    State(v1): State<V1>,
    caller: Caller,
    Path((app, ep)): Path<(String, String)>,
    body: Body,
) -> Result<Json<Value>, SvixError> {
    let body = object_body(body, v1.body_limit(), "EventExampleIn").await?;
    let Some(event_type) = body.get("eventType").and_then(Value::as_str) else {
        return Err(SvixError::body_field("eventType", "field required"));
    };
    let path = format!("{}/send-example", v1_path(&app, Some(&ep)));
    let sent = v1
        .ok(
            &caller,
            Method::POST,
            &path,
            Some(&json!({"event_type": event_type})),
            "body",
        )
        .await?;
    let id = sent["id"].as_str().unwrap_or_default();
    let ev = find_event(&v1, &caller, &app, id).await?;
    Ok(Json(message_out(&ev, true)))
}

/// `GET .../stats`: Svix's counts from the endpoint's stats: delivered and
/// failed attempts over the range, and the deliveries pending now (hookgate
/// has no `sending` or `canceled` state: both are 0).
#[utoipa::path(get, path = "/app/{app_id}/endpoint/{endpoint_id}/stats", tag = "Endpoint", operation_id = "v1.endpoint.get-stats",
    params(p::EndpointPath, p::StatsRange),
    responses((status = 200, description = "Counts over the range", body = s::EndpointStats)))]
pub(super) async fn stats(
    State(v1): State<V1>,
    caller: Caller,
    Path((app, ep)): Path<(String, String)>,
    q: Pairs,
) -> Result<Json<Value>, SvixError> {
    let query: Vec<(&str, String)> = [("since", q.time("since")?), ("until", q.time("until")?)]
        .into_iter()
        .filter_map(|(k, v)| Some((k, v?)))
        .collect();
    let path = with_query(&format!("{}/stats", v1_path(&app, Some(&ep))), &query);
    let s = v1.ok(&caller, Method::GET, &path, None, "query").await?;
    Ok(Json(json!({
        "success": s["totals"]["delivered"],
        "fail": s["totals"]["failed"],
        "pending": s["states"]["pending"],
        "sending": 0,
        "canceled": 0,
    })))
}

/// Svix's headers answer: the custom headers, sensitive ones by name only.
fn headers_out(ep: &Value) -> Value {
    let sensitive: Vec<Value> = ep["sensitive_headers"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let headers: Map<String, Value> = ep["headers"]
        .as_object()
        .map(|h| {
            h.iter()
                .filter(|(k, _)| !sensitive.iter().any(|s| s.as_str() == Some(k.as_str())))
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .unwrap_or_default();
    json!({"headers": headers, "sensitive": sensitive})
}

#[utoipa::path(get, path = "/app/{app_id}/endpoint/{endpoint_id}/headers", tag = "Endpoint", operation_id = "v1.endpoint.get-headers",
    params(p::EndpointPath),
    responses((status = 200, description = "The custom headers", body = s::EndpointHeadersOut)))]
pub(super) async fn get_headers(
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
    Ok(Json(headers_out(&found)))
}

/// `PUT .../headers` replaces the custom headers; `PATCH` merges them, a
/// `null` value removing one.
async fn set_headers(
    v1: &V1,
    caller: &Caller,
    app: &str,
    ep: &str,
    body: Body,
    replace: bool,
) -> Result<StatusCode, SvixError> {
    let body = object_body(
        body,
        v1.body_limit(),
        if replace {
            "EndpointHeadersIn"
        } else {
            "EndpointHeadersPatchIn"
        },
    )
    .await?;
    let Some(Value::Object(given)) = body.get("headers") else {
        return Err(SvixError::body_field(
            "headers",
            "field required: an object",
        ));
    };
    let mut headers = given.clone();
    // `deleteHeaders` (a patch's only way to remove one in the SDKs' models).
    for name in body
        .get("deleteHeaders")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
    {
        headers.insert(name.to_owned(), Value::Null);
    }
    if replace {
        let found = v1
            .ok(caller, Method::GET, &v1_path(app, Some(ep)), None, "query")
            .await?;
        for old in found["headers"]
            .as_object()
            .into_iter()
            .flat_map(|h| h.keys())
        {
            headers.entry(old.clone()).or_insert(Value::Null);
        }
    }
    let patch = json!({"headers": headers});
    v1.ok(
        caller,
        Method::PATCH,
        &v1_path(app, Some(ep)),
        Some(&patch),
        "body",
    )
    .await?;
    Ok(StatusCode::NO_CONTENT)
}

#[utoipa::path(put, path = "/app/{app_id}/endpoint/{endpoint_id}/headers", tag = "Endpoint", operation_id = "v1.endpoint.update-headers",
    params(p::EndpointPath), request_body = s::EndpointHeadersIn,
    responses((status = 204, description = "Replaced")))]
pub(super) async fn update_headers(
    State(v1): State<V1>,
    caller: Caller,
    Path((app, ep)): Path<(String, String)>,
    body: Body,
) -> Result<StatusCode, SvixError> {
    set_headers(&v1, &caller, &app, &ep, body, true).await
}

#[utoipa::path(patch, path = "/app/{app_id}/endpoint/{endpoint_id}/headers", tag = "Endpoint", operation_id = "v1.endpoint.patch-headers",
    params(p::EndpointPath), request_body = s::EndpointHeadersPatchIn,
    responses((status = 204, description = "Merged")))]
pub(super) async fn patch_headers(
    State(v1): State<V1>,
    caller: Caller,
    Path((app, ep)): Path<(String, String)>,
    body: Body,
) -> Result<StatusCode, SvixError> {
    set_headers(&v1, &caller, &app, &ep, body, false).await
}
