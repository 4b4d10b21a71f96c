//! Svix's attempted messages and destinations over v1's deliveries: the
//! messages sent to an endpoint and the endpoints a message went to, each
//! with its delivery's status (`succeeded` 0, `pending` 1, `dead` 2,
//! `in_flight` 3, sending), and a resend, a forced replay of a delivery.
//! The attempts themselves are in `attempts.rs`.

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Value, json};

use super::attempts::{
    CANCELED, FAIL, MessageFilter, PENDING, Reads, SENDING, SUCCESS, Status, empty_list,
    find_endpoint, status_param,
};
use super::error::SvixError;
use super::forward::{Caller, V1, seg, with_query};
use super::messages::{find_event, message_out, nonempty};
use super::openapi::{params as p, schemas as s};
use super::wire::{ListQuery, Pairs, list_response};

/// A message's status at an endpoint, from its delivery's v1 state.
fn delivery_status(state: &str) -> Status {
    match state {
        "succeeded" => SUCCESS,
        "pending" => PENDING,
        "in_flight" => SENDING,
        "skipped" => CANCELED,
        _ => FAIL,
    }
}

/// The v1 delivery state a Svix `status` filter names (4, canceled, is a
/// delivery the endpoint's transform skipped); `None` for any other.
fn state_of(status: u8) -> Option<&'static str> {
    match status {
        0 => Some("succeeded"),
        1 => Some("pending"),
        2 => Some("dead"),
        3 => Some("in_flight"),
        4 => Some("skipped"),
        _ => None,
    }
}

/// A message's destination as Svix shows it: the endpoint, with the status
/// of the message's delivery to it.
fn destination_out(ep: &Value, delivery: &Value) -> Value {
    let (status, text) = delivery_status(delivery["state"].as_str().unwrap_or_default());
    let event_types = match ep["event_types"].as_array() {
        Some(types) if types.iter().any(|t| t == "*") => Value::Null,
        _ => nonempty(&ep["event_types"]),
    };
    let updated = if ep["updated_at"].is_null() {
        &ep["created_at"]
    } else {
        &ep["updated_at"]
    };
    json!({
        "id": ep["id"],
        "uid": ep["uid"],
        "url": ep["url"],
        "description": ep["description"],
        "disabled": ep["disabled"],
        "throttleRate": ep["rate_limit_per_s"],
        "eventTypes": event_types,
        "channels": nonempty(&ep["channels"]),
        "createdAt": ep["created_at"],
        "updatedAt": updated,
        "status": status,
        "statusText": text,
        "nextAttempt": delivery["next_attempt_at"],
    })
}

/// The v1 delivery-list query of Svix's attempted messages of `endpoint`;
/// `None` when the status asked for is one no delivery has.
fn delivery_query(
    q: &Pairs,
    endpoint: &str,
    messages: &MessageFilter,
) -> Result<Option<Vec<(&'static str, String)>>, SvixError> {
    let page = ListQuery {
        order: None,
        ..q.page()
    };
    let mut query = page.v1_query()?;
    query.push(("endpoint_id", endpoint.to_owned()));
    if let Some(status) = status_param(q)? {
        let Some(state) = state_of(status) else {
            return Ok(None);
        };
        query.push(("state", state.into()));
    }
    if let [only] = messages.event_types.as_slice() {
        query.push(("event_type", only.clone()));
    }
    if let Some(t) = q.time("after")? {
        query.push(("since", t));
    }
    if let Some(t) = q.time("before")? {
        query.push(("until", t));
    }
    Ok(Some(query))
}

/// The messages sent to an endpoint, each with its delivery's status, newest
/// first.
#[utoipa::path(get, path = "/app/{app_id}/endpoint/{endpoint_id}/msg", tag = "Message Attempt", operation_id = "v1.message-attempt.list-attempted-messages",
    params(p::EndpointPath, p::Page, p::StatusFilter, p::MessageFilter, p::WithContent),
    responses((status = 200, description = "The messages sent to the endpoint, newest first", body = s::ListResponse<s::EndpointMessageOut>)))]
