//! The event-type catalog, install-wide: the admin creates, merge-patches and
//! deletes types; every caller (the admin, any tenant) reads them. A type's
//! schemas are checked as JSON Schema when stored; its example must match its
//! latest schema; `validate` makes ingest refuse payloads that do not.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::auth::Principal;
use super::body::{parse_json, read_limited};
use super::endpoint_input::merge_patch;
use super::error::ApiError;
use super::openapi::EventTypePath;
use super::{ListPage, bad_query, list_body};
use crate::clock::rfc3339_ms;
use crate::context::AppContext;
use crate::event_catalog::PayloadSchema;
use crate::event_type;
use crate::store::{CatalogWrite, EventTypeRecord};

/// Most schema versions one type keeps.
const MAX_SCHEMA_VERSIONS: usize = 20;
/// Most characters of a group's name.
const GROUP_MAX_CHARS: usize = 256;
/// Most types one list request reads (archived ones it leaves out count).
const LIST_READ_MAX: usize = 2_500;
/// Tries of a merge patch that keeps meeting another admin's change.
const PATCH_TRIES: usize = 3;

/// What the admin may set on a type, on create and by merge patch.
#[derive(Debug, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct EventTypeFields {
    /// Free text for people (at most `limits.description_len` characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(example = "An order was paid")]
    pub(super) description: Option<String>,
    /// A group to show it under (1 to 256 characters).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(example = "orders")]
    pub(super) group: Option<String>,
    /// JSON Schema documents by version (`"1"`, `"2"`, ... up to 20); the
    /// highest version is the one payloads and the example are checked
    /// against. A schema may refer only within itself.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<BTreeMap<String, serde_json::Value>>,
        example = json!({"1": {"properties": {"amount": {"type": "integer"}}, "required": ["amount"]}}))]
    pub(super) schemas: Option<BTreeMap<String, Value>>,
    /// A payload of this type, which `send-example` sends.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<serde_json::Value>, example = json!({"amount": 250}))]
    pub(super) example: Option<Value>,
    /// Shown as on its way out; still delivered.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) deprecated: Option<bool>,
    /// Not newly subscribable; events of it are still accepted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) archived: Option<bool>,
    /// Ingest refuses (422) an event of this type whose payload the latest
    /// schema does not accept. Needs a schema.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub(super) validate: Option<bool>,
}

/// The body of type creation: a name and the fields of [`EventTypeFields`].
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct CreateEventType {
    /// The name events carry: letters, digits and `. _ - :`.
    #[schema(example = "order.paid", pattern = r"^[A-Za-z0-9._:-]+$")]
    name: String,
    /// As [`EventTypeFields::description`].
    #[serde(default)]
    #[schema(example = "An order was paid")]
    description: Option<String>,
    /// As [`EventTypeFields::group`].
    #[serde(default)]
    #[schema(example = "orders")]
    group: Option<String>,
    /// JSON Schema documents by version (`"1"` to `"9999"`, at most 20); the
    /// highest checks payloads and the example.
    #[serde(default)]
    #[schema(value_type = Option<BTreeMap<String, serde_json::Value>>)]
    schemas: Option<BTreeMap<String, Value>>,
    /// A payload of this type, which `send-example` sends.
    #[serde(default)]
    #[schema(value_type = Option<serde_json::Value>, example = json!({"amount": 250}))]
    example: Option<Value>,
    /// Shown as on its way out; still delivered.
    #[serde(default)]
    deprecated: Option<bool>,
    /// Not newly subscribable.
    #[serde(default)]
    archived: Option<bool>,
    /// Ingest refuses payloads the latest schema does not accept.
    #[serde(default)]
    validate: Option<bool>,
}

impl CreateEventType {
    /// Its name, and the fields besides.
    fn split(self) -> (String, EventTypeFields) {
        let fields = EventTypeFields {
            description: self.description,
            group: self.group,
            schemas: self.schemas,
            example: self.example,
            deprecated: self.deprecated,
            archived: self.archived,
            validate: self.validate,
        };
        (self.name, fields)
    }
}

