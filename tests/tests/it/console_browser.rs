//! The web console in a real browser: Debian's Chromium, headless, driven by
//! `playwright-core` (pinned in `tests/scripts`), against a gateway on
//! loopback. A tenant signs in and sees the overview figures, creates an endpoint,
//! and gets the API's field error beside the field for a policy value it
//! refuses; the token stays in the tab, never in the URL, and the pages ask
//! nothing of any other host.
//! Screenshots go to the test's output dir. A machine without Chromium fails
//! the test, saying how to install it; it never passes silently.

use std::path::{Path, PathBuf};
use std::process::Command;

use hookgate_tests::TestGateway;
use serde_json::Value;

const CHROMIUM: &str = "/usr/bin/chromium";
/// The endpoint the console creates (loopback is allowed in the test config).
const HOOK: &str = "http://127.0.0.1:9/hook";

/// Where the screenshots are kept: `target/tmp/console-screens`.
fn screens() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("console-screens");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_signs_in_sees_the_overview_and_creates_an_endpoint() {
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
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    let out = screens();
    let driven = tokio::task::spawn_blocking({
        let (base, out, key) = (gw.base.clone(), out.clone(), key.clone());
        move || {
            Command::new("node")
                .arg(scripts.join("console_browser.mjs"))
                .args([base.as_str(), key.as_str(), "acme"])
                .arg(&out)
                .arg(HOOK)
                .env("HOOKGATE_CHROMIUM", &chromium)
                .output()
                .expect("node runs")
        }
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&driven.stdout);
    assert!(
        driven.status.success(),
        "the browser run failed: {}\n{stdout}",
        String::from_utf8_lossy(&driven.stderr)
    );
    let seen: Value = serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap();
    let names: Vec<&str> = seen["figures"]
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
    ] {
        assert!(names.contains(&name), "{name} missing from {seen}");
    }
    assert_eq!(seen["tokenKept"], true, "{seen}");
    let url = seen["url"].as_str().unwrap();
    assert!(url.contains("/console/") && !url.contains(&key), "{url}");
    assert_eq!(
        seen["outside"],
        serde_json::json!([]),
        "requests to other hosts"
    );
    assert!(out.join("overview.png").is_file() && out.join("overview-phone.png").is_file());

    assert_eq!(seen["listed"], serde_json::json!([HOOK]), "{seen}");
    let field_error = seen["fieldError"].as_str().unwrap();
    assert!(field_error.contains("max_attempts"), "{seen}");
    assert!(
        seen["alert"]
            .as_str()
            .unwrap()
            .contains("validation_failed"),
        "{seen}"
    );
    let (_, listed) = gw
        .call("GET", "/v1/tenants/acme/endpoints", Some(&key), None)
        .await;
    assert_eq!(
        listed["data"].as_array().map(Vec::len),
        Some(1),
        "the refused one was not made"
    );
    assert!(out.join("endpoints.png").is_file());
}
