//! What the console's platform scene showed (`platform_scene.mjs`): an
//! endpoint made through the form with a uid, a name, channels, metadata, a
//! filter and a sensitive header; the API's place in a refused filter; the
//! sensitive value nowhere on any page; an edit that keeps it (the receiver
//! still gets it); an event's payload as sent, then expunged. And the stats
//! chart and request headers drawn from fixtures of the documented shapes.

use hookgate_tests::receiver::Receiver;
use serde_json::{Value, json};

/// The text of fact `name` in a `{name: text}` map.
fn fact<'a>(facts: &'a Value, name: &str) -> &'a str {
    facts[name].as_str().unwrap_or_default()
}

/// The endpoint: made and shown with its platform fields, the secret never on a page.
fn endpoint(seen: &Value) {
    let created = &seen["created"];
    // The example helper puts a filter in the box that is JSON.
    let example = created["example"].as_str().unwrap();
    assert!(
        serde_json::from_str::<Value>(example).is_ok_and(|v| v.is_object()),
        "{example}"
    );
    let refused = created["createRefused"].as_str().unwrap();
    assert!(
        refused.starts_with("filter.data.amount.$gtt: "),
        "{refused}"
    );
    let row = &created["row"];
    // The name links to the page, the id under it.
    assert!(
        row[0].as_str().unwrap().starts_with("Billing (EU)ep_"),
        "{row}"
    );
    assert_eq!(
        (&row[1], &row[3]),
        (&json!("billing-eu"), &json!("eu, account:42")),
        "{row}"
    );
    assert_eq!(row[4], r#"{"data.amount":{"$gt":100}}"#, "{row}");

    let edited = &seen["edited"];
    let shown = &edited["shown"];
    assert_eq!(shown["title"], "Billing (EU)", "{shown}");
    let facts = &shown["facts"];
    assert_eq!(fact(facts, "Uid"), "billing-eu", "{facts}");
    assert_eq!(fact(facts, "Channels"), "eu, account:42", "{facts}");
    assert_eq!(
        fact(facts, "Filter"),
        "{\n  \"data.amount\": {\n    \"$gt\": 100\n  }\n}"
    );
    assert_eq!(fact(facts, "Metadata"), "team: billing", "{facts}");
    assert_eq!(
        fact(facts, "Headers"),
        "x-api-key: ******** (sensitive)x-team: orders",
        "{facts}"
    );
    // The edit form holds the mask, in a password box, never the value.
    assert_eq!(
        edited["headerRows"],
        json!([
            {"name": "x-api-key", "value": "********", "type": "password"},
            {"name": "x-team", "value": "orders", "type": "text"},
        ])
    );
    let refused = edited["editRefused"].as_str().unwrap();
    assert!(
        refused.starts_with("filter.$or[1].data.region.$regex: "),
        "{refused}"
    );
    assert!(
        edited["saved"].as_str().unwrap().contains("Saved"),
        "{edited}"
    );
    let after = &edited["after"];
    assert_eq!(after["title"], "Billing (EU), edited", "{after}");
    assert_eq!(
        fact(&after["facts"], "Headers"),
        "x-api-key: ******** (sensitive)x-team: shipping"
    );
    for place in [
        &created["listLeaks"],
        &edited["pageLeaks"],
        &edited["savedLeaks"],
        &seen["delivery"]["deliveryLeaks"],
    ] {
        assert_eq!(place, &json!([]), "the sensitive value showed: {seen}");
    }
}

/// The delivery page: the payload as sent (a number past JavaScript's
/// precision intact), the event's channels; then expunged.
fn delivery(seen: &Value) {
    let delivery = &seen["delivery"];
    assert_eq!(
        (&delivery["deliveries"], &delivery["filteredDeliveries"]),
        (&json!(1), &json!(0)),
        "the filter routes: {delivery}"
    );
    assert_eq!(
        delivery["payload"],
        "{\n  \"data\": {\n    \"amount\": 150,\n    \"region\": \"eu\",\n    \"big\": 12345678901234567890\n  }\n}"
    );
    assert!(
        delivery["payloadSummary"]
            .as_str()
            .unwrap()
            .starts_with("Payload (")
            && delivery["folded"] == true,
        "the payload folds under its summary: {delivery}"
    );
    assert_eq!(
        fact(&delivery["eventFacts"], "Channels"),
        "eu",
        "{delivery}"
    );
    // The request headers the attempt sent: the sensitive one masked, the
    // edited one as edited.
    let sent = delivery["sentHeaders"].as_array().unwrap();
    for pair in [
        json!(["x-api-key", "********"]),
        json!(["x-team", "shipping"]),
    ] {
        assert!(sent.contains(&pair), "{pair} not among {delivery}");
    }
    assert_eq!(delivery["expunge"], 204, "{delivery}");
    assert!(
        delivery["expunged"]
            .as_str()
            .unwrap()
            .starts_with("Payload expunged at "),
        "{delivery}"
    );
}

/// The stats chart and request headers, drawn from fixtures: totals as
/// figures, two non-empty buckets with their values on hover, axes with
/// ticks; a masked header shown as masked, an old attempt "not recorded".
/// The endpoint page's stats from the gateway: its one delivered attempt in
/// the figures, as the API counts it, in one bar, with axes.
fn live_stats(seen: &Value) {
    let stats = &seen["stats"];
    let figures = &stats["figures"];
    for (name, want) in [
        ("attempts", "1"),
        ("delivered", "1"),
        ("failed", "0"),
        ("pending", "0"),
        ("dead", "0"),
    ] {
        assert_eq!(figures[name], want, "{name}: {stats}");
    }
    assert_eq!(
        (
            &stats["api"]["totals"]["attempts"],
            &stats["api"]["totals"]["delivered"]
        ),
        (&json!(1), &json!(1)),
        "{stats}"
    );
    let drawn = &stats["drawn"];
    assert_eq!(drawn["bars"], 1, "{stats}");
    assert_eq!(drawn["unavailable"], false, "{stats}");
    assert!(drawn["points"].as_u64().unwrap() >= 1, "{stats}");
    assert!(drawn["ticks"]["x"].as_u64().unwrap() >= 2, "{stats}");
    assert!(drawn["ticks"]["y"].as_u64().unwrap() >= 2, "{stats}");
    let titles = drawn["barTitles"].to_string();
    assert!(titles.contains("1 delivered"), "{stats}");
    // The range chosen is the range drawn, in whole 5-minute buckets.
    let span = |h: &str| stats["spans"][h].as_f64().unwrap();
    assert!((24.0..=24.0 + 2.0 / 12.0).contains(&span("24")), "{stats}");
    assert!((1.0..=1.0 + 2.0 / 12.0).contains(&span("1")), "{stats}");
}

fn fixtures(seen: &Value) {
    let stats = &seen["fixtures"]["stats"];
    assert_eq!(
        stats["figures"],
        json!({"attempts": "20", "delivered": "16", "failed": "4", "p50_ms": "120 ms",
               "p99_ms": "480 ms", "pending": "2", "dead": "1"})
    );
    assert_eq!(stats["bars"], 2, "{stats}");
    let titles = stats["barTitles"].as_array().unwrap();
    assert_eq!(titles.len(), 3, "{stats}");
    assert!(
        titles[0]
            .as_str()
            .unwrap()
            .ends_with(": 8 delivered, 2 failed"),
        "{stats}"
    );
    assert_eq!(stats["points"], 4, "two buckets of p50 and p99: {stats}");
    for ticks in [&stats["outcomeTicks"], &stats["latencyTicks"]] {
        assert!(ticks["x"].as_array().unwrap().len() >= 2, "{stats}");
        assert!(ticks["y"].as_array().unwrap().len() >= 3, "{stats}");
    }
    assert_eq!(stats["outcomeTicks"]["y"][0], "0", "{stats}");
    assert_eq!(stats["latencyTicks"]["y"][1], "200 ms", "{stats}");
    assert_eq!(
        stats["legend"],
        json!(["p50 120 ms", "p99 480 ms"]),
        "{stats}"
    );
    let headers = &seen["fixtures"]["headers"];
    assert_eq!(headers["recorded"], "yes", "{headers}");
    assert_eq!(
        headers["rows"],
        json!([["x-api-key", "********"], ["webhook-id", "msg_1"]])
    );
    assert_eq!(headers["old"], "Request headers: not recorded", "{headers}");
}

/// The scene's findings, and what the receiver got: the edit kept the
/// sensitive header's value and sent the edited one.
pub(crate) fn platform(seen: &Value, receiver: &Receiver, sensitive: &str) {
    let platform = &seen["platform"];
    endpoint(platform);
    delivery(platform);
    fixtures(platform);
    live_stats(platform);
    let api = &platform["api"];
    assert_eq!(
        api["headers"],
        json!({"x-api-key": "********", "x-team": "shipping"}),
        "{api}"
    );
    let sent: Vec<_> = receiver
        .received()
        .into_iter()
        .filter(|r| r.path == "/platform")
        .collect();
    assert_eq!(sent.len(), 1, "one delivery reached the endpoint");
    assert_eq!(sent[0].header("x-api-key"), Some(sensitive));
    assert_eq!(sent[0].header("x-team"), Some("shipping"));
}
