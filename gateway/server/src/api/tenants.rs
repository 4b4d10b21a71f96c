//! Tenants: create, list, show, merge-patch and delete (admin; a tenant may
//! read itself), and rotate a key (admin or the tenant). A tenant is named in
//! paths by its id or its uid.

use std::collections::BTreeMap;
use std::sync::Arc;

use axum::Json;
use axum::body::Body;
use axum::extract::{Path, Query, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::answer_headers::NoStore;
use super::auth::Principal;
use super::body::{parse_json, read_limited};
use super::endpoint_input::merge_patch;
use super::endpoint_schema::MetadataSchema;
use super::error::ApiError;
use super::openapi::TenantPath;
use super::tasks::{TaskView, accepted};
use super::{ListPage, Page, bad_query, list_body, metadata};
use crate::clock::rfc3339_ms;
use crate::context::AppContext;
use crate::ids::TenantId;
use crate::store::{PortalSettings, TaskRecord, TaskWork, TenantRecord, TenantWrite};
use crate::{ids, token};

/// Most characters of a tenant's name.
const NAME_MAX_CHARS: usize = 256;

/// The body of tenant creation.
#[derive(Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct CreateTenant {
    /// Lowercase letters, digits, `_` and `-`, starting with a letter or digit.
    #[schema(pattern = r"^[a-z0-9][a-z0-9_-]{0,62}$", example = "acme")]
    id: String,
    /// Shown to people, 1 to 256 characters; the id when absent.
    #[serde(default)]
    #[schema(
        example = "Acme Corp",
        min_length = 1,
        max_length = 256,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]+$"
    )]
    name: Option<String>,
    /// The platform's own identifier for the tenant (see `TenantFields`).
    #[serde(default)]
    #[schema(pattern = r"^[A-Za-z0-9_.-]{1,256}$", example = "cus_42")]
    uid: Option<String>,
    /// Strings the platform keeps on the tenant (at most 50 keys).
    #[serde(default)]
    #[schema(value_type = Option<MetadataSchema>)]
    metadata: Option<BTreeMap<String, Option<String>>>,
}

/// What a tenant's owner may set, on create and by merge patch.
#[derive(Debug, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct TenantFields {
    /// Shown to people, 1 to 256 characters; the id when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(
        example = "Acme Corp",
        min_length = 1,
        max_length = 256,
        pattern = r"^[^\u0000-\u001F\u007F-\u009F]+$"
    )]
    name: Option<String>,
    /// The platform's own identifier for the tenant, accepted in paths wherever
    /// its id is; unique among tenants' ids and uids.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(pattern = r"^[A-Za-z0-9_.-]{1,256}$", example = "cus_42")]
    uid: Option<String>,
    /// Strings the platform keeps on the tenant (at most 50 keys; in a patch,
    /// a `null` value removes its key).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<MetadataSchema>)]
    metadata: Option<BTreeMap<String, Option<String>>>,
    /// Its customers' portal: origins that may frame it (beside the config's
    /// `console.embed_origins`), and the theme its sessions start from.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<TenantPortalInput>)]
    portal: Option<serde_json::Map<String, Value>>,
}

/// A tenant's portal settings as given.
#[derive(Debug, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub(super) struct TenantPortalInput {
    /// Origins (`https://app.example.com`) whose pages may frame this
    /// tenant's portal (at most 10).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<Vec<OriginSchema>>, max_items = 10,
        example = json!(["https://app.acme.example"]))]
    embed_origins: Option<Vec<String>>,
    /// The theme its portal sessions start from; a session's own fields win.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[schema(value_type = Option<super::portal_sessions::ThemeInput>)]
    theme: Option<serde_json::Map<String, Value>>,
}

/// An origin as the API's schema describes it. Only described.
pub(super) enum OriginSchema {}

impl utoipa::PartialSchema for OriginSchema {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        ObjectBuilder::new()
            .schema_type(Type::String)
            .pattern(Some(r"^https?://[A-Za-z0-9.:*-]+$"))
            .examples([serde_json::json!("https://app.acme.example")])
            .into()
    }
}

impl utoipa::ToSchema for OriginSchema {}

/// Most origins one tenant's portal may be framed by.
const EMBED_ORIGINS_MAX: usize = 10;

impl TenantPortalInput {
    fn of(p: &PortalSettings) -> Self {
        Self {
            embed_origins: Some(p.embed_origins.clone()),
            theme: serde_json::to_value(&p.theme)
                .ok()
                .and_then(|v| v.as_object().cloned()),
        }
    }

