//! `/api/v1/app/{app_id}/msg`: a Svix message is a hookgate event of the
//! tenant the app names. Its `eventId` is the event's uid (so either names
//! it in a path), `channels` and `tags` are the event's, and create ingests
//! through v1 (202, as Svix answers). A repeated `eventId` within v1's 24
//! hours is a 409, as in Svix; what hookgate cannot honour (transformations,
//! a payload retention of the message's own) is refused, never dropped.

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use super::applications;
use super::error::SvixError;
use super::forward::{Caller, V1, seg, with_query};
use super::openapi::{params as p, schemas as s};
use super::wire::{ListQuery, Pairs, list_response, object_body, renamed};

/// `MessageIn` fields and the v1 ingest fields they become.
const INGEST_FIELDS: &[(&str, &str)] = &[
    ("eventType", "event_type"),
    ("payload", "payload"),
    ("eventId", "uid"),
    ("channels", "channels"),
    ("tags", "tags"),
    ("deliverAt", "deliver_at"),
];

/// `MessageIn` fields hookgate has no meaning for, and why.
const REFUSED_FIELDS: &[(&str, &str)] = &[
    (
        "transformationsParams",
        "hookgate has no transformations: send the payload as it should arrive",
    ),
    (
        "payloadRetentionPeriod",
        "hookgate keeps payloads for the install's retention; expunge the content to remove it sooner",
    ),
    (
        "payloadRetentionHours",
        "hookgate keeps payloads for the install's retention; expunge the content to remove it sooner",
    ),
];

/// `/v1/tenants/{t}/events/{id}`.
pub(super) fn event_path(app: &str, msg: &str) -> String {
    format!("/v1/tenants/{}/events/{}", seg(app), seg(msg))
}

/// `v` when a non-empty array, else `null` (Svix's "none given").
pub(super) fn nonempty(v: &Value) -> Value {
    match v.as_array() {
        Some(a) if !a.is_empty() => v.clone(),
        _ => Value::Null,
    }
}

/// A message as Svix shows it, from a v1 event (or event summary). Without
/// content, or once expunged, the payload reads `{}`.
pub(super) fn message_out(ev: &Value, with_content: bool) -> Value {
    let payload = match &ev["payload"] {
        Value::Null => json!({}),
        p if with_content => p.clone(),
        _ => json!({}),
    };
    json!({
        "id": ev["id"],
        "eventType": ev["event_type"],
        "payload": payload,
        "eventId": ev["uid"],
        "channels": nonempty(&ev["channels"]),
        "tags": nonempty(&ev["tags"]),
        "timestamp": ev["created_at"],
        "deliverAt": ev["deliver_at"],
    })
}

/// The v1 event `msg` names (its id or uid) in `app`.
///
/// # Errors
/// 404 when there is none.
pub(super) async fn find_event(
    v1: &V1,
    caller: &Caller,
    app: &str,
    msg: &str,
) -> Result<Value, SvixError> {
    v1.ok(caller, Method::GET, &event_path(app, msg), None, "query")
        .await
}

/// The v1 ingest body of a `MessageIn`.
///
/// # Errors
/// 422 at a missing or refused field.
fn ingest_body(body: &Map<String, Value>) -> Result<Map<String, Value>, SvixError> {
    if !body.get("eventType").is_some_and(Value::is_string) {
        return Err(SvixError::body_field("eventType", "field required"));
    }
    match body.get("payload") {
        None | Some(Value::Null) => return Err(SvixError::body_field("payload", "field required")),
        Some(Value::Object(_)) => {}
        Some(_) => {
            return Err(SvixError::body_field(
                "payload",
                "payload must be a JSON object",
            ));
        }
    }
    for (field, why) in REFUSED_FIELDS {
        if body.get(*field).is_some_and(|v| !v.is_null()) {
            return Err(SvixError::body_field(field, *why));
        }
    }
    let mut out = renamed(body, INGEST_FIELDS);
    // v1 reads an absent list as empty, a `null` one as an error.
    out.retain(|_, v| !v.is_null());
    Ok(out)
}

/// v1's refusal of an ingest, its field named as Svix names it.
fn ingest_error(status: StatusCode, body: &Value) -> SvixError {
    match SvixError::from_v1(status, body, "body") {
        SvixError::Validation { mut loc, msg } => {
            if loc.get(1).is_some_and(|f| f == "uid") {
                loc[1] = "eventId".into();
            }
            SvixError::Validation { loc, msg }
        }
        other => other,
    }
}

/// A conflict on an `eventId` already taken.
fn event_id_taken(event_id: &str) -> SvixError {
    SvixError::Http {
        status: StatusCode::CONFLICT,
        code: "conflict".into(),
        detail: format!("a message with eventId {event_id:?} already exists"),
    }
}

