//! `/api/v1/event-type`: Svix's event types are v1's install-wide catalog
//! (`/v1/event-types`; the admin writes it, every caller reads it). Svix's
//! `groupName` is the type's `group` and `schemas` its schemas by version;
//! hookgate's own `example` and `validate` are left as they are by every
//! Svix write. Svix's DELETE archives unless `expunge=true`; PUT upserts and
//! replaces, schemas included. Feature flags hookgate has none of: one given
//! is refused (422 naming it), never dropped.

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, State};
use axum::http::{Method, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{Map, Value, json};

use super::error::SvixError;
use super::forward::{Caller, V1, seg, with_query};
use super::openapi::{params as p, schemas as s};
use super::wire::{ListQuery, Pairs, list_response, object_body, renamed};

/// The fields of Svix's `EventTypeIn`, `EventTypeUpdate` and
/// `EventTypePatch` and the v1 names they take.
const FIELDS: &[(&str, &str)] = &[
    ("description", "description"),
    ("archived", "archived"),
    ("deprecated", "deprecated"),
    ("groupName", "group"),
];

/// `/v1/event-types/{name}`.
fn type_path(name: &str) -> String {
    format!("/v1/event-types/{}", seg(name))
}

/// An event type as Svix shows it, from a v1 type; its schemas only `with_content`.
fn event_type_out(t: &Value, with_content: bool) -> Value {
    let schemas = match t["schemas"].as_object() {
        Some(s) if with_content && !s.is_empty() => t["schemas"].clone(),
        _ => Value::Null,
    };
    json!({
        "name": t["name"],
        "description": t["description"],
        "archived": t["archived"],
        "deprecated": t["deprecated"],
        "schemas": schemas,
        "groupName": t["group"],
        "featureFlag": null,
        "featureFlags": null,
        "createdAt": t["created_at"],
        "updatedAt": t["updated_at"],
    })
}

/// Refuses the feature flags hookgate has none of.
fn no_feature_flags(body: &Map<String, Value>) -> Result<(), SvixError> {
    const WHY: &str = "hookgate has no feature flags: every caller sees every event type";
    if body.get("featureFlag").is_some_and(|v| !v.is_null()) {
        return Err(SvixError::body_field("featureFlag", WHY));
    }
    let flags = body.get("featureFlags");
    if flags.is_some_and(|v| !v.is_null() && v.as_array().is_none_or(|a| !a.is_empty())) {
        return Err(SvixError::body_field("featureFlags", WHY));
    }
    Ok(())
}

/// Refuses a body without a string `description` (create and PUT need one).
fn require_description(body: &Map<String, Value>) -> Result<(), SvixError> {
    if body.get("description").is_some_and(Value::is_string) {
        Ok(())
    } else {
        Err(SvixError::body_field("description", "field required"))
    }
}

/// A `schemas` that replaces `old` whole in a v1 merge patch (which merges
/// by version): the versions `new` leaves out are removed, `null` removes all.
fn replacing_schemas(old: &Value, new: &Value) -> Result<Value, SvixError> {
    let Some(new) = new.as_object() else {
        return if new.is_null() {
            Ok(Value::Null)
        } else {
            Err(SvixError::body_field(
                "schemas",
                "schemas must be an object",
            ))
        };
    };
    let mut out: Map<String, Value> = old
        .as_object()
        .map(|o| o.keys().map(|k| (k.clone(), Value::Null)).collect())
        .unwrap_or_default();
    out.extend(new.clone());
    Ok(Value::Object(out))
}

/// The type `name`, if there is one.
async fn current(v1: &V1, caller: &Caller, name: &str) -> Result<Option<Value>, SvixError> {
    let found = v1.call(caller, Method::GET, &type_path(name), None).await?;
    match found.status {
        s if s.is_success() => Ok(Some(found.body)),
        StatusCode::NOT_FOUND => Ok(None),
        s => Err(SvixError::from_v1(s, &found.body, "query")),
    }
}

/// Creates the type `name` with `body`'s fields (an `EventTypeIn` less its name).
async fn create_type(
    v1: &V1,
    caller: &Caller,
    name: &str,
    body: &Map<String, Value>,
) -> Result<Value, SvixError> {
    let mut fields = renamed(body, FIELDS);
    fields.insert("name".into(), Value::String(name.to_owned()));
    if let Some(schemas) = body.get("schemas") {
        fields.insert("schemas".into(), schemas.clone());
    }
    let created = v1
        .ok(
            caller,
            Method::POST,
            "/v1/event-types",
            Some(&Value::Object(fields)),
            "body",
        )
        .await?;
    Ok(event_type_out(&created, true))
}

/// Merge-patches the type `name` with `patch` (v1 names).
async fn patch_type(
    v1: &V1,
    caller: &Caller,
    name: &str,
    patch: Map<String, Value>,
) -> Result<Value, SvixError> {
    let changed = v1
        .ok(
            caller,
            Method::PATCH,
            &type_path(name),
            Some(&Value::Object(patch)),
            "body",
        )
        .await?;
    Ok(event_type_out(&changed, true))
}

#[utoipa::path(get, path = "/event-type", tag = "Event Type", operation_id = "v1.event-type.list",
    params(p::Page, p::NameOrder, p::IncludeArchived, p::WithContent),
    responses((status = 200, description = "A page of the catalog, by name", body = s::ListResponse<s::EventTypeOut>)))]
