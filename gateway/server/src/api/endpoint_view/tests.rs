//! The endpoint and secrets views against the `json!` bodies they replaced, byte
//! for byte: a tenant policy with an effective one, empty optional fields, the
//! answer to create with its secret, and live and expired secrets.

use serde_json::{Value, json};

use super::*;
use crate::store::BreakerRecord;

fn endpoint() -> EndpointRecord {
    EndpointRecord {
        id: "ep_1".into(),
        tenant_id: "acme".into(),
        url: "https://example.com/hooks".into(),
        description: "orders".into(),
        event_types: vec!["order.*".into(), "refund.paid".into()],
        policy: Some(json!({"preset": "svix", "max_attempts": 5, "base_ms": 2_000})),
        plugin: Some("backoff@2".into()),
        transform: None,
        timeout_ms: 10_000,
        max_in_flight: 4,
        rate_limit_per_s: Some(50),
        disabled: true,
        disabled_reason: Some("manual".into()),
        disabled_at_ms: Some(1_700_000_001_000),
        trusted: false,
        secrets: vec![
            StoredSecret {
                secret: "whsec_new".into(),
                expires_at_ms: None,
                signing_key: None,
            },
            StoredSecret {
                secret: "whsec_old".into(),
                expires_at_ms: Some(2_000),
                signing_key: None,
            },
            StoredSecret {
                secret: "whsec_gone".into(),
                expires_at_ms: Some(1_000),
                signing_key: None,
            },
        ],
        breaker: BreakerRecord {
            state: BreakerState::Open.into(),
            open_until_ms: Some(1_700_000_009_000),
            trips: 2,
            failure_streak: 7,
            failing_since_ms: Some(1_700_000_000_500),
        },
        last_success_ms: None,
        created_at_ms: 1_700_000_000_000,
        updated_at_ms: 0,
        headers: vec![
            crate::store::EndpointHeader {
                name: "x-api-key".into(),
                value: "k-secret".into(),
                sensitive: true,
            },
            crate::store::EndpointHeader {
                name: "x-team".into(),
                value: "orders".into(),
                sensitive: false,
            },
        ],
        metadata: [("team".to_owned(), "orders".to_owned())].into(),
        uid: None,
        channels: Vec::new(),
        filter: None,
        signature: Default::default(),
        destination: None,
    }
}

/// The endpoint as `endpoint_view` built it with `json!`.
fn endpoint_json(ep: &EndpointRecord, default: &PolicySpec) -> Value {
    let effective = effective_policy(ep, default).0;
    json!({
        "id": ep.id,
        "url": ep.url,
        "description": ep.description,
        "event_types": ep.event_types,
        "policy": ep.policy,
        "policy_effective": effective,
        "plugin": ep.plugin,
        "transform": ep.transform,
        "timeout_ms": ep.timeout_ms,
        "max_in_flight": ep.max_in_flight,
        "rate_limit_per_s": ep.rate_limit_per_s,
        "disabled": ep.disabled,
        "disabled_reason": ep.disabled_reason,
        "breaker": {
            "state": ep.breaker.state,
            "open_until": ep.breaker.open_until_ms.map(rfc3339_ms),
            "trips": ep.breaker.trips,
        },
        "created_at": rfc3339_ms(ep.created_at_ms),
        // Never before its creation: a record from before updates were kept.
        "updated_at": rfc3339_ms(ep.created_at_ms),
        // Issue 39: the endpoint's own headers (masked) and metadata.
        "headers": {"x-api-key": "********", "x-team": "orders"},
        "sensitive_headers": ["x-api-key"],
        "metadata": {"team": "orders"},
        "channels": ep.channels,
        "filter": ep.filter,
        "uid": ep.uid,
        "signature": {"headers": "webhook", "schemes": ["v1"]},
        "destination": {"type": "http"},
    })
}

/// The secrets as `secrets_view` built them with `json!`.
fn secrets_json(ep: &EndpointRecord, now: u64) -> Value {
    let valid: Vec<&StoredSecret> = ep
        .secrets
        .iter()
        .filter(|s| s.expires_at_ms.is_none_or(|e| e > now))
        .collect();
    json!({
        "public_key": null,
        "secret": valid.first().map(|s| s.secret.as_str()),
        "secrets": valid.iter().map(|s| json!({
            "secret": s.secret,
            "expires_at": s.expires_at_ms.map(rfc3339_ms),
            "public_key": null,
        })).collect::<Vec<_>>(),
        "signature": {"headers": "webhook", "schemes": ["v1"]},
    })
}

fn same_bytes(typed: impl Serialize, before: &Value) {
    assert_eq!(
        serde_json::to_string(&typed).unwrap(),
        serde_json::to_string(before).unwrap()
    );
}

#[test]
fn an_endpoint_matches_its_json_form() {
    let default = PolicySpec::default();
    let ep = endpoint();
    same_bytes(
        EndpointView::new(&ep, &default),
        &endpoint_json(&ep, &default),
    );

    let mut bare = endpoint();
    bare.policy = None;
    bare.plugin = None;
    bare.rate_limit_per_s = None;
    bare.disabled = false;
    bare.disabled_reason = None;
    bare.event_types = Vec::new();
    bare.breaker = BreakerRecord::default();
    same_bytes(
        EndpointView::new(&bare, &default),
        &endpoint_json(&bare, &default),
    );
}

#[test]
fn the_answer_to_create_matches_its_json_form() {
    let default = PolicySpec::default();
    let ep = endpoint();
    // `create` added the secret to the endpoint's object.
    let mut before = endpoint_json(&ep, &default);
    before["secret"] = json!("whsec_new");
    same_bytes(EndpointView::new(&ep, &default).with_secret(&ep), &before);
}

#[test]
fn the_secrets_match_their_json_form() {
    let ep = endpoint();
    for now in [0, 1_500, 5_000] {
        same_bytes(EndpointSecrets::new(&ep, now), &secrets_json(&ep, now));
    }
    let mut none_live = endpoint();
    none_live.secrets.retain(|s| s.expires_at_ms.is_some());
    same_bytes(
        EndpointSecrets::new(&none_live, 5_000),
        &secrets_json(&none_live, 5_000),
    );
}