#[utoipa::path(post, path = "/app/{app_id}/msg", tag = "Message", operation_id = "v1.message.create",
    params(p::AppPath, p::WithContent), request_body = s::MessageIn,
    responses((status = 202, description = "Stored; its deliveries are on their way", body = s::MessageOut)))]
pub(super) async fn create(
    State(v1): State<V1>,
    caller: Caller,
    Path(app): Path<String>,
    q: Pairs,
    body: Body,
) -> Result<Response, SvixError> {
    let with_content = q.flag("with_content", true)?;
    let body = object_body(body, v1.body_limit(), "MessageIn").await?;
    let ingest = ingest_body(&body)?;
    let reads = caller.clone();
    let tenant = match body.get("application") {
        None | Some(Value::Null) => app,
        Some(Value::Object(app_in)) => {
            applications::ensure_application(&v1, &reads, &app, app_in).await?
        }
        Some(_) => {
            return Err(SvixError::body_field(
                "application",
                "application must be an object",
            ));
        }
    };
    let path = format!("/v1/tenants/{}/events", seg(&tenant));
    let answer = v1
        .call(&caller, Method::POST, &path, Some(&Value::Object(ingest)))
        .await?;
    if !answer.status.is_success() {
        return Err(ingest_error(answer.status, &answer.body));
    }
    // With a uid v1 answers a repeat with the first event; Svix calls it a conflict.
    if answer.headers.contains_key("idempotent-replayed")
        && let Some(event_id) = body.get("eventId").and_then(Value::as_str)
    {
        return Err(event_id_taken(event_id));
    }
    let id = answer.body["id"]
        .as_str()
        .ok_or_else(|| SvixError::internal("the ingest answered no event id"))?;
    let ev = find_event(&v1, &reads, &tenant, id).await?;
    Ok((StatusCode::ACCEPTED, Json(message_out(&ev, with_content))).into_response())
}

/// The v1 event-list query of a Svix message list.
fn list_query(q: &Pairs) -> Result<Vec<(&'static str, String)>, SvixError> {
    // Svix lists messages newest first only: no `order`.
    let page = ListQuery {
        order: None,
        ..q.page()
    };
    let mut query = page.v1_query()?;
    let types = q.list("event_types");
    if !types.is_empty() {
        query.push(("event_types", types.join(",")));
    }
    for name in ["channel", "tag"] {
        if let Some(v) = q.one(name) {
            query.push((name, v.to_owned()));
        }
    }
    if let Some(t) = q.time("after")? {
        query.push(("since", t));
    }
    if let Some(t) = q.time("before")? {
        query.push(("until", t));
    }
    Ok(query)
}

#[utoipa::path(get, path = "/app/{app_id}/msg", tag = "Message", operation_id = "v1.message.list",
    params(p::AppPath, p::Page, p::MessageFilter, p::WithContent),
    responses((status = 200, description = "A page of messages, newest first", body = s::ListResponse<s::MessageOut>)))]
pub(super) async fn list(
    State(v1): State<V1>,
    caller: Caller,
    Path(app): Path<String>,
    q: Pairs,
) -> Result<Json<Value>, SvixError> {
    let with_content = q.flag("with_content", true)?;
    let path = with_query(
        &format!("/v1/tenants/{}/events", seg(&app)),
        &list_query(&q)?,
    );
    let page = v1.ok(&caller, Method::GET, &path, None, "query").await?;
    let data = page["data"]
        .as_array()
        .map(|a| a.iter().map(|ev| message_out(ev, with_content)).collect())
        .unwrap_or_default();
    Ok(Json(list_response(data, &page)))
}

#[utoipa::path(get, path = "/app/{app_id}/msg/{msg_id}", tag = "Message", operation_id = "v1.message.get",
    params(p::MessagePath, p::WithContent),
    responses((status = 200, description = "The message", body = s::MessageOut)))]
pub(super) async fn get(
    State(v1): State<V1>,
    caller: Caller,
    Path((app, msg)): Path<(String, String)>,
    q: Pairs,
) -> Result<Json<Value>, SvixError> {
    let with_content = q.flag("with_content", true)?;
    let ev = find_event(&v1, &caller, &app, &msg).await?;
    Ok(Json(message_out(&ev, with_content)))
}

/// Expunges the payload for good (v1 refuses, 409, while a delivery of it is
/// pending, since that delivery would still send it).
#[utoipa::path(delete, path = "/app/{app_id}/msg/{msg_id}/content", tag = "Message", operation_id = "v1.message.expunge-content",
    params(p::MessagePath),
    responses((status = 204, description = "The payload is gone for good")))]
pub(super) async fn expunge_content(
    State(v1): State<V1>,
    caller: Caller,
    Path((app, msg)): Path<(String, String)>,
) -> Result<StatusCode, SvixError> {
    let path = format!("{}/payload", event_path(&app, &msg));
    v1.ok(&caller, Method::DELETE, &path, None, "query").await?;
    Ok(StatusCode::NO_CONTENT)
}