impl EventTypeFields {
    /// The fields as `rec` holds them, for a merge patch to apply to.
    fn of(rec: &EventTypeRecord) -> Self {
        Self {
            description: Some(rec.description.clone()),
            group: rec.group.clone(),
            schemas: Some(rec.schemas.clone()),
            example: rec.example.clone(),
            deprecated: Some(rec.deprecated),
            archived: Some(rec.archived),
            validate: Some(rec.validate),
        }
    }

    /// Validates every field and writes them into `rec`.
    ///
    /// # Errors
    /// 422 `validation_failed` naming the field.
    pub(super) fn apply_to(
        self,
        rec: &mut EventTypeRecord,
        max_description: usize,
    ) -> Result<(), ApiError> {
        let description = self.description.unwrap_or_default();
        if description.chars().count() > max_description {
            return Err(ApiError::validation(
                "description",
                format!("a description is at most {max_description} characters"),
            ));
        }
        if let Some(g) = &self.group {
            let chars = g.chars().count();
            if chars == 0 || chars > GROUP_MAX_CHARS || g.chars().any(char::is_control) {
                return Err(ApiError::validation(
                    "group",
                    format!(
                        "a group is 1 to {GROUP_MAX_CHARS} characters, none a control character"
                    ),
                ));
            }
        }
        let schemas = self.schemas.unwrap_or_default();
        if schemas.len() > MAX_SCHEMA_VERSIONS {
            return Err(ApiError::validation(
                "schemas",
                format!("a type keeps at most {MAX_SCHEMA_VERSIONS} schema versions"),
            ));
        }
        let mut compiled = BTreeMap::new();
        for (version, doc) in &schemas {
            if !matches!(version.parse::<u32>(), Ok(1..=9999)) || version.starts_with('0') {
                return Err(ApiError::validation(
                    "schemas",
                    format!("schema version {version:?} is not a number from 1 to 9999"),
                ));
            }
            let schema = PayloadSchema::compile(version, doc).map_err(|e| {
                ApiError::validation(
                    format!("schemas.{version}"),
                    format!("schema {version} {e}"),
                )
            })?;
            compiled.insert(version.clone(), schema);
        }
        rec.description = description;
        rec.group = self.group;
        rec.schemas = schemas;
        rec.example = self.example;
        rec.deprecated = self.deprecated.unwrap_or(false);
        rec.archived = self.archived.unwrap_or(false);
        rec.validate = self.validate.unwrap_or(false);
        let latest = rec.latest_schema();
        if rec.validate && latest.is_none() {
            return Err(ApiError::validation(
                "validate",
                "validate needs a schema to check payloads against",
            ));
        }
        let latest = latest.and_then(|(version, _)| compiled.get(version));
        if let (Some(schema), Some(example)) = (latest, &rec.example) {
            schema
                .check(&rec.name, example)
                .map_err(|e| ApiError::validation("example", e.to_string()))?;
        }
        Ok(())
    }
}

// Fields in alphabetical order, as every view of this API.

/// A type of the catalog.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct EventTypeView {
    archived: bool,
    #[schema(format = DateTime)]
    created_at: String,
    deprecated: bool,
    description: String,
    #[schema(value_type = Option<serde_json::Value>)]
    example: Option<Value>,
    group: Option<String>,
    name: String,
    #[schema(value_type = BTreeMap<String, serde_json::Value>)]
    schemas: BTreeMap<String, Value>,
    #[schema(format = DateTime)]
    updated_at: String,
    validate: bool,
}

impl EventTypeView {
    pub(super) fn new(rec: &EventTypeRecord) -> Self {
        Self {
            archived: rec.archived,
            created_at: rfc3339_ms(rec.created_at_ms),
            deprecated: rec.deprecated,
            description: rec.description.clone(),
            example: rec.example.clone(),
            group: rec.group.clone(),
            name: rec.name.clone(),
            schemas: rec.schemas.clone(),
            updated_at: rfc3339_ms(rec.updated_at_ms),
            validate: rec.validate,
        }
    }
}

