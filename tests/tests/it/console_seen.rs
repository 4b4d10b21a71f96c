//! What the console showed in the browser journey, checked scene by scene,
//! and against the API: each function takes that scene's findings.

use hookgate_tests::TestGateway;
use serde_json::{Value, json};

/// A GET with the tenant's key; the JSON answer.
async fn get(gw: &TestGateway, key: &str, path: &str) -> Value {
    gw.call("GET", path, Some(key), None).await.1
}

/// The `name` fact of a list of `{facts: {...}}` items, as text.
fn fact<'a>(item: &'a Value, name: &str) -> &'a str {
    item["facts"][name].as_str().unwrap_or_default()
}

/// Sign-in and overview: the figures, the stored history's charts over the
/// range chosen (which sets what is asked for, and stays through a poll), the
/// token in the tab and never in the URL, nothing asked of another host.
pub(crate) fn overview(seen: &Value, key: &str) {
    // A wrong token first: the API's refusal, message and code, on the page.
    let refused = seen["refused"].as_str().unwrap();
    assert!(refused.contains("(unauthorized)"), "{refused}");
    let overview = &seen["overview"];
    let names: Vec<&str> = overview["figures"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f[0].as_str().unwrap())
        .collect();
    for name in [
        "Success rate",
        "Retry rate",
        "p95 attempt latency",
        "p99 attempt latency",
        "DLQ size",
        "Open breakers",
    ] {
        assert!(names.contains(&name), "{name} missing from {overview}");
    }
    // The last day by default; the new tenant has made no attempt yet.
    assert_eq!(overview["range"], "24", "{overview}");
    let charts = &overview["charts"];
    history_charts(charts, 24.0);
    assert_eq!(charts[0]["legend"], json!(["delivered 0", "failed 0"]));
    assert_eq!(charts[1]["legend"], json!(["p50 –", "p99 –"]));
    assert_eq!(
        (&charts[0]["bars"], &charts[1]["points"]),
        (&json!(0), &json!(0))
    );
    // Each range chosen is asked of the tenant's history, and drawn.
    for hours in [1_u32, 48, 24] {
        let chosen = &overview["ranges"][hours.to_string()];
        let requested = chosen["requested"].as_str().unwrap();
        assert!(
            requested.starts_with("/v1/tenants/acme/stats/history?since="),
            "{chosen}"
        );
        let ago = chosen["hoursAgo"].as_f64().unwrap();
        assert!((ago - f64::from(hours)).abs() < 0.05, "{hours} h: {chosen}");
        history_charts(&chosen["charts"], f64::from(hours));
    }
    // A poll keeps the range chosen.
    let kept = &overview["kept"];
    assert_eq!(kept["value"], "1", "{kept}");
    history_charts(&kept["charts"], 1.0);
    overview_fixtures(&overview["fixtures"]);
    assert_eq!(overview["tokenKept"], true, "{overview}");
    let url = overview["url"].as_str().unwrap();
    assert!(url.contains("/console/") && !url.contains(key), "{url}");
    assert_eq!(seen["outside"], json!([]), "requests to other hosts");
    for page in ["overview", "deliveries", "dlq"] {
        assert_eq!(
            seen[page]["phoneFits"], true,
            "{page} is wider than a phone"
        );
    }
}

/// The history's two charts, outcomes then latency, each with its axes'
/// ticks, a legend of two, and a time axis of `hours` widened to whole
/// 5-minute buckets.
fn history_charts(charts: &Value, hours: f64) {
    let charts = charts.as_array().unwrap();
    let names: Vec<&Value> = charts.iter().map(|c| &c["chart"]).collect();
    assert_eq!(names, [&json!("outcomes"), &json!("latency")], "{charts:?}");
    for chart in charts {
        assert!(chart["x"].as_u64() >= Some(2), "time ticks: {chart}");
        assert!(chart["y"].as_u64() >= Some(2), "value ticks: {chart}");
        assert_eq!(chart["legend"].as_array().map(Vec::len), Some(2), "{chart}");
        let span = chart["hours"].as_f64().unwrap();
        assert!(
            span > hours - 0.01 && span <= hours + 5.0 / 60.0 + 0.01,
            "{hours} h: {chart}"
        );
    }
}

/// The overview's history drawn from fixtures: a partial answer says so, a
/// whole one does not, and a gateway keeping none gets a note, not charts.
fn overview_fixtures(fixtures: &Value) {
    let partial = &fixtures["partial"];
    assert_eq!(
        partial["notes"],
        json!(["span", "incomplete"]),
        "{fixtures}"
    );
    assert_eq!(
        (&partial["bars"], &partial["points"]),
        (&json!(2), &json!(4))
    );
    assert_eq!(fixtures["whole"]["notes"], json!(["span"]), "{fixtures}");
    let none = &fixtures["none"];
    assert_eq!(none["notes"], json!(["unavailable"]), "{fixtures}");
    assert_eq!(none["bars"], Value::Null, "{fixtures}");
}

