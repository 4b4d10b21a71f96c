//! Who may call each operation and which errors it answers: one table, kept
//! beside the handlers' annotations and checked against them by a test, so no
//! operation goes undescribed.
//!
//! Every error answer has the same body ([`ErrorBody`]); one response per status
//! lists the codes that come with it on that operation.

use std::collections::BTreeMap;

use utoipa::openapi::path::Operation;
use utoipa::openapi::security::{HttpAuthScheme, HttpBuilder, SecurityRequirement, SecurityScheme};
use utoipa::openapi::{ContentBuilder, OpenApi, Ref, ResponseBuilder};

use crate::api::error::{ErrorBody, ErrorCode};

use ErrorCode as E;

/// Who may call an operation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Access {
    /// Anyone: health, metrics, this document.
    Public,
    /// Any valid token: the admin token or a tenant key.
    Caller,
    /// The admin token, or the key of the tenant in the path.
    Tenant,
    /// The admin token only.
    Admin,
}

/// One operation's row.
pub(super) struct OperationErrors {
    pub(super) id: &'static str,
    pub(super) access: Access,
    /// Errors besides those of its access and of the connection limit.
    pub(super) errors: &'static [ErrorCode],
}

/// Errors of reading a JSON body.
const BODY: &[ErrorCode] = &[
    E::InvalidJson,
    E::InvalidField,
    E::RequestTimeout,
    E::PayloadTooLarge,
    E::RateLimited,
];
/// Errors of a list's query string.
const QUERY: &[ErrorCode] = &[E::InvalidField];

const fn op(id: &'static str, access: Access, errors: &'static [ErrorCode]) -> OperationErrors {
    OperationErrors { id, access, errors }
}

