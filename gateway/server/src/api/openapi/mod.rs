//! The API's OpenAPI 3.1 document, made from the code: the handlers' `#[utoipa::path]`
//! annotations and the response types' schemas give the paths and bodies, and
//! [`operations`] adds to each operation who may call it and the errors it answers.
//! Served at `GET /v1/openapi.json` without authentication, and printed by
//! `hookgate openapi`.

mod names;
mod operations;
mod params;
#[cfg(test)]
mod tests;

use std::sync::OnceLock;

use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use utoipa::OpenApi;
use utoipa::openapi::OpenApi as Document;

pub(super) use names::{DeliveryStateName, PluginSourceName, ReplayableState};
pub(super) use operations::idempotency_key;
pub(super) use params::{
    EventTypePath, ItemPath, OperatorEndpointPath, PluginPath, TaskPath, TenantPath,
};

/// The document's fixed parts; the paths come from the router.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "hookgate API",
        description = "Webhook delivery gateway: durable ingest, Standard Webhooks signing, \
jittered retries per endpoint policy, a dead-letter queue with replay, and tenant \
WebAssembly retry plugins. Errors are `{\"error\": {\"code\", \"message\", \"field\"?}}` \
with a stable `code`.",
        license(name = "Apache-2.0", identifier = "Apache-2.0"),
    ),
    servers((url = "/", description = "The gateway itself")),
    components(schemas(super::error::ErrorBody, super::error::ErrorCode)),
    tags(
        (name = "health", description = "Liveness and metrics"),
        (name = "tenants", description = "Tenants and their API keys (admin)"),
        (name = "endpoints", description = "Where a tenant's webhooks go, and how they retry"),
        (name = "events", description = "Ingest and read events"),
        (name = "deliveries", description = "Deliveries and their attempt logs"),
        (name = "dlq", description = "Dead deliveries: summaries and replay"),
        (name = "plugins", description = "Tenant WebAssembly retry plugins"),
        (name = "policy", description = "Retry policies"),
        (name = "stats", description = "Delivery statistics"),
        (name = "cluster", description = "The gateways sharing one store (admin)"),
        (name = "portal", description = "Scoped, expiring sessions for a tenant's customers, who use the embedded console"),
        (name = "operator-endpoints", description = "Where operator events go: the admin's hear every tenant's, a tenant's its own"),
        (name = "openapi", description = "This document"),
    )
)]
struct ApiDoc;

/// The whole document, as the gateway serves it.
pub(crate) fn document() -> Document {
    let (_, paths) = super::routes().split_for_parts();
    let mut doc = ApiDoc::openapi();
    doc.merge(paths);
    operations::complete(&mut doc);
    doc
}

/// The document as pretty JSON with a final newline, as served and committed.
pub fn document_json() -> String {
    pretty(&document())
}

/// A document as pretty JSON with a final newline (both faces' documents).
pub(super) fn pretty(doc: &Document) -> String {
    let mut text = doc.to_pretty_json().expect("the document serialises");
    text.push('\n');
    text
}

/// The API schema of this document: enough of OpenAPI's own shape to say what it
/// is. Only described, never built.
pub(super) enum DocumentShape {}

impl utoipa::PartialSchema for DocumentShape {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{AdditionalProperties, ObjectBuilder, SchemaType, Type};
        let text = || ObjectBuilder::new().schema_type(Type::String);
        let any = |what: &str| {
            let item = ObjectBuilder::new()
                .schema_type(SchemaType::AnyValue)
                .description(Some(what))
                .build();
            ObjectBuilder::new()
                .schema_type(Type::Object)
                .additional_properties(Some(AdditionalProperties::RefOr(item.into())))
        };
        let info = ObjectBuilder::new()
            .schema_type(Type::Object)
            .property("title", text())
            .property("version", text())
            .required("title")
            .required("version");
        ObjectBuilder::new()
            .schema_type(Type::Object)
            .property("openapi", text().pattern(Some(r"^3\.1\.")))
            .property("info", info)
            .property("paths", any("A path item"))
            .property("components", any("Schemas, security schemes, ..."))
            .required("openapi")
            .required("info")
            .required("paths")
            .into()
    }
}

impl utoipa::ToSchema for DocumentShape {}

/// This document, in JSON; public.
#[utoipa::path(get, path = "/v1/openapi.json", tag = "openapi", operation_id = "get_openapi",
    responses((status = 200, description = "The OpenAPI 3.1 document", content_type = "application/json",
        body = DocumentShape)))]
pub(super) async fn serve() -> impl IntoResponse {
    static TEXT: OnceLock<String> = OnceLock::new();
    let text = TEXT.get_or_init(document_json);
    ([(CONTENT_TYPE, "application/json")], text.as_str())
}
