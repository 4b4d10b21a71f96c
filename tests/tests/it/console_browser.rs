//! The web console in a real browser: Debian's Chromium, headless, driven by
//! `playwright-core` (pinned in `tests/scripts`), against a gateway on loopback
//! and a receiver that fails each delivery's first attempts, then answers 200.
//! A tenant signs in, reads the overview's history over the ranges it offers,
//! creates endpoints, sends events, watches a delivery fail and be retried on
//! its timeline, reads each endpoint's recent success rate in the list,
//! replays the DLQ and sees the deliveries succeed, gets the API's field
//! errors, runs the simulator, uploads and rolls back a plugin, makes and
//! edits an endpoint with the platform model's fields (a sensitive header
//! among them) and reads an event's payload, makes a RabbitMQ endpoint with
//! the destination picker (checked here against the API, as are the fields
//! it shows for each kind); then the admin sees
//! the whole gateway and its history. What the pages showed is checked in
//! `console_seen.rs` and `console_platform_seen.rs`, against the API and the
//! receiver. A second journey reads the event-type catalog, by group with
//! each type's marks, and subscribes endpoints from it in the endpoint form;
//! it is checked here. A third embeds the console as a portal in another
//! site's page (an iframe on `http://localhost:<port>`, the gateway on
//! `127.0.0.1`): a view-only session sees no control that writes and is
//! refused a write, a session that manages endpoints creates one and sends it
//! the catalog's example, each themed; a revoked session ends on the sign-in
//! form; a gateway that does not name the page's origin is not framed.
//! Screenshots of every page go to `target/tmp/console-screens`. A machine
//! without Chromium fails the test, saying how to install it; it never passes
//! silently.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use hookgate_tests::receiver::Receiver;
use hookgate_tests::{ADMIN, ApiRequest, Backend, TestGateway, is_final, plugin_wasm, test_config};
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
pub(super) async fn drive(gw: &TestGateway, script: &str, key: &str, setup: Value) -> Value {
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
        "rabbitmq_url": RABBITMQ,
        "nats_url": "nats://127.0.0.1:4222",
    });
    let seen = drive(&gw, "console_browser.mjs", &key, setup.clone()).await;
    console_seen::overview(&seen, &key);
    let id = console_seen::endpoints(&gw, &key, &seen, &setup).await;
    console_seen::deliveries(&seen);
    console_seen::success(&seen);
    console_seen::dlq(&gw, &key, &seen).await;
    console_seen::policies(&seen, &id);
    console_seen::plugins(&gw, &key, &seen, &id).await;
    console_platform_seen::platform(&seen, &receiver, SENSITIVE);
    destinations(&gw, &key, &seen).await;
    console_seen::admin(&seen);
    let out = screens();
    for shot in [
        "overview.png",
        "overview-phone.png",
        "overview-hour.png",
        "overview-admin.png",
        "endpoints.png",
        "endpoints-success.png",
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
        "endpoints-destination.png",
        "endpoint-destination.png",
    ] {
        assert!(out.join(shot).is_file(), "{shot} missing");
    }
}

/// The machine's RabbitMQ; making an endpoint connects to no broker.
const RABBITMQ: &str = "amqp://127.0.0.1:5672/%2f";