    fn checked(self) -> Result<PortalSettings, ApiError> {
        let embed_origins = self.embed_origins.unwrap_or_default();
        if embed_origins.len() > EMBED_ORIGINS_MAX {
            return Err(ApiError::validation(
                "portal.embed_origins",
                format!("at most {EMBED_ORIGINS_MAX} origins"),
            ));
        }
        for (i, origin) in embed_origins.iter().enumerate() {
            if !crate::address_guard::is_origin(origin) {
                return Err(ApiError::validation(
                    format!("portal.embed_origins[{i}]"),
                    format!("{origin:?} is not an origin: scheme://host[:port], no path"),
                ));
            }
        }
        let theme = super::portal_sessions::theme_of(self.theme, "portal.theme")?;
        Ok(PortalSettings {
            embed_origins,
            theme,
        })
    }
}

impl TenantFields {
    /// The fields as `rec` holds them, for a merge patch to apply to.
    fn of(rec: &TenantRecord) -> Self {
        Self {
            name: Some(rec.name.clone()),
            uid: rec.uid.clone(),
            metadata: Some(
                rec.metadata
                    .iter()
                    .map(|(k, v)| (k.clone(), Some(v.clone())))
                    .collect(),
            ),
            portal: serde_json::to_value(TenantPortalInput::of(&rec.portal))
                .ok()
                .and_then(|v| v.as_object().cloned()),
        }
    }

    /// Validates every field and writes them into `rec`.
    ///
    /// # Errors
    /// 422 `validation_failed` naming the field.
    fn apply_to(self, rec: &mut TenantRecord) -> Result<(), ApiError> {
        let name = self.name.unwrap_or_else(|| rec.id.to_string());
        let chars = name.chars().count();
        if chars == 0 || chars > NAME_MAX_CHARS || name.chars().any(char::is_control) {
            return Err(ApiError::validation(
                "name",
                format!("a name is 1 to {NAME_MAX_CHARS} characters, none a control character"),
            ));
        }
        if let Some(uid) = &self.uid
            && !ids::is_valid_uid(uid)
        {
            return Err(ApiError::validation(
                "uid",
                "a uid is 1 to 256 of A-Z, a-z, 0-9, _, . and -",
            ));
        }
        rec.metadata = metadata::validate(self.metadata.unwrap_or_default())?;
        // Read as an object first: serde would take a struct from an array too.
        let portal: TenantPortalInput =
            serde_path_to_error::deserialize(Value::Object(self.portal.unwrap_or_default()))
                .map_err(|e| {
                    let field = format!("portal.{}", e.path());
                    ApiError::invalid_field(field, e.into_inner().to_string())
                })?;
        rec.portal = portal.checked()?;
        rec.name = name;
        rec.uid = self.uid;
        Ok(())
    }
}

// Fields are declared in alphabetical order: the `json!` bodies these replace
// serialised that way, and clients may compare bytes.

/// A tenant.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct TenantView {
    #[schema(format = DateTime)]
    created_at: String,
    id: String,
    metadata: BTreeMap<String, String>,
    name: String,
    /// Its customers' portal: who may frame it, and its theme (absent until set).
    #[serde(skip_serializing_if = "PortalSettings::is_empty")]
    #[schema(value_type = Option<TenantPortalInput>)]
    portal: PortalSettings,
    uid: Option<String>,
    #[schema(format = DateTime)]
    updated_at: String,
}

impl TenantView {
    fn new(rec: &TenantRecord) -> Self {
        Self {
            created_at: rfc3339_ms(rec.created_at_ms),
            id: rec.id.to_string(),
            metadata: rec.metadata.clone(),
            name: if rec.name.is_empty() {
                rec.id.to_string()
            } else {
                rec.name.clone()
            },
            portal: rec.portal.clone(),
            uid: rec.uid.clone(),
            updated_at: rfc3339_ms(rec.updated_at_ms.max(rec.created_at_ms)),
        }
    }
}

/// A new tenant, with the only copy of its API key.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct CreatedTenant {
    api_key: String,
    #[serde(flatten)]
    tenant: TenantView,
}

/// A tenant's new API key after a rotation.
#[derive(Debug, Serialize, utoipa::ToSchema)]
pub(super) struct TenantKey {
    api_key: String,
    id: String,
}

/// The answer to a refused tenant write.
fn refused(written: TenantWrite, id: &str) -> ApiError {
    match written {
        TenantWrite::IdTaken => ApiError::conflict(format!("tenant {id} already exists")),
        TenantWrite::UidTaken => {
            ApiError::conflict("another tenant already has this uid (or it is another tenant's id)")
        }
        TenantWrite::Missing | TenantWrite::Written(_) => ApiError::not_found("tenant"),
    }
}

/// Creates a tenant and answers its API key, shown this once.
#[utoipa::path(post, path = "/v1/tenants", tag = "tenants", operation_id = "create_tenant",
    request_body = CreateTenant,
    responses((status = 201, description = "The tenant, with its only API key", body = CreatedTenant)))]
