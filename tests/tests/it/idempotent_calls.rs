//! `Idempotency-Key` on every POST and PUT: a repeat of the same request, its
//! JSON keys reordered and spaced differently, gets the first answer again
//! (marked `Idempotent-Replayed`, any secret left out), the same key with
//! another request is refused, and each caller's keys are its own.

use hookgate::client::ApiRequest;
use hookgate_tests::{ADMIN, Backend, TestGateway, plugin_wasm};
use serde_json::{Value, json};

hookgate_tests::on_each_backend! {
    every_post_and_put_answers_a_repeat_once,
}

/// The same JSON written two ways: keys in another order, other spacing.
fn two_spellings(v: &Value) -> (Vec<u8>, Vec<u8>) {
    fn reversed(v: &Value) -> String {
        match v {
            Value::Object(m) => {
                let fields: Vec<String> = m
                    .iter()
                    .rev()
                    .map(|(k, v)| format!("  {} :  {}", Value::from(k.as_str()), reversed(v)))
                    .collect();
                format!("{{ {} }}", fields.join(" ,\n"))
            }
            Value::Array(a) => format!(
                "[ {} ]",
                a.iter().map(reversed).collect::<Vec<_>>().join(", ")
            ),
            other => other.to_string(),
        }
    }
    (v.to_string().into_bytes(), reversed(v).into_bytes())
}

struct Call<'a> {
    method: &'a str,
    path: String,
    token: String,
    body: Option<Value>,
}

impl Call<'_> {
    /// Sends the call with Idempotency-Key `key`; answers the status, the body
    /// and whether it was marked replayed.
    async fn send(&self, gw: &TestGateway, key: &str, body: Option<Vec<u8>>) -> (u16, Value, bool) {
        let mut request = ApiRequest::path(self.method.parse().unwrap(), &self.path)
            .token(Some(&self.token))
            .header("idempotency-key", Some(key));
        if let Some(b) = body {
            request = request
                .raw_body(b)
                .header("content-type", Some("application/json"));
        }
        let answer = gw.exchange(request).await;
        let replayed = answer
            .headers
            .get("idempotent-replayed")
            .is_some_and(|v| v == "true");
        (answer.status, answer.json(), replayed)
    }
}