/// Every operation of API v1.
pub(super) const OPERATIONS: &[OperationErrors] = &[
    op("healthz", Access::Public, &[]),
    op("metrics", Access::Public, &[]),
    op("get_openapi", Access::Public, &[]),
    op("get_stats", Access::Admin, &[]),
    op("get_tenant_stats", Access::Tenant, &[]),
    op(
        "get_stats_history",
        Access::Admin,
        &[E::InvalidField, E::ValidationFailed],
    ),
    op(
        "get_tenant_stats_history",
        Access::Tenant,
        &[E::InvalidField, E::ValidationFailed],
    ),
    op(
        "simulate_policy",
        Access::Caller,
        &[
            E::ValidationFailed,
            E::SimulationTooLarge,
            E::Busy,
            E::InternalError,
        ],
    ),
    op(
        "create_tenant",
        Access::Admin,
        &[E::ValidationFailed, E::Conflict],
    ),
    op("list_tenants", Access::Admin, QUERY),
    op("get_tenant", Access::Tenant, &[]),
    op(
        "update_tenant",
        Access::Admin,
        &[E::ValidationFailed, E::Conflict, E::NotFound],
    ),
    op("delete_tenant", Access::Admin, &[E::NotFound]),
    op("rotate_tenant_key", Access::Tenant, &[]),
    op("list_tasks", Access::Tenant, QUERY),
    op("get_task", Access::Tenant, &[]),
    op("list_all_tasks", Access::Admin, QUERY),
    op("get_any_task", Access::Admin, &[E::NotFound]),
    op(
        "create_endpoint",
        Access::Tenant,
        &[E::ValidationFailed, E::UrlBlocked],
    ),
    op("list_endpoints", Access::Tenant, QUERY),
    op("get_endpoint", Access::Tenant, &[]),
    op(
        "update_endpoint",
        Access::Tenant,
        &[E::ValidationFailed, E::UrlBlocked, E::Conflict],
    ),
    op(
        "put_endpoint",
        Access::Tenant,
        &[E::ValidationFailed, E::UrlBlocked, E::Conflict],
    ),
    op("delete_endpoint", Access::Tenant, &[]),
    op("reset_endpoint_breaker", Access::Tenant, &[]),
    op("recover_endpoint", Access::Tenant, &[E::ValidationFailed]),
    op("replay_missing", Access::Tenant, &[E::ValidationFailed]),
    op(
        "get_endpoint_stats",
        Access::Tenant,
        &[E::InvalidField, E::ValidationFailed],
    ),
    op("get_endpoint_secrets", Access::Tenant, &[]),
    op(
        "send_endpoint_example",
        Access::Tenant,
        &[E::ValidationFailed, E::Conflict, E::InsufficientStorage],
    ),
    op(
        "create_event_type",
        Access::Admin,
        &[E::ValidationFailed, E::Conflict],
    ),
    op("list_event_types", Access::Caller, QUERY),
    op("import_event_types", Access::Admin, &[E::ValidationFailed]),
    op("get_event_type", Access::Caller, &[E::NotFound]),
    op(
        "update_event_type",
        Access::Admin,
        &[E::ValidationFailed, E::Conflict, E::NotFound],
    ),
    op("delete_event_type", Access::Admin, &[E::NotFound]),
    op(
        "create_operator_endpoint",
        Access::Admin,
        &[E::ValidationFailed, E::UrlBlocked],
    ),
    op("list_operator_endpoints", Access::Admin, &[]),
    op("get_operator_endpoint", Access::Admin, &[E::NotFound]),
    op(
        "update_operator_endpoint",
        Access::Admin,
        &[E::ValidationFailed, E::UrlBlocked, E::Conflict, E::NotFound],
    ),
    op("delete_operator_endpoint", Access::Admin, &[E::NotFound]),
    op(
        "create_tenant_operator_endpoint",
        Access::Tenant,
        &[E::ValidationFailed, E::UrlBlocked],
    ),
    op("list_tenant_operator_endpoints", Access::Tenant, &[]),
    op("get_tenant_operator_endpoint", Access::Tenant, &[]),
    op(
        "update_tenant_operator_endpoint",
        Access::Tenant,
        &[E::ValidationFailed, E::UrlBlocked, E::Conflict],
    ),
    op("delete_tenant_operator_endpoint", Access::Tenant, &[]),
    op(
        "create_portal_session",
        Access::Tenant,
        &[E::ValidationFailed],
    ),
    op("revoke_portal_sessions", Access::Tenant, &[]),
    op("get_portal_session", Access::Caller, &[E::NotFound]),
    op("end_portal_session", Access::Caller, &[E::NotFound]),
    op(
        "rotate_endpoint_secret",
        Access::Tenant,
        &[E::ValidationFailed, E::TooManySecrets, E::Conflict],
    ),
    op(
        "ingest_event",
        Access::Tenant,
        &[
            E::ValidationFailed,
            E::IdempotencyKeyReused,
            E::Conflict,
            E::InsufficientStorage,
        ],
    ),
    op("get_event", Access::Tenant, &[]),
    op("expunge_event_payload", Access::Tenant, &[E::Conflict]),
    op("list_events", Access::Tenant, QUERY),
    op("list_deliveries", Access::Tenant, QUERY),
    op("get_delivery", Access::Tenant, &[]),
    op("list_attempts", Access::Tenant, QUERY),
    op("get_attempt", Access::Tenant, &[]),
    op("replay_delivery", Access::Tenant, &[E::Conflict]),
    op(
        "replay_dead_deliveries",
        Access::Tenant,
        &[E::ValidationFailed],
    ),
    op("get_tenant_dlq_summary", Access::Tenant, &[]),
    op("get_dlq_summary", Access::Admin, &[]),
    op("get_cluster", Access::Admin, &[]),
    op("list_plugins", Access::Tenant, &[]),
    op(
        "upload_plugin",
        Access::Tenant,
        &[E::ValidationFailed, E::Conflict, E::PluginRejected, E::Busy],
    ),
    op("get_plugin", Access::Tenant, &[]),
    op("delete_plugin", Access::Tenant, &[E::Conflict]),
    op("rollback_plugin", Access::Tenant, &[E::Conflict]),
];

/// The security schemes' names.
const ADMIN_TOKEN: &str = "admin_token";
const TENANT_KEY: &str = "tenant_key";

/// Every code `id` may answer, in status order; empty for an unknown operation.
/// An operation with a request body may also fail to read it; a POST or PUT
/// (`keyed`) may be refused its `Idempotency-Key`.
pub(super) fn codes_of(id: &str, has_body: bool, keyed: bool) -> Vec<ErrorCode> {
    let Some(row) = OPERATIONS.iter().find(|row| row.id == id) else {
        return Vec::new();
    };
    let mut codes = vec![E::TooManyConnections];
    codes.extend(match row.access {
        Access::Public => &[][..],
        Access::Caller => &[E::Unauthorized, E::StoreUnavailable][..],
        Access::Tenant => &[E::Unauthorized, E::NotFound, E::StoreUnavailable][..],
        Access::Admin => &[E::Unauthorized, E::Forbidden, E::StoreUnavailable][..],
    });
    if has_body {
        codes.extend(BODY);
    }
    codes.extend(row.errors);
    if keyed {
        codes.extend([E::InvalidField, E::IdempotencyKeyReused, E::Conflict]);
    }
    codes.sort_by_key(|c| ErrorCode::ALL.iter().position(|a| a == c));
    codes.dedup();
    codes
}