pub(super) async fn create(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    body: Body,
) -> Result<NoStore<(StatusCode, Json<CreatedTenant>)>, ApiError> {
    who.require_admin()?;
    let input: CreateTenant =
        parse_json(&read_limited(body, ctx.config.limits.json_body_bytes).await?)?;
    if !ids::is_valid_tenant_id(&input.id) {
        return Err(ApiError::validation(
            "id",
            "tenant id must match ^[a-z0-9][a-z0-9_-]{0,62}$",
        ));
    }
    let key = token::generate();
    let mut rec = TenantRecord::new(
        TenantId::from(input.id.as_str()),
        token::hash(&key),
        ctx.clock.now_ms(),
    );
    let fields = TenantFields {
        name: input.name,
        uid: input.uid,
        metadata: input.metadata,
        portal: None,
    };
    fields.apply_to(&mut rec)?;
    match ctx.store.create_tenant(&rec).await? {
        TenantWrite::Written(t) => Ok(NoStore((
            StatusCode::CREATED,
            Json(CreatedTenant {
                api_key: key,
                tenant: TenantView::new(&t),
            }),
        ))),
        other => Err(refused(other, &input.id)),
    }
}

/// Lists tenants, newest id first (the reverse of id order).
#[utoipa::path(get, path = "/v1/tenants", tag = "tenants", operation_id = "list_tenants",
    params(Page),
    responses((status = 200, description = "A page of tenants", body = ListPage<TenantView>)))]
pub(super) async fn list(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    page: Result<Query<Page>, axum::extract::rejection::QueryRejection>,
) -> Result<Json<ListPage<TenantView>>, ApiError> {
    who.require_admin()?;
    let Query(page) = page.map_err(bad_query)?;
    let (tenants, more) = ctx
        .store
        .list_tenants(page.limit()?, page.cursor.as_deref())
        .await?;
    let next = if more {
        tenants.last().map(|t| t.id.to_string())
    } else {
        None
    };
    Ok(list_body(
        tenants.iter().map(TenantView::new).collect(),
        next,
    ))
}

/// Shows a tenant (the admin, or the tenant itself).
#[utoipa::path(get, path = "/v1/tenants/{t}", tag = "tenants", operation_id = "get_tenant",
    params(TenantPath),
    responses((status = 200, description = "The tenant", body = TenantView)))]
pub(super) async fn show(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(t): Path<TenantId>,
) -> Result<Json<TenantView>, ApiError> {
    let t = who.require_tenant(&ctx, &t).await?;
    match ctx.store.tenant(&t).await?.filter(TenantRecord::is_live) {
        Some(rec) => Ok(Json(TenantView::new(&rec))),
        None => Err(ApiError::not_found("tenant")),
    }
}

/// Changes a tenant's name, uid or metadata with a JSON merge patch (RFC 7396):
/// `null` clears the uid, resets the name to the id, or removes a metadata key.
#[utoipa::path(patch, path = "/v1/tenants/{t}", tag = "tenants", operation_id = "update_tenant",
    params(TenantPath),
    request_body(content = TenantFields, content_type = "application/merge-patch+json"),
    responses((status = 200, description = "The tenant as changed", body = TenantView)))]
pub(super) async fn update(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(t): Path<TenantId>,
    body: Body,
) -> Result<Json<TenantView>, ApiError> {
    who.require_admin()?;
    let t = who.require_tenant(&ctx, &t).await?;
    let patch: Value = parse_json(&read_limited(body, ctx.config.limits.json_body_bytes).await?)?;
    if !patch.is_object() {
        return Err(ApiError::invalid_field(
            "",
            "a merge patch must be a JSON object",
        ));
    }
    // The patch alone must name only known fields, even those set to null.
    let _: TenantFields = input_of(patch.clone())?;
    let Some(current) = ctx.store.tenant(&t).await?.filter(TenantRecord::is_live) else {
        return Err(ApiError::not_found("tenant"));
    };
    let mut merged = serde_json::to_value(TenantFields::of(&current)).unwrap_or_default();
    merge_patch(&mut merged, &patch);
    let fields: TenantFields = input_of(merged)?;
    let mut wanted = current;
    fields.apply_to(&mut wanted)?;
    let now = ctx.clock.now_ms();
    let written = ctx
        .store
        .update_tenant(&t, |rec| {
            rec.name.clone_from(&wanted.name);
            rec.uid.clone_from(&wanted.uid);
            rec.metadata.clone_from(&wanted.metadata);
            rec.portal.clone_from(&wanted.portal);
            rec.updated_at_ms = now;
        })
        .await?;
    match written {
        TenantWrite::Written(rec) => Ok(Json(TenantView::new(&rec))),
        other => Err(refused(other, &t)),
    }
}