async fn every_post_and_put_answers_a_repeat_once(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let (s, made) = gw
        .call(
            "POST",
            "/v1/tenants",
            Some(ADMIN),
            Some(json!({"id": "acme"})),
        )
        .await;
    assert_eq!(s, 201);
    let key = made["api_key"].as_str().unwrap().to_owned();
    let ep = gw
        .endpoint(
            "acme",
            &key,
            json!({"url": "http://127.0.0.1:9/x", "policy": {"max_attempts": 1}}),
        )
        .await;
    let ep_id = ep["id"].as_str().unwrap().to_owned();
    let ev = gw.event("acme", &key, "order.paid", json!({"n": 1})).await;
    let dlv = ev["deliveries"][0]["id"].as_str().unwrap().to_owned();
    gw.wait_delivery(
        "acme",
        &key,
        &dlv,
        std::time::Duration::from_secs(20),
        hookgate_tests::is_final,
    )
    .await;
    let tenant = |method, path: &str, body| Call {
        method,
        path: path.to_owned(),
        token: key.clone(),
        body,
    };
    let eps = format!("/v1/tenants/acme/endpoints/{ep_id}");
    let calls = [
        Call {
            method: "POST",
            path: "/v1/tenants".into(),
            token: ADMIN.into(),
            body: Some(json!({"id": "beta", "name": "Beta", "metadata": {"a": "1", "b": "2"}})),
        },
        tenant(
            "POST",
            "/v1/tenants/acme/endpoints",
            Some(
                json!({"url": "http://127.0.0.1:9/y", "event_types": ["a.*", "b"], "policy": {"max_attempts": 3, "jitter": "none"}}),
            ),
        ),
        tenant(
            "PUT",
            "/v1/tenants/acme/endpoints/by-uid",
            Some(json!({"url": "http://127.0.0.1:9/z", "metadata": {"x": "1", "y": "2"}})),
        ),
        tenant(
            "POST",
            &format!("{eps}/rotate-secret"),
            Some(json!({"secret": "whsec_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA="})),
        ),
        tenant("POST", &format!("{eps}/breaker/reset"), None),
        tenant(
            "POST",
            &format!("/v1/tenants/acme/deliveries/{dlv}/replay"),
            Some(json!({"force": false})),
        ),
        tenant(
            "POST",
            "/v1/tenants/acme/replay",
            Some(json!({"state": "dead", "dry_run": true, "endpoint_id": ep_id})),
        ),
        tenant(
            "POST",
            &format!("{eps}/recover"),
            Some(json!({"since": "2020-01-01T00:00:00Z", "until": "2099-01-01T00:00:00Z"})),
        ),
        tenant(
            "POST",
            "/v1/tenants/acme/events",
            Some(json!({"event_type": "order.paid", "payload": {"b": 2, "a": 1}})),
        ),
        // By the admin: a repeat made with the very key a rotation retired
        // cannot say whose it is (401), as any call with that key.
        Call {
            method: "POST",
            path: "/v1/tenants/acme/rotate-key".into(),
            token: ADMIN.into(),
            body: None,
        },
    ];
    for (i, call) in calls.iter().enumerate() {
        let idem = format!("key-{i}");
        let (first_body, second_body) = match &call.body {
            Some(b) => {
                let (a, b) = two_spellings(b);
                (Some(a), Some(b))
            }
            None => (None, None),
        };
        let (s1, a1, r1) = call.send(&gw, &idem, first_body).await;
        assert!(s1 < 300, "{} {}: {s1} {a1}", call.method, call.path);
        assert!(!r1, "a first call is not a replay");
        let (s2, a2, r2) = call.send(&gw, &idem, second_body).await;
        assert_eq!(s2, s1, "{} {}: {a2}", call.method, call.path);
        assert!(
            r2,
            "{} {}: the repeat is marked replayed",
            call.method, call.path
        );
        let mut without_secrets = a1.clone();
        if let Some(m) = without_secrets.as_object_mut() {
            for secret in ["api_key", "secret", "secrets"] {
                m.remove(secret);
            }
        }
        assert_eq!(
            a2, without_secrets,
            "{} {}: the first answer, secrets left out",
            call.method, call.path
        );
        if call.path.ends_with("/rotate-key") {
            // The key rotated once: the new one (from the first answer) works.
            let new_key = a1["api_key"].as_str().unwrap();
            let (s, _) = gw
                .call("GET", "/v1/tenants/acme", Some(new_key), None)
                .await;
            assert_eq!(s, 200);
            continue;
        }
        // The same key with another request: refused.
        // (Ingest checks its body before its key: another valid one.)
        let other = if call.path.ends_with("/events") {
            json!({"event_type": "order.other", "payload": {}})
        } else {
            json!({"something": "else"})
        };
        let (s3, a3, _) = call
            .send(&gw, &idem, Some(other.to_string().into_bytes()))
            .await;
        assert_eq!(
            (s3, a3["error"]["code"].as_str()),
            (422, Some("idempotency_key_reused")),
            "{} {}: {a3}",
            call.method,
            call.path
        );
    }
    // A key does not stand in for a token.
    let anonymous = ApiRequest::path("POST".parse().unwrap(), "/v1/tenants")
        .header("idempotency-key", Some("key-0"))
        .json(&json!({"id": "beta", "name": "Beta", "metadata": {"a": "1", "b": "2"}}));
    assert_eq!(gw.exchange(anonymous).await.status, 401);
    // The repeats made nothing twice.
    let (_, tenants) = gw.call("GET", "/v1/tenants", Some(ADMIN), None).await;
    assert_eq!(tenants["data"].as_array().unwrap().len(), 2, "{tenants}");
    let (s, tasks) = gw
        .call("GET", "/v1/tenants/acme/tasks", Some(ADMIN), None)
        .await;
    assert_eq!(
        (s, tasks["data"].as_array().unwrap().len()),
        (200, 1),
        "{tasks}"
    );
    // Keys are each caller's own: beta's key-1 is not acme's.
    let (s, beta) = gw
        .call("POST", "/v1/tenants/beta/rotate-key", Some(ADMIN), None)
        .await;
    assert_eq!(s, 200);
    let beta_key = beta["api_key"].as_str().unwrap().to_owned();
    let beta_call = Call {
        method: "POST",
        path: "/v1/tenants/beta/endpoints".into(),
        token: beta_key,
        body: None,
    };
    let body = json!({"url": "http://127.0.0.1:9/b"})
        .to_string()
        .into_bytes();
    let (s, b, replayed) = beta_call.send(&gw, "key-1", Some(body)).await;
    assert_eq!((s, replayed), (201, false), "{b}");
    // A plugin upload, whose body is not JSON, is compared by its bytes.
    let upload = || {
        ApiRequest::path("PUT".parse().unwrap(), "/v1/tenants/beta/plugins/ladder")
            .token(Some(&beta_call.token))
            .header("idempotency-key", Some("up-1"))
            .header("content-type", Some("application/wasm"))
            .raw_body(plugin_wasm("ladder"))
    };
    let (one, two) = (gw.exchange(upload()).await, gw.exchange(upload()).await);
    assert_eq!((one.status, two.status), (201, 201));
    assert_eq!(one.json()["version"], two.json()["version"]);
    assert!(two.headers.get("idempotent-replayed").is_some());
    let (_, plugin) = gw
        .call("GET", "/v1/tenants/beta/plugins/ladder", Some(ADMIN), None)
        .await;
    assert_eq!(
        plugin["versions"].as_array().map(Vec::len),
        Some(1),
        "{plugin}"
    );
}
