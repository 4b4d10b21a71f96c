//! The path parameters, described once for every route that has them.

use serde::Deserialize;
use utoipa::IntoParams;

/// `/v1/tenants/{t}/...`
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(
    dead_code,
    reason = "described only; handlers extract the path themselves"
)]
pub(in crate::api) struct TenantPath {
    /// The tenant's id or uid.
    #[param(example = "acme")]
    t: String,
}

/// One of a tenant's endpoints, events or deliveries.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(
    dead_code,
    reason = "described only; handlers extract the path themselves"
)]
pub(in crate::api) struct ItemPath {
    /// The tenant's id or uid.
    t: String,
    /// The item's id: `ep_...` (or the endpoint's uid) for an endpoint,
    /// `evt_...` (or the event's uid) for an event, `dlv_...` for a delivery,
    /// `atm_...` for an attempt.
    id: String,
}

/// A plugin of a tenant.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(
    dead_code,
    reason = "described only; handlers extract the path themselves"
)]
pub(in crate::api) struct PluginPath {
    /// The tenant's id or uid.
    t: String,
    /// The plugin's name: the tenant-id alphabet, 1 to 63 characters.
    #[param(pattern = r"^[a-z0-9][a-z0-9_-]{0,62}$")]
    name: String,
}

/// One task, by its id alone (the admin's view).
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(
    dead_code,
    reason = "described only; handlers extract the path themselves"
)]
pub(in crate::api) struct TaskPath {
    /// The task's id: `task_...`.
    id: String,
}

/// One type of the event-type catalog.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(
    dead_code,
    reason = "described only; handlers extract the path themselves"
)]
pub(in crate::api) struct EventTypePath {
    /// The type's name: letters, digits and `. _ - :`.
    #[param(pattern = r"^[A-Za-z0-9._:-]+$", example = "order.paid")]
    name: String,
}

/// One of the admin's operator endpoints.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(
    dead_code,
    reason = "described only; handlers extract the path themselves"
)]
pub(in crate::api) struct OperatorEndpointPath {
    /// The operator endpoint's id: `ep_...`.
    id: String,
}