/// A tenant's fields read from JSON, naming the field that does not fit.
fn input_of(value: Value) -> Result<TenantFields, ApiError> {
    serde_path_to_error::deserialize(value).map_err(|e| {
        let field = e.path().to_string();
        ApiError::invalid_field(field, e.into_inner().to_string())
    })
}

/// Deletes a tenant and everything of it: endpoints, events, deliveries and
/// their attempts, plugins and keys. Answers at once with the task that does
/// it; from then on the tenant takes no work and its key, id and uid name
/// nothing (404; the id may be taken again once the task has finished).
#[utoipa::path(delete, path = "/v1/tenants/{t}", tag = "tenants", operation_id = "delete_tenant",
    params(TenantPath),
    responses((status = 202, description = "The task deleting the tenant", body = TaskView,
        headers(("Location" = String, description = "The task's URL")))))]
pub(super) async fn delete(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(t): Path<TenantId>,
) -> Result<Response, ApiError> {
    who.require_admin()?;
    let t = who.require_tenant(&ctx, &t).await?;
    let task = TaskRecord::new(t.clone(), TaskWork::TenantDelete, ctx.clock.now_ms());
    if !ctx.store.begin_tenant_delete(&t, &task).await? {
        return Err(ApiError::not_found("tenant"));
    }
    ctx.task_wake.notify_one();
    Ok(accepted(&task, &format!("/v1/tasks/{}", task.id)))
}

/// Gives the tenant a new API key; the old one stops working at once.
#[utoipa::path(post, path = "/v1/tenants/{t}/rotate-key", tag = "tenants",
    operation_id = "rotate_tenant_key", params(TenantPath),
    responses((status = 200, description = "The new key, shown this once", body = TenantKey)))]
pub(super) async fn rotate_key(
    State(ctx): State<Arc<AppContext>>,
    who: Principal,
    Path(t): Path<TenantId>,
) -> Result<NoStore<Json<TenantKey>>, ApiError> {
    let t = who.require_tenant(&ctx, &t).await?;
    let key = token::generate();
    let hash = hex::encode(token::hash(&key));
    let now = ctx.clock.now_ms();
    let written = ctx
        .store
        .update_tenant(&t, |rec| {
            rec.key_sha256.clone_from(&hash);
            rec.updated_at_ms = now;
        })
        .await?;
    match written {
        TenantWrite::Written(_) => Ok(NoStore(Json(TenantKey {
            api_key: key,
            id: t.to_string(),
        }))),
        other => Err(refused(other, &t)),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The typed body's bytes against the `json!` body it replaced.
    fn same_bytes(typed: impl Serialize, before: serde_json::Value) {
        assert_eq!(
            serde_json::to_string(&typed).unwrap(),
            serde_json::to_string(&before).unwrap()
        );
    }

    #[test]
    fn tenant_bodies_match_their_json_forms() {
        let (id, key, at) = ("acme", "hg_key", "2026-01-02T03:04:05.006Z");
        let mut rec = TenantRecord::new(id.into(), [1; 32], 1_767_323_045_006);
        rec.uid = Some("cus_42".into());
        rec.metadata.insert("plan".into(), "pro".into());
        let view = json!({
            "created_at": at, "id": id, "metadata": {"plan": "pro"}, "name": id,
            "uid": "cus_42", "updated_at": at,
        });
        same_bytes(TenantView::new(&rec), view.clone());
        let mut created = view.clone();
        created["api_key"] = json!(key);
        same_bytes(
            CreatedTenant {
                api_key: key.into(),
                tenant: TenantView::new(&rec),
            },
            json!({"api_key": key, "created_at": at, "id": id, "metadata": {"plan": "pro"},
                "name": id, "uid": "cus_42", "updated_at": at}),
        );
        same_bytes(
            list_body(vec![TenantView::new(&rec)], Some(id.into())).0,
            json!({"data": [view], "next_cursor": id}),
        );
        same_bytes(
            TenantKey {
                api_key: key.into(),
                id: id.into(),
            },
            json!({"id": id, "api_key": key}),
        );
    }

    #[test]
    fn fields_are_checked_and_a_missing_name_is_the_id() {
        let mut rec = TenantRecord::new("acme".into(), [1; 32], 0);
        let field = |fields: TenantFields| {
            let mut rec = rec.clone();
            fields.apply_to(&mut rec).unwrap_err().field
        };
        let bad_uid = TenantFields {
            uid: Some("has space".into()),
            ..TenantFields::default()
        };
        assert_eq!(field(bad_uid).as_deref(), Some("uid"));
        let long_name = TenantFields {
            name: Some("n".repeat(NAME_MAX_CHARS + 1)),
            ..TenantFields::default()
        };
        assert_eq!(field(long_name).as_deref(), Some("name"));
        TenantFields::default().apply_to(&mut rec).unwrap();
        assert_eq!(rec.name, "acme");
        assert_eq!(rec.uid, None);
    }
}
