//! A tenant's lifecycle over the API: shown, renamed and given a uid that works
//! wherever its id does; deleted as a background task that refuses its work at
//! once and, when finished, has left no record of it in the store.

use std::time::Duration;

use hookgate::client::ApiRequest;
use hookgate_server::{RunOptions, open_store};
use hookgate_tests::receiver::{Receiver, Reply};
use hookgate_tests::{ADMIN, Backend, TestGateway, upload_example};
use serde_json::{Value, json};

hookgate_tests::on_each_backend! {
    a_tenant_is_shown_patched_and_named_by_its_uid,
    a_deleted_tenant_is_refused_at_once_and_leaves_nothing_behind,
}

async fn a_tenant_is_shown_patched_and_named_by_its_uid(backend: Backend) {
    let gw = TestGateway::start_on(backend).await;
    let body = json!({"id": "acme", "name": "Acme Corp", "uid": "Cus.42-a",
        "metadata": {"plan": "pro", "region": "eu"}});
    let (s, made) = gw
        .call("POST", "/v1/tenants", Some(ADMIN), Some(body))
        .await;
    assert_eq!(s, 201, "{made}");
    assert_eq!(
        (made["name"].as_str(), made["uid"].as_str()),
        (Some("Acme Corp"), Some("Cus.42-a"))
    );
    let key = made["api_key"].as_str().unwrap().to_owned();
    let plain = gw.tenant("beta").await;

    // Shown by id and by uid, to the admin and to the tenant itself.
    for (path, token) in [
        ("/v1/tenants/acme", ADMIN),
        ("/v1/tenants/Cus.42-a", ADMIN),
        ("/v1/tenants/Cus.42-a", key.as_str()),
    ] {
        let (s, t) = gw.call("GET", path, Some(token), None).await;
        assert_eq!(s, 200, "{path}: {t}");
        assert_eq!(t["id"], "acme");
        assert_eq!(t["metadata"], json!({"plan": "pro", "region": "eu"}));
        assert!(t.get("api_key").is_none());
    }
    let (s, _) = gw
        .call("GET", "/v1/tenants/Cus.42-a", Some(&plain), None)
        .await;
    assert_eq!(s, 404, "another tenant's uid is not found");
    let (s, b) = gw.call("GET", "/v1/tenants/beta", None, None).await;
    assert_eq!(s, 401, "{b}");
    let (s, t) = gw.call("GET", "/v1/tenants/beta", Some(ADMIN), None).await;
    assert_eq!(
        (s, t["name"].as_str(), t["uid"].clone()),
        (200, Some("beta"), Value::Null)
    );

    // The uid works in every tenant path.
    gw.endpoint("Cus.42-a", &key, json!({"url": "http://127.0.0.1:9/x"}))
        .await;
    let (s, eps) = gw
        .call("GET", "/v1/tenants/acme/endpoints", Some(&key), None)
        .await;
    assert_eq!((s, eps["data"].as_array().unwrap().len()), (200, 1));

    // A merge patch: a new name, a metadata key removed and one added, the uid
    // changed; a null uid clears it.
    let patch =
        json!({"name": "Acme", "metadata": {"region": null, "tier": "1"}, "uid": "acme-new"});
    let (s, t) = gw
        .call("PATCH", "/v1/tenants/Cus.42-a", Some(ADMIN), Some(patch))
        .await;
    assert_eq!(s, 200, "{t}");
    assert_eq!(
        (t["name"].as_str(), t["uid"].as_str(), t["metadata"].clone()),
        (
            Some("Acme"),
            Some("acme-new"),
            json!({"plan": "pro", "tier": "1"})
        )
    );
    assert_ne!(t["updated_at"], t["created_at"]);
    let (s, _) = gw
        .call("GET", "/v1/tenants/Cus.42-a", Some(ADMIN), None)
        .await;
    assert_eq!(s, 404, "the old uid names nothing");
    let (s, b) = gw
        .call(
            "PATCH",
            "/v1/tenants/beta",
            Some(ADMIN),
            Some(json!({"uid": "acme-new"})),
        )
        .await;
    assert_eq!(
        (s, b["error"]["code"].as_str()),
        (409, Some("conflict")),
        "{b}"
    );
    let (s, b) = gw
        .call(
            "PATCH",
            "/v1/tenants/beta",
            Some(ADMIN),
            Some(json!({"uid": "acme"})),
        )
        .await;
    assert_eq!(s, 409, "a uid may not be another tenant's id: {b}");
    let (s, b) = gw
        .call(
            "POST",
            "/v1/tenants",
            Some(ADMIN),
            Some(json!({"id": "gamma", "uid": "acme-new"})),
        )
        .await;
    assert_eq!(s, 409, "{b}");
    for (patch, field) in [
        (json!({"uid": "no spaces"}), "uid"),
        (json!({"name": ""}), "name"),
        (json!({"metadata": {"k": "x".repeat(513)}}), "metadata.k"),
    ] {
        let (s, b) = gw
            .call("PATCH", "/v1/tenants/acme", Some(ADMIN), Some(patch))
            .await;
        assert_eq!(
            (s, b["error"]["code"].as_str(), b["error"]["field"].as_str()),
            (422, Some("validation_failed"), Some(field)),
            "{b}"
        );
    }
    let (s, b) = gw
        .call(
            "PATCH",
            "/v1/tenants/acme",
            Some(ADMIN),
            Some(json!({"colour": "red"})),
        )
        .await;
    assert_eq!(
        (s, b["error"]["code"].as_str()),
        (400, Some("invalid_field")),
        "{b}"
    );
    let (s, _) = gw
        .call(
            "PATCH",
            "/v1/tenants/acme",
            Some(&key),
            Some(json!({"name": "mine"})),
        )
        .await;
    assert_eq!(s, 403, "a tenant cannot change itself");
    let (s, t) = gw
        .call(
            "PATCH",
            "/v1/tenants/acme",
            Some(ADMIN),
            Some(json!({"uid": null, "name": null})),
        )
        .await;
    assert_eq!(
        (s, t["uid"].clone(), t["name"].as_str()),
        (200, Value::Null, Some("acme"))
    );
    let (s, list) = gw.call("GET", "/v1/tenants", Some(ADMIN), None).await;
    assert_eq!(s, 200);
    assert_eq!(
        list["data"][1]["metadata"],
        json!({"plan": "pro", "tier": "1"})
    );
}

