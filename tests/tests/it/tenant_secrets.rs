//! Tenant-supplied signing secrets (issue 17, item 9): only canonical, padded
//! standard base64 is accepted, on create and on rotate, and a padded secret signs
//! deliveries that both official verifiers, Python and npm, accept.

use std::time::Duration;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use hookgate_tests::TestGateway;
use hookgate_tests::receiver::Receiver;
use hookgate_tests::verify::{verify_with_npm_library, verify_with_official_library};
use serde_json::{Value, json};

const WAIT: Duration = Duration::from_secs(30);

/// A `whsec_` secret over `key_len` bytes whose base64 uses `+` and `/`, the
/// characters where the standard and URL-safe alphabets differ.
fn padded_secret(key_len: usize) -> String {
    let key: Vec<u8> = [0xfb, 0xef, 0xbe, 0xff, 0xff, 0xff]
        .into_iter()
        .cycle()
        .take(key_len)
        .collect();
    let secret = format!("whsec_{}", STANDARD.encode(key));
    assert!(
        secret.contains('+') && secret.contains('/') && secret.ends_with('='),
        "{secret}"
    );
    secret
}

fn assert_secret_refused(status: u16, body: &Value) {
    assert_eq!(
        (
            status,
            body["error"]["code"].as_str(),
            body["error"]["field"].as_str()
        ),
        (422, Some("validation_failed"), Some("secret")),
        "{body}"
    );
}

#[tokio::test]
async fn tenant_secrets_without_base64_padding_are_refused() {
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    let eps = "/v1/tenants/acme/endpoints";
    let padded = padded_secret(32);
    let unpadded = padded.trim_end_matches('=');

    let body = json!({"url": "http://127.0.0.1:9/", "secret": unpadded});
    let (s, b) = gw.call("POST", eps, Some(&key), Some(body)).await;
    assert_secret_refused(s, &b);

    let ep = gw
        .endpoint(
            "acme",
            &key,
            json!({"url": "http://127.0.0.1:9/", "secret": padded}),
        )
        .await;
    assert_eq!(ep["secret"].as_str(), Some(padded.as_str()));
    let id = ep["id"].as_str().unwrap();

    let two_pads = padded_secret(25);
    for refused in [unpadded, two_pads.trim_end_matches('=')] {
        let (s, b) = gw
            .call(
                "POST",
                &format!("{eps}/{id}/rotate-secret"),
                Some(&key),
                Some(json!({"secret": refused})),
            )
            .await;
        assert_secret_refused(s, &b);
    }
    let (s, b) = gw
        .call("GET", &format!("{eps}/{id}/secret"), Some(&key), None)
        .await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(
        b["secrets"],
        json!([{"secret": padded, "expires_at": null, "public_key": null}]),
        "a refused rotation changes nothing"
    );
}

#[tokio::test]
async fn padded_tenant_secret_verifies_with_the_npm_library() {
    let gw = TestGateway::start().await;
    let rx = Receiver::start(Vec::new()).await;
    let key = gw.tenant("acme").await;
    let first = padded_secret(32);
    let ep = gw
        .endpoint("acme", &key, json!({"url": rx.url(), "secret": first}))
        .await;
    gw.event(
        "acme",
        &key,
        "order.paid",
        json!({"id": 42, "status": "paid"}),
    )
    .await;
    let got = rx.wait_for(1, WAIT).await;
    assert_eq!(got.len(), 1, "one delivery arrived");
    verify_with_npm_library(&first, &got);
    verify_with_official_library(&first, &got);

    // Rotated to another padded tenant secret (two `=`): both sign in the grace period.
    let second = padded_secret(25);
    assert!(second.ends_with("=="), "{second}");
    let path = format!(
        "/v1/tenants/acme/endpoints/{}/rotate-secret",
        ep["id"].as_str().unwrap()
    );
    let (s, b) = gw
        .call("POST", &path, Some(&key), Some(json!({"secret": second})))
        .await;
    assert_eq!(s, 200, "{b}");
    gw.event("acme", &key, "order.paid", json!({"id": 43}))
        .await;
    let got = rx.wait_for(2, WAIT).await;
    assert_eq!(got.len(), 2, "the second delivery arrived");
    let during = &got[1..];
    verify_with_npm_library(&second, during);
    verify_with_npm_library(&first, during);
    verify_with_official_library(&second, during);
}
