//! Signature choices per endpoint (issue 40, item 4): `v1a` ed25519 signatures
//! alone or beside `v1`, and the `webhook-*`, `svix-*` or both header sets,
//! checked by verifiers nobody here wrote: the official `svix` and
//! `standardwebhooks` Python packages, and the `cryptography` package's
//! ed25519 with the endpoint's `whpk_` key. A wrong key is refused by the same
//! verifier, so each check can fail. The setting round-trips through create,
//! PUT, merge patch and the views; bad input is a 4xx naming the field; the
//! attempt log shows the headers actually sent; a rotation signs with the old
//! and new keys of both schemes through its grace period.

use std::time::Duration;

use hookgate_tests::receiver::{Received, Receiver};
use hookgate_tests::verify::{
    Names, standardwebhooks_verifies, svix_library_verifies, v1a_verifies,
};
use hookgate_tests::{Backend, TestGateway, is_final};
use serde_json::{Value, json};

hookgate_tests::on_each_backend! {
    v1a_and_svix_headers_verify_with_verifiers_nobody_here_wrote,
    the_setting_round_trips_and_bad_input_names_the_field,
    a_rotation_signs_with_old_and_new_keys_of_both_schemes,
}

const WAIT: Duration = Duration::from_secs(30);

/// A `whpk_` key of no endpoint: RFC 8032's first test key.
const STRANGER_WHPK: &str = "whpk_11qYAYKxCrfVS/7TyWQHOg7hcvPapiMlrwIaaPcHURo=";
/// A `whsec_` secret of no endpoint.
const STRANGER_WHSEC: &str = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";

/// An endpoint at a receiver of its own with `signature`, hearing
/// `order.{label}` only, and one event delivered to it: the endpoint, what the
/// receiver got, the delivery's view.
async fn one_request(
    gw: &TestGateway,
    key: &str,
    label: &str,
    signature: Value,
) -> (Value, Vec<Received>, Value) {
    let rx = Receiver::start(Vec::new()).await;
    let event_type = format!("order.{label}");
    let ep = gw
        .endpoint(
            "acme",
            key,
            json!({"url": rx.url(), "signature": signature, "event_types": [event_type]}),
        )
        .await;
    let ev = gw
        .event(
            "acme",
            key,
            &event_type,
            json!({"amount": 12, "note": "héllo"}),
        )
        .await;
    let got = rx.wait_for(1, WAIT).await;
    let dlv = ev["deliveries"][0]["id"].as_str().unwrap();
    let done = gw.wait_delivery("acme", key, dlv, WAIT, is_final).await;
    assert_eq!(done["state"], "succeeded", "{done}");
    (ep, got, done)
}

