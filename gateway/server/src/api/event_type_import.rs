//! Importing the catalog from an OpenAPI 3.0/3.1 document's webhooks (admin):
//! each webhook's type is created, or updated where it differs (a changed
//! schema is added as the next version, so earlier ones stay), and the answer
//! says what was created, updated, left unchanged and skipped, with why. The
//! document is bounded by its body limit, and so is the work.

use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::State;
use serde::Serialize;
use serde_json::Value;

use super::auth::Principal;
use super::body::{parse_json, read_limited};
use super::error::ApiError;
use crate::context::AppContext;
use crate::event_catalog::{ImportError, ImportedType, types_of_document};
use crate::store::{CatalogWrite, EventTypeRecord};

/// Largest document accepted, in bytes: OpenAPI documents run larger than
/// the API's other bodies.
const DOCUMENT_MAX_BYTES: usize = 4 * 1024 * 1024;

/// The document an import reads: OpenAPI 3.0 or 3.1, its webhooks under
/// `webhooks` (3.1) or `x-webhooks` (3.0); the rest of it is read only where
/// a webhook refers to it (`components`). Only described, never built.
#[derive(utoipa::ToSchema)]
#[allow(
    dead_code,
    reason = "described only; the handler reads the document as JSON"
)]
pub(super) struct OpenApiDocument {
    /// `3.0.x` or `3.1.x`.
    #[schema(pattern = r"^3\.[01]\.", example = "3.1.0")]
    openapi: String,
    /// Each webhook by the event type's name: a Path Item whose `post` (or
    /// `put`, `patch`) describes the request.
    #[schema(value_type = Option<BTreeMap<String, serde_json::Value>>)]
    webhooks: Option<()>,
    /// As `webhooks`, in OpenAPI 3.0 documents.
    #[schema(rename = "x-webhooks", value_type = Option<BTreeMap<String, serde_json::Value>>)]
    x_webhooks: Option<()>,
}

/// A webhook left out, and why.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct SkippedType {
    name: String,
    reason: String,
}

/// What an import did, by type name.
#[derive(Debug, Default, Serialize, utoipa::ToSchema)]
pub(super) struct ImportAnswer {
    created: Vec<String>,
    skipped: Vec<SkippedType>,
    unchanged: Vec<String>,
    updated: Vec<String>,
}

/// Creates or updates the catalog's types from an OpenAPI document's
/// `webhooks` (3.1) or `x-webhooks` (3.0), named by their keys.
#[utoipa::path(post, path = "/v1/event-types/import", tag = "event-types",
    operation_id = "import_event_types",
    request_body(content = OpenApiDocument, description = "An OpenAPI 3.0 or 3.1 document (JSON), at most 4 MiB"),
    responses((status = 200, description = "What was created, updated, unchanged and skipped", body = ImportAnswer)))]
pub(super) async fn import(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    body: Body,
) -> Result<Json<ImportAnswer>, ApiError> {
    who.require_admin()?;
    let doc: Value = parse_json(&read_limited(body, DOCUMENT_MAX_BYTES).await?)?;
    let limits = &ctx.config.limits;
    let found = types_of_document(&doc, limits.event_type_len).map_err(|e| match e {
        ImportError::NotOpenApi => ApiError::validation("openapi", format!("the document {e}")),
        ImportError::NoWebhooks => ApiError::validation("webhooks", format!("the document {e}")),
    })?;
    let mut answer = ImportAnswer::default();
    for (name, reason) in found.skipped {
        answer.skipped.push(SkippedType { name, reason });
    }
    let mut count = ctx.store.count_event_types().await?;
    for t in found.types {
        let name = t.name.clone();
        let now = ctx.clock.now_ms();
        let current = ctx.store.event_type(&name).await?;
        let Some(wanted) = merged(current.as_ref(), t, now) else {
            answer.unchanged.push(name);
            continue;
        };
        if current.is_none() && count >= limits.catalog_event_types {
            answer.skipped.push(SkippedType {
                name,
                reason: format!(
                    "the catalog holds at most {} types",
                    limits.catalog_event_types
                ),
            });
            continue;
        }
        match ctx.store.save_event_type(&wanted, current.as_ref()).await? {
            CatalogWrite::Written if current.is_none() => {
                count += 1;
                answer.created.push(name);
            }
            CatalogWrite::Written => answer.updated.push(name),
            CatalogWrite::Conflict => answer.skipped.push(SkippedType {
                name,
                reason: "changed by another request during the import; import again".into(),
            }),
        }
    }
    let changed = !answer.created.is_empty() || !answer.updated.is_empty();
    if changed && let Err(e) = ctx.catalog.reload().await {
        tracing::warn!(error = %e, "cannot read the event-type catalog after an import");
    }
    Ok(Json(answer))
}

/// `current` (if any) with what the document says of it; `None` when that
/// changes nothing. A new schema goes in as the next version.
fn merged(current: Option<&EventTypeRecord>, t: ImportedType, now: u64) -> Option<EventTypeRecord> {
    let mut rec = current
        .cloned()
        .unwrap_or_else(|| EventTypeRecord::new(&t.name, now));
    rec.description = t.description;
    rec.deprecated = t.deprecated;
    if t.group.is_some() {
        rec.group = t.group;
    }
    if let Some(schema) = t.schema
        && rec.latest_schema().map(|(_, s)| s) != Some(&schema)
    {
        let next = rec
            .latest_schema()
            .and_then(|(v, _)| v.parse::<u32>().ok())
            .map_or(1, |v| v + 1);
        rec.schemas.insert(next.to_string(), schema);
    }
    if t.example.is_some() {
        rec.example = t.example;
    }
    if current == Some(&rec) {
        return None;
    }
    rec.updated_at_ms = now.max(rec.created_at_ms);
    Some(rec)
}
