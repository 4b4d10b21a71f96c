//! The OpenAPI document (`GET /v1/openapi.json`) as a contract, checked by the
//! Python tools that consume such documents: it validates with
//! `openapi-spec-validator`, `openapi-python-client` generates a client that
//! drives a real delivery, and Schemathesis fuzzes every operation against it.

use std::path::Path;
use std::process::{Command, Output};
use std::time::Duration;

use hookgate_server::RunOptions;
use hookgate_tests::receiver::{Receiver, Reply};
use hookgate_tests::{
    ADMIN, ApiRequest, Backend, TestGateway, is_final, plugin_wasm, upload_example,
};
use http::Method;
use serde_json::{Value, json};

pub(super) const SCRIPTS: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/scripts");

/// Fetches the document at `path` without a token (it is public); writes it
/// to `dir/doc.json`.
async fn fetch_document(gw: &TestGateway, dir: &Path, path: &str) -> std::path::PathBuf {
    let answer = gw.exchange(ApiRequest::path(Method::GET, path)).await;
    let text = String::from_utf8_lossy(&answer.body).into_owned();
    assert_eq!(answer.status, 200, "{text}");
    let doc: Value = serde_json::from_str(&text).expect("the document is JSON");
    assert!(
        doc["openapi"]
            .as_str()
            .unwrap_or_default()
            .starts_with("3.1"),
        "{doc}"
    );
    let path = dir.join("doc.json");
    std::fs::write(&path, &text).unwrap();
    path
}

