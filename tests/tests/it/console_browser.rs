//! The web console in a real browser: Debian's Chromium, headless, driven by
//! `playwright-core` (pinned in `tests/scripts`), against a gateway on loopback
//! and a receiver that fails each delivery's first attempts, then answers 200.
//! A tenant signs in, creates endpoints, sends events, watches a delivery fail
//! and be retried on its timeline, replays the DLQ and sees the deliveries
//! succeed, gets the API's field errors, runs the simulator, uploads and rolls
//! back a plugin, makes and edits an endpoint with the platform model's fields
//! (a sensitive header among them) and reads an event's payload; then the
//! admin sees the whole gateway. What the pages showed is checked in
//! `console_seen.rs` and `console_platform_seen.rs`, against the API and the
//! receiver. Screenshots of every page go to
//! `target/tmp/console-screens`. A machine without Chromium fails the test,
//! saying how to install it; it never passes silently.

use std::path::{Path, PathBuf};
use std::process::Command;

use hookgate_tests::receiver::Receiver;
use hookgate_tests::{ADMIN, TestGateway, plugin_wasm, test_config};
use serde_json::{Value, json};

use super::{console_platform_seen, console_seen};

/// A sensitive header's value: it reaches the receiver and no page.
const SENSITIVE: &str = "k-sensitive-7c1f0a";

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_works_through_every_page_of_the_console() {
    let receiver = Receiver::start(Vec::new()).await;
    let dir = std::sync::Arc::new(tempfile::tempdir().unwrap());
    let mut config = test_config(dir.path());
    // Three failures in a row open a breaker: the DLQ's replay names it.
    config.breaker.failure_threshold = 3;
    // Attempts reach the endpoint stats within a tenth of a second.
    config.stats.flush_ms = 100;
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
        "ok_url": receiver.url(),
        "plugins": files,
        "platform_url": receiver.url().replace("/hook", "/platform"),
        "sensitive_value": SENSITIVE,
    });
    let seen = drive(&gw, &key, setup.clone()).await;
    console_seen::overview(&seen, &key);
    let id = console_seen::endpoints(&gw, &key, &seen, &setup).await;
    console_seen::deliveries(&seen);
    console_seen::dlq(&gw, &key, &seen).await;
    console_seen::policies(&seen, &id);
    console_seen::plugins(&gw, &key, &seen, &id).await;
    console_platform_seen::platform(&seen, &receiver, SENSITIVE);
    console_seen::admin(&seen);
    let out = screens();
    for shot in [
        "overview.png",
        "overview-phone.png",
        "overview-admin.png",
        "endpoints.png",
        "endpoint.png",
        "deliveries.png",
        "delivery-retrying.png",
        "delivery-timeline.png",
        "delivery-timeline-phone.png",
        "dlq-phone.png",
        "dlq.png",
        "dlq-replayed.png",
        "deliveries-replayed.png",
        "policies.png",
        "simulator.png",
        "plugins.png",
        "endpoint-platform.png",
        "delivery-payload.png",
        "endpoint-stats.png",
    ] {
        assert!(out.join(shot).is_file(), "{shot} missing");
    }
}