/// Adds the security schemes, and to every operation its security and errors.
pub(super) fn complete(doc: &mut OpenApi) {
    let components = doc.components.get_or_insert_with(Default::default);
    for (name, what) in [
        (
            ADMIN_TOKEN,
            "The operator's admin token: every route, for any tenant.",
        ),
        (
            TENANT_KEY,
            "A tenant's API key: that tenant's routes only; another tenant's are 404.",
        ),
    ] {
        let scheme = HttpBuilder::new()
            .scheme(HttpAuthScheme::Bearer)
            .description(Some(what))
            .build();
        components.add_security_scheme(name, SecurityScheme::Http(scheme));
    }
    for item in doc.paths.paths.values_mut() {
        for (operation, keyed) in [
            (&mut item.get, false),
            (&mut item.put, true),
            (&mut item.post, true),
            (&mut item.delete, false),
            (&mut item.patch, false),
        ] {
            if let Some(operation) = operation {
                describe(operation, keyed);
            }
        }
    }
}

/// The `Idempotency-Key` header of every POST and PUT.
pub(in crate::api) fn idempotency_key() -> utoipa::openapi::path::Parameter {
    use utoipa::openapi::path::{ParameterBuilder, ParameterIn};
    use utoipa::openapi::schema::{ObjectBuilder, Type};
    let schema = ObjectBuilder::new()
        .schema_type(Type::String)
        .min_length(Some(1))
        .max_length(Some(255))
        .pattern(Some("^[!-~]+$"));
    ParameterBuilder::new()
        .name("Idempotency-Key")
        .parameter_in(ParameterIn::Header)
        .description(Some(
            "Makes the call idempotent for 24 hours: a repeat of the same request (the same \
             JSON meaning) answers the first answer with `Idempotent-Replayed: true`, secrets \
             left out; another request with the key gets 422 `idempotency_key_reused`.",
        ))
        .schema(Some(schema))
        .build()
}

fn describe(operation: &mut Operation, keyed: bool) {
    if keyed {
        let params = operation.parameters.get_or_insert_with(Vec::new);
        let named = |p: &utoipa::openapi::RefOr<utoipa::openapi::path::Parameter>| match p {
            utoipa::openapi::RefOr::T(p) => p.name.eq_ignore_ascii_case("idempotency-key"),
            utoipa::openapi::RefOr::Ref(_) => false,
        };
        if !params.iter().any(named) {
            params.push(idempotency_key().into());
        }
    }
    let id = operation.operation_id.clone().unwrap_or_default();
    let access = OPERATIONS
        .iter()
        .find(|row| row.id == id)
        .map_or(Access::Public, |row| row.access);
    let admin = || SecurityRequirement::new(ADMIN_TOKEN, Vec::<String>::new());
    let tenant = || SecurityRequirement::new(TENANT_KEY, Vec::<String>::new());
    operation.security = match access {
        Access::Public => None,
        Access::Admin => Some(vec![admin()]),
        Access::Caller | Access::Tenant => Some(vec![admin(), tenant()]),
    };
    let mut by_status: BTreeMap<u16, Vec<ErrorCode>> = BTreeMap::new();
    for code in codes_of(&id, operation.request_body.is_some(), keyed) {
        by_status
            .entry(code.status().as_u16())
            .or_default()
            .push(code);
    }
    for (status, codes) in by_status {
        let key = status.to_string();
        if operation.responses.responses.contains_key(&key) {
            // The handler documents its own answer (healthz's 503).
            continue;
        }
        let names: Vec<String> = codes.iter().map(|c| format!("`{}`", c.as_str())).collect();
        let body = ContentBuilder::new()
            .schema(Some(Ref::from_schema_name(
                <ErrorBody as utoipa::ToSchema>::name(),
            )))
            .build();
        let response = ResponseBuilder::new()
            .description(format!("An error: {}", names.join(", ")))
            .content("application/json", body)
            .build();
        operation.responses.responses.insert(key, response.into());
    }
}
