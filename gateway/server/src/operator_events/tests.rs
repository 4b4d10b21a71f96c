//! The events' bodies and keys, which names may be subscribed to, and what the
//! handle drops.

use serde_json::json;

use super::*;
use crate::ids::{EndpointId, EventId};
use crate::store::DeliveryState;

fn endpoint_record() -> EndpointRecord {
    crate::store::testing::endpoint("acme", "ep_1")
}

fn delivery(state: DeliveryState, attempts: u32) -> DeliveryRecord {
    let event = (
        &TenantId::from("acme"),
        &EventId::from("evt_1"),
        "order.paid",
    );
    let mut d = DeliveryRecord::first(event, &EndpointId::from("ep_1"), 1_000, 1_000);
    (d.state, d.attempts, d.updated_at_ms) = (state, attempts, 2_000);
    d
}

#[test]
fn a_body_is_type_timestamp_and_data() {
    let ep = endpoint_record();
    let ev = OperatorEvent::endpoint(OperatorEventType::EndpointCreated, &ep, 1_700_000_000_000);
    let body = ev.body();
    assert_eq!(body["type"], "endpoint.created");
    assert_eq!(body["timestamp"], "2023-11-14T22:13:20.000Z");
    assert_eq!(body["data"]["endpoint_id"], json!(ep.id));
    assert_eq!(body["data"]["tenant_id"], json!(ep.tenant_id));
    // Secrets and headers are the endpoint's; operators are told neither.
    let text = body.to_string();
    assert!(
        !text.contains("whsec_") && !text.contains("secrets"),
        "{text}"
    );
}

#[test]
fn an_attempt_tells_failing_at_the_fourth_failure_then_recovered_or_exhausted() {
    let told = |state, attempts, delivered| {
        OperatorEvent::after_attempt(&delivery(state, attempts), delivered).map(|e| e.kind)
    };
    assert_eq!(told(DeliveryState::Pending, 3, false), None);
    assert_eq!(
        told(DeliveryState::Pending, FAILING_AFTER, false),
        Some(OperatorEventType::DeliveryFailing)
    );
    assert_eq!(told(DeliveryState::Pending, FAILING_AFTER + 1, false), None);
    assert_eq!(told(DeliveryState::Succeeded, 2, true), None);
    assert_eq!(
        told(DeliveryState::Succeeded, FAILING_AFTER + 1, true),
        Some(OperatorEventType::DeliveryRecovered)
    );
    assert_eq!(
        told(DeliveryState::Dead, 1, false),
        Some(OperatorEventType::DeliveryExhausted)
    );
    let d = delivery(DeliveryState::Dead, 1);
    let ev = OperatorEvent::after_attempt(&d, false).unwrap();
    assert_eq!(
        ev.dedupe.as_deref(),
        Some(format!("delivery.exhausted:{}:{}", d.id.as_str(), d.series).as_str())
    );
}

#[test]
fn a_disabling_is_named_by_its_first_time() {
    let mut ep = endpoint_record();
    (ep.disabled, ep.disabled_at_ms) = (true, Some(5_000));
    let seen_here = OperatorEvent::endpoint_disabled(&ep, 6_000);
    let seen_there = OperatorEvent::endpoint_disabled(&ep, 7_000);
    assert_eq!(seen_here.dedupe, seen_there.dedupe);
    assert_eq!(seen_here.data["disabled_at"], "1970-01-01T00:00:05.000Z");
}

#[test]
fn subscribable_names_are_operator_types_or_patterns_over_them() {
    for ok in [
        "*",
        "endpoint.*",
        "delivery.exhausted",
        "alert.*",
        "plugin.disabled",
    ] {
        assert!(OperatorEventType::subscribable(ok), "{ok}");
    }
    for bad in ["order.paid", "endpoint.exploded", "deliveries.*"] {
        assert!(!OperatorEventType::subscribable(bad), "{bad}");
    }
    let names: std::collections::HashSet<_> =
        OperatorEventType::ALL.iter().map(|k| k.as_str()).collect();
    assert_eq!(names.len(), OperatorEventType::ALL.len());
}

#[tokio::test]
async fn events_about_internal_namespaces_are_not_told() {
    let (events, mut rx) = OperatorEvents::channel();
    let t = TenantId::from("acme");
    events.emit(OperatorEvent::breaker(
        &TenantId::from(OPERATOR_TENANT),
        "ep_1",
        true,
        1,
    ));
    events.emit(OperatorEvent::breaker(
        &tenant_namespace(&t),
        "ep_2",
        true,
        1,
    ));
    events.emit(OperatorEvent::breaker(&t, "ep_3", true, 1));
    let got = rx.recv().await.unwrap();
    assert_eq!(got.data["endpoint_id"], "ep_3");
    assert!(rx.try_recv().is_err(), "only the tenant's event is told");
    assert!(is_internal(tenant_namespace(&t).as_str()));
}
