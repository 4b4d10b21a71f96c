//! Tenant fairness, item 1: a node's delivery places are shared among tenants.
//!
//! One tenant (the hog) has slow receivers and a backlog; another (the victim)
//! sends one event. The receiver holds the hog's requests until the test lets
//! them go, so every check is an order ("the victim's request arrived while all
//! the hog's were held"), never a time.

use std::time::Duration;

use hookgate_server::RunOptions;
use hookgate_tests::holding_receiver::{Arrival, HoldingReceiver};
use hookgate_tests::{Backend, TestGateway};
use serde_json::json;

hookgate_tests::on_each_backend! {
    delivery_places_are_shared_between_tenants,
    a_place_that_comes_free_goes_to_the_waiting_tenant,
}

/// This node's places in these tests.
const NODE_PLACES: usize = 32;
/// The hog's endpoints, each wanting 16 places: twice the node's.
const HOG_ENDPOINTS: usize = 4;
/// The hog's events; each goes to every one of its endpoints.
const HOG_EVENTS: usize = 20;
/// Far longer than any step should take; only a stalled gateway reaches it.
const BOUND: Duration = Duration::from_secs(30);

async fn gateway(backend: Backend, tenant_places: usize) -> TestGateway {
    let mut bed = backend.bed().await;
    bed.config.cluster.node_max_in_flight = NODE_PLACES;
    bed.config.cluster.tenant_max_in_flight = tenant_places;
    TestGateway::start_bed(bed, RunOptions::default()).await
}

/// The hog: endpoints whose receiver holds every request, and a backlog.
async fn hog(gw: &TestGateway, rx: &HoldingReceiver) {
    let key = gw.tenant("hog").await;
    for n in 0..HOG_ENDPOINTS {
        let url = rx.held_url(&format!("hog-{n}"));
        let body = json!({"url": url, "max_in_flight": 16, "timeout_ms": 300_000});
        gw.endpoint("hog", &key, body).await;
    }
    for n in 0..HOG_EVENTS {
        gw.event("hog", &key, "work", json!({"n": n})).await;
    }
}

/// The victim: one endpoint answered at once; returns its key.
async fn victim(gw: &TestGateway, rx: &HoldingReceiver) -> String {
    let key = gw.tenant("victim").await;
    gw.endpoint("victim", &key, json!({"url": rx.prompt_url("victim")}))
        .await;
    key
}

fn is_victim(a: &Arrival) -> bool {
    a.path == "/prompt/victim"
}

fn hog_arrivals(arrivals: &[Arrival]) -> usize {
    arrivals
        .iter()
        .filter(|a| a.path.starts_with("/hold/"))
        .count()
}

/// The hog holds as many places as its share allows, never more; the victim's
/// delivery still arrives while every one of the hog's requests is held.
async fn delivery_places_are_shared_between_tenants(backend: Backend) {
    let share = NODE_PLACES / 2;
    let gw = gateway(backend, share).await;
    let rx = HoldingReceiver::start().await;
    let victim_key = victim(&gw, &rx).await;
    hog(&gw, &rx).await;
    let (_, full) = rx.wait_until(BOUND, |a| hog_arrivals(a) >= share).await;
    assert!(full, "the hog never took its {share} places");

    gw.event("victim", &victim_key, "work", json!({})).await;
    let (arrivals, arrived) = rx.wait_until(BOUND, |a| a.iter().any(is_victim)).await;
    assert!(
        arrived,
        "the victim's delivery waited for the hog's: {} of the hog's requests held",
        rx.held()
    );
    let seen = arrivals.iter().find(|a| is_victim(a)).unwrap();
    assert_eq!(
        seen.held_then, share,
        "the victim's request arrived while all the hog's were held"
    );
    assert_eq!(
        hog_arrivals(&arrivals),
        share,
        "the hog took more than its share"
    );

    // Released, the hog's whole backlog is delivered, never above its share.
    rx.release_all();
    let all = HOG_ENDPOINTS * HOG_EVENTS;
    let (arrivals, done) = rx.wait_until(BOUND, |a| hog_arrivals(a) >= all).await;
    assert!(
        done,
        "{} of {all} of the hog's deliveries arrived",
        hog_arrivals(&arrivals)
    );
}

/// With a tenant allowed the whole node, the hog holds every place; when one
/// comes free, it goes to the waiting victim, not back to the hog.
async fn a_place_that_comes_free_goes_to_the_waiting_tenant(backend: Backend) {
    let gw = gateway(backend, NODE_PLACES).await;
    let rx = HoldingReceiver::start().await;
    let victim_key = victim(&gw, &rx).await;
    hog(&gw, &rx).await;
    let (_, full) = rx
        .wait_until(BOUND, |a| hog_arrivals(a) >= NODE_PLACES)
        .await;
    assert!(full, "the hog never took all {NODE_PLACES} places");

    gw.event("victim", &victim_key, "work", json!({})).await;
    // Not the check, only its precondition: the scheduler has heard of the
    // victim's event (and found the node full) before a place comes free.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let before = rx.arrivals().len();
    assert!(
        !rx.arrivals().iter().any(is_victim),
        "the node had a free place"
    );
    rx.release(1);
    let (arrivals, next) = rx.wait_until(BOUND, |a| a.len() > before).await;
    assert!(next, "nothing took the place that came free");
    assert!(
        is_victim(&arrivals[before]),
        "the place that came free went to {}, not to the waiting victim",
        arrivals[before].path
    );
    rx.release_all();
}

/// An endpoint may not ask for more places than its tenant may hold.
#[tokio::test]
async fn max_in_flight_above_a_tenants_share_is_refused() {
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    let path = "/v1/tenants/acme/endpoints";
    let url = "http://127.0.0.1:9/hook";
    let (status, body) = gw
        .call(
            "POST",
            path,
            Some(&key),
            Some(json!({"url": url, "max_in_flight": 1024})),
        )
        .await;
    assert_eq!(status, 422, "{body}");
    assert_eq!(body["error"]["field"], "max_in_flight", "{body}");
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("cluster.tenant_max_in_flight"),
        "{message}"
    );
    assert!(message.contains("128"), "{message}");
    let (status, body) = gw
        .call(
            "POST",
            path,
            Some(&key),
            Some(json!({"url": url, "max_in_flight": 128})),
        )
        .await;
    assert_eq!(status, 201, "{body}");
}

/// Where a tenant may hold fewer places than the default `max_in_flight` (16),
/// an endpoint created without one takes what the tenant may hold: a field the
/// caller never sent is never why it is refused.
#[tokio::test]
async fn an_endpoint_without_max_in_flight_takes_the_default_within_the_tenants_share() {
    let gw = gateway(Backend::Sled, 8).await;
    let key = gw.tenant("acme").await;
    let ep = gw
        .endpoint("acme", &key, json!({"url": "http://127.0.0.1:9/hook"}))
        .await;
    assert_eq!(ep["max_in_flight"], 8, "{ep}");
}
