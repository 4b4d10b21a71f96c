//! An endpoint's custom headers (issue 39, item 2): they reach the receiver on
//! every attempt beside a signature the official verifier accepts; a sensitive
//! value is never shown again, in the endpoint's views or in the delivery's
//! log; a merge patch removes one header by null and keeps a masked one; and
//! the headers hookgate owns are refused by name.

use std::time::Duration;

use hookgate_tests::receiver::Receiver;
use hookgate_tests::verify::verify_with_official_library;
use hookgate_tests::{Backend, TestGateway, is_final};
use serde_json::{Value, json};

hookgate_tests::on_each_backend! {
    custom_headers_reach_the_receiver_and_secrets_stay_masked,
    headers_hookgate_owns_are_refused_by_name,
}

const WAIT: Duration = Duration::from_secs(30);
const SECRET_VALUE: &str = "k-secret-7f3a9c";

async fn custom_headers_reach_the_receiver_and_secrets_stay_masked(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let rx = Receiver::start(Vec::new()).await;
    let key = gw.tenant("acme").await;
    let ep = gw
        .endpoint(
            "acme",
            &key,
            json!({
                "url": rx.url(),
                "headers": {"X-Api-Key": SECRET_VALUE, "X-Team": "orders"},
                "sensitive_headers": ["X-Api-Key"],
            }),
        )
        .await;
    assert_eq!(
        (&ep["headers"], &ep["sensitive_headers"]),
        (
            &json!({"x-api-key": "********", "x-team": "orders"}),
            &json!(["x-api-key"])
        ),
        "{ep}"
    );
    let id = ep["id"].as_str().unwrap();
    let signing = ep["secret"].as_str().unwrap().to_owned();
    let ev = gw.event("acme", &key, "order.paid", json!({"id": 1})).await;
    let got = rx.wait_for(1, WAIT).await;
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].header("x-api-key"), Some(SECRET_VALUE));
    assert_eq!(got[0].header("x-team"), Some("orders"));
    verify_with_official_library(&signing, &got);

    // The value is in no view: the endpoint, the list, the delivery with its log.
    let dlv = ev["deliveries"][0]["id"].as_str().unwrap();
    let done = gw.wait_delivery("acme", &key, dlv, WAIT, is_final).await;
    assert_eq!(done["state"], "succeeded", "{done}");
    let ep_path = format!("/v1/tenants/acme/endpoints/{id}");
    for path in [
        ep_path.clone(),
        "/v1/tenants/acme/endpoints".to_owned(),
        format!("/v1/tenants/acme/deliveries/{dlv}"),
    ] {
        let (s, b) = gw.call("GET", &path, Some(&key), None).await;
        assert_eq!(s, 200, "{path}: {b}");
        assert!(
            !b.to_string().contains(SECRET_VALUE),
            "{path} shows the secret: {b}"
        );
    }

    // A merge patch: null removes a header, the mask keeps the stored value,
    // and a name in another case is the same header.
    let patch = json!({"headers": {"X-TEAM": null, "x-api-key": "********", "X-Region": "eu"}});
    let (s, b) = gw.call("PATCH", &ep_path, Some(&key), Some(patch)).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(
        b["headers"],
        json!({"x-api-key": "********", "x-region": "eu"}),
        "{b}"
    );
    gw.event("acme", &key, "order.paid", json!({"id": 2})).await;
    let got = rx.wait_for(2, WAIT).await;
    let second = &got[1];
    assert_eq!(second.header("x-api-key"), Some(SECRET_VALUE));
    assert_eq!(second.header("x-region"), Some("eu"));
    assert_eq!(second.header("x-team"), None);
    verify_with_official_library(&signing, &got[1..]);

    // Un-marking a stored secret does not reveal it; replacing it in the same
    // update does.
    let unmark = json!({"sensitive_headers": []});
    let (s, b) = gw.call("PATCH", &ep_path, Some(&key), Some(unmark)).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["headers"]["x-api-key"], "********", "{b}");
    let replace = json!({"headers": {"x-api-key": "public-now"}, "sensitive_headers": []});
    let (s, b) = gw.call("PATCH", &ep_path, Some(&key), Some(replace)).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(b["headers"]["x-api-key"], "public-now", "{b}");
    assert_eq!(b["sensitive_headers"], json!([]));
}

fn assert_refused(status: u16, body: &Value, field: &str) {
    assert_eq!(
        (
            status,
            body["error"]["code"].as_str(),
            body["error"]["field"].as_str()
        ),
        (422, Some("validation_failed"), Some(field)),
        "{body}"
    );
}

async fn headers_hookgate_owns_are_refused_by_name(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let key = gw.tenant("acme").await;
    let eps = "/v1/tenants/acme/endpoints";
    for name in [
        "webhook-signature",
        "Content-Type",
        "host",
        "transfer-encoding",
    ] {
        let body = json!({"url": "http://127.0.0.1:9/", "headers": {name: "x"}});
        let (s, b) = gw.call("POST", eps, Some(&key), Some(body)).await;
        assert_refused(s, &b, &format!("headers.{name}"));
    }
    let body = json!({"url": "http://127.0.0.1:9/", "headers": {"x-a": "two\nlines"}});
    let (s, b) = gw.call("POST", eps, Some(&key), Some(body)).await;
    assert_refused(s, &b, "headers.x-a");
    let body = json!({"url": "http://127.0.0.1:9/", "headers": {"x-a": "1"}, "sensitive_headers": ["x-b"]});
    let (s, b) = gw.call("POST", eps, Some(&key), Some(body)).await;
    assert_refused(s, &b, "sensitive_headers[0]");
    let body = json!({"url": "http://127.0.0.1:9/", "headers": ["x-a"]});
    let (s, b) = gw.call("POST", eps, Some(&key), Some(body)).await;
    assert_eq!(
        (s, b["error"]["field"].as_str()),
        (400, Some("headers")),
        "{b}"
    );
    let (s, list) = gw.call("GET", eps, Some(&key), None).await;
    assert_eq!(s, 200);
    assert_eq!(
        list["data"],
        json!([]),
        "nothing refused was created: {list}"
    );
}
