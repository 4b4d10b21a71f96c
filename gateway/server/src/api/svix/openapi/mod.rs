//! The Svix face's own OpenAPI 3.1 document, made from the code as API v1's
//! is: the handlers' `#[utoipa::path]` annotations give the operations (with
//! Svix's operation ids), `schemas.rs` and `params.rs` Svix's bodies and
//! parameters, and [`complete`] adds to each operation its tokens, the
//! errors every Svix operation may answer, and the idempotency key of a
//! POST. Served at `GET /api/v1/openapi.json` and printed by
//! `hookgate openapi --svix`.

pub(super) mod bodies;
pub(super) mod params;
pub(super) mod schemas;

use std::sync::OnceLock;

use axum::http::header::CONTENT_TYPE;
use axum::response::IntoResponse;
use utoipa::OpenApi;
use utoipa::openapi::path::Operation;
use utoipa::openapi::schema::Schema;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{ContentBuilder, OpenApi as Document, Ref, RefOr, Required, ResponseBuilder};

use crate::api::openapi::{DocumentShape, idempotency_key};
use schemas::{HttpErrorOut, HttpValidationError};

/// Where the face is mounted; the handlers' paths are below it.
pub(super) const PREFIX: &str = "/api/v1";

/// The document's fixed parts; the paths come from the face's router.
#[derive(OpenApi)]
#[openapi(
    info(
        title = "hookgate's Svix-compatible API",
        description = "Svix's API under `/api/v1`, translated onto hookgate's own model (API v1, \
`/v1/openapi.json`), so the official Svix SDKs drive hookgate unchanged. An application is a \
tenant, a message an event, an attempt an attempt. Errors are `{\"code\", \"detail\"}`; a refused \
field is a 422 `HTTPValidationError` naming it. What hookgate cannot honour is refused by name, \
never dropped (docs/svix.md).",
        license(name = "Apache-2.0", identifier = "Apache-2.0"),
    ),
    servers((url = "/", description = "The gateway itself")),
    components(schemas(HttpErrorOut, HttpValidationError, params::StatusCodeClass)),
    tags(
        (name = "Health"),
        (name = "Application", description = "An application is a hookgate tenant"),
        (name = "Endpoint", description = "Where an application's messages go"),
        (name = "Message", description = "A message is a hookgate event"),
        (name = "Message Attempt", description = "Attempts to send messages to endpoints"),
        (name = "Event Type", description = "The install's event-type catalog"),
        (name = "Authentication", description = "Portal sessions for an application's customers"),
    )
)]
struct SvixDoc;

/// The whole document, as the gateway serves it.
pub(crate) fn document() -> Document {
    let (_, mut routed) = super::routes().split_for_parts();
    routed.paths.paths = std::mem::take(&mut routed.paths.paths)
        .into_iter()
        .map(|(path, item)| (format!("{PREFIX}{path}"), item))
        .collect();
    let mut doc = SvixDoc::openapi();
    doc.merge(routed);
    complete(&mut doc);
    doc
}

/// The document as pretty JSON with a final newline, as served and committed.
pub fn document_json() -> String {
    crate::api::openapi::pretty(&document())
}

/// This document, in JSON; public.
#[utoipa::path(get, path = "/openapi.json", tag = "Health", operation_id = "get_svix_openapi",
    responses((status = 200, description = "The OpenAPI 3.1 document of this face",
        content_type = "application/json", body = DocumentShape)))]
pub(super) async fn serve() -> impl IntoResponse {
    static TEXT: OnceLock<String> = OnceLock::new();
    let text = TEXT.get_or_init(document_json);
    ([(CONTENT_TYPE, "application/json")], text.as_str())
}

/// The tokens a caller may hold, by scheme name.
const TOKENS: [(&str, &str); 3] = [
    (
        "organisation_token",
        "The operator's admin token, Svix's organisation token: every application.",
    ),
    (
        "application_key",
        "A tenant's API key: its own application only; another's is 404.",
    ),
    (
        "portal_token",
        "An `hgp_` portal session from app-portal-access: its application, within its \
         capabilities.",
    ),
];

/// Adds the security schemes, and to every operation its tokens, errors and,
/// on a POST, the idempotency key.
fn complete(doc: &mut Document) {
    let components = doc.components.get_or_insert_with(Default::default);
    // A body whose fields are all optional may be left out: it reads as `{}`.
    let optional: Vec<String> = components
        .schemas
        .iter()
        .filter(|(_, s)| match s {
            RefOr::T(Schema::Object(o)) => o.required.is_empty(),
            _ => false,
        })
        .map(|(name, _)| format!("#/components/schemas/{name}"))
        .collect();
    for (name, what) in TOKENS {
        let scheme = HttpBuilder::new()
            .scheme(HttpAuthScheme::Bearer)
            .description(Some(what))
            .build();
        components.add_security_scheme(name, SecurityScheme::Http(scheme));
    }
    for (path, item) in &mut doc.paths.paths {
        let public = path.ends_with("/health") || path.ends_with("/openapi.json");
        for (operation, post) in [
            (&mut item.get, false),
            (&mut item.head, false),
            (&mut item.put, false),
            (&mut item.post, true),
            (&mut item.delete, false),
            (&mut item.patch, false),
        ] {
            if let Some(operation) = operation {
                describe(operation, public, post);
                if let Some(RefOr::T(body)) = &mut operation.request_body {
                    let named = body.content.values().any(|c| {
                        matches!(c, RefOr::T(c) if matches!(&c.schema, Some(RefOr::Ref(r)) if optional.contains(&r.ref_location)))
                    });
                    if named {
                        body.required = Some(Required::False);
                    }
                }
            }
        }
    }
}

/// Every status a Svix operation may answer besides its own, and what it
/// means; one body for all but 422.
const ERRORS: &[(u16, &str)] = &[
    (400, "A request hookgate cannot read (a bad iterator)"),
    (401, "No token, or one that is not valid"),
    (403, "The token may not do this"),
    (
        404,
        "The application, or what the path names in it, is not there",
    ),
    (
        409,
        "A conflict: a uid or eventId taken, a delivery still pending",
    ),
    (413, "The body is larger than the gateway takes"),
    (422, "A field or parameter refused, named in `loc`"),
    (429, "Too many requests at once"),
    (503, "The store is unavailable; retry"),
];

fn describe(operation: &mut Operation, public: bool, post: bool) {
    if post {
        let params = operation.parameters.get_or_insert_with(Vec::new);
        params.push(idempotency_key().into());
    }
    if public {
        return;
    }
    operation.security = Some(
        TOKENS
            .iter()
            .map(|(name, _)| SecurityRequirement::new(*name, Vec::<String>::new()))
            .collect(),
    );
    for (status, what) in ERRORS {
        let key = status.to_string();
        if operation.responses.responses.contains_key(&key) {
            continue;
        }
        let schema = if *status == 422 {
            <HttpValidationError as utoipa::ToSchema>::name()
        } else {
            <HttpErrorOut as utoipa::ToSchema>::name()
        };
        let body = ContentBuilder::new()
            .schema(Some(Ref::from_schema_name(schema)))
            .build();
        let response = ResponseBuilder::new()
            .description(*what)
            .content("application/json", body)
            .build();
        operation.responses.responses.insert(key, response.into());
    }
}

#[cfg(test)]
mod tests;