pub(super) async fn list_attempted_messages(
    State(v1): State<V1>,
    caller: Caller,
    Path((app, endpoint)): Path<(String, String)>,
    q: Pairs,
) -> Result<Json<Value>, SvixError> {
    let with_content = q.flag("with_content", true)?;
    let messages = MessageFilter::of(&q);
    let ep = find_endpoint(&v1, &caller, &app, &endpoint).await?;
    let id = ep["id"].as_str().unwrap_or(&endpoint);
    let Some(query) = delivery_query(&q, id, &messages)? else {
        return Ok(Json(empty_list()));
    };
    let path = with_query(&format!("/v1/tenants/{}/deliveries", seg(&app)), &query);
    let page = v1.ok(&caller, Method::GET, &path, None, "query").await?;
    let mut reads = Reads::default();
    let mut data = Vec::new();
    for d in page["data"].as_array().into_iter().flatten() {
        let event_id = d["event_id"].as_str().unwrap_or_default();
        // An event pruned under its delivery has nothing to show.
        let Some(ev) = reads.event(&v1, &caller, &app, event_id).await? else {
            continue;
        };
        if !messages.keeps_event(ev) {
            continue;
        }
        let (status, text) = delivery_status(d["state"].as_str().unwrap_or_default());
        let mut out = message_out(ev, with_content);
        out["status"] = json!(status);
        out["statusText"] = json!(text);
        out["nextAttempt"] = d["next_attempt_at"].clone();
        data.push(out);
    }
    Ok(Json(list_response(data, &page)))
}

/// The largest page of destinations Svix asks for, and the default.
const PAGE_MAX: usize = 250;
const PAGE_DEFAULT: usize = 50;

/// The endpoints a message was sent to, in endpoint-id order, each with the
/// status of its delivery. v1 shows an event with all its deliveries, so the
/// pages are cut here: the iterator is the last endpoint id shown.
#[utoipa::path(get, path = "/app/{app_id}/msg/{msg_id}/endpoint", tag = "Message Attempt", operation_id = "v1.message-attempt.list-attempted-destinations",
    params(p::MessagePath, p::Page),
    responses((status = 200, description = "The endpoints the message went to", body = s::ListResponse<s::MessageEndpointOut>)))]
pub(super) async fn list_attempted_destinations(
    State(v1): State<V1>,
    caller: Caller,
    Path((app, msg)): Path<(String, String)>,
    q: Pairs,
) -> Result<Json<Value>, SvixError> {
    let limit = match q.one("limit") {
        None => PAGE_DEFAULT,
        Some(l) => match l.parse::<usize>() {
            Ok(n) if (1..=PAGE_MAX).contains(&n) => n,
            _ => {
                return Err(SvixError::query_field(
                    "limit",
                    "limit must be from 1 to 250",
                ));
            }
        },
    };
    let after = q.one("iterator").unwrap_or_default();
    let ev = find_event(&v1, &caller, &app, &msg).await?;
    let mut deliveries: Vec<&Value> = ev["deliveries"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|d| d["endpoint_id"].as_str().is_some_and(|id| id > after))
        .collect();
    deliveries.sort_by(|a, b| a["endpoint_id"].as_str().cmp(&b["endpoint_id"].as_str()));
    let more = deliveries.len() > limit;
    deliveries.truncate(limit);
    let mut data = Vec::new();
    for d in &deliveries {
        let endpoint = d["endpoint_id"].as_str().unwrap_or_default();
        let path = format!("/v1/tenants/{}/endpoints/{}", seg(&app), seg(endpoint));
        let found = v1.call(&caller, Method::GET, &path, None).await?;
        match found.status {
            s if s.is_success() => data.push(destination_out(&found.body, d)),
            // A deleted endpoint is no destination any more.
            StatusCode::NOT_FOUND => {}
            s => return Err(SvixError::from_v1(s, &found.body, "query")),
        }
    }
    let last = deliveries.last().map(|d| d["endpoint_id"].clone());
    Ok(Json(json!({
        "data": data,
        "iterator": if more { last.unwrap_or(Value::Null) } else { Value::Null },
        "prevIterator": null,
        "done": !more,
    })))
}

/// Sends the message to the endpoint again: a forced replay of its delivery
/// there (v1 refuses, 409, one still pending or whose payload was expunged).
#[utoipa::path(post, path = "/app/{app_id}/msg/{msg_id}/endpoint/{endpoint_id}/resend", tag = "Message Attempt", operation_id = "v1.message-attempt.resend",
    params(p::DestinationPath),
    responses((status = 202, description = "Sent again", body = s::EmptyResponse)))]
pub(super) async fn resend(
    State(v1): State<V1>,
    caller: Caller,
    Path((app, msg, endpoint)): Path<(String, String, String)>,
) -> Result<Response, SvixError> {
    let reads = caller.clone();
    let ev = find_event(&v1, &reads, &app, &msg).await?;
    let ep = find_endpoint(&v1, &reads, &app, &endpoint).await?;
    let delivery = ev["deliveries"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|d| d["endpoint_id"] == ep["id"])
        .and_then(|d| d["id"].as_str())
        .ok_or_else(|| SvixError::not_found("the message's delivery to this endpoint"))?;
    let path = format!(
        "/v1/tenants/{}/deliveries/{}/replay",
        seg(&app),
        seg(delivery)
    );
    v1.ok(
        &caller,
        Method::POST,
        &path,
        Some(&json!({"force": true})),
        "body",
    )
    .await?;
    Ok((StatusCode::ACCEPTED, Json(json!({}))).into_response())
}
