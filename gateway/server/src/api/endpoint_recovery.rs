//! Recovering an endpoint as background tasks: replaying its dead deliveries
//! since a time, and giving it the deliveries it missed (events since a time
//! that reach it now and have none to it).

use std::sync::Arc;

use axum::body::Body;
use axum::extract::{Path, State};
use axum::response::Response;
use serde::Deserialize;

use super::auth::Principal;
use super::body::{parse_json, read_limited};
use super::deliveries::time_param;
use super::endpoints::load;
use super::error::ApiError;
use super::openapi::ItemPath;
use super::tasks::{TaskView, accepted};
use crate::context::AppContext;
use crate::ids::{EndpointId, TenantId};
use crate::store::{TaskRecord, TaskWork};

/// The time range a recovery works on.
#[derive(Debug, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct RecoverBody {
    /// From this time (RFC 3339): deliveries, or events, made at or after it.
    #[schema(format = DateTime, example = "2026-12-01T00:00:00Z")]
    since: String,
    /// Up to this time (RFC 3339, not included); now when absent.
    #[serde(default)]
    #[schema(format = DateTime)]
    until: Option<String>,
}

/// Which recovery a route asks for.
#[derive(Debug, Clone, Copy)]
enum Recovery {
    DeadSince,
    MissingSince,
}

async fn start(
    ctx: &AppContext,
    who: &Principal,
    (t, id): (&TenantId, &EndpointId),
    body: Body,
    recovery: Recovery,
) -> Result<Response, ApiError> {
    let ep = load(ctx, who, t, id).await?;
    let input: RecoverBody =
        parse_json(&read_limited(body, ctx.config.limits.json_body_bytes).await?)?;
    let since_ms = time_param("since", Some(&input.since))?.unwrap_or_default();
    let until_ms = time_param("until", input.until.as_deref())?;
    if until_ms.is_some_and(|u| u <= since_ms) {
        return Err(ApiError::validation("until", "until must be after since"));
    }
    let endpoint_id = ep.id.clone();
    let work = match recovery {
        Recovery::DeadSince => TaskWork::EndpointRecover {
            endpoint_id,
            since_ms,
            until_ms,
        },
        Recovery::MissingSince => TaskWork::ReplayMissing {
            endpoint_id,
            since_ms,
            until_ms,
        },
    };
    let task = TaskRecord::new(ep.tenant_id.clone(), work, ctx.clock.now_ms());
    ctx.store.create_task(&task).await?;
    ctx.task_wake.notify_one();
    let url = format!("/v1/tenants/{}/tasks/{}", task.tenant_id, task.id);
    Ok(accepted(&task, &url))
}

/// Replays every dead delivery of the endpoint made in the time range, as a
/// background task (answered at once).
#[utoipa::path(post, path = "/v1/tenants/{t}/endpoints/{id}/recover", tag = "endpoints",
    operation_id = "recover_endpoint", params(ItemPath), request_body = RecoverBody,
    responses((status = 202, description = "The task replaying them", body = TaskView,
        headers(("Location" = String, description = "The task's URL")))))]
pub(super) async fn recover(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path((t, id)): Path<(TenantId, EndpointId)>,
    body: Body,
) -> Result<Response, ApiError> {
    start(&ctx, &who, (&t, &id), body, Recovery::DeadSince).await
}

/// Gives the endpoint a delivery of every event of the time range that reaches
/// it as it is now (types, channels, filter; an enabled endpoint) and has none
/// to it: events from before it was created or subscribed. A background task.
#[utoipa::path(post, path = "/v1/tenants/{t}/endpoints/{id}/replay-missing", tag = "endpoints",
    operation_id = "replay_missing", params(ItemPath), request_body = RecoverBody,
    responses((status = 202, description = "The task creating them", body = TaskView,
        headers(("Location" = String, description = "The task's URL")))))]
pub(super) async fn replay_missing(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path((t, id)): Path<(TenantId, EndpointId)>,
    body: Body,
) -> Result<Response, ApiError> {
    start(&ctx, &who, (&t, &id), body, Recovery::MissingSince).await
}