/// The value of `name` among an attempt's `request_headers`.
fn shown(attempt: &Value, name: &str) -> Option<String> {
    attempt["request_headers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|h| h["name"] == name)
        .map(|h| h["value"].as_str().unwrap().to_owned())
}

fn entries(header: &str) -> Vec<&str> {
    header
        .split(' ')
        .map(|e| e.split_once(',').unwrap().0)
        .collect()
}

async fn v1a_and_svix_headers_verify_with_verifiers_nobody_here_wrote(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;

    // v1a alone, under webhook-*.
    let (ep, got, done) = one_request(&gw, &key, "alone", json!({"schemes": ["v1a"]})).await;
    assert_eq!(
        ep["signature"],
        json!({"headers": "webhook", "schemes": ["v1a"]}),
        "{ep}"
    );
    let whpk = ep["public_key"]
        .as_str()
        .expect("create shows the whpk_")
        .to_owned();
    assert!(whpk.starts_with("whpk_"), "{whpk}");
    let secret = ep["secret"].as_str().unwrap();
    let id = ep["id"].as_str().unwrap();
    let (s, secrets) = gw
        .call(
            "GET",
            &format!("/v1/tenants/acme/endpoints/{id}/secret"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(
        (s, secrets["public_key"].as_str()),
        (200, Some(whpk.as_str())),
        "{secrets}"
    );
    let signature = got[0].header("webhook-signature").unwrap();
    assert_eq!(entries(signature), ["v1a"], "{signature}");
    assert_eq!(got[0].header("svix-signature"), None);
    v1a_verifies(&whpk, Names::Webhook, &got).unwrap();
    assert!(v1a_verifies(STRANGER_WHPK, Names::Webhook, &got).is_err());
    // No v1 entry: the HMAC verifier finds nothing to accept.
    assert!(standardwebhooks_verifies(secret, &got).is_err());
    let attempt = &done["attempt_log"][0];
    assert_eq!(
        shown(attempt, "webhook-signature").as_deref(),
        Some(signature),
        "{attempt}"
    );
    assert_eq!(shown(attempt, "svix-signature"), None, "{attempt}");

    // v1 beside v1a, under both header sets.
    let (ep, got, done) = one_request(
        &gw,
        &key,
        "beside",
        json!({"schemes": ["v1a", "v1"], "headers": "both"}),
    )
    .await;
    assert_eq!(
        ep["signature"],
        json!({"headers": "both", "schemes": ["v1", "v1a"]}),
        "{ep}"
    );
    let whpk = ep["public_key"].as_str().unwrap().to_owned();
    let secret = ep["secret"].as_str().unwrap();
    let r = &got[0];
    let signature = r.header("webhook-signature").unwrap();
    assert_eq!(entries(signature), ["v1", "v1a"], "{signature}");
    assert_eq!(r.header("svix-signature"), Some(signature));
    assert_eq!(r.header("svix-id"), r.header("webhook-id"));
    assert_eq!(r.header("svix-timestamp"), r.header("webhook-timestamp"));
    standardwebhooks_verifies(secret, &got).unwrap();
    svix_library_verifies(secret, &got).unwrap();
    v1a_verifies(&whpk, Names::Webhook, &got).unwrap();
    v1a_verifies(&whpk, Names::Svix, &got).unwrap();
    assert!(svix_library_verifies(STRANGER_WHSEC, &got).is_err());
    assert!(standardwebhooks_verifies(STRANGER_WHSEC, &got).is_err());
    assert!(v1a_verifies(STRANGER_WHPK, Names::Svix, &got).is_err());
    // The log shows both sets, with every entry the receiver got.
    let attempt = &done["attempt_log"][0];
    for name in [
        "webhook-id",
        "webhook-timestamp",
        "webhook-signature",
        "svix-id",
        "svix-timestamp",
        "svix-signature",
    ] {
        assert_eq!(
            shown(attempt, name).as_deref(),
            r.header(name),
            "{name}: {attempt}"
        );
    }

    // v1 under svix-* only, as a receiver built for Svix reads it.
    let (ep, got, done) = one_request(&gw, &key, "svix", json!({"headers": "svix"})).await;
    let secret = ep["secret"].as_str().unwrap();
    assert_eq!(ep["public_key"], Value::Null, "{ep}");
    assert_eq!(got[0].header("webhook-signature"), None);
    assert_eq!(entries(got[0].header("svix-signature").unwrap()), ["v1"]);
    svix_library_verifies(secret, &got).unwrap();
    assert!(svix_library_verifies(STRANGER_WHSEC, &got).is_err());
    let attempt = &done["attempt_log"][0];
    assert_eq!(shown(attempt, "webhook-id"), None, "{attempt}");
    assert_eq!(
        shown(attempt, "svix-signature").as_deref(),
        got[0].header("svix-signature")
    );
}

fn assert_refused(status: u16, body: &Value, code: (u16, &str), field: &str) {
    assert_eq!(
        (
            status,
            body["error"]["code"].as_str(),
            body["error"]["field"].as_str()
        ),
        (code.0, Some(code.1), Some(field)),
        "{body}"
    );
}

async fn the_setting_round_trips_and_bad_input_names_the_field(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    let eps = "/v1/tenants/acme/endpoints";
    // A secret given without its prefix is kept with it.
    let bare = "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw";
    let ep = gw
        .endpoint(
            "acme",
            &key,
            json!({"url": "http://127.0.0.1:9/", "secret": bare}),
        )
        .await;
    assert_eq!(ep["secret"], format!("whsec_{bare}"), "{ep}");
    assert_eq!(
        ep["signature"],
        json!({"headers": "webhook", "schemes": ["v1"]})
    );
    let path = format!("{eps}/{}", ep["id"].as_str().unwrap());
    let secret_path = format!("{path}/secret");

    // Merge patch: absent parts keep their stored values.
    let (s, b) = gw
        .call(
            "PATCH",
            &path,
            Some(&key),
            Some(json!({"signature": {"headers": "svix"}})),
        )
        .await;
    assert_eq!(
        (s, &b["signature"]),
        (200, &json!({"headers": "svix", "schemes": ["v1"]})),
        "{b}"
    );
    let (s, b) = gw
        .call(
            "PATCH",
            &path,
            Some(&key),
            Some(json!({"signature": {"schemes": ["v1a", "v1"]}})),
        )
        .await;
    assert_eq!(
        (s, &b["signature"]),
        (200, &json!({"headers": "svix", "schemes": ["v1", "v1a"]})),
        "{b}"
    );
    let (_, secrets) = gw.call("GET", &secret_path, Some(&key), None).await;
    let whpk = secrets["public_key"].as_str().unwrap().to_owned();
    assert_eq!(
        secrets["secrets"][0]["public_key"],
        whpk.as_str(),
        "{secrets}"
    );
    let (s, b) = gw.call("GET", &path, Some(&key), None).await;
    assert_eq!(
        (s, &b["signature"]["schemes"]),
        (200, &json!(["v1", "v1a"])),
        "{b}"
    );
    let (_, list) = gw.call("GET", eps, Some(&key), None).await;
    assert_eq!(list["data"][0]["signature"]["headers"], "svix", "{list}");

    // Turning v1a off hides the key; on again, it is the same key.
    let (s, b) = gw
        .call(
            "PATCH",
            &path,
            Some(&key),
            Some(json!({"signature": {"schemes": ["v1"]}})),
        )
        .await;
    assert_eq!(s, 200, "{b}");
    let (_, secrets) = gw.call("GET", &secret_path, Some(&key), None).await;
    assert_eq!(secrets["public_key"], Value::Null, "{secrets}");
    let (s, _) = gw
        .call(
            "PATCH",
            &path,
            Some(&key),
            Some(json!({"signature": {"schemes": ["v1a"]}})),
        )
        .await;
    assert_eq!(s, 200);
    let (_, secrets) = gw.call("GET", &secret_path, Some(&key), None).await;
    assert_eq!(secrets["public_key"], whpk.as_str(), "{secrets}");

    // null resets the setting.
    let (s, b) = gw
        .call("PATCH", &path, Some(&key), Some(json!({"signature": null})))
        .await;
    assert_eq!(
        (s, &b["signature"]),
        (200, &json!({"headers": "webhook", "schemes": ["v1"]})),
        "{b}"
    );
    // PUT (by uid) creates with the setting, and replaces it whole.
    let put_path = format!("{eps}/orders-eu");
    let put =
        json!({"url": "http://127.0.0.1:9/", "signature": {"headers": "both", "schemes": ["v1a"]}});
    let (s, b) = gw.call("PUT", &put_path, Some(&key), Some(put)).await;
    assert_eq!(
        (s, &b["signature"]),
        (201, &json!({"headers": "both", "schemes": ["v1a"]})),
        "{b}"
    );
    assert!(
        b["public_key"]
            .as_str()
            .is_some_and(|k| k.starts_with("whpk_")),
        "{b}"
    );
    let bare = json!({"url": "http://127.0.0.1:9/"});
    let (s, b) = gw.call("PUT", &put_path, Some(&key), Some(bare)).await;
    assert_eq!(
        (s, &b["signature"]),
        (200, &json!({"headers": "webhook", "schemes": ["v1"]})),
        "{b}"
    );

    // Bad input: a JSON 4xx naming the field, never a 5xx.
    let bad = [
        (
            json!({"schemes": ["v2"]}),
            (400, "invalid_field"),
            "signature.schemes[0]",
        ),
        (
            json!({"headers": "x-custom"}),
            (400, "invalid_field"),
            "signature.headers",
        ),
        (
            json!({"schemes": "v1"}),
            (400, "invalid_field"),
            "signature.schemes",
        ),
        (
            json!({"algorithm": "v1"}),
            (400, "invalid_field"),
            "signature.algorithm",
        ),
        (
            json!({"schemes": []}),
            (422, "validation_failed"),
            "signature.schemes",
        ),
    ];
    for (signature, code, field) in bad {
        let body = json!({"url": "http://127.0.0.1:9/", "signature": signature});
        let (s, b) = gw.call("POST", eps, Some(&key), Some(body)).await;
        assert_refused(s, &b, code, field);
        let (s, b) = gw
            .call(
                "PATCH",
                &path,
                Some(&key),
                Some(json!({"signature": signature})),
            )
            .await;
        assert_refused(s, &b, code, field);
    }
    let body = json!({"url": "http://127.0.0.1:9/", "headers": {"svix-id": "x"}});
    let (s, b) = gw.call("POST", eps, Some(&key), Some(body)).await;
    assert_refused(s, &b, (422, "validation_failed"), "headers.svix-id");
    let body = json!({"url": "http://127.0.0.1:9/", "secret": "whsk_abc"});
    let (s, b) = gw.call("POST", eps, Some(&key), Some(body)).await;
    assert_refused(s, &b, (422, "validation_failed"), "secret");
}

async fn a_rotation_signs_with_old_and_new_keys_of_both_schemes(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    let rx = Receiver::start(Vec::new()).await;
    let ep = gw
        .endpoint(
            "acme",
            &key,
            json!({"url": rx.url(), "signature": {"schemes": ["v1", "v1a"]}}),
        )
        .await;
    let (old_secret, old_whpk) = (
        ep["secret"].as_str().unwrap().to_owned(),
        ep["public_key"].as_str().unwrap().to_owned(),
    );
    let path = format!("/v1/tenants/acme/endpoints/{}", ep["id"].as_str().unwrap());
    let (s, rotated) = gw
        .call(
            "POST",
            &format!("{path}/rotate-secret"),
            Some(&key),
            Some(json!({})),
        )
        .await;
    assert_eq!(s, 200, "{rotated}");
    let new_secret = rotated["secret"].as_str().unwrap().to_owned();
    let new_whpk = rotated["public_key"].as_str().unwrap().to_owned();
    assert_ne!(new_whpk, old_whpk, "a rotation makes a new ed25519 key");
    assert_eq!(
        rotated["secrets"][1]["public_key"],
        old_whpk.as_str(),
        "{rotated}"
    );
    assert!(rotated["secrets"][1]["expires_at"].is_string(), "{rotated}");

    gw.event("acme", &key, "order.paid", json!({"id": 1})).await;
    let got = rx.wait_for(1, WAIT).await;
    let signature = got[0].header("webhook-signature").unwrap();
    assert_eq!(
        entries(signature),
        ["v1", "v1", "v1a", "v1a"],
        "{signature}"
    );
    for secret in [&old_secret, &new_secret] {
        standardwebhooks_verifies(secret, &got).unwrap();
    }
    for whpk in [&old_whpk, &new_whpk] {
        v1a_verifies(whpk, Names::Webhook, &got).unwrap();
    }
    assert!(v1a_verifies(STRANGER_WHPK, Names::Webhook, &got).is_err());
}