/// The query of the list.
#[derive(Debug, Default, Deserialize, utoipa::IntoParams)]
#[into_params(parameter_in = Query)]
pub(super) struct EventTypeListQuery {
    /// Items per page, 1 to 250; 50 when absent.
    #[param(value_type = Option<u32>, minimum = 1, maximum = 250)]
    limit: Option<String>,
    /// The `next_cursor` of the page before (a type's name).
    #[param(pattern = r"^[A-Za-z0-9._:-]*$")]
    cursor: Option<String>,
    /// Also list archived types (`true`); by default they are left out.
    #[param(value_type = Option<bool>)]
    include_archived: Option<String>,
}

/// Refuses a name no event could carry.
fn check_name(ctx: &AppContext, name: &str) -> Result<(), ApiError> {
    event_type::validate_type(name, ctx.config.limits.event_type_len)
        .map_err(|e| ApiError::validation("name", format!("name {e}")))
}

/// After a write: this node's catalog is read again now, so ingest here sees
/// the change at once (other nodes hear of it on the change feed).
async fn refreshed(ctx: &AppContext) {
    if let Err(e) = ctx.catalog.reload().await {
        tracing::warn!(error = %e, "cannot read the event-type catalog after a change");
    }
}

/// Creates a type (admin).
#[utoipa::path(post, path = "/v1/event-types", tag = "event-types", operation_id = "create_event_type",
    request_body = CreateEventType,
    responses((status = 201, description = "The type", body = EventTypeView)))]
pub(super) async fn create(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    body: Body,
) -> Result<(StatusCode, Json<EventTypeView>), ApiError> {
    who.require_admin()?;
    let input: CreateEventType =
        parse_json(&read_limited(body, ctx.config.limits.json_body_bytes).await?)?;
    let (name, fields) = input.split();
    check_name(&ctx, &name)?;
    let limits = &ctx.config.limits;
    let mut rec = EventTypeRecord::new(&name, ctx.clock.now_ms());
    fields.apply_to(&mut rec, limits.description_len)?;
    if ctx.store.count_event_types().await? >= limits.catalog_event_types {
        return Err(ApiError::validation(
            "name",
            format!(
                "the catalog holds at most {} types",
                limits.catalog_event_types
            ),
        ));
    }
    match ctx.store.save_event_type(&rec, None).await? {
        CatalogWrite::Written => {
            refreshed(&ctx).await;
            Ok((StatusCode::CREATED, Json(EventTypeView::new(&rec))))
        }
        CatalogWrite::Conflict => Err(ApiError::conflict(format!(
            "event type {} already exists",
            rec.name
        ))),
    }
}

/// Lists the catalog in name order (any caller).
#[utoipa::path(get, path = "/v1/event-types", tag = "event-types", operation_id = "list_event_types",
    params(EventTypeListQuery),
    responses((status = 200, description = "A page of types", body = ListPage<EventTypeView>)))]
pub(super) async fn list(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    query: Result<Query<EventTypeListQuery>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<ListPage<EventTypeView>>, ApiError> {
    let Query(q) = query.map_err(bad_query)?;
    let limit = super::Page {
        limit: q.limit,
        cursor: None,
    }
    .limit()?;
    let include_archived = match q.include_archived.as_deref() {
        None | Some("false") => false,
        Some("true") => true,
        Some(_) => {
            return Err(ApiError::invalid_field(
                "include_archived",
                "include_archived is true or false",
            ));
        }
    };
    // Archived types are skipped: a page reads at most LIST_READ_MAX types.
    let mut data = Vec::new();
    let mut after = q.cursor;
    let mut read = 0;
    loop {
        let page = ctx.store.event_types(after.as_deref(), limit).await?;
        let full = page.len() == limit;
        for rec in page {
            read += 1;
            after = Some(rec.name.clone());
            // A portal session limited to some types sees only those.
            if (include_archived || !rec.archived) && who.sees_event_type(&rec.name) {
                data.push(EventTypeView::new(&rec));
            }
            if data.len() == limit || read == LIST_READ_MAX {
                return Ok(list_body(data, after));
            }
        }
        if !full {
            return Ok(list_body(data, None));
        }
    }
}

/// Shows a type (any caller).
#[utoipa::path(get, path = "/v1/event-types/{name}", tag = "event-types", operation_id = "get_event_type",
    params(EventTypePath),
    responses((status = 200, description = "The type", body = EventTypeView)))]
