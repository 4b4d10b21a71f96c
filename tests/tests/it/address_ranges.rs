//! Special-purpose IPv6 ranges (issue 17, item 8) are refused end to end: at
//! endpoint creation with 422 `url_blocked`, and at connect time, while a
//! globally reachable neighbour such as AMT (`2001:3::/32`) stays allowed.

use std::net::Ipv6Addr;
use std::sync::Arc;
use std::time::Duration;

use hookgate_server::RunOptions;
use hookgate_tests::receiver::Receiver;
use hookgate_tests::resolvers::RebindingResolver;
use hookgate_tests::{TestGateway, is_final};
use serde_json::json;

const WAIT: Duration = Duration::from_secs(30);

/// The test gateway allows `127.0.0.0/8`; none of these may ride on that.
#[tokio::test]
async fn special_purpose_ranges_are_in_the_address_table() {
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    let blocked = [
        "http://[::127.0.0.1]/x",
        "http://[::10.0.0.1]/x",
        "http://[2001:2::1]/x",
        "http://[3fff::1]/x",
        "http://[5f00::1]/x",
        "http://[100:0:0:1::1]/x",
    ];
    for url in blocked {
        let (s, b) = gw
            .call(
                "POST",
                "/v1/tenants/acme/endpoints",
                Some(&key),
                Some(json!({"url": url})),
            )
            .await;
        assert_eq!(
            (s, b["error"]["code"].as_str()),
            (422, Some("url_blocked")),
            "{url}: {b}"
        );
    }
    // Still allowed: AMT is globally reachable, and IPv4-mapped loopback is
    // judged as the allow-listed 127.0.0.1.
    for url in ["http://[2001:3::1]/x", "http://[::ffff:127.0.0.1]/x"] {
        gw.endpoint("acme", &key, json!({"url": url})).await;
    }
}

#[tokio::test]
async fn ipv4_compatible_address_is_refused_at_connect_time() {
    let rx = Receiver::start(Vec::new()).await;
    // A public address at creation, then the IPv4-compatible `::127.0.0.1`.
    let compatible = Ipv6Addr::new(0, 0, 0, 0, 0, 0, 0x7f00, 1);
    let resolver = Arc::new(RebindingResolver::new(rx.addr.port(), compatible.into()));
    let options = RunOptions {
        resolver: Some(resolver.clone()),
        ..Default::default()
    };
    let gw = TestGateway::start_with_options(options).await;
    let url = format!("http://compat.example:{}/hook", rx.addr.port());
    let (key, _, dlv) = gw.one_delivery(&url, json!({})).await;
    let d = gw.wait_delivery("acme", &key, &dlv, WAIT, is_final).await;
    assert_eq!(
        (d["state"].as_str(), d["dead_reason"].as_str()),
        (Some("dead"), Some("blocked_address")),
        "{d}"
    );
    assert!(
        resolver.calls() >= 2,
        "resolved at creation and again at connect time"
    );
    assert!(rx.received().is_empty(), "nothing reached the receiver");
}