/// Runs `program args` off the async runtime (the gateway must keep answering);
/// panics with both outputs if it fails.
pub(super) async fn run(what: &str, program: &str, args: Vec<String>) -> Output {
    let (program, what) = (program.to_owned(), what.to_owned());
    let out = tokio::task::spawn_blocking(move || {
        Command::new(&program)
            .args(&args)
            .output()
            .unwrap_or_else(|e| panic!("{program}: {e} (run tests/run.sh to install it)"))
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("--- {what} ---\n{stdout}{stderr}");
    assert!(out.status.success(), "{what} failed: {}", out.status);
    out
}

#[tokio::test]
async fn the_document_is_valid_openapi() {
    spec_validator_accepts("/v1/openapi.json").await;
}

/// A fresh gateway's document at `path` passes `openapi-spec-validator`.
pub(super) async fn spec_validator_accepts(path: &str) {
    let gw = TestGateway::start().await;
    let work = tempfile::tempdir().unwrap();
    let doc = fetch_document(&gw, work.path(), path).await;
    let args = vec![
        "-m".into(),
        "openapi_spec_validator".into(),
        "--validation-errors".into(),
        "all".into(),
        doc.display().to_string(),
    ];
    run(&format!("openapi-spec-validator {path}"), "python3", args).await;
}

#[tokio::test]
async fn a_generated_python_client_drives_a_delivery() {
    let gw = TestGateway::start().await;
    let rx = Receiver::start(Vec::new()).await;
    let work = tempfile::tempdir().unwrap();
    let doc = fetch_document(&gw, work.path(), "/v1/openapi.json").await;
    // No post hooks: formatting the generated code is not what is tested.
    let config = work.path().join("generator.yaml");
    std::fs::write(
        &config,
        "post_hooks: []\npackage_name_override: hookgate_client\nproject_name_override: hookgate-client\n",
    )
    .unwrap();
    let client_dir = work.path().join("client");
    let package = client_dir.join("hookgate_client");
    let args = vec![
        "generate".into(),
        "--meta=none".into(),
        format!("--path={}", doc.display()),
        format!("--output-path={}", package.display()),
        format!("--config={}", config.display()),
    ];
    let generated = run("openapi-python-client", "openapi-python-client", args).await;
    let generator_said = String::from_utf8_lossy(&generated.stdout).into_owned()
        + &String::from_utf8_lossy(&generated.stderr);

    let args = vec![
        format!("{SCRIPTS}/client_roundtrip.py"),
        format!("--client-dir={}", client_dir.display()),
        format!("--base={}", gw.base),
        format!("--admin={ADMIN}"),
        "--tenant=acme".into(),
        format!("--receiver={}", rx.url()),
    ];
    let out = run("client_roundtrip.py", "python3", args).await;
    let record: Value = serde_json::from_slice(&out.stdout).expect("the script prints JSON");
    assert_eq!(record["create_tenant"]["body"]["id"], "acme", "{record}");
    let endpoint = &record["create_endpoint"]["body"];
    assert_eq!(endpoint["url"], rx.url().as_str(), "{record}");
    let delivery = &record["show_delivery"]["body"];
    assert_eq!(delivery["state"], "succeeded", "{record}");
    assert_eq!(delivery["endpoint_id"], endpoint["id"], "{record}");
    assert!(
        record["listed_ids"]
            .as_array()
            .unwrap()
            .contains(&delivery["id"]),
        "{record}"
    );
    // The gateway's own view agrees with what the client parsed.
    let key = record["create_tenant"]["body"]["api_key"].as_str().unwrap();
    let path = format!(
        "/v1/tenants/acme/deliveries/{}",
        delivery["id"].as_str().unwrap()
    );
    let (s, shown) = gw.call("GET", &path, Some(key), None).await;
    assert_eq!((s, &shown["state"]), (200, &json!("succeeded")), "{shown}");
    assert_eq!(rx.received().len(), 1, "one request reached the receiver");
    // A schema the generator cannot take is dropped with every model using it.
    assert!(
        !generator_said.contains("Unable to process schema"),
        "the generator dropped schemas:\n{generator_said}"
    );
}

/// The catalog the fuzzers pin: a type send-example sends (the name the
/// documents' examples give), one PATCH may change and one DELETE may remove.
pub(super) async fn catalog_fixtures(gw: &TestGateway) {
    for (name, example) in [
        ("order.paid", json!({"n": 1})),
        ("patched.type", json!({})),
        ("spare.type", json!({})),
    ] {
        let body = json!({"name": name, "example": example});
        let (s, b) = gw
            .call("POST", "/v1/event-types", Some(ADMIN), Some(body))
            .await;
        assert_eq!(s, 201, "{b}");
    }
}

/// Tenant `acme` with what the fuzzer's pinned parameters name: endpoints, one
/// delivery succeeded and one dead, an event, and plugins.
struct Fixtures {
    key: String,
    /// Operator endpoints: the admin's to change, its spare, the tenant's to
    /// change, its spare.
    operator: Vec<String>,
    task: String,
    spare_event: String,
    endpoint: String,
    spare_endpoint: String,
    delivery: String,
    event: String,
}

async fn fixtures(gw: &TestGateway, ok: &Receiver, gone: &Receiver) -> Fixtures {
    let key = gw.tenant("acme").await;
    let id = |v: &Value| v["id"].as_str().unwrap().to_owned();
    let endpoint = id(&gw
        .endpoint(
            "acme",
            &key,
            json!({"url": ok.url(), "event_types": ["ok.*"]}),
        )
        .await);
    let endpoint_gone = json!({"url": gone.url(), "event_types": ["gone"]});
    gw.endpoint("acme", &key, endpoint_gone).await;
    let spare = json!({"url": ok.url(), "event_types": ["spare"]});
    let spare_endpoint = id(&gw.endpoint("acme", &key, spare).await);
    let mut deliveries = Vec::new();
    for t in ["ok.created", "ok.paid", "gone", "ok.spare"] {
        let ev = gw.event("acme", &key, t, json!({"n": 1})).await;
        deliveries.push((id(&ev), id(&ev["deliveries"][0])));
    }
    for (_, d) in &deliveries {
        let last = gw
            .wait_delivery("acme", &key, d, Duration::from_secs(30), is_final)
            .await;
        assert!(is_final(&last), "{last}");
    }
    // Two versions, so a rollback has somewhere to go; a spare for DELETE.
    upload_example(gw, &key, "fixed", "ladder", 1).await;
    upload_example(gw, &key, "fixed", "json-error-code", 2).await;
    upload_example(gw, &key, "spare", "ladder", 1).await;
    gw.tenant("spare").await;
    catalog_fixtures(gw).await;
    // Operator endpoints, the admin's and the tenant's: one to change, a
    // spare for DELETE.
    let mut operator = Vec::new();
    for (path, token) in [
        ("/v1/operator-endpoints", ADMIN),
        ("/v1/tenants/acme/operator-endpoints", key.as_str()),
    ] {
        for _ in 0..2 {
            let body = json!({"url": ok.url(), "event_types": ["endpoint.*"]});
            let (s, b) = gw.call("POST", path, Some(token), Some(body)).await;
            assert_eq!(s, 201, "{b}");
            operator.push(id(&b));
        }
    }
    let recover = format!("/v1/tenants/acme/endpoints/{endpoint}/recover");
    let since = json!({"since": "2020-01-01T00:00:00Z"});
    let (s, task) = gw.call("POST", &recover, Some(&key), Some(since)).await;
    assert_eq!(s, 202, "{task}");
    Fixtures {
        operator,
        task: id(&task),
        spare_event: deliveries[3].0.clone(),
        key,
        endpoint,
        spare_endpoint,
        delivery: deliveries[0].1.clone(),
        event: deliveries[0].0.clone(),
    }
}

hookgate_tests::on_each_backend! {
    schemathesis_finds_no_failures_with_the_admin_token,
    schemathesis_finds_no_failures_with_a_tenant_key,
}

/// Who the fuzzing run authenticates as.
#[derive(Clone, Copy)]
enum Role {
    Admin,
    Tenant,
}

async fn schemathesis_finds_no_failures_with_the_admin_token(backend: Backend) {
    fuzz(backend, Role::Admin).await;
}

async fn schemathesis_finds_no_failures_with_a_tenant_key(backend: Backend) {
    fuzz(backend, Role::Tenant).await;
}

/// Schemathesis with every check (`fuzz_api.py` lists the checks it turns off
/// for an operation, and why each is no defect), and every operation the role
/// may call answering 2xx at least once.
async fn fuzz(backend: Backend, role: Role) {
    let mut bed = backend.bed().await;
    // Generated endpoint URLs must not reach anything off this machine.
    bed.config.outbound.allow_only = Some(vec!["127.0.0.0/8".parse().unwrap()]);
    let gw = TestGateway::start_bed(bed, RunOptions::default()).await;
    let ok = Receiver::start(Vec::new()).await;
    let gone = Receiver::start(vec![Reply::status(404)]).await;
    let f = fixtures(&gw, &ok, &gone).await;
    let work = tempfile::tempdir().unwrap();
    // What the uploads send when they should succeed (see fuzz_hooks.py).
    let wasm = work.path().join("plugin.wasm");
    std::fs::write(&wasm, plugin_wasm("ladder")).unwrap();
    let (token, role) = match role {
        Role::Admin => (ADMIN.to_owned(), "admin"),
        Role::Tenant => (f.key.clone(), "tenant"),
    };
    let args = vec![
        format!("{SCRIPTS}/fuzz_api.py"),
        format!("--base={}", gw.base),
        format!("--token={token}"),
        format!("--role={role}"),
        "--tenant=acme".into(),
        format!("--endpoint={}", f.endpoint),
        format!("--spare-endpoint={}", f.spare_endpoint),
        format!("--operator-endpoint={}", f.operator[0]),
        format!("--spare-operator-endpoint={}", f.operator[1]),
        format!("--tenant-operator-endpoint={}", f.operator[2]),
        format!("--spare-tenant-operator-endpoint={}", f.operator[3]),
        format!("--delivery={}", f.delivery),
        format!("--event={}", f.event),
        "--plugin=fixed".into(),
        "--spare-plugin=spare".into(),
        "--spare-tenant=spare".into(),
        format!("--spare-event={}", f.spare_event),
        "--event-type=order.paid".into(),
        "--patched-event-type=patched.type".into(),
        "--spare-event-type=spare.type".into(),
        format!("--task={}", f.task),
        format!("--receiver={}", ok.url()),
        format!("--wasm={}", wasm.display()),
        format!("--workdir={}", work.path().display()),
        "--seed=20261201".into(),
        "--max-examples=25".into(),
    ];
    run(
        &format!("fuzz_api.py (Schemathesis, {role})"),
        "python3",
        args,
    )
    .await;
}
