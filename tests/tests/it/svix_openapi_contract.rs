//! The Svix-compatible face's own OpenAPI document (`/api/v1/openapi.json`)
//! as a contract: it validates with `openapi-spec-validator`, and
//! Schemathesis fuzzes every operation against it on both backends
//! (`tests/scripts/fuzz_svix.py` lists each check it turns off and why).

use std::time::Duration;

use hookgate_server::RunOptions;
use hookgate_tests::receiver::Receiver;
use hookgate_tests::{ADMIN, Backend, TestGateway, is_final};
use serde_json::{Value, json};

use super::openapi_contract::{SCRIPTS, catalog_fixtures, run, spec_validator_accepts};

#[tokio::test]
async fn the_svix_document_is_valid_openapi() {
    spec_validator_accepts("/api/v1/openapi.json").await;
}

/// What the fuzzer's pinned parameters name, in application `acme`.
struct Fixtures {
    endpoint: String,
    spare_endpoint: String,
    msg: String,
    spare_msg: String,
    attempt: String,
}

async fn fixtures(gw: &TestGateway, ok: &Receiver) -> Fixtures {
    let key = gw.tenant("acme").await;
    gw.tenant("spare").await;
    let id = |v: &Value| v["id"].as_str().unwrap().to_owned();
    let endpoint = id(&gw.endpoint("acme", &key, json!({"url": ok.url()})).await);
    let spare = json!({"url": ok.url(), "event_types": ["spare"]});
    let spare_endpoint = id(&gw.endpoint("acme", &key, spare).await);
    let mut sent = Vec::new();
    for t in ["order.paid", "order.spare"] {
        let ev = gw.event("acme", &key, t, json!({"n": 1})).await;
        let delivery = id(&ev["deliveries"][0]);
        let last = gw
            .wait_delivery("acme", &key, &delivery, Duration::from_secs(30), is_final)
            .await;
        assert_eq!(last["state"], "succeeded", "{last}");
        sent.push((id(&ev), last));
    }
    let attempt = sent[0].1["attempt_log"][0]["id"]
        .as_str()
        .unwrap_or_else(|| panic!("an attempt id: {}", sent[0].1))
        .to_owned();
    catalog_fixtures(gw).await;
    Fixtures {
        endpoint,
        spare_endpoint,
        msg: sent[0].0.clone(),
        spare_msg: sent[1].0.clone(),
        attempt,
    }
}

hookgate_tests::on_each_backend! {
    schemathesis_finds_no_failures_in_the_svix_face,
}

/// Schemathesis with every check but those `fuzz_svix.py` turns off (each
/// with why), as the organisation token, every operation answering 2xx at
/// least once but those it names.
async fn schemathesis_finds_no_failures_in_the_svix_face(backend: Backend) {
    let mut bed = backend.bed().await;
    // Generated endpoint URLs must not reach anything off this machine.
    bed.config.outbound.allow_only = Some(vec!["127.0.0.0/8".parse().unwrap()]);
    let gw = TestGateway::start_bed(bed, RunOptions::default()).await;
    let ok = Receiver::start(Vec::new()).await;
    let f = fixtures(&gw, &ok).await;
    let work = tempfile::tempdir().unwrap();
    let args = vec![
        format!("{SCRIPTS}/fuzz_svix.py"),
        format!("--base={}", gw.base),
        format!("--token={ADMIN}"),
        "--app=acme".into(),
        "--spare-app=spare".into(),
        format!("--endpoint={}", f.endpoint),
        format!("--spare-endpoint={}", f.spare_endpoint),
        format!("--msg={}", f.msg),
        format!("--spare-msg={}", f.spare_msg),
        format!("--attempt={}", f.attempt),
        "--event-type=order.paid".into(),
        "--patched-event-type=patched.type".into(),
        "--spare-event-type=spare.type".into(),
        format!("--receiver={}", ok.url()),
        format!("--workdir={}", work.path().display()),
    ];
    run("fuzz_svix.py (Schemathesis, Svix face)", "python3", args).await;
}