/// Endpoints: both made, the refused one not; field errors on create and
/// edit; only the edited fields sent; keyboard, rotation. Returns the retried
/// endpoint's id.
pub(crate) async fn endpoints(gw: &TestGateway, key: &str, seen: &Value, setup: &Value) -> String {
    let endpoints = &seen["endpoints"];
    assert!(
        endpoints["empty"]
            .as_str()
            .unwrap()
            .contains("No endpoints yet")
    );
    let mut listed: Vec<&str> = endpoints["listed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|u| u.as_str().unwrap())
        .collect();
    listed.sort_unstable();
    let mut made = [
        setup["retrying_url"].as_str().unwrap(),
        setup["dying_url"].as_str().unwrap(),
    ];
    made.sort_unstable();
    assert_eq!(listed, made, "the refused one was not made: {endpoints}");
    assert_eq!(endpoints["columns"][7], "Success (24 h)", "{endpoints}");
    // No attempt yet: a dash for each.
    let before: Vec<&Value> = endpoints["successBefore"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c[1])
        .collect();
    assert_eq!(before, [&json!("–"), &json!("–")], "{endpoints}");
    assert!(
        endpoints["secretShown"]
            .as_str()
            .unwrap()
            .contains("whsec_")
    );
    for (field, alert) in [
        ("createFieldError", "createAlert"),
        ("editFieldError", "editAlert"),
    ] {
        assert!(
            endpoints[field].as_str().unwrap().contains("max_attempts"),
            "{endpoints}"
        );
        assert!(
            endpoints[alert]
                .as_str()
                .unwrap()
                .contains("validation_failed"),
            "{endpoints}"
        );
    }
    assert_eq!(endpoints["effective"]["max_attempts"], "6", "{endpoints}");
    assert_eq!(endpoints["keyboard"]["reached"], true, "{endpoints}");
    assert!(
        endpoints["keyboard"]["disabled"]
            .as_str()
            .unwrap()
            .starts_with("disabled")
    );
    assert_eq!(endpoints["keyboard"]["enabled"], "enabled", "{endpoints}");
    assert!(endpoints["rotated"].as_str().unwrap().contains("whsec_"));
    let id = endpoints["id"].as_str().unwrap();
    let ep = get(gw, key, &format!("/v1/tenants/acme/endpoints/{id}")).await;
    assert_eq!(ep["policy"]["max_attempts"], 6, "{ep}");
    // Only the edited fields were sent: the rest, and a change made by another
    // client while the form was open, stay.
    assert_eq!(ep["rate_limit_per_s"], 50, "{ep}");
    assert_eq!(ep["event_types"], json!(["order.*"]), "{ep}");
    assert_eq!(
        (&ep["policy"]["strategy"], &ep["policy"]["jitter"]),
        (&json!("fixed"), &json!("none")),
        "{ep}"
    );
    assert_eq!(
        (ep["description"].as_str(), ep["disabled"].as_bool()),
        (Some("orders, retried"), Some(false))
    );
    let secrets = get(gw, key, &format!("/v1/tenants/acme/endpoints/{id}/secret")).await;
    assert_eq!(
        secrets["secrets"].as_array().map(Vec::len),
        Some(2),
        "rotated: {secrets}"
    );
    // The signature choices made in the form, and the v1a public key shown
    // (the one rotated out since, which still signs).
    assert_eq!(
        ep["signature"],
        json!({"headers": "both", "schemes": ["v1", "v1a"]}),
        "{ep}"
    );
    let signature = &endpoints["signature"];
    assert_eq!(
        signature["text"], "v1 and v1a under webhook-* and svix-*",
        "{endpoints}"
    );
    assert_eq!(
        signature["publicKey"], secrets["secrets"][1]["public_key"],
        "{secrets}"
    );

    id.to_owned()
}

/// The timeline: failed attempts while retried, "attempt n of N, next at",
/// then the 200 on the third attempt.
pub(crate) fn deliveries(seen: &Value) {
    // Filtered by its event's id: the one delivery of that event.
    let d = &seen["deliveries"];
    assert_eq!(d["byEvent"], json!([d["deliveryId"]]), "{d}");
    // Cursor paging: 25, then the last 1, then the same 25 again; no id twice.
    let paging = &seen["deliveries"]["paging"];
    let ids = |name: &str| -> Vec<String> {
        paging[name]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_str().unwrap().to_owned())
            .collect()
    };
    let (first, second) = (ids("first"), ids("second"));
    assert_eq!((first.len(), second.len()), (25, 1), "{paging}");
    assert!(!first.contains(&second[0]), "{paging}");
    assert_eq!(ids("back"), first, "{paging}");
    assert_eq!(paging["lastPage"], true, "{paging}");
    let deliveries = &seen["deliveries"];
    let retrying = &deliveries["retrying"];
    let progress = retrying["progress"].as_str().unwrap();
    assert!(progress.contains(" of 6, next at "), "{retrying}");
    let first = &retrying["attempts"][0];
    assert_eq!(first["failed"], true, "{retrying}");
    assert_eq!(fact(first, "Outcome"), "HTTP 503");
    assert_eq!(fact(first, "Decided by"), "builtin");
    assert!(
        fact(first, "Decision").starts_with("retry in 5 s"),
        "{first}"
    );
    assert!(
        first["snippet"]
            .as_str()
            .unwrap()
            .contains("not yet: attempt 1")
    );
    let done = deliveries["done"]["attempts"].as_array().unwrap();
    assert_eq!(done.len(), 3, "{deliveries}");
    assert_eq!(
        done.iter().map(|a| fact(a, "Outcome")).collect::<Vec<_>>(),
        ["HTTP 503", "HTTP 503", "HTTP 200"]
    );
    assert!(
        deliveries["done"]["progress"]
            .as_str()
            .unwrap()
            .contains("delivered after 3 attempts")
    );
    // Each attempt with its id and the request headers it sent.
    let event_id = deliveries["eventId"].as_str().unwrap();
    for a in done {
        assert!(a["attemptId"].as_str().unwrap().starts_with("atm_"), "{a}");
        assert_eq!(a["headersRecorded"], "yes", "{a}");
        let header = |name: &str| {
            a["headers"]
                .as_array()
                .unwrap()
                .iter()
                .find(|row| row[0] == name)
                .map(|row| row[1].as_str().unwrap().to_owned())
        };
        assert_eq!(header("webhook-id").as_deref(), Some(event_id), "{a}");
        assert!(
            header("webhook-signature").is_some_and(|s| s.starts_with("v1,")),
            "{a}"
        );
    }
    assert_eq!(
        deliveries["dead"].as_array().map(Vec::len),
        Some(3),
        "{deliveries}"
    );
}

