//! Operator events: what happened to a tenant's endpoints and deliveries (an
//! endpoint created, changed, deleted or disabled; a delivery failing, exhausted
//! or recovered; a breaker opened or closed; a plugin disabled; an alert fired or
//! resolved), told to the operator's and the tenant's own operator endpoints.
//!
//! Where a change commits, its maker calls [`OperatorEvents::emit`], which never
//! waits; [`fan_out`] then ingests each event once for the admin's operator
//! endpoints (namespace `_hookgate`) and once for the tenant's (`_ops.{tenant}`),
//! so the normal engine signs, retries, breaks and dead-letters them. Endpoints
//! in those namespaces are not tenant endpoints: nothing they do makes an
//! operator event, so an operator endpoint never hears about itself.

pub(crate) mod fan_out;
mod kinds;

pub(crate) use fan_out::OperatorIngest;
pub(crate) use kinds::OperatorEventType;

use serde_json::{Value, json};
use tokio::sync::mpsc;

use crate::ids::TenantId;
use crate::store::{DeliveryRecord, EndpointRecord};

/// The namespace of the admin's operator endpoints (and `alerts.url`'s); tenant
/// ids cannot start with `_`, so no tenant can take it.
pub(crate) const OPERATOR_TENANT: &str = "_hookgate";

/// What the namespace of tenant `t`'s operator endpoints is called.
pub(crate) fn tenant_namespace(t: &TenantId) -> TenantId {
    TenantId::from(format!("_ops.{}", t.as_str()))
}

/// Whether `tenant` is one of hookgate's own namespaces rather than a tenant:
/// what happens there makes no operator events and feeds no alert rule.
pub(crate) fn is_internal(tenant: &str) -> bool {
    tenant.starts_with('_')
}

/// Events waiting for the fan-out at most; past this, new ones are dropped
/// and said in the log (a flood of deaths must not grow memory without end).
const QUEUE: usize = 10_000;

/// A failed attempt with this number makes `delivery.failing`, as Svix sends
/// `message.attempt.failing` on the fourth failure; a success after it makes
/// `delivery.recovered`.
pub(crate) const FAILING_AFTER: u32 = 4;

/// One operator event, ready for the fan-out.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct OperatorEvent {
    pub kind: OperatorEventType,
    /// The tenant it is about; `None` for the gateway as a whole.
    pub tenant_id: Option<TenantId>,
    /// The body's `data`.
    pub data: Value,
    pub at_ms: u64,
    /// Where several gateways may see the same happening, the key they all
    /// compute for it: the store's idempotency keeps one.
    pub dedupe: Option<String>,
}

impl OperatorEvent {
    /// The body delivered: `{type, timestamp, data}`.
    pub(crate) fn body(&self) -> Value {
        json!({
            "type": self.kind.as_str(),
            "timestamp": crate::clock::rfc3339_ms(self.at_ms),
            "data": self.data,
        })
    }

    /// `endpoint.created`, `endpoint.updated` or `endpoint.deleted` for `ep`.
    pub(crate) fn endpoint(kind: OperatorEventType, ep: &EndpointRecord, at_ms: u64) -> Self {
        Self {
            kind,
            tenant_id: Some(ep.tenant_id.clone()),
            data: endpoint_data(ep),
            at_ms,
            dedupe: None,
        }
    }

    /// `endpoint.disabled` for `ep` as stored disabled. Every gateway that sees
    /// the same disabling names it by its time, so it is told once.
    pub(crate) fn endpoint_disabled(ep: &EndpointRecord, at_ms: u64) -> Self {
        let since = ep.disabled_at_ms.unwrap_or(at_ms);
        let mut data = endpoint_data(ep);
        data["disabled_at"] = json!(crate::clock::rfc3339_ms(since));
        Self {
            kind: OperatorEventType::EndpointDisabled,
            tenant_id: Some(ep.tenant_id.clone()),
            data,
            at_ms,
            dedupe: Some(format!("endpoint.disabled:{}:{since}", ep.id.as_str())),
        }
    }

