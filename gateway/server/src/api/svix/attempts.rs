//! Svix's message attempts over v1's attempt log: an attempt is a v1 attempt
//! (`atm_…`); the reads and filters a message's destinations share are here
//! too (`destinations.rs` lists those).
//!
//! Statuses: an attempt has ended when v1 logs it, so it is `0` success
//! (`delivered`) or `2` fail (`retry`, `dead`). `triggerType` is 1 (manual)
//! for an attempt of a replay series.
//! The `url` is the endpoint's current one (the log does not keep it), empty
//! once the endpoint is deleted. Filters v1 lacks (channel, tag, event types,
//! a fail status) are applied to each page here, so a page may be short and
//! still not `done`, as v1's own filtered pages.
//!
//! Expunging an attempt's content is not served: v1 keeps the first KiB of
//! each response and has no way to remove it alone, so answering 204 would
//! claim a removal that did not happen. It answers 501 `not_implemented`
//! (as Svix's own server does for what it lacks), after the usual 404s.

use std::collections::HashMap;

use axum::Json;
use axum::extract::{Path, State};
use axum::http::{Method, StatusCode};
use serde_json::{Value, json};

use super::error::SvixError;
use super::forward::{Caller, V1, seg, with_query};
use super::messages::{find_event, message_out};
use super::openapi::{params as p, schemas as s};
use super::wire::{ListQuery, Pairs, list_response};

