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
//! receiver. A second journey reads the event-type catalog, by group with
//! each type's marks, and subscribes endpoints from it in the endpoint form;
//! it is checked here. Screenshots of every page go to
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

/// Runs a browser journey (`script` in `tests/scripts`); what the pages
/// showed, scene by scene.
async fn drive(gw: &TestGateway, script: &str, key: &str, setup: Value) -> Value {
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
    let (base, key, script) = (gw.base.clone(), key.to_owned(), scripts.join(script));
    let driven = tokio::task::spawn_blocking(move || {
        Command::new("node")
            .arg(script)
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
    let seen = drive(&gw, "console_browser.mjs", &key, setup.clone()).await;
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

/// Creates a catalog type as the admin.
async fn create_type(gw: &TestGateway, body: Value) {
    let (status, answer) = gw
        .call("POST", "/v1/event-types", Some(ADMIN), Some(body))
        .await;
    assert_eq!(status, 201, "{answer}");
}

/// An endpoint's `event_types` as the API holds them, sorted.
async fn subscribed(gw: &TestGateway, key: &str, id: &str) -> Vec<String> {
    let (status, ep) = gw
        .call(
            "GET",
            &format!("/v1/tenants/acme/endpoints/{id}"),
            Some(key),
            None,
        )
        .await;
    assert_eq!(status, 200, "{ep}");
    let mut names: Vec<String> = serde_json::from_value(ep["event_types"].clone()).unwrap();
    names.sort();
    names
}

/// A type as listed: its name and its marks.
type Listed = (String, Vec<String>);

/// `(group, [(name, marks)])` of a page's or picker's groups, as seen.
fn groups(listed: &Value) -> Vec<(String, Vec<Listed>)> {
    listed
        .as_array()
        .unwrap_or_else(|| panic!("no groups: {listed}"))
        .iter()
        .map(|g| {
            let types = g["types"].as_array().unwrap().iter().map(|t| {
                let marks = serde_json::from_value(t["badges"].clone()).unwrap();
                (t["name"].as_str().unwrap().to_owned(), marks)
            });
            (g["group"].as_str().unwrap().to_owned(), types.collect())
        })
        .collect()
}

/// The names a picker shows ticked.
fn ticked(picker: &Value) -> Vec<&str> {
    picker["groups"]
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|g| g["types"].as_array().unwrap())
        .filter(|t| t["ticked"] == true)
        .map(|t| t["name"].as_str().unwrap())
        .collect()
}

fn owned(names: &[&str]) -> Vec<String> {
    names.iter().map(|n| (*n).to_owned()).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tenant_reads_the_event_type_catalog_and_subscribes_from_it() {
    let receiver = Receiver::start(Vec::new()).await;
    let gw = TestGateway::start().await;
    let key = gw.tenant("acme").await;
    // Two schema versions: the page shows the latest.
    create_type(&gw, json!({
        "name": "order.paid", "group": "orders", "description": "An order was paid",
        "schemas": {"1": {"type": "object"},
                    "2": {"type": "object", "required": ["amount"], "properties": {"amount": {"type": "integer"}}}},
        "example": {"amount": 1}, "validate": true,
    }))
    .await;
    create_type(&gw, json!({"name": "order.refunded", "group": "orders", "description": "An order was refunded", "deprecated": true})).await;
    create_type(
        &gw,
        json!({"name": "order.legacy", "group": "orders", "description": "The old order event"}),
    )
    .await;
    create_type(&gw, json!({"name": "user.created", "group": "users", "description": "A user signed up", "schemas": {"1": {"type": "object"}}})).await;
    create_type(&gw, json!({"name": "ping", "description": "A test ping"})).await;
    // Subscribed before its type was archived, and to a name the catalog lacks.
    let legacy = gw
        .endpoint(
            "acme",
            &key,
            json!({"url": receiver.url(), "description": "legacy names",
                   "event_types": ["order.paid", "order.legacy", "shipment.sent"]}),
        )
        .await;
    let (status, archived) = gw
        .call(
            "PATCH",
            "/v1/event-types/order.legacy",
            Some(ADMIN),
            Some(json!({"archived": true})),
        )
        .await;
    assert_eq!(
        (status, &archived["archived"]),
        (200, &json!(true)),
        "{archived}"
    );

    let setup = json!({"admin": ADMIN, "url": receiver.url()});
    let seen = drive(&gw, "console_event_types.mjs", &key, setup).await;
    assert_eq!(seen["outside"], json!([]), "requests to other hosts");

    // The catalog page: by group, ungrouped last, the archived type hidden.
    let catalog = &seen["catalog"];
    assert_eq!(catalog["current"], "page", "{catalog}");
    let marks = |m: &[&str]| owned(m);
    let unarchived = vec![
        (
            "orders".to_owned(),
            vec![
                ("order.paid".to_owned(), marks(&["validating"])),
                ("order.refunded".to_owned(), marks(&["deprecated"])),
            ],
        ),
        (
            "users".to_owned(),
            vec![("user.created".to_owned(), vec![])],
        ),
        ("Ungrouped".to_owned(), vec![("ping".to_owned(), vec![])]),
    ];
    assert_eq!(groups(&catalog["before"]), unarchived, "{catalog}");
    assert_eq!(
        catalog["before"][0]["types"][0]["description"],
        "An order was paid"
    );
    let count = catalog["count"].as_str().unwrap();
    assert!(
        count.contains("4 types") && count.contains("1 archived"),
        "{count}"
    );
    // The latest schema and the example, folded until opened, as JSON.
    let schema = &catalog["schema"];
    assert!(
        schema["summary"].as_str().unwrap().contains("version 2"),
        "{schema}"
    );
    assert_eq!(
        (&schema["hiddenBefore"], &schema["shown"]),
        (&json!(true), &json!(true))
    );
    let text: Value = serde_json::from_str(schema["text"].as_str().unwrap()).unwrap();
    assert_eq!(text["required"], json!(["amount"]), "{schema}");
    let example = &catalog["example"];
    assert_eq!(example["shown"], true, "{example}");
    let text: Value = serde_json::from_str(example["text"].as_str().unwrap()).unwrap();
    assert_eq!(text, json!({"amount": 1}));
    // Ticking "show archived" adds it to its group, marked; unticking hides it again.
    let mut with_archived = unarchived.clone();
    with_archived[0]
        .1
        .insert(0, ("order.legacy".to_owned(), marks(&["archived"])));
    assert_eq!(groups(&catalog["archived"]), with_archived, "{catalog}");
    assert_eq!(catalog["keptOpen"], true, "the opened schema stays open");
    assert!(
        catalog["countArchived"]
            .as_str()
            .unwrap()
            .starts_with("5 types")
    );
    assert_eq!(
        catalog["hiddenAgain"],
        json!(["order.paid", "order.refunded", "user.created", "ping"])
    );

    // The create form offers what may be subscribed: no archived type, the
    // deprecated one marked; a ticked type and a typed pattern make the list.
    let picker = &seen["picker"];
    let offered = vec![
        (
            "orders".to_owned(),
            vec![
                ("order.paid".to_owned(), vec![]),
                ("order.refunded".to_owned(), marks(&["deprecated"])),
            ],
        ),
        (
            "users".to_owned(),
            vec![("user.created".to_owned(), vec![])],
        ),
        ("Ungrouped".to_owned(), vec![("ping".to_owned(), vec![])]),
    ];
    assert_eq!(groups(&picker["offered"]["groups"]), offered, "{picker}");
    assert_eq!(ticked(&picker["offered"]), Vec::<&str>::new());
    let id = picker["id"].as_str().unwrap();
    // After the create the form is empty again.
    assert!(ticked(&picker["afterCreate"]).is_empty(), "{picker}");
    assert_eq!(picker["afterCreate"]["typed"], "");
    // Editing it ticks its catalog name again, its pattern typed.
    assert_eq!(ticked(&picker["restored"]), ["order.paid"], "{picker}");
    assert_eq!(picker["restored"]["typed"], "invoice.*");
    // One more ticked and saved: the API holds all three.
    assert_eq!(ticked(&picker["saved"]), ["order.paid", "user.created"]);
    assert_eq!(
        subscribed(&gw, &key, id).await,
        owned(&["invoice.*", "order.paid", "user.created"])
    );

    // Names the catalog does not offer (archived, unknown) stay typed, and a
    // save that ticks another keeps them.
    let legacy_seen = &seen["legacy"];
    assert_eq!(
        ticked(&legacy_seen["shown"]),
        ["order.paid"],
        "{legacy_seen}"
    );
    assert_eq!(legacy_seen["shown"]["typed"], "order.legacy, shipment.sent");
    assert_eq!(
        ticked(&legacy_seen["saved"]),
        ["order.paid", "order.refunded"]
    );
    assert_eq!(legacy_seen["saved"]["typed"], "order.legacy, shipment.sent");
    assert_eq!(
        subscribed(&gw, &key, legacy["id"].as_str().unwrap()).await,
        owned(&[
            "order.legacy",
            "order.paid",
            "order.refunded",
            "shipment.sent"
        ])
    );

    // The admin reads the same catalog.
    let admin = &seen["admin-catalog"];
    assert_eq!(admin["who"], "admin", "{admin}");
    assert_eq!(groups(&admin["groups"]), unarchived, "{admin}");
    for shot in [
        "event-types.png",
        "event-types-archived.png",
        "endpoint-picker.png",
    ] {
        assert!(screens().join(shot).is_file(), "{shot} missing");
    }
}
