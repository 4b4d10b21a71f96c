//! The portal in a browser against a cluster (issue 41's browser tests): a
//! session's portal open on each of two gateways sharing PostgreSQL, each in
//! an iframe of another site's page; the
//! tenant revokes its sessions through one node, and each page's next step
//! sends its reader back to sign in with the console's "ended" message, on
//! both nodes. A session opened after its expiry, on a gateway whose test
//! clock was moved past it (no wait), is refused at load with the API's
//! message. A session limited to one endpoint shows that endpoint alone, and
//! neither the tenant-wide figures nor the controls it would be refused.

use std::time::Duration;

use hookgate_server::lab::ManualClock;
use hookgate_server::{Clock, RunOptions, SystemClock};
use hookgate_tests::{Backend, TestGateway};
use serde_json::{Value, json};

use super::console_browser::{EmbeddingSite, drive};

/// Mints a session of acme on `gw` that may view, manage endpoints and replay,
/// with `more` (an expiry, limits); answers its portal URL there.
async fn portal_url(gw: &TestGateway, key: &str, more: Value) -> String {
    let mut body = json!({"capabilities": ["view", "manage_endpoints", "replay"]});
    body.as_object_mut()
        .unwrap()
        .extend(more.as_object().unwrap().clone());
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
    let site = EmbeddingSite::start().await;
    let mut bed = Backend::Postgres.bed().await;
    bed.config.console.embed_origins = vec![site.origin()];
    let other = bed.another_node().expect("PostgreSQL has another node");
    let first = TestGateway::start_bed(bed, RunOptions::default()).await;
    let second = TestGateway::start_bed(other, RunOptions::default()).await;
    let key = first.tenant("acme").await;
    let url = portal_url(&first, &key, json!({})).await;
    let kept = first
        .endpoint(
            "acme",
            &key,
            json!({"url": "http://127.0.0.1:9/kept", "uid": "kept"}),
        )
        .await;
    first
        .endpoint("acme", &key, json!({"url": "http://127.0.0.1:9/other"}))
        .await;
    let limited_url = portal_url(&first, &key, json!({"endpoints": ["kept"]})).await;
    let on_second = url.replacen(&first.base, &second.base, 1);

    // A gateway whose clock the test moves: its session is past expiry.
    let clock = ManualClock::new(SystemClock.now_ms());
    let options = RunOptions {
        clock: Some(clock.clone()),
        ..Default::default()
    };
    let late = TestGateway::start_bed(Backend::Sled.bed().await, options).await;
    let late_key = late.tenant("acme").await;
    let expired_url = portal_url(&late, &late_key, json!({"expires_in_s": 300})).await;
    clock.advance(Duration::from_secs(301));

    let setup = json!({
        "node_pages": [site.frame("/first", &url), site.frame("/second", &on_second)],
        "expired_url": expired_url,
        "limited_url": limited_url,
        "origins": [first.base, second.base, late.base, site.origin()],
    });
    let seen = drive(&first, "console_portal_nodes.mjs", &key, setup).await;
    assert_eq!(seen["outside"], json!([]), "requests to other hosts");
    assert_eq!(
        seen["opened"],
        json!([first.base, second.base]),
        "the portal opened on each node: {seen}"
    );
    let limited = &seen["limited"];
    assert_eq!(limited["urls"], json!([kept["url"]]), "{limited}");
    for hidden in ["figures", "createForm", "dlqSummary", "bulkReplay"] {
        assert_eq!(limited[hidden], false, "{hidden}: {limited}");
    }
    assert_eq!(
        (&limited["overviewError"], &limited["error"]),
        (&json!(false), &json!(false)),
        "no refusal shown: {limited}"
    );
    assert_eq!(seen["revoked"]["revoked"], 2, "{seen}");
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