pub(super) async fn list(
    State(v1): State<V1>,
    caller: Caller,
    q: Pairs,
) -> Result<Json<Value>, SvixError> {
    // v1 lists the catalog in name order, which is Svix's ascending.
    let page = q.page();
    if page.order.as_deref().is_some_and(|o| o != "ascending") {
        return Err(SvixError::query_field(
            "order",
            "hookgate lists event types in ascending name order only",
        ));
    }
    let mut query = ListQuery {
        order: None,
        ..page
    }
    .v1_query()?;
    if q.flag("include_archived", false)? {
        query.push(("include_archived", "true".into()));
    }
    let with_content = q.flag("with_content", true)?;
    let path = with_query("/v1/event-types", &query);
    let page = v1.ok(&caller, Method::GET, &path, None, "query").await?;
    let data = page["data"]
        .as_array()
        .map(|a| a.iter().map(|t| event_type_out(t, with_content)).collect())
        .unwrap_or_default();
    Ok(Json(list_response(data, &page)))
}

#[utoipa::path(post, path = "/event-type", tag = "Event Type", operation_id = "v1.event-type.create",
    request_body = s::EventTypeIn,
    responses((status = 201, description = "Created", body = s::EventTypeOut)))]
pub(super) async fn create(
    State(v1): State<V1>,
    caller: Caller,
    body: Body,
) -> Result<Response, SvixError> {
    let body = object_body(body, v1.body_limit(), "EventTypeIn").await?;
    let Some(name) = body.get("name").and_then(Value::as_str) else {
        return Err(SvixError::body_field("name", "field required"));
    };
    require_description(&body)?;
    no_feature_flags(&body)?;
    let created = create_type(&v1, &caller, name, &body).await?;
    Ok((StatusCode::CREATED, Json(created)).into_response())
}

#[utoipa::path(get, path = "/event-type/{event_type_name}", tag = "Event Type", operation_id = "v1.event-type.get",
    params(p::EventTypePath),
    responses((status = 200, description = "The type", body = s::EventTypeOut)))]
pub(super) async fn get(
    State(v1): State<V1>,
    caller: Caller,
    Path(name): Path<String>,
) -> Result<Json<Value>, SvixError> {
    let t = v1
        .ok(&caller, Method::GET, &type_path(&name), None, "query")
        .await?;
    Ok(Json(event_type_out(&t, true)))
}

/// `PUT`: replaces the type's Svix fields (a flag left out is off, schemas
/// left out are removed), or creates it (201).
#[utoipa::path(put, path = "/event-type/{event_type_name}", tag = "Event Type", operation_id = "v1.event-type.update",
    params(p::EventTypePath), request_body = s::EventTypeUpdate,
    responses((status = 200, description = "Replaced", body = s::EventTypeOut),
        (status = 201, description = "Created", body = s::EventTypeOut)))]
pub(super) async fn update(
    State(v1): State<V1>,
    caller: Caller,
    Path(name): Path<String>,
    body: Body,
) -> Result<Response, SvixError> {
    let body = object_body(body, v1.body_limit(), "EventTypeUpdate").await?;
    require_description(&body)?;
    no_feature_flags(&body)?;
    let Some(old) = current(&v1, &caller, &name).await? else {
        let created = create_type(&v1, &caller, &name, &body).await?;
        return Ok((StatusCode::CREATED, Json(created)).into_response());
    };
    let mut patch = renamed(&body, FIELDS);
    for (flag, off) in [("archived", false), ("deprecated", false)] {
        patch.entry(flag).or_insert(Value::Bool(off));
    }
    patch.entry("group").or_insert(Value::Null);
    let schemas = body.get("schemas").unwrap_or(&Value::Null);
    patch.insert(
        "schemas".into(),
        replacing_schemas(&old["schemas"], schemas)?,
    );
    let changed = patch_type(&v1, &caller, &name, patch).await?;
    Ok(Json(changed).into_response())
}

/// `PATCH`: changes the fields given; `schemas`, when given, replaces the
/// type's schemas whole, as Svix does.
#[utoipa::path(patch, path = "/event-type/{event_type_name}", tag = "Event Type", operation_id = "v1.event-type.patch",
    params(p::EventTypePath), request_body = s::EventTypePatch,
    responses((status = 200, description = "Changed", body = s::EventTypeOut)))]
pub(super) async fn patch(
    State(v1): State<V1>,
    caller: Caller,
    Path(name): Path<String>,
    body: Body,
) -> Result<Json<Value>, SvixError> {
    let body = object_body(body, v1.body_limit(), "EventTypePatch").await?;
    no_feature_flags(&body)?;
    let mut patch = renamed(&body, FIELDS);
    if let Some(schemas) = body.get("schemas") {
        let old = current(&v1, &caller, &name)
            .await?
            .ok_or_else(|| SvixError::not_found("event type"))?;
        patch.insert(
            "schemas".into(),
            replacing_schemas(&old["schemas"], schemas)?,
        );
    }
    Ok(Json(patch_type(&v1, &caller, &name, patch).await?))
}

/// Archives the type, as Svix's delete does, or with `expunge=true` removes
/// it from the catalog.
#[utoipa::path(delete, path = "/event-type/{event_type_name}", tag = "Event Type", operation_id = "v1.event-type.delete",
    params(p::EventTypePath, p::Expunge),
    responses((status = 204, description = "Archived, or with `expunge` removed")))]
pub(super) async fn delete(
    State(v1): State<V1>,
    caller: Caller,
    Path(name): Path<String>,
    q: Pairs,
) -> Result<StatusCode, SvixError> {
    if q.flag("expunge", false)? {
        v1.ok(&caller, Method::DELETE, &type_path(&name), None, "query")
            .await?;
    } else {
        let mut archive = Map::new();
        archive.insert("archived".into(), Value::Bool(true));
        patch_type(&v1, &caller, &name, archive).await?;
    }
    Ok(StatusCode::NO_CONTENT)
}