/// A Svix status and its text.
pub(super) type Status = (u8, &'static str);

pub(super) const SUCCESS: Status = (0, "success");
pub(super) const PENDING: Status = (1, "pending");
pub(super) const FAIL: Status = (2, "fail");
pub(super) const SENDING: Status = (3, "sending");
/// Svix's `canceled`: a delivery the endpoint's transform skipped.
pub(super) const CANCELED: Status = (4, "canceled");

/// An ended attempt's status, from its v1 outcome.
fn attempt_status(outcome: &str) -> Status {
    if outcome == "delivered" {
        SUCCESS
    } else {
        FAIL
    }
}

/// The `status` filter: 0 to 4.
pub(super) fn status_param(q: &Pairs) -> Result<Option<u8>, SvixError> {
    q.one("status")
        .map(|s| match s.parse::<u8>() {
            Ok(n) if n <= 4 => Ok(n),
            _ => Err(SvixError::query_field("status", "status must be 0 to 4")),
        })
        .transpose()
}

/// An attempt as Svix shows it, from a v1 attempt.
fn attempt_out(a: &Value, url: &str, with_content: bool) -> Value {
    let (status, text) = attempt_status(a["outcome"].as_str().unwrap_or_default());
    let response = if with_content {
        a["response_snippet"].as_str().unwrap_or_default()
    } else {
        ""
    };
    let replayed = a["series"].as_u64().is_some_and(|s| s > 1);
    json!({
        "id": a["id"],
        "msgId": a["event_id"],
        "endpointId": a["endpoint_id"],
        "url": url,
        "response": response,
        "responseStatusCode": a["status"].as_u64().unwrap_or(0),
        "responseDurationMs": a["duration_ms"].as_u64().unwrap_or(0),
        "status": status,
        "statusText": text,
        "triggerType": u8::from(replayed),
        "timestamp": a["started_at"],
    })
}

/// A list with nothing in it, and nothing after.
pub(super) fn empty_list() -> Value {
    json!({"data": [], "iterator": null, "prevIterator": null, "done": true})
}

/// The v1 endpoint `endpoint` names (id or uid) in `app`.
pub(super) async fn find_endpoint(
    v1: &V1,
    caller: &Caller,
    app: &str,
    endpoint: &str,
) -> Result<Value, SvixError> {
    let path = format!("/v1/tenants/{}/endpoints/{}", seg(app), seg(endpoint));
    v1.ok(caller, Method::GET, &path, None, "query").await
}

/// What one request reads of endpoints and events, each once.
#[derive(Default)]
pub(super) struct Reads {
    /// Endpoint id → its URL (empty once deleted).
    urls: HashMap<String, String>,
    /// Event id → the event (`None` once pruned).
    events: HashMap<String, Option<Value>>,
}

impl Reads {
    async fn url(
        &mut self,
        v1: &V1,
        caller: &Caller,
        app: &str,
        endpoint: &str,
    ) -> Result<String, SvixError> {
        if let Some(url) = self.urls.get(endpoint) {
            return Ok(url.clone());
        }
        let path = format!("/v1/tenants/{}/endpoints/{}", seg(app), seg(endpoint));
        let found = v1.call(caller, Method::GET, &path, None).await?;
        let url = match found.status {
            s if s.is_success() => found.body["url"].as_str().unwrap_or_default().to_owned(),
            StatusCode::NOT_FOUND => String::new(),
            s => return Err(SvixError::from_v1(s, &found.body, "query")),
        };
        self.urls.insert(endpoint.to_owned(), url.clone());
        Ok(url)
    }

    pub(super) async fn event(
        &mut self,
        v1: &V1,
        caller: &Caller,
        app: &str,
        id: &str,
    ) -> Result<Option<&Value>, SvixError> {
        if !self.events.contains_key(id) {
            let found = v1
                .call(
                    caller,
                    Method::GET,
                    &super::messages::event_path(app, id),
                    None,
                )
                .await?;
            let ev = match found.status {
                s if s.is_success() => Some(found.body),
                StatusCode::NOT_FOUND => None,
                s => return Err(SvixError::from_v1(s, &found.body, "query")),
            };
            self.events.insert(id.to_owned(), ev);
        }
        Ok(self.events.get(id).and_then(Option::as_ref))
    }

    fn seed_event(&mut self, ev: &Value) {
        if let Some(id) = ev["id"].as_str() {
            self.events.insert(id.to_owned(), Some(ev.clone()));
        }
    }
}

/// The filters of a Svix list on what a message is: its event types (any
/// of), a channel and a tag.
#[derive(Debug, Default)]
pub(super) struct MessageFilter {
    pub(super) event_types: Vec<String>,
    channel: Option<String>,
    tag: Option<String>,
}

impl MessageFilter {
    pub(super) fn of(q: &Pairs) -> Self {
        Self {
            event_types: q.list("event_types"),
            channel: q.one("channel").map(str::to_owned),
            tag: q.one("tag").map(str::to_owned),
        }
    }

    /// Whether the event itself must be read to tell.
    fn needs_event(&self) -> bool {
        self.channel.is_some() || self.tag.is_some()
    }

    fn keeps_type(&self, event_type: &str) -> bool {
        self.event_types.is_empty() || self.event_types.iter().any(|t| t == event_type)
    }

    pub(super) fn keeps_event(&self, ev: &Value) -> bool {
        let has = |list: &Value, name: &Option<String>| {
            name.as_ref().is_none_or(|n| {
                list.as_array()
                    .is_some_and(|a| a.iter().any(|v| v.as_str() == Some(n)))
            })
        };
        self.keeps_type(ev["event_type"].as_str().unwrap_or_default())
            && has(&ev["channels"], &self.channel)
            && has(&ev["tags"], &self.tag)
    }
}

/// A Svix attempt list's query: what v1 filters, and what is left to do here.
struct AttemptQuery {
    v1: Vec<(&'static str, String)>,
    /// `status=2`: v1 has two failed outcomes, and filters by one.
    failed_only: bool,
    /// A status or class no logged attempt has: the list is empty.
    matches_nothing: bool,
    messages: MessageFilter,
    with_content: bool,
    with_msg: bool,
}

impl AttemptQuery {
    fn of(q: &Pairs) -> Result<Self, SvixError> {
        let page = ListQuery {
            order: None,
            ..q.page()
        };
        let mut v1 = page.v1_query()?;
        let mut failed_only = false;
        let mut matches_nothing = false;
        match status_param(q)? {
            Some(0) => v1.push(("outcome", "delivered".into())),
            Some(2) => failed_only = true,
            Some(_) => matches_nothing = true,
            None => {}
        }
        match q.one("status_code_class") {
            None => {}
            Some("0") => v1.push(("status_class", "transport".into())),
            Some("100") => matches_nothing = true,
            Some(c @ ("200" | "300" | "400" | "500")) => {
                v1.push(("status_class", format!("{}xx", &c[..1])));
            }
            Some(_) => {
                return Err(SvixError::query_field(
                    "status_code_class",
                    "status_code_class must be 0, 100, 200, 300, 400 or 500",
                ));
            }
        }
        if let Some(t) = q.time("after")? {
            v1.push(("since", t));
        }
        if let Some(t) = q.time("before")? {
            v1.push(("until", t));
        }
        Ok(Self {
            v1,
            failed_only,
            matches_nothing,
            messages: MessageFilter::of(q),
            with_content: q.flag("with_content", true)?,
            with_msg: q.flag("with_msg", false)?,
        })
    }

    fn keeps_attempt(&self, a: &Value) -> bool {
        (!self.failed_only || a["outcome"] != "delivered")
            && self
                .messages
                .keeps_type(a["event_type"].as_str().unwrap_or_default())
    }
}

/// One page of `app`'s attempts within `scope` (`endpoint` or `event`), as
/// Svix lists them.
async fn attempt_page(
    v1: &V1,
    caller: &Caller,
    app: &str,
    scope: (&'static str, String),
    q: &AttemptQuery,
    reads: &mut Reads,
) -> Result<Value, SvixError> {
    if q.matches_nothing {
        return Ok(empty_list());
    }
    let mut query = q.v1.clone();
    query.push(scope);
    let path = with_query(&format!("/v1/tenants/{}/attempts", seg(app)), &query);
    let page = v1.ok(caller, Method::GET, &path, None, "query").await?;
    let mut data = Vec::new();
    for a in page["data"].as_array().into_iter().flatten() {
        if !q.keeps_attempt(a) {
            continue;
        }
        let event_id = a["event_id"].as_str().unwrap_or_default();
        let msg = if q.messages.needs_event() || q.with_msg {
            match reads.event(v1, caller, app, event_id).await? {
                Some(ev) if q.messages.keeps_event(ev) => Some(message_out(ev, false)),
                _ if q.messages.needs_event() => continue,
                _ => None,
            }
        } else {
            None
        };
        let endpoint = a["endpoint_id"].as_str().unwrap_or_default();
        let url = reads.url(v1, caller, app, endpoint).await?;
        let mut out = attempt_out(a, &url, q.with_content);
        if q.with_msg
            && let Some(msg) = msg
        {
            out["msg"] = msg;
        }
        data.push(out);
    }
    Ok(list_response(data, &page))
}

#[utoipa::path(get, path = "/app/{app_id}/attempt/endpoint/{endpoint_id}", tag = "Message Attempt", operation_id = "v1.message-attempt.list-by-endpoint",
    params(p::EndpointPath, p::Page, p::StatusFilter, p::AttemptFilter, p::MessageFilter, p::WithContent),
    responses((status = 200, description = "A page of attempts, newest first", body = s::ListResponse<s::MessageAttemptOut>)))]
pub(super) async fn list_by_endpoint(
    State(v1): State<V1>,
    caller: Caller,
    Path((app, endpoint)): Path<(String, String)>,
    q: Pairs,
) -> Result<Json<Value>, SvixError> {
    let query = AttemptQuery::of(&q)?;
    let ep = find_endpoint(&v1, &caller, &app, &endpoint).await?;
    let id = ep["id"].as_str().unwrap_or(&endpoint).to_owned();
    let mut reads = Reads::default();
    reads.urls.insert(
        id.clone(),
        ep["url"].as_str().unwrap_or_default().to_owned(),
    );
    let page = attempt_page(&v1, &caller, &app, ("endpoint", id), &query, &mut reads).await?;
    Ok(Json(page))
}

#[utoipa::path(get, path = "/app/{app_id}/attempt/msg/{msg_id}", tag = "Message Attempt", operation_id = "v1.message-attempt.list-by-msg",
    params(p::MessagePath, p::Page, p::StatusFilter, p::AttemptFilter, p::AtEndpoint, p::MessageFilter, p::WithContent),
    responses((status = 200, description = "A page of the message's attempts, newest first", body = s::ListResponse<s::MessageAttemptOut>)))]
