//! `POST /v1/policy/simulate` against a real gateway: any tenant key or the admin
//! token gets the CLI's JSON report, consistent with what was asked; a preset runs by
//! name; a bad policy field, too many events and a missing token are refused.

use hookgate_server::{EffectivePolicy, SimulationReport};
use hookgate_tests::{ADMIN, TestGateway};
use serde_json::{Value, json};

const ROUTE: &str = "/v1/policy/simulate";

/// Checks that `report` is whole and agrees with itself and with the request.
fn check_report(report: &SimulationReport, events: usize, outage_ms: u64) {
    let config = &report.config;
    assert_eq!((config.events, config.outage_ms), (events, outage_ms));
    assert_eq!(
        report.schedule[0].attempts, events,
        "every delivery tries once"
    );
    let made: usize = report.schedule.iter().map(|row| row.attempts).sum();
    assert_eq!(made, report.total_attempts);
    let dead: usize = report.dead.values().sum();
    assert_eq!(report.delivered + dead, events);
    // The per-second histogram holds every retry, in time order, up to the last delivery.
    let arrivals = &report.retry_arrivals;
    let counted: u64 = arrivals.iter().map(|s| u64::from(s.count)).sum();
    assert_eq!(counted, report.retries() as u64);
    assert!(arrivals.windows(2).all(|w| w[0].second < w[1].second));
    let busiest = arrivals.iter().map(|s| s.count).max();
    assert_eq!(busiest, Some(report.peak_per_second));
    let (Some(last), Some(delivered_ms)) = (arrivals.last(), report.last_delivery_ms) else {
        panic!("a 2 min outage delays and then delivers: {report:?}");
    };
    assert!(
        last.second * 1_000 >= outage_ms,
        "retries run past the outage"
    );
    assert!(
        last.second * 1_000 <= delivered_ms,
        "and stop at the last delivery"
    );
}

async fn simulate(gw: &TestGateway, token: Option<&str>, body: Value) -> (u16, Value) {
    gw.call("POST", ROUTE, token, Some(body)).await
}

#[tokio::test]
async fn tenants_and_the_admin_get_the_report() {
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    let body = json!({"events": 300, "outage": "2m", "seed": 7, "policy": {"jitter": "full"}});
    let (s, tenant) = simulate(&gw, Some(&key), body.clone()).await;
    assert_eq!(s, 200, "{tenant}");
    let report: SimulationReport = serde_json::from_value(tenant.clone()).unwrap();
    check_report(&report, 300, 120_000);
    assert_eq!((report.config.seed, report.config.attempt_ms), (7, 50));
    assert_eq!(tenant["config"]["policy"]["jitter"], "full");
    let (s, admin) = simulate(&gw, Some(ADMIN), body).await;
    assert_eq!(
        (s, &admin),
        (200, &tenant),
        "the same request, the same report"
    );
    gw.stop().await;
}

#[tokio::test]
async fn a_preset_runs_by_name_and_the_defaults_are_the_clis() {
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    let (s, b) = simulate(
        &gw,
        Some(&key),
        json!({"preset": "svix", "outage": 120_000}),
    )
    .await;
    assert_eq!(s, 200, "{b}");
    let report: SimulationReport = serde_json::from_value(b).unwrap();
    check_report(&report, 1_000, 120_000);
    assert_eq!(Some(report.config.policy), EffectivePolicy::preset("svix"));
    let (s, b) = simulate(&gw, Some(&key), json!({})).await;
    assert_eq!(s, 200, "{b}");
    assert_eq!(
        (
            &b["config"]["events"],
            &b["config"]["outage_ms"],
            &b["config"]["seed"]
        ),
        (&json!(1_000), &json!(600_000), &json!(1))
    );
    assert_eq!(b["config"]["policy"]["preset"], "default");
    gw.stop().await;
}

#[tokio::test]
async fn bad_requests_are_refused() {
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    let cases = [
        (json!({"policy": {"base_ms": 0}}), 422, "policy.base_ms"),
        (
            json!({"policy": {"max_attempts": 101}}),
            422,
            "policy.max_attempts",
        ),
        (json!({"preset": "turbo"}), 422, "preset"),
        (json!({"events": 100_001}), 422, "events"),
        (json!({"outage": "8d"}), 422, "outage"),
        (json!({"evnts": 10}), 400, "evnts"),
    ];
    for (body, status, field) in cases {
        let (s, b) = simulate(&gw, Some(&key), body.clone()).await;
        assert_eq!(s, status, "{body}: {b}");
        assert_eq!(b["error"]["field"], field, "{body}: {b}");
    }
    let (s, b) = simulate(&gw, None, json!({})).await;
    assert_eq!(
        (s, b["error"]["code"].as_str()),
        (401, Some("unauthorized"))
    );
    let forged = "hgk_not-a-real-key-0123456789";
    assert_eq!(simulate(&gw, Some(forged), json!({})).await.0, 401);
    gw.stop().await;
}
