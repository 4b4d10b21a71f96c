//! The web console in a real browser: Debian's Chromium, headless, driven by
//! `playwright-core` (pinned in `tests/scripts`), against a gateway on loopback
//! and a receiver that fails each delivery's first attempts, then answers 200.
//! A tenant signs in, creates endpoints, sends events, watches a delivery fail
//! and be retried on its timeline, replays the DLQ and sees the deliveries
//! succeed, gets the API's field errors, runs the simulator, uploads and rolls
//! back a plugin; then the admin sees the whole gateway. What the pages showed
//! is checked here, and against the API. Screenshots of every page go to
//! `target/tmp/console-screens`. A machine without Chromium fails the test,
//! saying how to install it; it never passes silently.

use std::path::{Path, PathBuf};
use std::process::Command;

use hookgate_tests::receiver::Receiver;
use hookgate_tests::{ADMIN, TestGateway, plugin_wasm, test_config};
use serde_json::{Value, json};

const CHROMIUM: &str = "/usr/bin/chromium";

/// Where the screenshots are kept: `target/tmp/console-screens`.
fn screens() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("console-screens");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

/// Runs the browser journey; what the pages showed, scene by scene.
async fn drive(gw: &TestGateway, key: &str, setup: Value) -> Value {
    let chromium = std::env::var("HOOKGATE_CHROMIUM").unwrap_or_else(|_| CHROMIUM.to_owned());
    assert!(
        Path::new(&chromium).is_file(),
        "Chromium is missing at {chromium}: `bash tests/run.sh` installs it \
         (apt-get update && apt-get install -y chromium)"
    );
    let scripts = Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts");
    assert!(
        scripts
            .join("node_modules/playwright-core/package.json")
            .is_file(),
        "playwright-core is not installed: run `npm ci --prefix tests/scripts`"
    );
    let out = screens();
    let (base, key) = (gw.base.clone(), key.to_owned());
    let driven = tokio::task::spawn_blocking(move || {
        Command::new("node")
            .arg(scripts.join("console_browser.mjs"))
            .args([base.as_str(), key.as_str(), "acme"])
            .arg(&out)
            .arg(setup.to_string())
            .env("HOOKGATE_CHROMIUM", &chromium)
            .output()
            .expect("node runs")
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&driven.stdout);
    let seen: Value =
        serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap_or(Value::Null);
    assert!(
        driven.status.success() && seen["failed"].is_null(),
        "the browser run failed ({}; a screenshot is in {}): {}\n{stdout}",
        seen["failed"],
        screens().display(),
        String::from_utf8_lossy(&driven.stderr)
    );
    seen
}

/// The `name` fact of a list of `{facts: {...}}` items, as text.
fn fact<'a>(item: &'a Value, name: &str) -> &'a str {
    item["facts"][name].as_str().unwrap_or_default()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_works_through_every_page_of_the_console() {
    let receiver = Receiver::start(Vec::new()).await;
    let dir = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let mut config = test_config(dir.path());
    // Three failures in a row open a breaker: the DLQ's replay names it.
    config.breaker.failure_threshold = 3;
    let gw = TestGateway::start_with(config, dir, Default::default()).await;
    let key = gw.tenant("acme").await;
    let plugins = tempfile::tempdir().unwrap();
    let files: Vec<String> = ["ladder", "tutorial"]
        .iter()
        .map(|name| {
            let path = plugins.path().join(format!("{name}.wasm"));
            std::fs::write(&path, plugin_wasm(name)).unwrap();
            path.to_string_lossy().into_owned()
        })
        .collect();
    let setup = json!({
        "admin": ADMIN,
        "retrying_url": receiver.failing_first_url(2),
        "dying_url": receiver.failing_first_url(1),
        "plugins": files,
    });
    let seen = drive(&gw, &key, setup.clone()).await;
    let out = screens();

    // Sign-in and overview: the figures, charts filled by polling, the token
    // in the tab and never in the URL, nothing asked of another host.
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
    assert!(
        overview["charts"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c[1].as_u64() >= Some(2)),
        "{overview}"
    );
    assert_eq!(overview["tokenKept"], true, "{overview}");
    let url = overview["url"].as_str().unwrap();
    assert!(url.contains("/console/") && !url.contains(&key), "{url}");
    assert_eq!(seen["outside"], json!([]), "requests to other hosts");

    // Endpoints: both made, the refused one not; field errors on create and edit.
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
    let (_, ep) = gw
        .call(
            "GET",
            &format!("/v1/tenants/acme/endpoints/{id}"),
            Some(&key),
            None,
        )
        .await;
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
    let (_, secrets) = gw
        .call(
            "GET",
            &format!("/v1/tenants/acme/endpoints/{id}/secret"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(
        secrets["secrets"].as_array().map(Vec::len),
        Some(2),
        "rotated: {secrets}"
    );

    // The timeline: failed attempts while retried, "attempt n of N, next at",
    // then the 200 on the third attempt.
    let deliveries = &seen["deliveries"];
    let retrying = &deliveries["retrying"];
    let progress = retrying["progress"].as_str().unwrap();
    assert!(progress.contains(" of 6, next at "), "{retrying}");
    let first = &retrying["attempts"][0];
    assert_eq!(first["failed"], true, "{retrying}");
    assert_eq!(fact(first, "Outcome"), "HTTP 503");
    assert_eq!(fact(first, "Decided by"), "builtin");
    assert!(
        fact(first, "Decision").starts_with("retry in 3 s"),
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
    assert_eq!(
        deliveries["dead"].as_array().map(Vec::len),
        Some(3),
        "{deliveries}"
    );

    // The DLQ: grouped by reason, the dry run's count confirmed, the open
    // breaker named, the single replay; then all three delivered.
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
    let (_, listed) = gw
        .call(
            "GET",
            &format!("/v1/tenants/acme/deliveries?state=succeeded&endpoint_id={dying}"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(listed["data"].as_array().map(Vec::len), Some(3), "{listed}");
    let (_, summary) = gw
        .call("GET", "/v1/tenants/acme/dlq/summary", Some(&key), None)
        .await;
    assert_eq!(summary["dead"], 0, "{summary}");

    // The simulator: the field error, then six cards, each with its two histograms.
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
    }

    // Plugins: two versions with their checks, rolled back to the first, bound.
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
    assert!(
        plugins_seen["rolledBack"]
            .as_str()
            .unwrap()
            .contains("version 1")
    );
    let (_, plugin) = gw
        .call(
            "GET",
            "/v1/tenants/acme/plugins/retry-rules",
            Some(&key),
            None,
        )
        .await;
    assert_eq!(plugin["active_version"], 1, "{plugin}");
    let (_, ep) = gw
        .call(
            "GET",
            &format!("/v1/tenants/acme/endpoints/{id}"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(ep["plugin"], "retry-rules", "{ep}");
    assert!(
        plugins_seen["bindings"][0]
            .as_str()
            .unwrap()
            .starts_with(id)
    );

    // The admin: signed out cleanly, then the whole gateway's figures.
    let admin = &seen["admin"];
    assert_eq!(admin["cleared"], true, "{admin}");
    assert_eq!(admin["scope"], "The whole gateway", "{admin}");

    for shot in [
        "overview.png",
        "overview-phone.png",
        "overview-admin.png",
        "endpoints.png",
        "endpoint.png",
        "deliveries.png",
        "delivery-retrying.png",
        "delivery-timeline.png",
        "dlq.png",
        "dlq-replayed.png",
        "deliveries-replayed.png",
        "policies.png",
        "simulator.png",
        "plugins.png",
    ] {
        assert!(out.join(shot).is_file(), "{shot} missing");
    }
}