pub(super) async fn list_by_msg(
    State(v1): State<V1>,
    caller: Caller,
    Path((app, msg)): Path<(String, String)>,
    q: Pairs,
) -> Result<Json<Value>, SvixError> {
    let mut query = AttemptQuery::of(&q)?;
    let ev = find_event(&v1, &caller, &app, &msg).await?;
    let mut reads = Reads::default();
    if let Some(endpoint) = q.one("endpoint_id") {
        let ep = find_endpoint(&v1, &caller, &app, endpoint).await?;
        let id = ep["id"].as_str().unwrap_or(endpoint).to_owned();
        reads.urls.insert(
            id.clone(),
            ep["url"].as_str().unwrap_or_default().to_owned(),
        );
        query.v1.push(("endpoint", id));
    }
    reads.seed_event(&ev);
    let id = ev["id"].as_str().unwrap_or(&msg).to_owned();
    let page = attempt_page(&v1, &caller, &app, ("event", id), &query, &mut reads).await?;
    Ok(Json(page))
}

/// The attempt `attempt` of the message `msg` names.
///
/// # Errors
/// 404 when either is not there, or the attempt is another message's.
async fn find_attempt(
    v1: &V1,
    caller: &Caller,
    app: &str,
    msg: &str,
    attempt: &str,
) -> Result<Value, SvixError> {
    let ev = find_event(v1, caller, app, msg).await?;
    let path = format!("/v1/tenants/{}/attempts/{}", seg(app), seg(attempt));
    let a = v1.ok(caller, Method::GET, &path, None, "query").await?;
    if a["event_id"] != ev["id"] {
        return Err(SvixError::not_found("attempt"));
    }
    Ok(a)
}

