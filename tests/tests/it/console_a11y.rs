//! The console's accessibility: axe-core (pinned in `tests/scripts`) checks the
//! sign-in form and every page, signed in with a tenant's key, with an
//! endpoint, a delivery and a catalog type to show, against WCAG 2.0 and 2.1
//! A and AA (contrast among them). No page may have a serious or critical
//! violation. Screenshots at 1280 px and 390 px go to
//! `target/tmp/console-screens`.

use hookgate_tests::receiver::Receiver;
use hookgate_tests::{ADMIN, TestGateway, is_final};
use serde_json::{Value, json};

use super::console_browser::drive;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_page_has_a_serious_accessibility_violation() {
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    let rx = Receiver::start(Vec::new()).await;
    let body = json!({"name": "order.paid", "group": "orders", "description": "An order was paid",
        "schemas": {"1": {"type": "object"}}, "example": {"amount": 1}});
    let (s, b) = gw
        .call("POST", "/v1/event-types", Some(ADMIN), Some(body))
        .await;
    assert_eq!(s, 201, "{b}");
    let ep = gw
        .endpoint(
            "acme",
            &key,
            json!({"url": rx.url(), "description": "orders service"}),
        )
        .await;
    let ev = gw
        .event("acme", &key, "order.paid", json!({"amount": 1}))
        .await;
    let delivery = ev["deliveries"][0]["id"].as_str().unwrap().to_owned();
    let d = gw
        .wait_delivery(
            "acme",
            &key,
            &delivery,
            std::time::Duration::from_secs(30),
            is_final,
        )
        .await;
    assert_eq!(d["state"], "succeeded", "{d}");
    let setup = json!({"endpoint": ep["id"], "delivery": delivery});
    let seen = drive(&gw, "console_a11y.mjs", &key, setup).await;
    let pages = seen["violations"].as_object().expect("pages audited");
    assert_eq!(pages.len(), 10, "the sign-in form and nine pages: {seen}");
    let found: Vec<(&String, &Value)> = pages
        .iter()
        .filter(|(_, v)| v.as_array().is_some_and(|a| !a.is_empty()))
        .collect();
    assert!(
        found.is_empty(),
        "serious or critical violations: {found:?}"
    );
    assert_eq!(seen["outside"], json!([]), "no request left the gateway");
}