pub(super) async fn show(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(name): Path<String>,
) -> Result<Json<EventTypeView>, ApiError> {
    match ctx.store.event_type(&name).await? {
        Some(rec) if who.sees_event_type(&rec.name) => Ok(Json(EventTypeView::new(&rec))),
        _ => Err(ApiError::not_found("event type")),
    }
}

/// Changes a type with a JSON merge patch (RFC 7396; admin): `null` resets a
/// field (no group, no example, no schemas, a flag off). `schemas` merges by
/// version; the example and each schema version given replace the old whole.
#[utoipa::path(patch, path = "/v1/event-types/{name}", tag = "event-types", operation_id = "update_event_type",
    params(EventTypePath),
    request_body(content = EventTypeFields, content_type = "application/merge-patch+json"),
    responses((status = 200, description = "The type as changed", body = EventTypeView)))]
pub(super) async fn update(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(name): Path<String>,
    body: Body,
) -> Result<Json<EventTypeView>, ApiError> {
    who.require_admin()?;
    let patch: Value = parse_json(&read_limited(body, ctx.config.limits.json_body_bytes).await?)?;
    if !patch.is_object() {
        return Err(ApiError::invalid_field(
            "",
            "a merge patch must be a JSON object",
        ));
    }
    let _: EventTypeFields = fields_of(patch.clone())?;
    for _ in 0..PATCH_TRIES {
        let Some(current) = ctx.store.event_type(&name).await? else {
            return Err(ApiError::not_found("event type"));
        };
        let mut merged = serde_json::to_value(EventTypeFields::of(&current)).unwrap_or_default();
        replaced_whole(&mut merged, &patch);
        merge_patch(&mut merged, &patch);
        let mut wanted = current.clone();
        fields_of(merged)?.apply_to(&mut wanted, ctx.config.limits.description_len)?;
        wanted.updated_at_ms = ctx.clock.now_ms().max(current.created_at_ms);
        if ctx.store.save_event_type(&wanted, Some(&current)).await? == CatalogWrite::Written {
            refreshed(&ctx).await;
            return Ok(Json(EventTypeView::new(&wanted)));
        }
    }
    Err(ApiError::conflict(
        "the event type kept changing under this patch; nothing was written, retry",
    ))
}

/// Clears in `merged` the documents `patch` gives (the example, a schema
/// version), so each is replaced whole rather than merged into: a schema
/// with a keyword left over from the last one would mean something else.
fn replaced_whole(merged: &mut Value, patch: &Value) {
    if patch.get("example").is_some() {
        merged["example"] = Value::Null;
    }
    if let (Some(Value::Object(given)), Some(Value::Object(kept))) =
        (patch.get("schemas"), merged.get_mut("schemas"))
    {
        for version in given.keys() {
            kept.remove(version);
        }
    }
}

/// A type's fields read from JSON, naming the field that does not fit.
fn fields_of(value: Value) -> Result<EventTypeFields, ApiError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let field = e.path().to_string();
        ApiError::invalid_field(field, e.into_inner().to_string())
    })
}

/// Removes a type from the catalog (admin). Endpoints that subscribe to it
/// keep their subscription; to keep it from new ones, archive it instead.
#[utoipa::path(delete, path = "/v1/event-types/{name}", tag = "event-types", operation_id = "delete_event_type",
    params(EventTypePath),
    responses((status = 204, description = "Removed")))]
pub(super) async fn delete(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(name): Path<String>,
) -> Result<StatusCode, ApiError> {
    who.require_admin()?;
    if !ctx.store.delete_event_type(&name).await? {
        return Err(ApiError::not_found("event type"));
    }
    refreshed(&ctx).await;
    Ok(StatusCode::NO_CONTENT)
}