/// The destination picker: each kind's own fields; the RabbitMQ endpoint made
/// through it, as the API holds it (the exchange, the routing key edited on
/// its page, the password kept and never on a page).
async fn destinations(gw: &TestGateway, key: &str, seen: &Value) {
    let d = &seen["destinations"];
    assert_eq!(d["legend"], "Destination", "{d}");
    let kinds: Vec<&str> = texts(&d["kinds"])
        .iter()
        .map(|k| k.split(" (").next().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "HTTP",
            "RabbitMQ",
            "NATS JetStream",
            "Redis Streams",
            "Amazon SQS",
            "Amazon SNS",
            "Amazon Kinesis"
        ]
    );
    let credentials = [
        "destination.credentials.username",
        "destination.credentials.password",
    ];
    let named = "destination.credentials.name";
    let fields = |own: &[&str], token: bool| {
        let mut all = vec!["destination.url"];
        all.extend(own);
        all.extend(credentials);
        if token {
            all.push("destination.credentials.token");
        }
        all.push(named);
        json!(all)
    };
    assert_eq!(d["http"], json!(["url"]), "{d}");
    let rabbit = ["destination.exchange", "destination.routing_key"];
    assert_eq!(d["rabbitmq"], fields(&rabbit, false), "{d}");
    assert_eq!(d["nats"], fields(&["destination.subject"], true), "{d}");
    let redis = ["destination.stream", "destination.max_len"];
    assert_eq!(d["redis"], fields(&redis, false), "{d}");
    // The AWS kinds: no broker URL; a region, an optional AWS endpoint, keys.
    let aws_credentials = [
        ["destination.credentials.access_key_id", "text"],
        ["destination.credentials.secret_access_key", "password"],
        ["destination.credentials.session_token", "password"],
        ["destination.credentials.name", "text"],
    ];
    let aws = |own: &[&str], path: &str| {
        let mut all = own.to_vec();
        all.extend(["destination.region", "destination.endpoint_url", path]);
        all.extend(aws_credentials.iter().map(|[name, _]| *name));
        json!(all)
    };
    let group = "destination.message_group_path";
    assert_eq!(d["sqs"], aws(&["destination.queue_url"], group), "{d}");
    assert_eq!(d["sns"], aws(&["destination.topic_arn"], group), "{d}");
    let partition = "destination.partition_key_path";
    assert_eq!(d["kinesis"], aws(&["destination.stream"], partition), "{d}");
    assert_eq!(d["aws"]["credentials"], json!(aws_credentials), "{d}");
    assert_eq!(d["aws"]["streamHint"], "the stream's name or ARN", "{d}");
    assert!(
        d["aws"]["legend"]
            .as_str()
            .unwrap()
            .starts_with("AWS credentials"),
        "{d}"
    );
    // The API's error, beside the broker URL, which takes the focus; gone once made.
    let url_error = d["urlError"].as_str().unwrap();
    assert!(url_error.contains("amqp"), "{d}");
    assert_eq!(d["focused"], "destination.url", "{d}");
    assert_eq!(d["urlErrorAfter"], "", "{d}");
    assert!(
        d["created"]
            .as_str()
            .unwrap()
            .starts_with("Created orders to rabbit."),
        "{d}"
    );
    assert_eq!(
        d["afterCreate"],
        json!({"type": "http", "fields": ["url"]}),
        "{d}"
    );
    // The list and the page: the kind, the address and the target.
    let cell = d["cell"].as_str().unwrap();
    assert!(
        cell.starts_with(&format!("RabbitMQ {RABBITMQ}"))
            && cell.ends_with("exchange hookgate.console, key orders.created"),
        "{cell}"
    );
    assert_eq!(d["facts"]["url"], RABBITMQ, "{d}");
    assert_eq!(
        d["facts"]["destination"],
        "RabbitMQ: exchange hookgate.console, routing key orders.created, as user guest",
        "{d}"
    );
    // The edit form: filled from the destination, the password not.
    let filled = &d["filled"];
    assert_eq!(
        (&filled["type"], &filled["url"], &filled["exchange"]),
        (
            &json!("rabbitmq"),
            &json!(RABBITMQ),
            &json!("hookgate.console")
        ),
        "{filled}"
    );
    assert_eq!(
        (&filled["username"], &filled["password"]),
        (&json!("guest"), &json!("")),
        "{filled}"
    );
    assert_eq!(
        filled["passwordHint"], "stored: type to replace",
        "{filled}"
    );
    assert_eq!(filled["fields"], fields(&rabbit, false), "{filled}");
    assert!(
        d["afterSave"]
            .as_str()
            .unwrap()
            .contains("routing key orders.paid"),
        "{d}"
    );
    assert!(d["saved"].as_str().unwrap().starts_with("Saved"), "{d}");
    let id = d["id"].as_str().unwrap();
    let (status, ep) = gw
        .call(
            "GET",
            &format!("/v1/tenants/acme/endpoints/{id}"),
            Some(key),
            None,
        )
        .await;
    assert_eq!(status, 200, "{ep}");
    assert_eq!(ep["destination"]["type"], "rabbitmq", "{ep}");
    assert_eq!(
        ep["destination"],
        json!({"type": "rabbitmq", "url": RABBITMQ, "exchange": "hookgate.console",
               "routing_key": "orders.paid",
               "credentials": {"username": "guest", "password": "********"}}),
        "{ep}"
    );
    assert_eq!(
        (&ep["url"], &ep["event_types"]),
        (&json!(RABBITMQ), &json!(["broker.test"])),
        "{ep}"
    );
    // Only the routing key was sent: another client's change stays.
    assert_eq!(ep["description"], "rabbit, renamed", "{ep}");
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

