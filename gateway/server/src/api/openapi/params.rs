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
    /// The tenant's id.
    #[param(example = "acme")]
    t: String,
}

/// An endpoint of a tenant.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(
    dead_code,
    reason = "described only; handlers extract the path themselves"
)]
pub(in crate::api) struct EndpointPath {
    /// The tenant's id.
    t: String,
    /// The endpoint's id (`ep_...`).
    id: String,
}

/// An event of a tenant.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(
    dead_code,
    reason = "described only; handlers extract the path themselves"
)]
pub(in crate::api) struct EventPath {
    /// The tenant's id.
    t: String,
    /// The event's id (`evt_...`).
    id: String,
}

/// A delivery of a tenant.
#[derive(Deserialize, IntoParams)]
#[into_params(parameter_in = Path)]
#[allow(
    dead_code,
    reason = "described only; handlers extract the path themselves"
)]
pub(in crate::api) struct DeliveryPath {
    /// The tenant's id.
    t: String,
    /// The delivery's id (`dlv_...`).
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
    /// The tenant's id.
    t: String,
    /// The plugin's name: the tenant-id alphabet, 1 to 63 characters.
    #[param(pattern = r"^[a-z0-9][a-z0-9_-]{0,62}$")]
    name: String,
}