/// The endpoint list's success column once deliveries were made: the retried
/// endpoint's three attempts (two 503s, then the 200) as the API's history
/// counts them; state and breaker badges; a dash everywhere, and no error,
/// from a gateway without the history route.
pub(crate) fn success(seen: &Value) {
    let success = &seen["success"];
    let counted = &success["counted"];
    assert_eq!(
        (
            &counted["attempts"],
            &counted["delivered"],
            &counted["failed"]
        ),
        (&json!(3), &json!(1), &json!(2)),
        "{success}"
    );
    assert_eq!(success["shown"], "33.3 % of 3", "{success}");
    let cells = success["cells"].as_array().unwrap();
    assert_eq!(cells.len(), 3, "retried, dying and pinged: {success}");
    for cell in cells {
        let text = cell[1].as_str().unwrap();
        assert!(text == "–" || text.contains(" % of "), "{cell}");
    }
    let dying = seen["dlq"]["dyingId"].as_str().unwrap();
    for row in success["rows"].as_array().unwrap() {
        assert_eq!(
            (&row["state"]["badge"], &row["state"]["tone"]),
            (&json!("enabled"), &json!("tone-good")),
            "{row}"
        );
        let breaker = &row["breaker"];
        let tone = match breaker["badge"].as_str().unwrap() {
            "closed" => "tone-good",
            "open" => "tone-bad",
            _ => "tone-warn",
        };
        assert_eq!(breaker["tone"], tone, "{row}");
        // Three failures in a row opened the dying endpoint's breaker.
        if row["id"] == dying {
            let text = breaker["text"].as_str().unwrap();
            assert!(text.starts_with("open until "), "{row}");
        }
    }
    let without = &success["withoutRoute"];
    assert_eq!(without["alert"], "", "{without}");
    assert_eq!(without["links"], 3, "{without}");
    let dashes: Vec<&Value> = without["cells"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| &c[1])
        .collect();
    assert_eq!(dashes, [&json!("–"); 3], "{without}");
}