/// The product a portal session is themed as, and its accent colour (the
/// same as `rgb(10, 124, 95)`, as the browser computes it).
const PRODUCT: &str = "Acme Webhooks";
const ACCENT: &str = "#0a7c5f";
const ACCENT_RGB: &str = "rgb(10, 124, 95)";

/// The theme's logo: an SVG as a `data:` URL, the only kind a theme takes.
fn logo() -> String {
    use base64::Engine;
    let svg = r##"<svg xmlns="http://www.w3.org/2000/svg" width="32" height="32" viewBox="0 0 32 32"><circle cx="16" cy="16" r="15" fill="#0a7c5f"/><path d="M9 17l5 5 9-11" stroke="#fff" stroke-width="3" fill="none"/></svg>"##;
    format!(
        "data:image/svg+xml;base64,{}",
        base64::engine::general_purpose::STANDARD.encode(svg)
    )
}

/// Another site that embeds the portal: `http://localhost:<port>`, another
/// origin than the gateway's `http://127.0.0.1:<port>`. It answers the pages
/// it holds by path (404 otherwise), one request per connection.
pub(super) struct EmbeddingSite {
    port: u16,
    pages: Arc<Mutex<HashMap<String, String>>>,
    task: tokio::task::JoinHandle<()>,
}

impl EmbeddingSite {
    pub(super) async fn start() -> Self {
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let pages: Arc<Mutex<HashMap<String, String>>> = Arc::default();
        let held = Arc::clone(&pages);
        let task = tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                tokio::spawn(serve_page(stream, Arc::clone(&held)));
            }
        });
        Self { port, pages, task }
    }

    pub(super) fn origin(&self) -> String {
        format!("http://localhost:{}", self.port)
    }

    /// Holds a page at `path` whose iframe opens `src`; answers its URL.
    pub(super) fn frame(&self, path: &str, src: &str) -> String {
        let page = format!(
            r#"<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Acme dashboard</title>
<style>body {{ margin: 0; font: 14px sans-serif; }} header {{ height: 34px; padding: 8px 12px; box-sizing: border-box; background: #eee; }}
iframe {{ display: block; width: 100%; height: calc(100vh - 34px); border: 0; }}</style></head>
<body><header>Acme's own dashboard</header>
<iframe id="portal" title="Webhooks" src="{src}"></iframe></body></html>"#
        );
        self.pages.lock().unwrap().insert(path.to_owned(), page);
        format!("{}{path}", self.origin())
    }
}

impl Drop for EmbeddingSite {
    fn drop(&mut self) {
        self.task.abort();
    }
}

/// Answers one request on `stream` with the page its path names.
async fn serve_page(mut stream: tokio::net::TcpStream, pages: Arc<Mutex<HashMap<String, String>>>) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let mut head = Vec::new();
    let mut buf = [0u8; 1024];
    while !head.windows(4).any(|w| w == b"\r\n\r\n") {
        match stream.read(&mut buf).await {
            Ok(0) | Err(_) => return,
            Ok(n) => head.extend_from_slice(&buf[..n]),
        }
        if head.len() > 16 * 1024 {
            return;
        }
    }
    let head = String::from_utf8_lossy(&head);
    let path = head.split(' ').nth(1).unwrap_or("/");
    let page = pages.lock().unwrap().get(path).cloned();
    let (status, body) = match page {
        Some(page) => ("200 OK", page),
        None => ("404 Not Found", "not here".to_owned()),
    };
    let answer = format!(
        "HTTP/1.1 {status}\r\ncontent-type: text/html; charset=utf-8\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(answer.as_bytes()).await;
    let _ = stream.shutdown().await;
}

/// Mints a portal session for `acme` with `capabilities`, themed in `mode`.
async fn portal_session(gw: &TestGateway, key: &str, capabilities: &[&str], mode: &str) -> Value {
    let body = json!({"capabilities": capabilities, "expires_in_s": 3600,
        "theme": {"product_name": PRODUCT, "logo_url": logo(), "accent_color": ACCENT, "mode": mode}});
    let (status, session) = gw
        .call(
            "POST",
            "/v1/tenants/acme/portal-sessions",
            Some(key),
            Some(body),
        )
        .await;
    assert_eq!(status, 201, "{session}");
    let url = session["url"].as_str().unwrap();
    assert!(
        url.starts_with("/console/?tenant=acme#portal=hgp_"),
        "{session}"
    );
    session
}

/// The console's framing headers: its CSP, and `X-Frame-Options` if any.
async fn framing(gw: &TestGateway) -> (String, Option<String>) {
    let answer = gw
        .exchange(ApiRequest::path(http::Method::GET, "/console/"))
        .await;
    assert_eq!(answer.status, 200);
    let header = |name: &str| {
        answer
            .headers
            .get(name)
            .map(|v| v.to_str().unwrap().to_owned())
    };
    (
        header("content-security-policy").unwrap(),
        header("x-frame-options"),
    )
}

/// The texts of `seen` (a JSON list of strings).
fn texts(seen: &Value) -> Vec<&str> {
    seen.as_array()
        .unwrap_or_else(|| panic!("not a list: {seen}"))
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect()
}

/// A delivery of `acme` once final.
async fn settled(gw: &TestGateway, key: &str, id: &str) -> Value {
    gw.wait_delivery("acme", key, id, Duration::from_secs(20), is_final)
        .await
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_portal_session_embedded_in_another_site_shows_only_what_it_may_do() {
    let receiver = Receiver::start(Vec::new()).await;
    let site = EmbeddingSite::start().await;
    let elsewhere = EmbeddingSite::start().await;
    let mut bed = Backend::Sled.bed().await;
    bed.config.console.embed_origins = vec![site.origin()];
    let gw = TestGateway::start_bed(bed, Default::default()).await;
    // A gateway with no embed origin: no site may frame its console.
    let closed = TestGateway::start_on(Backend::Sled).await;
    assert!(gw.base.starts_with("http://127.0.0.1:"), "{}", gw.base);

    let (csp, deny) = framing(&gw).await;
    assert!(
        csp.ends_with(&format!("frame-ancestors {}", site.origin())),
        "{csp}"
    );
    assert_eq!(deny, None, "an embeddable console is not DENY");
    let (csp, deny) = framing(&closed).await;
    assert!(csp.ends_with("frame-ancestors 'none'"), "{csp}");
    assert_eq!(deny.as_deref(), Some("DENY"));

    // What the sessions find: a catalog type with an example (and one
    // without), an endpoint with a succeeded delivery, one with a dead one.
    let key = gw.tenant("acme").await;
    create_type(&gw, json!({"name": "order.paid", "example": {"amount": 1}})).await;
    create_type(&gw, json!({"name": "order.bare"})).await;
    let seeded_url = receiver.url();
    gw.endpoint(
        "acme",
        &key,
        json!({"url": seeded_url, "description": "orders", "event_types": ["order.*"]}),
    )
    .await;
    gw.endpoint(
        "acme",
        &key,
        json!({"url": receiver.failing_first_url(1), "description": "failing",
               "event_types": ["invoice.*"], "policy": {"max_attempts": 1}}),
    )
    .await;
    let sent = gw
        .event("acme", &key, "order.paid", json!({"amount": 7}))
        .await;
    let delivered = sent["deliveries"][0]["id"].as_str().unwrap().to_owned();
    assert_eq!(settled(&gw, &key, &delivered).await["state"], "succeeded");
    let dying = gw
        .event("acme", &key, "invoice.paid", json!({"n": 1}))
        .await;
    let dead = settled(&gw, &key, dying["deliveries"][0]["id"].as_str().unwrap()).await;
    assert_eq!(dead["state"], "dead", "{dead}");

    let view = portal_session(&gw, &key, &["view"], "light").await;
    let manage = portal_session(&gw, &key, &["view", "manage_endpoints"], "dark").await;
    let view_token = view["token"].as_str().unwrap();
    let manage_token = manage["token"].as_str().unwrap();
    // The view-only token may not write, whoever calls with it.
    let (status, refused) = gw
        .call(
            "POST",
            "/v1/tenants/acme/endpoints",
            Some(view_token),
            Some(json!({"url": receiver.url()})),
        )
        .await;
    assert_eq!(status, 403, "{refused}");
    assert!(
        refused["error"]["message"]
            .as_str()
            .unwrap()
            .contains("lacks the manage_endpoints capability"),
        "{refused}"
    );
    let closed_key = closed.tenant("acme").await;
    let closed_session = portal_session(&closed, &closed_key, &["view"], "light").await;

    let frame_of = |gw: &TestGateway, session: &Value| {
        format!("{}{}", gw.base, session["url"].as_str().unwrap())
    };
    let portal_url = receiver.url().replace("/hook", "/portal");
    let setup = json!({
        "view_page": site.frame("/view", &frame_of(&gw, &view)),
        "manage_page": site.frame("/manage", &frame_of(&gw, &manage)),
        // The view session's portal, framed by an origin the gateway does not name.
        "other_page": elsewhere.frame("/other", &frame_of(&gw, &view)),
        // A gateway naming no origin, framed by the site another gateway allows.
        "closed_page": site.frame("/closed", &frame_of(&closed, &closed_session)),
        "closed_base": closed.base,
        "view_token": view_token,
        "manage_token": manage_token,
        "seeded_url": seeded_url,
        "delivered": delivered,
        "portal_url": portal_url,
        "origins": [site.origin(), elsewhere.origin()],
    });
    let seen = drive(&gw, "console_portal.mjs", &key, setup).await;
    assert_eq!(seen["outside"], json!([]), "requests to other hosts");
    assert_eq!(
        seen["cspErrors"],
        json!([]),
        "the console broke its own policy"
    );

    assert_eq!(seen["pageErrors"], json!([]), "the console threw");

    // A token the API refuses, in the address: the sign-in form with the
    // API's error; no navigation, nothing kept, the address cleaned.
    let refused = &seen["refused"];
    assert!(
        refused["error"]
            .as_str()
            .unwrap()
            .ends_with("(unauthorized)"),
        "{refused}"
    );
    assert_eq!(
        refused["href"],
        format!("{}/console/", gw.base),
        "{refused}"
    );
    assert_eq!(
        (&refused["nav"], &refused["kept"]),
        (&json!(false), &json!(0)),
        "{refused}"
    );
    assert_eq!(texts(&refused["shown"]), ["sign-in"]);

    // The view-only session, in Chromium as it comes (which gives a frame on
    // another site no storage): signed in from the fragment, which is gone
    // from the address at once.
    let viewed = &seen["view"];
    let arrived = &viewed["arrived"];
    assert_eq!(
        arrived["href"],
        format!("{}/console/?tenant=acme", gw.base),
        "{arrived}"
    );
    assert_eq!(
        (&arrived["hash"], &arrived["kept"]),
        (&json!(""), &json!("(blocked)"))
    );
    // The theme: the product's name (header and title), its logo, its accent, light.
    let theme = &viewed["theme"];
    assert_eq!(
        (
            &theme["productName"],
            &theme["productNameShown"],
            &theme["title"]
        ),
        (&json!(PRODUCT), &json!(true), &json!(PRODUCT)),
        "{theme}"
    );
    assert_eq!(theme["logoShown"], true, "{theme}");
    assert!(
        theme["logoSrc"]
            .as_str()
            .unwrap()
            .starts_with("data:image/svg+xml"),
        "{theme}"
    );
    assert_eq!(theme["accent"], ACCENT, "{theme}");
    assert_eq!(
        theme["currentUnderline"], ACCENT_RGB,
        "the nav uses the accent: {theme}"
    );
    assert_eq!(
        (&theme["mode"], &theme["colorScheme"]),
        (&json!("light"), &json!("light"))
    );
    assert_eq!(theme["inlineStyleAttributes"], 0, "{theme}");
    assert_eq!(viewed["who"], "tenant acme");
    assert_eq!(viewed["tenantPick"], false, "the admin's tenant picker");
    assert_eq!(
        viewed["lacks"],
        "manage_endpoints read_secrets replay manage_plugins"
    );
    assert_eq!(
        texts(&viewed["nav"]),
        [
            "Overview",
            "Endpoints",
            "Event types",
            "Deliveries",
            "DLQ",
            "Policies",
            "Plugins"
        ]
    );
    let mut listed = texts(&viewed["listed"]);
    listed.sort_unstable();
    assert_eq!(listed, [receiver.failing_first_url(1), receiver.url()]);
    // Every page shows its data and not one control that writes.
    for (page, buttons) in viewed["pages"].as_object().unwrap() {
        let shown = texts(buttons);
        assert!(
            shown.is_empty(),
            "{page} shows {shown:?} to a view-only session"
        );
    }
    assert_eq!(viewed["pages"].as_object().unwrap().len(), 6, "{viewed}");
    for hidden in ["createForm", "editForm", "sendForm", "bulkReplay", "upload"] {
        assert_eq!(viewed[hidden], false, "{hidden}: {viewed}");
    }
    // The delivery page would offer "Send again", and the DLQ lists a dead
    // delivery with its button, but neither shows.
    assert_eq!(viewed["replayWanted"], "Send again", "{viewed}");
    assert_eq!(texts(&viewed["deadRows"]).len(), 1, "{viewed}");
    // Written through the API from the frame anyway: refused.
    for (call, capability) in [("write", "manage_endpoints"), ("replay", "replay")] {
        let answer = &viewed[call];
        assert_eq!(answer["status"], 403, "{call}: {answer}");
        let message = answer["body"]["error"]["message"].as_str().unwrap();
        assert!(
            message.contains(&format!("lacks the {capability} capability")),
            "{message}"
        );
    }
    // A reload of the frame keeps the session, its theme and its page.
    // Without storage a reload forgets the session; the sign-in form says why.
    let reloaded = &viewed["reloaded"];
    assert_eq!(
        (&reloaded["nav"], &reloaded["errorHidden"]),
        (&json!(false), &json!(true)),
        "{reloaded}"
    );
    assert!(
        reloaded["note"]
            .as_str()
            .unwrap()
            .contains("keeps nothing for this frame"),
        "{reloaded}"
    );
    assert_eq!(
        viewed["fits"],
        json!({"wide": true, "phone": true}),
        "{viewed}"
    );

    // The session that manages endpoints, dark: it creates one in the form
    // (its secret not shown: the session may not read secrets) and sends it
    // the catalog's example.
    let managed = &seen["manage"];
    assert_eq!(
        managed["arrived"]["href"],
        format!("{}/console/?tenant=acme", gw.base),
        "{managed}"
    );
    let theme = &managed["theme"];
    assert_eq!(
        (&theme["mode"], &theme["colorScheme"]),
        (&json!("dark"), &json!("dark")),
        "{theme}"
    );
    assert_eq!(
        theme["background"], "rgb(21, 23, 28)",
        "the dark palette: {theme}"
    );
    assert_eq!(
        (&theme["productName"], &theme["accent"]),
        (&json!(PRODUCT), &json!(ACCENT))
    );
    assert_eq!(managed["lacks"], "read_secrets replay manage_plugins");
    assert_eq!(managed["createForm"], true);
    assert_eq!(managed["created"], "Created portal endpoint.", "{managed}");
    assert_eq!(
        texts(&managed["offered"]),
        ["order.paid"],
        "types with an example"
    );
    let buttons = texts(&managed["buttons"]);
    for offered in ["Disable", "Reset breaker", "Send example", "Save changes"] {
        assert!(buttons.contains(&offered), "{offered} missing: {buttons:?}");
    }
    assert!(!buttons.contains(&"Rotate secret"), "{buttons:?}");
    assert!(
        managed["publicKey"].as_str().unwrap().starts_with("none"),
        "{managed}"
    );
    let dlq_buttons = texts(&managed["dlqButtons"]);
    assert!(
        !dlq_buttons.iter().any(|b| b.starts_with("Replay")),
        "{dlq_buttons:?}"
    );
    assert_eq!(
        managed["fits"],
        json!({"wide": true, "phone": true}),
        "{managed}"
    );
    let id = managed["id"].as_str().unwrap();
    let (status, made) = gw
        .call(
            "GET",
            &format!("/v1/tenants/acme/endpoints/{id}"),
            Some(&key),
            None,
        )
        .await;
    assert_eq!(status, 200, "{made}");
    assert_eq!(
        (&made["url"], &made["description"]),
        (&json!(portal_url), &json!("portal endpoint"))
    );
    // The example reached the receiver as the event the notice named.
    let notice = managed["sent"].as_str().unwrap();
    let event = notice
        .split("test event ")
        .nth(1)
        .and_then(|rest| rest.split(';').next())
        .unwrap_or_else(|| panic!("no event id in {notice:?}"));
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let got = loop {
        let found = receiver
            .received()
            .into_iter()
            .find(|r| r.path == "/portal");
        if let Some(got) = found {
            break got;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the example never arrived"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert_eq!(got.header("webhook-id"), Some(event), "{notice}");
    assert_eq!(
        serde_json::from_slice::<Value>(&got.body).unwrap(),
        json!({"amount": 1})
    );
    let (_, endpoints) = gw
        .call("GET", "/v1/tenants/acme/endpoints", Some(&key), None)
        .await;
    assert_eq!(
        endpoints["data"].as_array().unwrap().len(),
        3,
        "only the form made one: {endpoints}"
    );

    // Revoked while open: the next request ends it, back at the sign-in form.
    // Where the browser lets the frame keep its storage, the token is kept
    // in the tab, and a reload of the frame keeps the session on its page.
    let kept = &seen["kept"];
    assert_eq!(
        (&kept["arrived"]["kept"], &kept["reloaded"]["kept"]),
        (&json!(view_token), &json!(view_token)),
        "{kept}"
    );
    assert_eq!(
        kept["arrived"]["href"],
        format!("{}/console/?tenant=acme", gw.base),
        "{kept}"
    );
    assert_eq!(
        kept["reloaded"]["href"],
        format!("{}/console/?tenant=acme#endpoints", gw.base)
    );
    assert_eq!(
        (&kept["productName"], &kept["nav"]),
        (&json!(PRODUCT), &json!(true)),
        "{kept}"
    );
    assert_eq!(texts(&kept["shown"]), ["endpoints"]);

    let ended = &seen["ended"];
    assert_eq!(ended["revoked"]["revoked"], 2, "{ended}");
    let error = ended["error"].as_str().unwrap();
    assert!(
        error.contains("portal session has ended") && error.contains("(session_ended)"),
        "{error}"
    );
    assert_eq!(
        (&ended["nav"], &ended["kept"]),
        (&json!(false), &json!(0)),
        "{ended}"
    );
    assert_eq!(texts(&ended["sections"]), ["sign-in"]);
    let (status, _) = gw
        .call("GET", "/v1/portal-session", Some(view_token), None)
        .await;
    assert_eq!(status, 401);

    // axe-core finds nothing serious in the themed portal, light or dark,
    // nor on the sign-in form it ends on.
    for (scene, pages) in [
        ("view", &seen["view"]["axe"]),
        ("manage", &seen["manage"]["axe"]),
    ] {
        let pages = pages
            .as_object()
            .unwrap_or_else(|| panic!("{scene}: not audited"));
        assert_eq!(pages.len(), 2, "{scene}: {pages:?}");
        for (page, found) in pages {
            assert_eq!(
                found,
                &json!([]),
                "{scene} {page}: serious or critical violations"
            );
        }
    }
    assert_eq!(
        ended["axe"],
        json!([]),
        "the sign-in form after the session ended"
    );

    // Framed where the gateway does not allow it: the browser refuses, and
    // the console never runs (not one of its modules is fetched).
    for (scene, ancestors) in [
        ("other-origin", format!("frame-ancestors {}", site.origin())),
        ("closed", "frame-ancestors 'none'".to_owned()),
    ] {
        let blocked = &seen[scene];
        assert_eq!(blocked["rendered"], false, "{scene}: {blocked}");
        let requests = texts(&blocked["requests"]);
        assert!(!requests.is_empty(), "{scene}: the frame asked: {blocked}");
        assert!(
            requests
                .iter()
                .all(|r| !r.ends_with(".js") && !r.ends_with(".css")),
            "{scene}: {requests:?}"
        );
        let policy = &blocked["policies"][0];
        assert!(
            policy["csp"].as_str().unwrap().ends_with(&ancestors),
            "{scene}: {policy}"
        );
        assert!(
            blocked["refusedMessage"]
                .as_str()
                .is_some_and(|m| m.contains("frame-ancestors")),
            "{scene}: {blocked}"
        );
    }
    assert_eq!(seen["closed"]["policies"][0]["xfo"], "DENY");

    for shot in [
        "portal-view.png",
        "portal-view-phone.png",
        "portal-manage.png",
        "portal-manage-phone.png",
        "portal-other-origin.png",
        "portal-closed.png",
    ] {
        assert!(screens().join(shot).is_file(), "{shot} missing");
    }
}
