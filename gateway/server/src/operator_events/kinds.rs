//! The operator event types, by name, and which names an operator endpoint may
//! subscribe to.

use crate::event_type;

/// One operator event type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OperatorEventType {
    EndpointCreated,
    EndpointUpdated,
    EndpointDeleted,
    EndpointDisabled,
    DeliveryFailing,
    DeliveryExhausted,
    DeliveryRecovered,
    BreakerOpened,
    BreakerClosed,
    PluginDisabled,
    AlertFired,
    AlertResolved,
}

impl OperatorEventType {
    /// Every type, in the order the docs list them.
    pub(crate) const ALL: [Self; 12] = [
        Self::EndpointCreated,
        Self::EndpointUpdated,
        Self::EndpointDeleted,
        Self::EndpointDisabled,
        Self::DeliveryFailing,
        Self::DeliveryExhausted,
        Self::DeliveryRecovered,
        Self::BreakerOpened,
        Self::BreakerClosed,
        Self::PluginDisabled,
        Self::AlertFired,
        Self::AlertResolved,
    ];

    /// Its name, the delivered event's type.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::EndpointCreated => "endpoint.created",
            Self::EndpointUpdated => "endpoint.updated",
            Self::EndpointDeleted => "endpoint.deleted",
            Self::EndpointDisabled => "endpoint.disabled",
            Self::DeliveryFailing => "delivery.failing",
            Self::DeliveryExhausted => "delivery.exhausted",
            Self::DeliveryRecovered => "delivery.recovered",
            Self::BreakerOpened => "breaker.opened",
            Self::BreakerClosed => "breaker.closed",
            Self::PluginDisabled => "plugin.disabled",
            Self::AlertFired => "alert.fired",
            Self::AlertResolved => "alert.resolved",
        }
    }

    /// Whether `name`, a type or a pattern (`endpoint.*`, `*`), names at least
    /// one operator event type: what an operator endpoint may subscribe to.
    pub(crate) fn subscribable(name: &str) -> bool {
        Self::ALL
            .iter()
            .any(|k| event_type::matches(name, k.as_str()))
    }
}
