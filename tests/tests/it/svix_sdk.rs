//! The Svix-compatible API (issue 42), on both backends: the official `svix`
//! Python SDK (`tests/scripts/svix_sdk`) and the official npm package
//! (`tests/scripts/svix_sdk_js`), unmodified and pointed at the gateway, each
//! run a scenario through every operation the face serves and check each
//! answer; the official Rust crate runs the core of it, here. The deliveries
//! they cause are verified here with the official verifiers, Svix's `Webhook`
//! on the `svix-*` headers and `standardwebhooks` on the `webhook-*` ones.

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use hookgate_tests::receiver::{Received, Receiver};
use hookgate_tests::verify::{standardwebhooks_verifies, svix_library_verifies};
use hookgate_tests::{ADMIN, ApiRequest, Backend, TestGateway};
use http::Method;
use serde_json::{Value, json};

hookgate_tests::on_each_backend! {
    the_python_sdk_drives_every_operation,
    the_javascript_sdk_drives_every_operation,
    the_rust_crate_drives_the_core,
    a_retried_create_gets_its_first_answer_and_a_taken_event_id_a_conflict,
}

/// Runs the scenario against `gw` with `token`; what it saw.
async fn scenario(gw: &TestGateway, token: &str, receiver: &str) -> Value {
    run("python3", "svix_sdk/main.py", gw, token, receiver).await
}

/// Runs `script` (in `tests/scripts`) with `program` against `gw`; what it saw.
async fn run(program: &str, script: &str, gw: &TestGateway, token: &str, receiver: &str) -> Value {
    let script = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("scripts")
        .join(script);
    let (base, token, receiver) = (gw.base.clone(), token.to_owned(), receiver.to_owned());
    let program = program.to_owned();
    let ran = tokio::task::spawn_blocking(move || {
        Command::new(&program)
            .arg(script)
            .args([&base, &token, &receiver])
            .output()
            .unwrap_or_else(|e| {
                panic!("{program} runs (with the svix package: see tests/run.sh): {e}")
            })
    })
    .await
    .unwrap();
    let stdout = String::from_utf8_lossy(&ran.stdout);
    let seen: Value =
        serde_json::from_str(stdout.lines().last().unwrap_or("")).unwrap_or(Value::Null);
    assert!(
        ran.status.success() && seen["failed"].is_null(),
        "the SDK scenario failed: {}\n{stdout}\n{}",
        seen["failed"].as_str().unwrap_or_default(),
        String::from_utf8_lossy(&ran.stderr)
    );
    seen
}

async fn the_python_sdk_drives_every_operation(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let rx = Receiver::start(Vec::new()).await;
    let seen = scenario(&gw, ADMIN, &rx.url()).await;
    let secret = seen["endpoint_secret"]
        .as_str()
        .expect("the endpoint's secret");
    deliveries_verified(&seen, &rx, secret).await;
}

async fn the_javascript_sdk_drives_every_operation(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let rx = Receiver::start(Vec::new()).await;
    let seen = run("node", "svix_sdk_js/main.mjs", &gw, ADMIN, &rx.url()).await;
    let secret = seen["secret"].as_str().expect("the endpoint's secret");
    let got = deliveries_verified(&seen, &rx, secret).await;
    let message = seen["message"].as_str().expect("the resent message");
    let carrying = got
        .iter()
        .filter(|r| r.header("svix-id") == Some(message))
        .count();
    assert_eq!(carrying, 2, "the resent message arrived twice: {seen}");
}

/// Checks what a scenario's `seen` says reached `rx`: every message sent
/// (`messages.ids`, `messages.count` requests with the resend) and the
/// example, signed with `secret` so that both official verifiers accept them;
/// answers the requests.
async fn deliveries_verified(seen: &Value, rx: &Receiver, secret: &str) -> Vec<Received> {
    assert!(
        seen["app"]
            .as_str()
            .is_some_and(|id| id.starts_with("app_")),
        "{seen}"
    );
    let sent = seen["messages"]["count"]
        .as_u64()
        .expect("messages counted") as usize;
    let got = rx.wait_for(sent + 1, Duration::from_secs(30)).await;
    assert!(
        got.len() > sent,
        "{} of {} requests: {seen}",
        got.len(),
        sent + 1
    );
    svix_library_verifies(secret, &got).expect("Svix's Webhook verifies the svix-* headers");
    standardwebhooks_verifies(secret, &got)
        .expect("standardwebhooks verifies the webhook-* headers");
    let ids = seen["messages"]["ids"].as_array().unwrap().iter();
    for id in ids.chain([&seen["example"]]) {
        let id = id.as_str().expect("a message id");
        assert!(
            got.iter()
                .any(|r| r.header("svix-id") == Some(id) || r.header("webhook-id") == Some(id)),
            "message {id} arrived: {seen}"
        );
    }
    got
}

/// The official Rust crate's client for `gw`, with `token`.
fn rust_client(gw: &TestGateway, token: &str) -> svix::api::Svix {
    let options = svix::api::SvixOptions {
        server_url: Some(gw.base.clone()),
        // Fail at once: a retried call would hide a wrong first answer.
        retry_schedule: Some(Vec::new()),
        ..Default::default()
    };
    svix::api::Svix::new(token.to_owned(), Some(options))
}