    /// What the attempt that left `d` as it is tells: `delivery.exhausted` when
    /// it died, `delivery.failing` at the [`FAILING_AFTER`]th failure,
    /// `delivery.recovered` when delivered after that; else nothing.
    pub(crate) fn after_attempt(d: &DeliveryRecord, delivered: bool) -> Option<Self> {
        use crate::store::DeliveryState;
        let kind = match d.state {
            DeliveryState::Dead => OperatorEventType::DeliveryExhausted,
            DeliveryState::Succeeded if delivered && d.attempts > FAILING_AFTER => {
                OperatorEventType::DeliveryRecovered
            }
            DeliveryState::Pending if d.attempts == FAILING_AFTER => {
                OperatorEventType::DeliveryFailing
            }
            _ => return None,
        };
        let data = json!({
            "tenant_id": d.tenant_id,
            "endpoint_id": d.endpoint_id,
            "delivery_id": d.id,
            "event_id": d.event_id,
            "event_type": d.event_type,
            "attempts": d.attempts,
            "last_status": d.last_status,
            "last_error": d.last_error,
            "dead_reason": d.dead_reason,
            "next_attempt_at": d.next_attempt_at_ms.map(crate::clock::rfc3339_ms),
        });
        Some(Self {
            kind,
            tenant_id: Some(d.tenant_id.clone()),
            data,
            at_ms: d.updated_at_ms,
            dedupe: Some(format!("{}:{}:{}", kind.as_str(), d.id.as_str(), d.series)),
        })
    }

    /// `breaker.opened` or `breaker.closed` for an endpoint.
    pub(crate) fn breaker(tenant: &TenantId, endpoint: &str, open: bool, at_ms: u64) -> Self {
        Self {
            kind: if open {
                OperatorEventType::BreakerOpened
            } else {
                OperatorEventType::BreakerClosed
            },
            tenant_id: Some(tenant.clone()),
            data: json!({"tenant_id": tenant, "endpoint_id": endpoint}),
            at_ms,
            dedupe: None,
        }
    }

    /// `plugin.disabled`: a version of a tenant's plugin disabled after
    /// repeated failures; the built-in policy decides for it.
    pub(crate) fn plugin_disabled(tenant: &TenantId, name: &str, version: u32, at_ms: u64) -> Self {
        Self {
            kind: OperatorEventType::PluginDisabled,
            tenant_id: Some(tenant.clone()),
            data: json!({"tenant_id": tenant, "plugin": name, "version": version}),
            at_ms,
            dedupe: None,
        }
    }
}

/// What an endpoint event tells of the endpoint: never its secrets or headers.
fn endpoint_data(ep: &EndpointRecord) -> Value {
    json!({
        "tenant_id": ep.tenant_id,
        "endpoint_id": ep.id,
        "uid": ep.uid,
        "url": ep.url,
        "description": ep.description,
        "event_types": ep.event_types,
        "disabled": ep.disabled,
        "disabled_reason": ep.disabled_reason,
    })
}

/// Where operator events are told; cheap to clone, and it never waits.
#[derive(Clone)]
pub(crate) struct OperatorEvents {
    out: mpsc::Sender<OperatorEvent>,
}

impl OperatorEvents {
    /// A handle and the receiver the fan-out reads.
    pub(crate) fn channel() -> (Self, mpsc::Receiver<OperatorEvent>) {
        let (out, rx) = mpsc::channel(QUEUE);
        (Self { out }, rx)
    }

    /// Tells `event`, unless it is about one of hookgate's own namespaces.
    pub(crate) fn emit(&self, event: OperatorEvent) {
        if event
            .tenant_id
            .as_ref()
            .is_some_and(|t| is_internal(t.as_str()))
        {
            return;
        }
        if let Err(mpsc::error::TrySendError::Full(e)) = self.out.try_send(event) {
            tracing::warn!(
                event_type = e.kind.as_str(),
                "operator event dropped: {QUEUE} are waiting to be queued"
            );
        }
    }
}

#[cfg(test)]
mod tests;