/// Polls a task (the admin's view) until it is no longer running.
async fn task_ended(gw: &TestGateway, id: &str) -> Value {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let (s, task) = gw
            .call("GET", &format!("/v1/tasks/{id}"), Some(ADMIN), None)
            .await;
        assert_eq!(s, 200, "{task}");
        if task["state"] != "running" {
            return task;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "task still running: {task}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until `tenant`'s endpoint `id` has `attempts` attempts in its stats.
async fn stats_counted(gw: &TestGateway, tenant: &str, key: &str, id: &str, attempts: u64) {
    let path = format!("/v1/tenants/{tenant}/endpoints/{id}/stats");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let (s, stats) = gw.call("GET", &path, Some(key), None).await;
        assert_eq!(s, 200, "{stats}");
        if stats["totals"]["attempts"].as_u64() >= Some(attempts) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "stats not counted: {stats}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn a_deleted_tenant_is_refused_at_once_and_leaves_nothing_behind(backend: Backend) {
    let mut bed = backend.bed().await;
    bed.config.tasks.batch = 7;
    // Attempts reach the endpoints' stats at once, so they are in the census.
    bed.config.stats.flush_ms = 20;
    let store = open_store(&bed.config.store).await.unwrap();
    let options = RunOptions {
        store: Some(store.clone()),
        ..RunOptions::default()
    };
    let gw = TestGateway::start_bed(bed, options).await;
    let rx = Receiver::start(vec![Reply::status(200)]).await;

    // Another tenant, settled, whose records must stay exactly as they are.
    let other = gw.tenant("other").await;
    let other_ep = gw.endpoint("other", &other, json!({"url": rx.url()})).await;
    let ev = gw
        .event("other", &other, "kept.event", json!({"n": 0}))
        .await;
    let kept = ev["deliveries"][0]["id"].as_str().unwrap().to_owned();
    gw.wait_delivery(
        "other",
        &other,
        &kept,
        Duration::from_secs(20),
        hookgate_tests::is_final,
    )
    .await;
    stats_counted(&gw, "other", &other, other_ep["id"].as_str().unwrap(), 1).await;
    let before = store.census().await.unwrap();

    // The tenant: two endpoints, events delivered and dead, an idempotency
    // key, a plugin.
    let (s, made) = gw
        .call(
            "POST",
            "/v1/tenants",
            Some(ADMIN),
            Some(json!({"id": "acme", "uid": "ACME"})),
        )
        .await;
    assert_eq!(s, 201);
    let key = made["api_key"].as_str().unwrap().to_owned();
    upload_example(&gw, &key, "ladder", "ladder", 1).await;
    let delivered = gw
        .endpoint("acme", &key, json!({"url": rx.url(), "plugin": "ladder"}))
        .await;
    let dead_policy = json!({"max_attempts": 1});
    let dead = gw
        .endpoint(
            "acme",
            &key,
            json!({"url": "http://127.0.0.1:9/closed", "policy": dead_policy}),
        )
        .await;
    // Idempotent calls on its routes, by the admin and by the tenant: their
    // kept answers are the tenant's records too.
    for token in [ADMIN, key.as_str()] {
        let call = ApiRequest::path("POST".parse().unwrap(), "/v1/tenants/acme/endpoints")
            .token(Some(token))
            .header("idempotency-key", Some("create-1"))
            .json(&json!({"url": rx.url(), "event_types": ["kept.*"]}));
        assert_eq!(gw.exchange(call).await.status, 201);
    }
    let mut last = Vec::new();
    for i in 0..12 {
        let body = json!({"event_type": "order.paid", "payload": {"i": i}});
        let (s, b) = gw
            .call_raw(
                "POST",
                "/v1/tenants/acme/events",
                &key,
                body.to_string().into_bytes(),
                &[
                    ("idempotency-key", &format!("k{i}")),
                    ("content-type", "application/json"),
                ],
            )
            .await;
        assert_eq!(s, 202, "{b}");
        let b: Value = serde_json::from_str(&b).unwrap();
        last = b["deliveries"].as_array().unwrap().clone();
    }
    for d in &last {
        gw.wait_delivery(
            "acme",
            &key,
            d["id"].as_str().unwrap(),
            Duration::from_secs(20),
            hookgate_tests::is_final,
        )
        .await;
    }

    // Their stats are stored, so the census below proves they went too.
    for ep in [&delivered, &dead] {
        stats_counted(&gw, "acme", &key, ep["id"].as_str().unwrap(), 12).await;
    }

    let (s, task) = gw
        .call("DELETE", "/v1/tenants/ACME", Some(ADMIN), None)
        .await;
    assert_eq!(s, 202, "{task}");
    assert_eq!(
        (task["kind"].as_str(), task["tenant_id"].as_str()),
        (Some("tenant_delete"), Some("acme"))
    );
    let task_id = task["id"].as_str().unwrap().to_owned();
    assert!(task_id.starts_with("task_"));
    // Refused at once: the key, the id, the uid; no new event.
    let (s, _) = gw
        .call("GET", "/v1/tenants/acme/endpoints", Some(&key), None)
        .await;
    assert_eq!(s, 401, "the key is gone");
    for path in [
        "/v1/tenants/acme",
        "/v1/tenants/ACME",
        "/v1/tenants/acme/endpoints",
    ] {
        let (s, _) = gw.call("GET", path, Some(ADMIN), None).await;
        assert_eq!(s, 404, "{path}");
    }
    let body = json!({"event_type": "order.paid", "payload": {}});
    let (s, _) = gw
        .call("POST", "/v1/tenants/acme/events", Some(ADMIN), Some(body))
        .await;
    assert_eq!(s, 404, "no new work");
    let (s, again) = gw
        .call("DELETE", "/v1/tenants/acme", Some(ADMIN), None)
        .await;
    assert_eq!(s, 404, "{again}");

    let done = task_ended(&gw, &task_id).await;
    assert_eq!(done["state"], "finished", "{done}");
    assert!(done["changed"].as_u64().unwrap() >= 12 * 4, "{done}");
    assert!(done["finished_at"].is_string());
    assert_eq!(
        store.census().await.unwrap(),
        before,
        "nothing of acme is left"
    );

    // The tenant's own task list is gone with it; the admin's still shows the task.
    let (s, all) = gw.call("GET", "/v1/tasks", Some(ADMIN), None).await;
    assert_eq!(
        (s, all["data"][0]["id"].as_str()),
        (200, Some(task_id.as_str()))
    );
    // The id is free again, and a new tenant under it starts empty.
    let fresh = gw.tenant("acme").await;
    let (s, eps) = gw
        .call("GET", "/v1/tenants/acme/endpoints", Some(&fresh), None)
        .await;
    assert_eq!((s, eps["data"].as_array().unwrap().len()), (200, 0));
    let (s, plugins) = gw
        .call("GET", "/v1/tenants/acme/plugins", Some(&fresh), None)
        .await;
    assert_eq!(
        (s, plugins["data"].as_array().map(Vec::len)),
        (200, Some(0)),
        "{plugins}"
    );
    let (s, tasks) = gw
        .call("GET", "/v1/tenants/acme/tasks", Some(&fresh), None)
        .await;
    assert_eq!(
        (s, tasks["data"].clone()),
        (200, json!([])),
        "the old tenant's task is not the new one's"
    );
    let (s, _) = gw
        .call(
            "GET",
            &format!("/v1/tenants/acme/tasks/{task_id}"),
            Some(&fresh),
            None,
        )
        .await;
    assert_eq!(s, 404);
}
