//! DLQ summary: how many deliveries are dead, by reason and endpoint, for one
//! tenant (the tenant or the admin) or across tenants (the admin, with `by_tenant`).

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Json;
use axum::extract::{Path, State};
use serde::Serialize;

use super::auth::Principal;
use super::error::ApiError;
use super::openapi::TenantPath;
use crate::context::AppContext;
use crate::ids::TenantId;
use crate::store::{DeadCounts, SUMMARY_SCAN_LIMIT};

/// A tenant's DLQ summary; the admin's adds `tenant_id` to each endpoint.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct DlqSummary {
    dead: u64,
    /// Every known reason, zero or more.
    by_reason: BTreeMap<String, u64>,
    /// Most dead first.
    by_endpoint: Vec<EndpointDead>,
    /// Delivery records read; the scan stops at a bound.
    scanned: usize,
    /// `false`: the bound stopped the scan, and the counts cover the newest
    /// `scanned` records only.
    complete: bool,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct EndpointDead {
    #[serde(skip_serializing_if = "Option::is_none")]
    tenant_id: Option<String>,
    endpoint_id: String,
    dead: u64,
}

/// The admin's DLQ summary across tenants.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct AllDlqSummary {
    #[serde(flatten)]
    summary: DlqSummary,
    /// Most dead first; tenants with none are left out.
    by_tenant: Vec<TenantDead>,
}

#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct TenantDead {
    tenant_id: String,
    dead: u64,
}

/// Pairs sorted most dead first, then by key, so the answer is stable.
fn most_dead_first<K: Ord>(counts: impl IntoIterator<Item = (K, u64)>) -> Vec<(K, u64)> {
    let mut sorted: Vec<_> = counts.into_iter().collect();
    sorted.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    sorted
}

impl DlqSummary {
    fn of(counts: DeadCounts, with_tenant: bool) -> Self {
        let by_endpoint = most_dead_first(counts.by_endpoint)
            .into_iter()
            .map(|((tenant_id, endpoint_id), dead)| EndpointDead {
                tenant_id: with_tenant.then_some(tenant_id.to_string()),
                endpoint_id: endpoint_id.to_string(),
                dead,
            })
            .collect();
        Self {
            dead: counts.dead,
            by_reason: counts.by_reason,
            by_endpoint,
            scanned: counts.scanned,
            complete: counts.complete,
        }
    }
}

/// The tenant's dead deliveries counted by reason and endpoint.
#[utoipa::path(get, path = "/v1/tenants/{t}/dlq/summary", tag = "dlq",
    operation_id = "get_tenant_dlq_summary", params(TenantPath),
    responses((status = 200, description = "The summary", body = DlqSummary)))]
pub(super) async fn tenant_summary(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(t): Path<TenantId>,
) -> Result<Json<DlqSummary>, ApiError> {
    let t = who.require_tenant(&ctx, &t).await?;
    let counts = ctx.store.dead_counts(&t, SUMMARY_SCAN_LIMIT).await?;
    Ok(Json(DlqSummary::of(counts, false)))
}

/// Dead deliveries across tenants, by reason, endpoint and tenant.
#[utoipa::path(get, path = "/v1/dlq/summary", tag = "dlq", operation_id = "get_dlq_summary",
    responses((status = 200, description = "The summary", body = AllDlqSummary)))]
pub(super) async fn all_summary(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
) -> Result<Json<AllDlqSummary>, ApiError> {
    who.require_admin()?;
    let mut counts = ctx.store.dead_counts_all(SUMMARY_SCAN_LIMIT).await?;
    let by_tenant = most_dead_first(std::mem::take(&mut counts.by_tenant))
        .into_iter()
        .map(|(tenant_id, dead)| TenantDead {
            tenant_id: tenant_id.to_string(),
            dead,
        })
        .collect();
    Ok(Json(AllDlqSummary {
        summary: DlqSummary::of(counts, true),
        by_tenant,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_sort_most_dead_first_then_by_key() {
        let sorted = most_dead_first([("b", 1), ("c", 3), ("a", 1)]);
        assert_eq!(sorted, [("c", 3), ("a", 1), ("b", 1)]);
    }
}