#[utoipa::path(get, path = "/app/{app_id}/msg/{msg_id}/attempt/{attempt_id}", tag = "Message Attempt", operation_id = "v1.message-attempt.get",
    params(p::AttemptPath),
    responses((status = 200, description = "The attempt", body = s::MessageAttemptOut)))]
pub(super) async fn get(
    State(v1): State<V1>,
    caller: Caller,
    Path((app, msg, attempt)): Path<(String, String, String)>,
) -> Result<Json<Value>, SvixError> {
    let a = find_attempt(&v1, &caller, &app, &msg, &attempt).await?;
    let endpoint = a["endpoint_id"].as_str().unwrap_or_default();
    let url = Reads::default().url(&v1, &caller, &app, endpoint).await?;
    Ok(Json(attempt_out(&a, &url, true)))
}

/// Not served (see the file's doc): 404 as Svix for what is not there, else
/// 501, the response snippet kept.
#[utoipa::path(delete, path = "/app/{app_id}/msg/{msg_id}/attempt/{attempt_id}/content", tag = "Message Attempt", operation_id = "v1.message-attempt.expunge-content",
    params(p::AttemptPath),
    responses((status = 501, description = "Not served: an attempt's response is kept inside its record (expunge the message's content instead)", body = s::HttpErrorOut)))]
pub(super) async fn expunge_content(
    State(v1): State<V1>,
    caller: Caller,
    Path((app, msg, attempt)): Path<(String, String, String)>,
) -> Result<StatusCode, SvixError> {
    find_attempt(&v1, &caller, &app, &msg, &attempt).await?;
    Err(SvixError::Http {
        status: StatusCode::NOT_IMPLEMENTED,
        code: "not_implemented".into(),
        detail: "hookgate keeps the first KiB of each attempt's response and cannot expunge \
                 it alone; it goes with the attempt log (retention, or the app's deletion)"
            .into(),
    })
}