async fn the_rust_crate_drives_the_core(backend: Backend) {
    use svix::api::MessageAttemptListByMsgOptions;
    use svix::models::{
        ApplicationIn, EndpointIn, EndpointSecretRotateIn, MessageIn, MessageStatus,
    };
    let gw = TestGateway::start_on(backend).await;
    let rx = Receiver::start(Vec::new()).await;
    let svix = rust_client(&gw, ADMIN);

    let mut app_in = ApplicationIn::new("Rust app".into());
    app_in.uid = Some("rust-app".into());
    let app = svix.application().create(app_in, None).await.unwrap();
    assert!(app.id.starts_with("app_"), "{app:?}");
    let found = svix.application().get("rust-app".into()).await.unwrap();
    assert_eq!(found.id, app.id);
    match svix.application().get("app_nope".into()).await {
        Err(svix::error::Error::Http(e)) => {
            assert_eq!(e.status.as_u16(), 404);
            assert_eq!(e.payload.map(|p| p.code).as_deref(), Some("not_found"));
        }
        other => panic!("an unknown app: {other:?}"),
    }

    let mut ep_in = EndpointIn::new(rx.url());
    ep_in.uid = Some("rust-ep".into());
    let ep = svix
        .endpoint()
        .create(app.id.clone(), ep_in, None)
        .await
        .unwrap();
    match svix
        .endpoint()
        .create(app.id.clone(), EndpointIn::new("not a url".into()), None)
        .await
    {
        Err(svix::error::Error::Validation(e)) => assert_eq!(e.status.as_u16(), 422),
        other => panic!("a bad url: {other:?}"),
    }
    let before = svix
        .endpoint()
        .get_secret(app.id.clone(), ep.id.clone())
        .await
        .unwrap()
        .key;
    let rotated = svix
        .endpoint()
        .rotate_secret(
            app.id.clone(),
            ep.id.clone(),
            EndpointSecretRotateIn::new(),
            None,
        )
        .await
        .unwrap();
    assert_ne!(rotated.key, before, "a new secret");

    let mut msg_in = MessageIn::new("rust.made".into(), json!({"n": 1}));
    msg_in.event_id = Some("rust-evt".into());
    let msg = svix
        .message()
        .create(app.id.clone(), msg_in, None)
        .await
        .unwrap();
    let by_event_id = svix
        .message()
        .get(app.id.clone(), "rust-evt".into(), None)
        .await
        .unwrap();
    assert_eq!(by_event_id.id, msg.id);

    let got = rx.wait_for(1, Duration::from_secs(30)).await;
    assert_eq!(got.len(), 1);
    svix_library_verifies(&rotated.key, &got).expect("Svix's Webhook verifies it");
    standardwebhooks_verifies(&rotated.key, &got).expect("standardwebhooks verifies it");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let attempts = loop {
        let page = svix
            .message_attempt()
            .list_by_msg(
                app.id.clone(),
                msg.id.clone(),
                Some(MessageAttemptListByMsgOptions::default()),
            )
            .await
            .unwrap();
        if !page.data.is_empty() || tokio::time::Instant::now() >= deadline {
            break page;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    let attempt = attempts.data.first().expect("an attempt");
    assert_eq!(
        (
            &attempt.status,
            attempt.response_status_code,
            &attempt.endpoint_id
        ),
        (&MessageStatus::Success, 200, &ep.id),
        "{attempt:?}"
    );
}

/// The SDKs send an `idempotency-key` with every POST and retry with the
/// same one: a retry gets the first answer (202, the same message), once;
/// another call with a taken `eventId` is Svix's 409; the same key with
/// another body is refused in Svix's shape.
async fn a_retried_create_gets_its_first_answer_and_a_taken_event_id_a_conflict(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    gw.tenant("acme").await;
    let send = |key: &str, body: Value| {
        let request = ApiRequest::path(Method::POST, "/api/v1/app/acme/msg")
            .token(Some(ADMIN))
            .header("idempotency-key", Some(key))
            .json(&body);
        let gw = &gw;
        async move {
            let answer = gw.exchange(request).await;
            let body: Value = serde_json::from_slice(&answer.body).unwrap_or(Value::Null);
            (answer.status, answer.headers, body)
        }
    };
    let message = json!({"eventType": "order.paid", "eventId": "order-1", "payload": {"n": 1}});
    let (s, _, first) = send("auto_1", message.clone()).await;
    assert_eq!(s, 202, "{first}");
    let (s, headers, again) = send("auto_1", message.clone()).await;
    assert_eq!((s, &again), (202, &first), "a retry gets the first answer");
    assert_eq!(headers["idempotent-replayed"], "true");
    let (s, _, taken) = send("auto_2", message.clone()).await;
    assert_eq!((s, &taken["code"]), (409, &json!("conflict")), "{taken}");
    let other = json!({"eventType": "order.paid", "payload": {"n": 2}});
    let (s, _, reused) = send("auto_1", other).await;
    assert_eq!(s, 422, "{reused}");
    assert!(
        reused["detail"][0]["msg"].is_string(),
        "Svix's shape: {reused}"
    );
    let (s, list) = gw
        .call("GET", "/v1/tenants/acme/events", Some(ADMIN), None)
        .await;
    assert_eq!(
        (s, list["data"].as_array().map(Vec::len)),
        (200, Some(1)),
        "{list}"
    );
}
