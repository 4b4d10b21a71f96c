//! The delivery and attempt views against the `json!` bodies they replaced, byte
//! for byte: every field set, every optional field empty, and a stored name this
//! build does not know.

use serde_json::{Value, json};

use super::*;
use crate::store::{DeliveryState, SentHeader, SentRequest};

fn delivery() -> DeliveryRecord {
    DeliveryRecord {
        id: "dlv_1".into(),
        tenant_id: "acme".into(),
        event_id: "evt_1".into(),
        endpoint_id: "ep_1".into(),
        event_type: "order.paid".into(),
        state: DeliveryState::Dead,
        series: 2,
        attempts: 3,
        first_attempt_at_ms: Some(1_000),
        next_attempt_at_ms: Some(9_000),
        last_delay_ms: Some(500),
        last_status: Some(503),
        last_error: Some(ErrorKind::BlockedAddress.into()),
        dead_reason: Some(DeadReason::MaxAttempts.into()),
        created_at_ms: 1_700_000_000_123,
        updated_at_ms: 1_700_000_005_456,
        internal_errors: 0,
        attempt_ids: Vec::new(),
        test: false,
    }
}

fn attempt() -> AttemptRecord {
    AttemptRecord {
        id: None,
        of: None,
        sent: None,
        series: 2,
        attempt: 3,
        started_at_ms: 1_700_000_004_000,
        duration_ms: 42,
        status: Some(503),
        error_kind: Some(Recorded::Unknown("from_a_newer_build".into())),
        response_snippet: "busy \"now\"".into(),
        verdict: VerdictKind::GiveUp.into(),
        delay_ms: Some(1_500),
        next_attempt_at_ms: Some(1_700_000_005_500),
        dead_reason: Some(DeadReason::MaxAttempts.into()),
        decided_by: "builtin".into(),
        policy: "endpoint:svix".into(),
        node_id: None,
        late: false,
        transform: None,
    }
}

/// The delivery as the API built it with `json!` before it was typed.
fn delivery_json(
    d: &DeliveryRecord,
    state: &str,
    max_attempts: Option<u32>,
    next: Option<u64>,
) -> Value {
    json!({
        "id": d.id,
        "event_id": d.event_id,
        "endpoint_id": d.endpoint_id,
        "event_type": d.event_type,
        "state": state,
        "series": d.series,
        "attempts": d.attempts,
        "max_attempts": max_attempts,
        "next_attempt_at": next.map(rfc3339_ms),
        "last_status": d.last_status,
        "last_error": d.last_error,
        "dead_reason": d.dead_reason,
        "created_at": rfc3339_ms(d.created_at_ms),
        "updated_at": rfc3339_ms(d.updated_at_ms),
    })
}

/// The attempt as `attempt_view` built it with `json!`.
fn attempt_json(a: &AttemptRecord) -> Value {
    json!({
        "series": a.series,
        "attempt": a.attempt,
        "started_at": rfc3339_ms(a.started_at_ms),
        "duration_ms": a.duration_ms,
        "status": a.status,
        "error_kind": a.error_kind,
        "response_snippet": a.response_snippet,
        "verdict": a.verdict,
        "delay_ms": a.delay_ms,
        "next_attempt_at": a.next_attempt_at_ms.map(rfc3339_ms),
        "dead_reason": a.dead_reason,
        "decided_by": a.decided_by,
        "policy": a.policy,
        "node_id": a.node_id,
        "late": a.late,
        "id": a.id,
        "outcome": a.outcome().as_str(),
        "test": a.of.as_ref().is_some_and(|o| o.test),
        "transform": a.transform,
        "request_headers": a.request_headers().iter()
            .map(|h| json!({"name": h.name, "value": h.value}))
            .collect::<Vec<_>>(),
    })
}

fn same_bytes(typed: impl Serialize, before: &Value) {
    assert_eq!(
        serde_json::to_string(&typed).unwrap(),
        serde_json::to_string(before).unwrap()
    );
}

#[test]
fn a_delivery_matches_its_json_form() {
    let d = delivery();
    let full = DeliveryView::new(&d, "in_flight", Some(8), Some(9_000));
    same_bytes(&full, &delivery_json(&d, "in_flight", Some(8), Some(9_000)));

    let mut bare = delivery();
    bare.last_status = None;
    bare.last_error = None;
    bare.dead_reason = Some(Recorded::Unknown("from_a_newer_build".into()));
    same_bytes(
        DeliveryView::new(&bare, "dead", None, None),
        &delivery_json(&bare, "dead", None, None),
    );
}

#[test]
fn an_attempt_matches_its_json_form() {
    let a = attempt();
    same_bytes(AttemptView::from(&a), &attempt_json(&a));

    let mut bare = attempt();
    bare.status = None;
    bare.error_kind = None;
    bare.delay_ms = None;
    bare.next_attempt_at_ms = None;
    bare.dead_reason = None;
    bare.policy = String::new();
    same_bytes(AttemptView::from(&bare), &attempt_json(&bare));

    let mut full = attempt();
    full.id = Some("atm_01KBX0000000000000000000AB".into());
    full.of = Some(crate::store::AttemptOf {
        delivery_id: "dlv_1".into(),
        endpoint_id: "ep_1".into(),
        event_id: "evt_1".into(),
        event_type: "order.paid".into(),
        test: false,
    });
    full.sent = Some(SentRequest {
        signature: "v1,abc=".into(),
        header_set: Default::default(),
        headers: vec![SentHeader {
            name: "x-api-key".into(),
            value: crate::store::EndpointHeader::MASK.into(),
        }],
    });
    let view = serde_json::to_value(AttemptView::from(&full)).unwrap();
    assert_eq!(
        view["request_headers"],
        json!([
            {"name": "content-type", "value": "application/json"},
            {"name": "user-agent", "value": SentRequest::USER_AGENT},
            {"name": "webhook-id", "value": "evt_1"},
            {"name": "webhook-timestamp", "value": "1700000004"},
            {"name": "webhook-signature", "value": "v1,abc="},
            {"name": "x-api-key", "value": "********"},
        ])
    );
    same_bytes(AttemptView::from(&full), &attempt_json(&full));
}

#[test]
fn a_delivery_with_its_attempt_log_matches_its_json_form() {
    let d = delivery();
    let log = [attempt(), attempt()];
    let detail = DeliveryDetail {
        attempt_log: log.iter().map(AttemptView::from).collect(),
        delivery: DeliveryView::new(&d, "dead", Some(8), None),
    };
    // `show` added the log to the summary's object.
    let mut before = delivery_json(&d, "dead", Some(8), None);
    before["attempt_log"] = log.iter().map(attempt_json).collect();
    same_bytes(&detail, &before);
}
