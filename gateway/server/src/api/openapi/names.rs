//! Names the API answers as plain strings, described as the enums they are.
//! Only described, never built: the views keep the strings they always wrote.

use serde::Serialize;
use utoipa::ToSchema;

/// A delivery's state as the API shows it: `in_flight` is a pending delivery
/// with an attempt under way.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code, reason = "described only")]
pub(in crate::api) enum DeliveryStateName {
    Pending,
    InFlight,
    Succeeded,
    Dead,
    /// The endpoint's transform skipped it: nothing was sent.
    Skipped,
}

/// Where a plugin comes from: uploaded over the API, or preloaded by the config.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code, reason = "described only")]
pub(in crate::api) enum PluginSourceName {
    Upload,
    Preload,
}

/// The states bulk replay takes deliveries from.
#[derive(Serialize, ToSchema)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code, reason = "described only")]
pub(in crate::api) enum ReplayableState {
    Dead,
    Succeeded,
}
