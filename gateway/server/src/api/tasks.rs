//! Background tasks: a tenant's list and one task (the tenant or the admin),
//! and every tenant's (the admin, whose view outlives a deleted tenant).

use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, Query, State};
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use serde::Serialize;

use super::auth::Principal;
use super::error::ApiError;
use super::openapi::{ItemPath, TaskPath, TenantPath};
use super::{ListPage, Page, bad_query, list_body};
use crate::clock::rfc3339_ms;
use crate::context::AppContext;
use crate::ids::{TaskId, TenantId};
use crate::store::{TaskRecord, TaskWork};

// Fields in alphabetical order, as every view here.

/// A background task.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct TaskView {
    /// Records changed so far: removed by a tenant delete, deliveries replayed
    /// by a recovery or created by a replay of missing ones.
    changed: u64,
    #[schema(format = DateTime)]
    created_at: String,
    /// The endpoint it works on, for an endpoint's task.
    #[serde(skip_serializing_if = "Option::is_none")]
    endpoint_id: Option<String>,
    /// Why it failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<String>,
    /// Records looked at so far.
    examined: u64,
    #[schema(format = DateTime)]
    finished_at: Option<String>,
    id: String,
    /// `tenant_delete`, `endpoint_recover` or `replay_missing`.
    kind: &'static str,
    /// `running`, `finished` or `failed`. A running task survives a restart:
    /// a node takes it up again from its last saved step.
    #[schema(example = "running")]
    state: &'static str,
    tenant_id: String,
    #[schema(format = DateTime)]
    updated_at: String,
}

impl TaskView {
    pub(super) fn new(task: &TaskRecord) -> Self {
        let endpoint_id = match &task.work {
            TaskWork::EndpointRecover { endpoint_id, .. }
            | TaskWork::ReplayMissing { endpoint_id, .. } => Some(endpoint_id.to_string()),
            TaskWork::TenantDelete => None,
        };
        Self {
            changed: task.changed,
            created_at: rfc3339_ms(task.created_at_ms),
            endpoint_id,
            error: task.error.clone(),
            examined: task.examined,
            finished_at: task.finished_at_ms.map(rfc3339_ms),
            id: task.id.to_string(),
            kind: task.work.kind(),
            state: task.state.as_str(),
            tenant_id: task.tenant_id.to_string(),
            updated_at: rfc3339_ms(task.updated_at_ms),
        }
    }
}

/// When tenant `t` was created: a tenant shows only the tasks made since, so
/// a tenant made again under a deleted one's id does not see its tasks.
async fn tenant_since(ctx: &AppContext, t: &TenantId) -> Result<u64, ApiError> {
    Ok(ctx
        .store
        .tenant(t)
        .await?
        .map_or(0, |rec| rec.created_at_ms))
}

/// The answer to a request that started `task`: 202, the task, and its URL.
pub(super) fn accepted(task: &TaskRecord, url: &str) -> Response {
    let mut answer = (StatusCode::ACCEPTED, Json(TaskView::new(task))).into_response();
    if let Ok(location) = HeaderValue::from_str(url) {
        answer.headers_mut().insert(header::LOCATION, location);
    }
    answer
}

/// A page of tasks as the API answers it.
async fn page_of(
    ctx: &AppContext,
    tenant: Option<&TenantId>,
    page: Page,
) -> Result<Json<ListPage<TaskView>>, ApiError> {
    let cursor = page.cursor.as_deref().map(TaskId::from);
    let since = match tenant {
        Some(t) => tenant_since(ctx, t).await?,
        None => 0,
    };
    let found = ctx
        .store
        .list_tasks(tenant, page.limit()?, cursor.as_ref())
        .await?;
    Ok(list_body(
        found
            .tasks
            .iter()
            .filter(|t| t.created_at_ms >= since)
            .map(TaskView::new)
            .collect(),
        found.next.map(String::from),
    ))
}

/// Lists a tenant's tasks, newest first.
#[utoipa::path(get, path = "/v1/tenants/{t}/tasks", tag = "tasks", operation_id = "list_tasks",
    params(TenantPath, Page),
    responses((status = 200, description = "A page of tasks", body = ListPage<TaskView>)))]
pub(super) async fn list(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(t): Path<TenantId>,
    page: Result<Query<Page>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<ListPage<TaskView>>, ApiError> {
    let t = who.require_tenant(&ctx, &t).await?;
    let Query(page) = page.map_err(bad_query)?;
    page_of(&ctx, Some(&t), page).await
}

/// Shows one of a tenant's tasks.
#[utoipa::path(get, path = "/v1/tenants/{t}/tasks/{id}", tag = "tasks", operation_id = "get_task",
    params(ItemPath),
    responses((status = 200, description = "The task", body = TaskView)))]
pub(super) async fn show(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path((t, id)): Path<(TenantId, TaskId)>,
) -> Result<Json<TaskView>, ApiError> {
    let t = who.require_tenant(&ctx, &t).await?;
    let since = tenant_since(&ctx, &t).await?;
    match ctx.store.task(&t, &id).await? {
        Some(task) if task.created_at_ms >= since => Ok(Json(TaskView::new(&task))),
        _ => Err(ApiError::not_found("task")),
    }
}

/// Lists every tenant's tasks, newest first, those of deleted tenants too.
#[utoipa::path(get, path = "/v1/tasks", tag = "tasks", operation_id = "list_all_tasks",
    params(Page),
    responses((status = 200, description = "A page of tasks", body = ListPage<TaskView>)))]
pub(super) async fn list_all(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    page: Result<Query<Page>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<ListPage<TaskView>>, ApiError> {
    who.require_admin()?;
    let Query(page) = page.map_err(bad_query)?;
    page_of(&ctx, None, page).await
}

/// Shows any task, a deleted tenant's too (where a tenant delete's task answers).
#[utoipa::path(get, path = "/v1/tasks/{id}", tag = "tasks", operation_id = "get_any_task",
    params(TaskPath),
    responses((status = 200, description = "The task", body = TaskView)))]
pub(super) async fn show_any(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(id): Path<TaskId>,
) -> Result<Json<TaskView>, ApiError> {
    who.require_admin()?;
    match ctx.store.any_task(&id).await? {
        Some(task) => Ok(Json(TaskView::new(&task))),
        None => Err(ApiError::not_found("task")),
    }
}
