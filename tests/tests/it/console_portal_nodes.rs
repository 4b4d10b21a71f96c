//! The portal in a browser against a cluster (issue 41's browser tests): a
//! session's portal open on each of two gateways sharing PostgreSQL; the
//! tenant revokes its sessions through one node, and each page's next step
//! sends its reader back to sign in with the console's "ended" message, on
//! both nodes. A session opened after its expiry, on a gateway whose test
//! clock was moved past it (no wait), is refused at load with the API's
//! message.

use std::time::Duration;

use hookgate_server::lab::ManualClock;
use hookgate_server::{Clock, RunOptions, SystemClock};
use hookgate_tests::{Backend, TestGateway};
use serde_json::json;

use super::console_browser::drive;

/// Mints a view session of acme on `gw`; answers its portal URL there.
async fn portal_url(gw: &TestGateway, key: &str, expires_in_s: u64) -> String {
    let body = json!({"capabilities": ["view", "manage_endpoints"], "expires_in_s": expires_in_s});
    let (s, b) = gw
        .call(
            "POST",
            "/v1/tenants/acme/portal-sessions",
            Some(key),
            Some(body),
        )
        .await;
    assert_eq!(s, 201, "{b}");
    format!("{}{}", gw.base, b["url"].as_str().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_revoked_portal_ends_on_both_nodes_and_an_expired_one_never_opens() {
    let bed = Backend::Postgres.bed().await;
    let other = bed.another_node().expect("PostgreSQL has another node");
    let first = TestGateway::start_bed(bed, RunOptions::default()).await;
    let second = TestGateway::start_bed(other, RunOptions::default()).await;
    let key = first.tenant("acme").await;
    let url = portal_url(&first, &key, 3600).await;
    let on_second = url.replacen(&first.base, &second.base, 1);

    // A gateway whose clock the test moves: its session is past expiry.
    let clock = ManualClock::new(SystemClock.now_ms());
    let options = RunOptions {
        clock: Some(clock.clone()),
        ..Default::default()
    };
    let late = TestGateway::start_bed(Backend::Sled.bed().await, options).await;
    let late_key = late.tenant("acme").await;
    let expired_url = portal_url(&late, &late_key, 300).await;
    clock.advance(Duration::from_secs(301));

    let setup = json!({
        "node_urls": [url, on_second],
        "expired_url": expired_url,
        "origins": [first.base, second.base, late.base],
    });
    let seen = drive(&first, "console_portal_nodes.mjs", &key, setup).await;
    assert_eq!(seen["outside"], json!([]), "requests to other hosts");
    assert_eq!(
        seen["opened"],
        json!([first.base, second.base]),
        "the portal opened on each node: {seen}"
    );
    assert_eq!(seen["revoked"]["revoked"], 1, "{seen}");
    let ended = seen["ended"].as_array().unwrap();
    assert_eq!(ended.len(), 2, "{seen}");
    for (node, page) in ended.iter().enumerate() {
        let error = page["error"].as_str().unwrap();
        assert!(
            error.contains("portal session has ended") && error.contains("(session_ended)"),
            "node {node}: {error}"
        );
        assert_eq!(page["nav"], false, "node {node}: {page}");
        assert_eq!(page["sections"], json!(["sign-in"]), "node {node}: {page}");
    }
    let expired = &seen["expired"];
    let error = expired["error"].as_str().unwrap_or_default();
    assert!(
        error.contains("this portal session has expired") && error.contains("(unauthorized)"),
        "{expired}"
    );
    assert_eq!(
        (&expired["nav"], &expired["sections"]),
        (&json!(false), &json!(["sign-in"])),
        "{expired}"
    );
    assert!(
        !expired["href"].as_str().unwrap().contains("hgp_"),
        "the token leaves the address: {expired}"
    );
    for gw in [late, second, first] {
        gw.stop().await;
    }
}