/// The DLQ: grouped by reason, the dry run's count confirmed, the open
/// breaker named, the single replay; then all three delivered.
pub(crate) async fn dlq(gw: &TestGateway, key: &str, seen: &Value) {
    let dlq = &seen["dlq"];
    assert_eq!(dlq["reasons"], json!([["max_attempts", "3"]]), "{dlq}");
    assert!(
        dlq["confirmation"]
            .as_str()
            .unwrap()
            .starts_with("2 dead deliveries match"),
        "{dlq}"
    );
    let result = dlq["result"].as_str().unwrap();
    let dying = dlq["dyingId"].as_str().unwrap();
    assert!(
        result.starts_with("Replayed 2 dead deliveries."),
        "{result}"
    );
    assert!(
        result.contains(&format!("The breaker of {dying} is open")),
        "{result}"
    );
    assert_eq!(dlq["succeeded"].as_array().map(Vec::len), Some(3), "{dlq}");
    let listed = get(
        gw,
        key,
        &format!("/v1/tenants/acme/deliveries?state=succeeded&endpoint_id={dying}"),
    )
    .await;
    assert_eq!(listed["data"].as_array().map(Vec::len), Some(3), "{listed}");
    let summary = get(gw, key, "/v1/tenants/acme/dlq/summary").await;
    assert_eq!(summary["dead"], 0, "{summary}");
}

/// The simulator: the field error, then six cards, each with its two histograms.
pub(crate) fn policies(seen: &Value, id: &str) {
    let policies = &seen["policies"];
    assert_eq!(policies["filled"], "6", "{policies}");
    assert!(
        policies["fieldError"]
            .as_str()
            .unwrap()
            .contains("max_attempts"),
        "{policies}"
    );
    let cards = policies["cards"].as_array().unwrap();
    assert_eq!(cards.len(), 6, "{policies}");
    assert_eq!(cards[0]["title"], format!("{id}'s policy, edited"));
    for card in cards {
        let bars = card["bars"].as_array().unwrap();
        assert_eq!(bars.len(), 2, "{card}");
        assert!(bars[0].as_u64() > Some(0), "a first retry wave: {card}");
        // The recovery histogram holds the recovery peak.
        let peak = card["figures"]["Recovery peak"].as_str().unwrap();
        assert_eq!(format!("{}/s", card["most"][1]), peak, "{card}");
    }
}

/// Plugins: two versions with their checks, rolled back to the first, bound.
pub(crate) async fn plugins(gw: &TestGateway, key: &str, seen: &Value, id: &str) {
    let plugins_seen = &seen["plugins"];
    assert!(
        plugins_seen["uploads"][1]
            .as_str()
            .unwrap()
            .contains("version 2"),
        "{plugins_seen}"
    );
    assert!(
        plugins_seen["before"][0][3]
            .as_str()
            .unwrap()
            .contains("passed"),
        "{plugins_seen}"
    );
    // Each version's runs on this gateway: none yet, just uploaded.
    assert_eq!(
        plugins_seen["before"][0][4].as_str(),
        Some("none yet"),
        "{plugins_seen}"
    );
    assert!(
        plugins_seen["rolledBack"]
            .as_str()
            .unwrap()
            .contains("version 1")
    );
    let plugin = get(gw, key, "/v1/tenants/acme/plugins/retry-rules").await;
    assert_eq!(plugin["active_version"], 1, "{plugin}");
    let ep = get(gw, key, &format!("/v1/tenants/acme/endpoints/{id}")).await;
    assert_eq!(ep["plugin"], "retry-rules", "{ep}");
    assert!(
        plugins_seen["bindings"][0]
            .as_str()
            .unwrap()
            .starts_with(id)
    );
}

/// The admin: signed out cleanly, then the whole gateway's figures, then a
/// tenant picked from the list and its pages.
pub(crate) fn admin(seen: &Value) {
    let admin = &seen["admin"];
    assert_eq!(admin["cleared"], true, "{admin}");
    assert_eq!(admin["scope"], "The whole gateway", "{admin}");
    // The whole gateway's history, drawn as the API counts it.
    let history = &admin["history"];
    assert_eq!(history["tenant"], Value::Null, "{history}");
    let totals = &history["api"];
    assert!(totals["attempts"].as_u64() > Some(0), "{history}");
    history_charts(&history["drawn"], 24.0);
    let drawn = &history["drawn"];
    assert_eq!(
        drawn[0]["legend"],
        json!([
            format!("delivered {}", totals["delivered"]),
            format!("failed {}", totals["failed"])
        ]),
        "{history}"
    );
    assert_eq!(drawn[0]["bars"], history["apiBars"], "{history}");
    assert!(drawn[1]["points"].as_u64() >= Some(1), "{history}");
    // Then picks tenant acme: its five endpoints (the last one a RabbitMQ
    // destination), seen with the admin token.
    assert_eq!(admin["picked"], "admin", "{admin}");
    assert_eq!(admin["endpoints"], 5, "{admin}");
}
