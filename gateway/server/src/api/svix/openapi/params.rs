//! The Svix face's path and query parameters as its document describes them.
//! The handlers read them with `Path` and `Pairs` (Svix repeats or
//! comma-joins list parameters, which a serde struct would refuse), so these
//! are described only.

#![allow(
    dead_code,
    reason = "described only; the handlers read the path and query themselves"
)]

use serde::Deserialize;
use utoipa::IntoParams;

/// `/app/{app_id}`.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub(crate) struct AppPath {
    /// The application's id or uid.
    #[param(pattern = r"^[^\u0000-\u001F\u007F-\u009F]+$")]
    app_id: String,
}

/// `/app/{app_id}/endpoint/{endpoint_id}`.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub(crate) struct EndpointPath {
    /// The application's id or uid.
    #[param(pattern = r"^[^\u0000-\u001F\u007F-\u009F]+$")]
    app_id: String,
    /// The endpoint's id or uid.
    #[param(pattern = r"^[^\u0000-\u001F\u007F-\u009F]+$")]
    endpoint_id: String,
}

/// `/app/{app_id}/msg/{msg_id}`.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub(crate) struct MessagePath {
    /// The application's id or uid.
    #[param(pattern = r"^[^\u0000-\u001F\u007F-\u009F]+$")]
    app_id: String,
    /// The message's id or `eventId`.
    #[param(pattern = r"^[^\u0000-\u001F\u007F-\u009F]+$")]
    msg_id: String,
}

/// `/app/{app_id}/msg/{msg_id}/attempt/{attempt_id}`.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub(crate) struct AttemptPath {
    /// The application's id or uid.
    #[param(pattern = r"^[^\u0000-\u001F\u007F-\u009F]+$")]
    app_id: String,
    /// The message's id or `eventId`.
    #[param(pattern = r"^[^\u0000-\u001F\u007F-\u009F]+$")]
    msg_id: String,
    /// The attempt's id (`atm_…`).
    #[param(pattern = r"^[^\u0000-\u001F\u007F-\u009F]+$")]
    attempt_id: String,
}

/// `/app/{app_id}/msg/{msg_id}/endpoint/{endpoint_id}`.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub(crate) struct DestinationPath {
    /// The application's id or uid.
    #[param(pattern = r"^[^\u0000-\u001F\u007F-\u009F]+$")]
    app_id: String,
    /// The message's id or `eventId`.
    #[param(pattern = r"^[^\u0000-\u001F\u007F-\u009F]+$")]
    msg_id: String,
    /// The endpoint's id or uid.
    #[param(pattern = r"^[^\u0000-\u001F\u007F-\u009F]+$")]
    endpoint_id: String,
}

/// `/event-type/{event_type_name}`.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
pub(crate) struct EventTypePath {
    #[param(pattern = r"^[^\u0000-\u001F\u007F-\u009F]+$")]
    event_type_name: String,
}

/// A page of a list. A parameter given empty reads as left out, here and
/// in every query of the face, but a time: an empty one is refused.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct Page {
    /// Items per page, 1 to 250; 50 when left out.
    #[param(minimum = 1, maximum = 250)]
    limit: Option<u32>,
    /// The `iterator` of the page before.
    #[param(pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$")]
    iterator: Option<String>,
}

/// Applications and endpoints are listed newest first only.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct NewestFirst {
    #[param(inline, value_type = Option<String>, pattern = "^(descending)?$")]
    order: Option<String>,
}

/// Event types are listed in name order only.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct NameOrder {
    #[param(inline, value_type = Option<String>, pattern = "^(ascending)?$")]
    order: Option<String>,
}

/// Whether answers carry payloads (and attempts their response); `true`
/// when left out.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct WithContent {
    with_content: Option<bool>,
}

/// `POST /app`: answer the application with this uid when there is one.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct GetIfExists {
    get_if_exists: Option<bool>,
}

/// What a message is: its type (any of), a channel, a tag, and when.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct MessageFilter {
    /// Repeated or comma-joined.
    #[param(explode = true, style = Form)]
    event_types: Option<Vec<String>>,
    #[param(pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$")]
    channel: Option<String>,
    #[param(pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$")]
    tag: Option<String>,
    /// Made before this time.
    #[param(format = DateTime)]
    before: Option<String>,
    /// Made after this time.
    #[param(format = DateTime)]
    after: Option<String>,
}

/// Attempts (or deliveries) by status: 0 success, 1 pending, 2 fail,
/// 3 sending, 4 canceled (none is).
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct StatusFilter {
    #[param(minimum = 0, maximum = 4)]
    status: Option<u8>,
}

/// An attempt list's own filters.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct AttemptFilter {
    /// 0 (no answer), 100, 200, 300, 400 or 500.
    #[param(value_type = Option<StatusCodeClass>)]
    status_code_class: Option<u16>,
    /// Each attempt with its message.
    with_msg: Option<bool>,
}

/// An answer's status class, by its first code: 0 (no answer), 100, 200,
/// 300, 400 or 500.
pub(crate) enum StatusCodeClass {}

impl utoipa::PartialSchema for StatusCodeClass {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, Type};
        ObjectBuilder::new()
            .schema_type(Type::Integer)
            .enum_values(Some([0, 100, 200, 300, 400, 500]))
            .into()
    }
}

impl utoipa::ToSchema for StatusCodeClass {}

/// A message's attempts at one endpoint only.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct AtEndpoint {
    #[param(pattern = r"^[^\u0000-\u001F\u007F-\u009F]*$")]
    endpoint_id: Option<String>,
}

/// The range of an endpoint's stats.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct StatsRange {
    #[param(format = DateTime)]
    since: Option<String>,
    #[param(format = DateTime)]
    until: Option<String>,
}

/// Archived event types are listed only when asked for.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct IncludeArchived {
    include_archived: Option<bool>,
}

/// `DELETE /event-type/{name}` archives; `expunge=true` removes the type.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Query)]
pub(crate) struct Expunge {
    expunge: Option<bool>,
}
